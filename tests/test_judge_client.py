"""JudgeClient with the scripted backend: re-asks, unscored outcomes, repeats, cache, dry run."""

from __future__ import annotations

import asyncio
import json

import numpy as np
import pytest

from vreason.judge import parsers
from vreason.judge.accounting import Price
from vreason.judge.base import Decoding, ImagePart, JudgeRequest, TextPart
from vreason.judge.cache import ReplyCache
from vreason.judge.client import JudgeClient
from vreason.judge.retry import RetryPolicy
from vreason.judge.scripted import ScriptedJudge
from vreason.judge.spec import make_judge

FAST = RetryPolicy(max_retries=3, base=0.001, seed=0)


def req(text="Is the ball red?", n_img=0, template="generic_yes_no", version="1"):
    parts = [TextPart(text)] + [ImagePart(np.full((8, 8, 3), i, np.uint8)) for i in range(n_img)]
    return JudgeRequest(parts=parts, system="sys", template=template, template_version=version)


def run(coro):
    return asyncio.run(coro)


def client(script, **kw):
    kw.setdefault("retry", FAST)
    return JudgeClient(ScriptedJudge(script), **kw)


def test_value_and_evidence():
    c = client(["Yes"])
    r = req()
    o = run(c.ask(r, parsers.yes_no()))
    assert o.ok and o.value is True and o.reason is None
    ev = o.evidence(r)
    assert ev.judge == "scripted:list" and ev.template == "generic_yes_no" and ev.template_version == "1"
    assert ev.raw_reply == "Yes" and ev.attempts == 1 and ev.cached is False
    assert ev.decoding == Decoding().as_dict()


def test_reask_then_value():
    c = client(["Let me look... hard to say", "No"])
    o = run(c.ask(req(), parsers.yes_no()))
    assert o.ok and o.value is False and o.attempts == 2
    repair = c.judge.requests[1].parts[-1].text
    assert "could not be used" in repair and "hard to say" in repair
    assert c.stats()["reasks"] == 1


def test_never_parses_is_unscored_not_zero():
    c = client(["Score: 9", "Score: 0"], reasks=1)
    o = run(c.ask(req(), parsers.likert(1, 5)))
    assert not o.ok and o.value is None
    assert "outside the scale" in o.reason and o.raw == "Score: 0"
    assert o.evidence(req()).model_dump()["reason"] == o.reason
    assert c.stats()["unscored"] == 1


def test_transport_errors_retry_then_value_or_unscored():
    c = client([{"error": "server"}, {"error": "timeout"}, "Yes"])
    o = run(c.ask(req(), parsers.yes_no()))
    assert o.ok and o.value is True and o.requests == 3 and c.stats()["retries"] == 2
    c2 = client([{"error": "server"}] * 10)
    o2 = run(c2.ask(req(), parsers.yes_no()))
    assert not o2.ok and o2.value is None and "server" in o2.reason and "gave up after 4" in o2.reason
    c3 = client([{"error": "fatal"}, "Yes"])
    o3 = run(c3.ask(req(), parsers.yes_no()))
    assert not o3.ok and o3.requests == 1 and len(c3.judge.requests) == 1  # fatal: sent once, no retry


def test_repeats_majority_median_and_spread():
    c = client(["Yes", "No", "Yes"], repeats=3)
    o = run(c.ask(req(), parsers.yes_no()))
    assert o.ok and o.value is True and o.spread["agreement"] == pytest.approx(2 / 3)
    seeds = sorted(r.decoding.seed for r in c.judge.requests)
    assert seeds == [0, 1, 2]  # each repeat has its own seed
    c = client(["2", "5", "3"], repeats=3, reduce="median")
    o = run(c.ask(req(), parsers.likert(1, 5)))
    assert o.ok and o.value == 3 and o.spread["min"] == 2 and o.spread["max"] == 5
    assert len(o.evidence(req()).model_dump()["raw_replies"]) == 3
    c = client(["Yes", "No"], repeats=2)
    o = run(c.ask(req(), parsers.yes_no()))
    assert not o.ok and "no majority" in o.reason
    c = client(["Yes", "??", "??", "??", "??", "??"], repeats=3, reasks=1)
    o = run(c.ask(req(), parsers.yes_no()))
    assert not o.ok and "only 1/3 repeats parsed" in o.reason


def test_cache_second_run_sends_nothing(tmp_path):
    path = str(tmp_path / "cache.sqlite")
    script = ["Yes", "No"]
    c1 = client(list(script), cache=ReplyCache(path))
    o1 = [
        run(c1.ask(req("q1", n_img=2), parsers.yes_no())),
        run(c1.ask(req("q2", n_img=2), parsers.yes_no())),
    ]
    c2 = client([], cache=ReplyCache(path))  # an empty script: any request would fail
    o2 = [
        run(c2.ask(req("q1", n_img=2), parsers.yes_no())),
        run(c2.ask(req("q2", n_img=2), parsers.yes_no())),
    ]
    assert [o.value for o in o1] == [o.value for o in o2] == [True, False]
    assert c2.judge.requests == [] and c2.stats()["cache_hits"] == 2 and all(o.cached for o in o2)
    # a different image, template version or decoding is a different question
    for other in (req("q1", n_img=3), req("q1", n_img=2, version="2")):
        assert not run(c2.ask(other, parsers.yes_no())).ok
    # refresh asks again and overwrites
    c3 = client(["No"], cache=ReplyCache(path), refresh=True)
    assert run(c3.ask(req("q1", n_img=2), parsers.yes_no())).value is False
    c4 = client([], cache=ReplyCache(path))
    assert run(c4.ask(req("q1", n_img=2), parsers.yes_no())).value is False


def test_dry_run_counts_without_sending(tmp_path):
    script = tmp_path / "replies.jsonl"
    script.write_text(json.dumps("Yes") + "\n")
    c = make_judge(f"scripted:{script}", dry_run=True)
    c.price = Price(input=1.0, output=2.0)
    outs = [run(c.ask(req(f"q{i}", n_img=4), parsers.yes_no())) for i in range(3)]
    assert all(not o.ok and o.reason.startswith("dry run") for o in outs)
    s = c.stats()
    assert s["requests"] == 0 and s["estimated_requests"] == 3 and s["estimated_images"] == 12
    assert s["estimated_prompt_tokens"] > 12 * 85 and s["estimated_cost"] > 0
    assert c.judge.requests == []


@pytest.mark.parametrize(("model", "cap", "completion", "words"), [
    ("gpt-5", 8192, 25000, "the cap sent to a reasoning judge (floor 25000)"),  # raised to the floor
    ("o3", 40000, 40000, "an upper bound"),  # a cap above the floor is what is sent
    ("gpt-4o", 8192, 256, "a short answer"),
    ("gpt-4o", 100, 100, "a short answer"),  # never more than the cap
])
def test_dry_run_completion_tokens_follow_the_token_floor(monkeypatch, model, cap, completion, words):
    monkeypatch.setenv("OPENAI_API_KEY", "dry")
    c = make_judge(f"openai:{model}", dry_run=True)
    c.price = Price(input=1.0, output=10.0)
    r = JudgeRequest(parts=[TextPart("Is the ball red?")], system="sys", decoding=Decoding(max_tokens=cap))
    for _ in range(2):
        run(c.ask(r, parsers.yes_no()))
    s = c.stats()
    assert s["estimated_requests"] == 2 and s["estimated_completion_tokens"] == 2 * completion
    assert s["estimated_cost"] == pytest.approx((s["estimated_prompt_tokens"] + 10 * 2 * completion) / 1e6, abs=1e-6)
    assert s["completion_assumption"].startswith(f"{completion} completion tokens per request") and words in \
        s["completion_assumption"]


def test_scripted_rules_and_exhaustion(tmp_path):
    script = tmp_path / "r.jsonl"
    script.write_text('# comment\n{"match": "red", "reply": "Yes"}\n"No"\n')
    c = make_judge(f"scripted:{script}", retry=FAST)
    assert run(c.ask(req("Is it red?"), parsers.yes_no())).value is True
    assert run(c.ask(req("Is it blue?"), parsers.yes_no())).value is False
    o = run(c.ask(req("Is it green?"), parsers.yes_no()))
    assert not o.ok and "script exhausted" in o.reason


def test_repeats_majority_over_structured_values():
    """Parsers that return dicts or lists of dicts (RISE RA, MME-CoF quality) reduce by majority
    like any other value, instead of crashing on unhashable values."""
    a, b = '{"score": 4, "ok": true}', '{"score": 2, "ok": false}'
    c = client([a, b, a], repeats=3)
    o = run(c.ask(req(), parsers.json_object()))
    assert o.ok and o.value == {"score": 4, "ok": True} and o.spread["agreement"] == pytest.approx(2 / 3)
    lst = '[{"answer": "Yes"}, {"answer": "No"}]'
    c = client([lst, lst, '[{"answer": "No"}]'], repeats=3)
    o = run(c.ask(req(), parsers.json_list()))
    assert o.ok and o.value == [{"answer": "Yes"}, {"answer": "No"}]
    c = client([a, b], repeats=2)
    o = run(c.ask(req(), parsers.json_object()))
    assert not o.ok and o.value is None and "no majority" in o.reason
