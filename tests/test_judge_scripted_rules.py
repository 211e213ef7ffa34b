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


def _doc_script(tmp_path):
    import pathlib
    import re

    doc = (pathlib.Path(__file__).resolve().parents[1] / "docs" / "judges.md").read_text(encoding="utf-8")
    block = re.search(r"```jsonl\n(.*?)```", doc, re.DOTALL).group(1)
    path = tmp_path / "doc.jsonl"
    path.write_text(block, encoding="utf-8")
    return str(path)


def test_documented_worked_examples_parse_with_each_protocols_parser(tmp_path):
    """docs/judges.md: one rule per shipped template, each reply accepted by that template's protocol parser."""
    from test_judge_mock import _parsers
    from vreason.judge import parsers
    from vreason.judge.scripted import load_script
    from vreason.judge.templates import list_templates
    from vreason.protocols.rise.scorers import yes_no_list_parser
    from vreason.protocols.ruler.tools import checklist_parser
    from vreason.protocols.tivibench.scorers import qa_parser

    parse = {name: fn for name, (fn, _) in _parsers().items()}
    parse.update(rise_ra=yes_no_list_parser(1, "returned"), ruler_checklist=checklist_parser(""),
                 ruler_judge=parsers.answer_labels(["Good", "Medium", "Poor"], 3), tivibench_qa=qa_parser(2))
    path = _doc_script(tmp_path)
    entries = load_script(path)
    assert {e["template"] for e in entries} == set(list_templates()) - {"generic_yes_no"}
    judge = ScriptedJudge(path)
    for e in entries:
        req = _req(e.get("sample"), e["template"], e.get("match", "any text"))
        text = asyncio.run(judge.complete(req)).text
        assert text == (e["reply"] if isinstance(e["reply"], str) else json.dumps(e["reply"]))
        parse[e["template"]](text)  # raises ParseFailure on a malformed example
