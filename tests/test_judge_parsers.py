"""Reply parsers: values for well-formed replies, ParseFailure (never 0) for everything else."""

from __future__ import annotations

import pytest

from vreason.judge import parsers
from vreason.judge.parsers import ParseFailure


def fails(parser, text: str, contains: str = "") -> str:
    with pytest.raises(ParseFailure) as e:
        parser(text)
    assert contains.lower() in e.value.reason.lower()
    return e.value.reason


def test_json_object_strict_and_fenced():
    p = parsers.json_object()
    assert p('{"score": 3}') == {"score": 3}
    assert p('```json\n{"a": [1, 2]}\n```') == {"a": [1, 2]}
    fails(p, "[1, 2]", "expected a JSON object")
    fails(p, 'Sure! {"score": 3}', "not valid JSON")
    fails(p, '{"score": 3', "not valid JSON")  # truncated
    fails(p, "   ", "empty")


def test_json_list_strict():
    p = parsers.json_list()
    assert p("[1, 2, 3]") == [1, 2, 3]
    fails(p, '{"a": 1}', "expected a JSON list")


def test_last_json_object_prose_and_fences():
    p = parsers.last_json_object()
    text = (
        'Let me think. First {"draft": 1} then the final answer:\n```json\n{"score": 4, "why": "ok {x}"}\n```'
    )
    assert p(text) == {"score": 4, "why": "ok {x}"}
    # no fence: last top-level object in prose, nested objects stay inside
    assert p('a {"x": {"y": 1}} b {"z": 2} c') == {"z": 2}
    assert p('reasoning... {"outer": {"inner": 5}}') == {"outer": {"inner": 5}}
    fails(p, "no json here", "no valid JSON object")
    fails(p, '{"score": 4', "no valid JSON object")  # truncated
    req = parsers.last_json_object(required=["score"])
    fails(req, '{"reason": "x"}', "required")


def test_answer_labels_length_and_labels():
    p = parsers.answer_labels(["Good", "Medium", "Poor"], 3)
    assert p('thinking...\n<answer>["good", "Poor", "Medium"]</answer>') == ["Good", "Poor", "Medium"]
    fails(p, '<answer>["Good", "Poor"]</answer>', "expected 3")
    fails(p, '<answer>["Good", "Poor", "Bad"]</answer>', "not one of")
    fails(p, '["Good", "Poor", "Medium"]', "no <answer>")
    fails(p, "<answer>Good, Poor, Medium</answer>", "valid JSON")
    fails(p, '<answer>{"a": 1}</answer>', "not a list")
    # last <answer> block wins
    assert p('<answer>["Poor"]</answer> fix: <answer>["Good","Good","Good"]</answer>') == ["Good"] * 3


def test_yes_no_guard():
    p = parsers.yes_no()
    assert p("Yes") is True
    assert p("no.") is False
    assert p("**Yes**, the ball reaches the goal.") is True
    assert p("<answer>No</answer>") is False
    fails(p, "Yes and no, it depends.", "both")
    fails(p, "I cannot determine this from the frames.", "neither")
    fails(p, "", "empty")


def test_yes_no_verdict_line():
    p = parsers.yes_no()
    assert p("Yes.\nThe ball does not stop; there is no collision.") is True
    assert p("**Answer: No**\nYes, it moves, but it never reaches the goal.") is False
    assert p("<answer>Yes</answer> (no doubt)") is True  # the answer block decides
    fails(p, "Yes, no collision happens.", "both")  # not a verdict-only first line
    fails(p, "<answer>yes or no</answer>", "both")


def test_yes_no_word_boundaries():
    p = parsers.yes_no()
    fails(p, "Nope, yesterday", "neither")


def test_likert_range_and_forms():
    p = parsers.likert(1, 5)
    assert p("4") == 4
    assert p("**3**") == 3
    assert p("The motion is smooth. Score: 5") == 5
    assert p("I rate it 2/5 overall, 3 frames are blurry") == 2
    assert p("I give it 4.") == 4
    fails(p, "0", "outside the scale")
    fails(p, "6", "outside the scale")
    fails(p, "3.5", "not an integer")
    fails(p, "Between 2 and 3", "ambiguous")
    fails(p, "I can't rate this video.", "no number")


def test_likert_keyed():
    p = parsers.likert(1, 5, key="score")
    assert p('```json\n{"score": 4, "reason": "fine"}\n```') == 4
    assert p('{"score": "3"}') == 3
    fails(p, '{"reason": "no score"}', "no 'score' field")
    fails(p, '{"score": 0}', "outside")
    fails(p, '{"score": true}', "boolean")
    fails(p, '{"score": null}', "not an integer")


def test_option_letter():
    p = parsers.option_letter("ABCD")
    assert p("B") == "B"
    assert p("(c)") == "C"
    assert p("The answer is D because the ball falls.") == "D"
    assert p("A. The red ball") == "A"
    assert p("<answer>b</answer>") == "B"
    fails(p, "E", "no single option letter")
    fails(p, "Answer: A or answer: B", "several")
    fails(p, "I am not sure.", "no single option letter")
