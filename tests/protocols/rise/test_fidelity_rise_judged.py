"""Issue 9, items 4–5: RISE table rounding and the Reasoning Alignment reply parser, as released."""

from __future__ import annotations

import json
import os

import pandas as pd
import pytest

from test_rise_aggregate import row
from vreason.judge.parsers import ParseFailure, find_last_list
from vreason.protocols.rise.aggregate import table1, table2, unit_table
from vreason.protocols.rise.protocol import RiseProtocol
from vreason.protocols.rise.scorers import RiseReasoningJudge, yes_no_list_parser


# ---------------------------------------------------------------- item 4: rounding before weighting
def _rounding_scores() -> pd.DataFrame:
    # three commonsense samples of one model:
    #   RA 1, 1, 0          → 66.666… (released: 66.67)
    #   TC 5, 5, 4 → 1, 1, .75 → 91.666… (91.67);  PR the same (91.67)
    #   VQ 3, 3, 2 → 1, 1, .5  → 83.333… (83.33)
    # full precision: 0.4·66.667 + 0.25·91.667·2 + 0.1·83.333 = 80.8333… → 80.83
    # released:       0.4·66.67  + 0.25·91.67·2  + 0.1·83.33  = 80.836   → 80.84
    vals = {"com_1": (1.0, 5, 5, 3), "com_2": (1.0, 5, 5, 3), "com_3": (0.0, 4, 4, 2)}
    return pd.DataFrame([row("m", sid, m, v) for sid, vs in vals.items()
                         for m, v in zip(("ra", "tc", "pr", "vq"), vs, strict=True)])


def test_wscore_rounds_metric_means_before_weighting(tmp_path):
    units = unit_table(_rounding_scores())
    t1, t1n = table1(units, n_boot=50)
    shown = t1.set_index("Model").loc["m"]
    assert shown["W.Score"].startswith("80.84 [")
    assert shown["RA"].startswith("66.67 [") and shown["VQ"].startswith("83.33 [")
    num = t1n.set_index("model").loc["m"]
    assert num["W.Score"] == pytest.approx(80.8333333, abs=1e-6)  # full precision kept in the CSV
    assert num["W.Score_released"] == 80.84
    # full-precision tables on request
    t1f, _ = table1(units, n_boot=50, rounding="none")
    assert t1f.set_index("Model").loc["m", "W.Score"].startswith("80.83 [")
    t2, t2n = table2(units, n_boot=50)
    assert t2.set_index("Model").loc["m", "Commonsense WS"].startswith("80.84 [")
    assert t2n.iloc[0]["WS_released"] == 80.84 and t2n.iloc[0]["WS"] == pytest.approx(80.8333333, abs=1e-6)
    with pytest.raises(ValueError):
        table1(units, rounding="banker")


def test_protocol_tables_carry_the_header(tmp_path):
    proto = RiseProtocol(n_boot=50, maze_mode="strict")
    out = str(tmp_path / "rep")
    res = proto.aggregate(_rounding_scores(), [], out)
    md = open(os.path.join(out, "rise_table1.md")).read()
    assert md.startswith("> RISE-Video: options departing from the released code: maze_mode=strict")
    assert "rounded to 2 decimals" in md and "'contains yes'" in md
    assert res.summary["options"]["maze_mode"] == "strict" and res.summary["header"][0].endswith("maze_mode=strict")
    plain = RiseProtocol(n_boot=50).header()
    assert plain[0] == "RISE-Video: released-code defaults (no departing option)"


# ---------------------------------------------------------------- item 5: RA parser
LIST = [{"question": "Q1?", "answer": "Yes", "reason": "r"}, {"question": "Q2?", "answer": "No", "reason": "r"}]
BODY = json.dumps(LIST)


@pytest.mark.parametrize("reply", [
    BODY,
    f"Here is my evaluation of the frames:\n{BODY}",  # prose first
    f"```json\n{BODY}\n```",  # one fence
    f"Looking at frame [1] and [2]...\n```json\n{BODY}\n```\nDone.",  # prose, brackets, fence
    f"<think>Frame 3 shows [the ball] ... maybe [{{\"draft\": 1}}]</think>\n{BODY}",  # thinking judge
    f"<think>\nlong reasoning\n</think>\n\n```json\n{BODY}\n```",
])
def test_ra_reply_forms_are_valid(reply):
    out = yes_no_list_parser(2, "returned")(reply)
    assert [a["yes"] for a in out] == [True, False]


def test_ra_think_block_list_is_not_the_answer():
    with pytest.raises(ParseFailure):
        find_last_list("<think>[{\"answer\": \"Yes\"}]</think> I cannot tell.")


@pytest.mark.parametrize("answer,yes", [
    ("Yes", True), ("yes.", True), ("**Yes**", True), ("Yes, partially", True),
    ("The answer is yes", True),  # released: 'yes' in answer.lower()
    ("No", False), ("Maybe", False), ("Not visible", False),
])
def test_ra_yes_test_is_contains_by_default(answer, yes):
    reply = json.dumps([{"question": "Q?", "answer": answer}])
    assert yes_no_list_parser(1, "returned")(reply)[0]["yes"] is yes


def test_ra_strict_yes_rule_is_an_option():
    reply = json.dumps([{"question": "Q?", "answer": "The answer is yes"}])
    with pytest.raises(ParseFailure):
        yes_no_list_parser(1, "returned", "strict")(reply)
    with pytest.raises(ParseFailure):
        yes_no_list_parser(1, "returned", "strict")(json.dumps([{"answer": "Maybe"}]))
    assert yes_no_list_parser(1, "returned", "strict")(json.dumps([{"answer": "No."}]))[0]["yes"] is False


def test_ra_defaults_are_released():
    j = RiseReasoningJudge()
    assert (j.ra_count, j.ra_yes) == ("returned", "contains")
    p = RiseProtocol()
    assert (p.ra_count, p.ra_yes, p.table_rounding) == ("returned", "contains", "released")
    # released count rule: yes answers over the answers returned (2 yes of 3 returned for 2 asked)
    three = json.dumps([{"answer": "Yes"}, {"answer": "Yes"}, {"answer": "No"}])
    out = yes_no_list_parser(2, "returned")(three)
    assert sum(a["yes"] for a in out) / len(out) == pytest.approx(2 / 3)
    with pytest.raises(ParseFailure, match="3 answers for 2 questions"):
        yes_no_list_parser(2, "asked")(three)
