"""The mock judge: deterministic, well-formed replies that parse with each protocol's parser."""

import asyncio

import pytest

from vreason.core.errors import ConfigError
from vreason.judge import parsers
from vreason.judge.base import JudgeRequest, TextPart
from vreason.judge.mock import MockJudge
from vreason.judge.spec import build_backend, parse_spec


def _reply(judge, template, text):
    return asyncio.run(judge.complete(JudgeRequest([TextPart(text)], template=template))).text


def test_spec_resolves_mock_and_rejects_bad_args():
    j = build_backend(parse_spec("mock:quality=0.7,seed=3"))
    assert isinstance(j, MockJudge) and j.identity == "mock:quality=0.7,seed=3"
    assert build_backend(parse_spec("mock")).identity.startswith("mock:")
    with pytest.raises(ConfigError):
        parse_spec("mock:quality=x")
    with pytest.raises(ConfigError):
        build_backend(parse_spec("mock:quality=2"))


def test_replies_parse_and_depend_on_content_not_order():
    j = MockJudge(quality=0.6, seed=1)
    texts = [f"1. Is item {i} visible?\n2. Is it red?" for i in range(20)]
    a = [_reply(j, "tivibench_qa", t) for t in texts]
    b = [_reply(j, "tivibench_qa", t) for t in reversed(texts)][::-1]
    assert a == b
    for r in a:
        assert len(parsers.json_object()(r)["answers"]) == 2
    assert parsers.yes_no()(_reply(j, "pai_g_vqa", "Is it?")) in (True, False)
    assert parsers.option_letter("ABCD")(_reply(j, "pai_u_mcq", "Which?")) in "ABCD"
    assert 1 <= parsers.likert(1, 5, "score")(_reply(j, "rise_pr", "x")) <= 5


def test_quality_orders_scores():
    def mean(q):
        j = MockJudge(quality=q, seed=0)
        return sum(parsers.likert(1, 5, "score")(_reply(j, "rise_pr", f"s{i}")) for i in range(200)) / 200

    assert mean(0.2) < mean(0.5) < mean(0.9)


def _vars():
    """Plausible variables for every shipped template (what the protocols render them with)."""
    qs = ["Is the ball dropped?", "Does it float?", "Is the water calm?"]
    return {
        "generic_yes_no": dict(context="", question="Is the ball red?"),
        "mmecof_quality": dict(lo=0, hi=9, instruction="Solve the maze.", n_frames=4),
        "mmecof_step": dict(instruction="Solve the maze.", n_frames=4, step="Move right.", step_index=1, n_steps=2),
        "pai_g_vqa": dict(question="Is the car stopping?"),
        "pai_u_mcq": dict(question="Where does the square go?", choices="A: left\nB: right\nC: up"),
        "rise_pr": {}, "rise_ra": dict(question="Is the ball in the cup?"),
        "rise_ra_ref": dict(question="Is the queen on d4?"), "rise_tc": dict(instruction="Pour the water."),
        "rise_vq": dict(num_frames=4),
        "ruler_checklist": dict(has_input_image=False, prompt="Drop two balls.", implicit_explanation="Wood floats.",
                                category="vision rule", no_instruction_following=True, min_questions=6,
                                max_questions=12),
        "ruler_enhance": dict(has_input_image=False, prompt="Drop two balls.", implicit_explanation="Wood floats.",
                              max_words=50),
        "ruler_judge": dict(has_input_image=False, prompt="Drop two balls.", has_gt_image=False,
                            implicit_explanation="", has_input_video=False, questions=qs),
        "tivibench_qa": dict(n_frames=4, n_questions=3, questions=qs),
        "videotpo_gradient": dict(current_prompt="A ball falls.", critique="too slow", task_definition="physics"),
        "videotpo_loss": dict(current_prompt="A ball falls.", task_definition="physics", n_videos=2),
        "videotpo_update": dict(current_prompt="A ball falls.", gradient="say where", max_tokens=300),
    }


def _parsers():
    from vreason.optimize.videotpo import free_text, improved_prompt
    from vreason.protocols.mmecof.protocol import quality_parser, step_parser
    from vreason.protocols.pai.g.protocol import reply_parser
    from vreason.protocols.pai.u.protocol import answer_text
    from vreason.protocols.rise.scorers import yes_no_list_parser
    from vreason.protocols.ruler.tools import checklist_parser, enhanced_prompt_parser
    from vreason.protocols.tivibench.scorers import qa_parser

    return {  # template -> (protocol parser, the score it gives, for the non-constant check; None = not a score)
        "generic_yes_no": (parsers.yes_no(), lambda v: v),
        "mmecof_quality": (quality_parser(0, 9), lambda v: sum(v.values())),
        "mmecof_step": (step_parser(), lambda v: v[0]),
        "pai_g_vqa": (reply_parser("yes", "word"), lambda v: v),
        "pai_u_mcq": (answer_text, lambda v: v),
        "rise_pr": (parsers.likert(1, 5, "score"), lambda v: v),
        "rise_ra": (yes_no_list_parser(1, "asked", "strict"), lambda v: v[0]["yes"]),
        "rise_ra_ref": (parsers.likert(1, 5, "Score"), lambda v: v),
        "rise_tc": (parsers.likert(1, 5, "Final Score"), lambda v: v),
        "rise_vq": (parsers.likert(1, 3, "score"), lambda v: v),
        "ruler_checklist": (checklist_parser("vision rule", min_questions=6), None),
        "ruler_enhance": (enhanced_prompt_parser(50), None),
        "ruler_judge": (parsers.answer_labels(["Good", "Medium", "Poor"], 3), lambda v: tuple(v)),
        "tivibench_qa": (qa_parser(3), lambda v: tuple(v)),
        "videotpo_gradient": (free_text, None),
        "videotpo_loss": (free_text, None),
        "videotpo_update": (improved_prompt(300), None),
    }


def test_every_shipped_template_has_a_shape_that_its_protocol_parser_accepts():
    from vreason.core.registry import load_builtins, mock_replies
    from vreason.judge.mock import SHAPES
    from vreason.judge.templates import get_template, list_templates

    load_builtins()
    variables, parse = _vars(), _parsers()
    shapes = set(SHAPES) | set(mock_replies.names())  # the engine's and each benchmark package's
    assert set(list_templates()) == shapes == set(variables) == set(parse)  # a new template needs a shape
    j = MockJudge(quality=0.5, seed=2)
    for name in list_templates():
        fn, score = parse[name]
        tpl = get_template(name)
        replies = []
        for i in range(12):
            req = tpl.request(**variables[name])
            req.sample_id = f"s{i}"
            text = asyncio.run(j.complete(req)).text
            replies.append(fn(text))  # raises ParseFailure on a malformed reply
        if score is not None:
            assert len({repr(score(v)) for v in replies}) > 1, name  # not constant across samples


def test_shapes_follow_the_request():
    from vreason.judge.templates import get_template
    from vreason.protocols.ruler.tools import checklist_parser

    j = MockJudge(quality=0.5)
    v = _vars()["ruler_checklist"]
    req = get_template("ruler_checklist").request(**{**v, "category": "physical", "no_instruction_following": False})
    codes = {c for c, _ in checklist_parser("physical", 6)(asyncio.run(j.complete(req)).text)}
    assert "IF" in codes
    req = get_template("mmecof_quality").request(**{**_vars()["mmecof_quality"], "lo": 1, "hi": 3})
    from vreason.protocols.mmecof.protocol import quality_parser

    assert set(quality_parser(1, 3)(asyncio.run(j.complete(req)).text).values()) <= {1, 2, 3}
    req = get_template("videotpo_update").request(**_vars()["videotpo_update"])
    assert "<IMPROVED_VARIABLE>A ball falls.</IMPROVED_VARIABLE>" in asyncio.run(j.complete(req)).text


def test_same_text_different_sample_or_video_differs_deterministically():
    import numpy as np

    from vreason.judge.base import ImagePart

    j = MockJudge(quality=0.5, seed=0)

    def reply(sid, shade):
        req = JudgeRequest([ImagePart(np.full((16, 16, 3), shade, np.uint8)), TextPart("x")], template="rise_pr",
                           sample_id=sid)
        return asyncio.run(j.complete(req)).text

    by_sample = {reply(f"s{i}", 0) for i in range(12)}
    by_video = {reply("s0", i * 20) for i in range(12)}
    assert len(by_sample) > 1 and len(by_video) > 1
    assert reply("s3", 40) == reply("s3", 40)


def test_suite_toolqa_questions_through_the_tivibench_request_parse():
    """The suite's toolqa questions go to the judge through TiViBench's QA request (the `suite` answerer's
    place): the mock answers them in that shape, one answer per question, varying across instances."""
    from vreason.protocols.tivibench.scorers import TiviQaScorer, qa_parser
    from vreason.synth.base import RenderConfig
    from vreason.synth.suite import make_instance

    j, scorer, seen = MockJudge(quality=0.5), TiviQaScorer(), set()
    for i in range(8):
        inst = make_instance("toolqa", "easy", 0, i, RenderConfig())
        qs = [q["text"] for q in inst.state["tivibench"]["metric"]["questions"]]
        req = scorer._request(qs, [inst.solution[0], inst.solution[-1]], f"toolqa-{i}")
        seen.add(tuple(qa_parser(len(qs))(asyncio.run(j.complete(req)).text)))
    assert len(seen) > 1
