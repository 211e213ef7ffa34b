"""The mock judge: deterministic, well-formed replies that parse with each protocol's parser."""

import asyncio

import pytest

from vreason.errors import ConfigError
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
