"""Scripted judge rules keyed by sample id and template: the same reply whatever the call order."""

import asyncio
import json
import random

from vreason.judge.base import JudgeRequest, TextPart
from vreason.judge.scripted import ScriptedJudge
from vreason.judge.spec import make_judge


def _req(sid, template="rise_pr", text="rate it"):
    return JudgeRequest([TextPart(text)], template=template, sample_id=sid)


def test_rules_by_sample_and_template_are_order_free():
    script = [
        {"sample": "a", "template": "rise_pr", "reply": '{"score": 5, "justification": "a"}'},
        {"sample": "a", "reply": "Yes"},
        {"template": "rise_pr", "match": "odd", "reply": '{"score": 1, "justification": "odd"}'},
        {"template": "rise_pr", "reply": '{"score": 3, "justification": "rest"}'},
    ]
    reqs = [_req("a"), _req("a", "pai_g_vqa"), _req("b", text="odd one"), _req("c"), _req("c", "other")]
    want = ['{"score": 5, "justification": "a"}', "Yes", '{"score": 1, "justification": "odd"}',
            '{"score": 3, "justification": "rest"}', None]

    async def run(order):
        j = ScriptedJudge(script, cycle=False)
        out = {}
        for i in order:
            try:
                out[i] = (await j.complete(reqs[i])).text
            except Exception:  # no rule and no ordered entry: a fatal transport error, never an invented reply
                out[i] = None
        return [out[i] for i in range(len(reqs))]

    for _ in range(5):
        order = list(range(len(reqs)))
        random.shuffle(order)
        assert asyncio.run(run(order)) == want


def test_jsonl_sample_rules_through_the_client_cache_keyed_by_sample(tmp_path):
    from vreason.judge import parsers

    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(json.dumps(e) for e in [
        {"sample": "x", "reply": "Yes"}, {"sample": "y", "reply": "No"}]) + "\n")
    cache = str(tmp_path / "cache.sqlite")

    async def ask(sid):
        client = make_judge(f"scripted:{path}", cache_path=cache)
        try:
            return (await client.ask(_req(sid, "generic_yes_no", "same text"), parsers.yes_no())).value
        finally:
            await client.aclose()

    # same request text for both samples: the cache must not hand x's answer to y
    assert [asyncio.run(ask(s)) for s in ("x", "y", "x", "y")] == [True, False, True, False]
