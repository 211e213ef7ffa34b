"""RULER-Bench authoring tools driven by an LLM through the judge client.

* :func:`draft_checklist` — from prompt, implicit explanation (and image) draft a checklist over
  the four metrics, in the released format, for human review (``vreason ruler draft-checklist``);
* :func:`enhance_prompt` — the paper's prompt enhancement (PE): prompt + implicit explanation →
  an enhanced generation prompt, stored as the prompt variant ``pe`` (``enhanced_prompt`` field).

Batch forms read a data.jsonl and write a new one (input untouched).
"""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass, field
from typing import Any

from vreason.protocols.judge_inputs import interleave, load_image_part
from vreason.protocols.ruler.data import METRICS, VISION_RULE, checklist_to_released, parse_checklist, read_records


@dataclass
class LLMResult:
    """What an authoring call produced: ``value`` when ``ok``, else ``reason``; ``raw`` always."""

    ok: bool
    value: Any = None
    reason: str | None = None
    raw: str | None = None
    evidence: dict[str, Any] = field(default_factory=dict)


def _request(template: str, template_path: str | None, image_path: str | None, max_tokens: int, **variables):
    from vreason.judge.base import Decoding, JudgeRequest
    from vreason.judge.templates import get_template

    tpl = get_template(template, path=template_path)
    images = {"INPUT_IMAGE": [load_image_part(image_path)] if image_path else []}
    system, user = tpl.render(has_input_image=bool(image_path), **variables)
    return JudgeRequest(parts=interleave(user, images), system=system or None,
                        decoding=Decoding(max_tokens=max_tokens), template=tpl.name, template_version=tpl.version)


def checklist_parser(category: str = "", min_questions: int = 1):
    """Reply → ``[(metric_code, question)]``: a JSON list of one-key dicts over the four metrics,
    every metric the category uses present (no IF for vision rule)."""
    from vreason.judge import parsers
    from vreason.protocols.ruler.data import metrics_for

    as_list = parsers.json_list()

    def parse(text: str):
        try:
            value = as_list(text)
        except parsers.ParseFailure:
            body = text[text.find("["): text.rfind("]") + 1] if "[" in text else ""
            value = as_list(body) if body else as_list(text)
        try:
            items = parse_checklist(value)
        except ValueError as exc:
            raise parsers.ParseFailure(str(exc)) from None
        want = metrics_for(category) if category else tuple(METRICS)
        have = {c for c, _ in items}
        if category.strip().lower() == VISION_RULE and "IF" in have:
            raise parsers.ParseFailure("vision rule checklists must not have Instruction Following questions")
        missing = [METRICS[c] for c in want if c not in have]
        if missing:
            raise parsers.ParseFailure(f"no question for {', '.join(missing)}")
        if len(items) < min_questions:
            raise parsers.ParseFailure(f"only {len(items)} questions, expected at least {min_questions}")
        return items

    parse.__name__ = "ruler_checklist"
    return parse


async def draft_checklist(client, prompt: str, implicit_explanation: str, *, image_path: str | None = None,
                          category: str = "", min_questions: int = 6, max_questions: int = 12,
                          template: str = "ruler_checklist", template_path: str | None = None,
                          max_tokens: int = 4096) -> LLMResult:
    """Draft a checklist (``value`` = released format ``[{"Rule Coherence": "..."}, ...]``)."""
    req = _request(template, template_path, image_path, max_tokens, prompt=prompt,
                   implicit_explanation=implicit_explanation, category=category,
                   no_instruction_following=category.strip().lower() == VISION_RULE,
                   min_questions=min_questions, max_questions=max_questions)
    out = await client.ask(req, checklist_parser(category, min_questions=1))
    ev = out.evidence(req).model_dump(mode="json")
    if not out.ok:
        return LLMResult(False, reason=out.reason, raw=out.raw, evidence=ev)
    return LLMResult(True, value=checklist_to_released(out.value), raw=out.raw, evidence=ev)


def enhanced_prompt_parser(max_words: int = 400):
    from vreason.judge import parsers

    obj = parsers.last_json_object(["enhanced_prompt"])

    def parse(text: str) -> str:
        v = obj(text)["enhanced_prompt"]
        if not isinstance(v, str) or not v.strip():
            raise parsers.ParseFailure("'enhanced_prompt' is empty or not text")
        if len(v.split()) > max_words:
            raise parsers.ParseFailure(f"enhanced prompt has {len(v.split())} words, more than {max_words}")
        return " ".join(v.split())

    parse.__name__ = "ruler_enhanced_prompt"
    return parse


async def enhance_prompt(client, prompt: str, implicit_explanation: str, *, image_path: str | None = None,
                         max_words: int = 200, template: str = "ruler_enhance", template_path: str | None = None,
                         max_tokens: int = 4096) -> LLMResult:
    """The paper's PE: ``value`` = the enhanced generation prompt."""
    req = _request(template, template_path, image_path, max_tokens, prompt=prompt,
                   implicit_explanation=implicit_explanation, max_words=max_words)
    out = await client.ask(req, enhanced_prompt_parser(max_words=2 * max_words))
    ev = out.evidence(req).model_dump(mode="json")
    if not out.ok:
        return LLMResult(False, reason=out.reason, raw=out.raw, evidence=ev)
    return LLMResult(True, value=out.value, raw=out.raw, evidence=ev)


def _img(rec: dict[str, Any], root: str) -> str | None:
    rel = str(rec.get("input_image_path") or "").strip()
    return (rel if os.path.isabs(rel) else os.path.join(root, rel)) if rel else None


async def _batch(data_path: str, out_path: str, fn, key: str, *, only_missing: bool, concurrency: int,
                 root: str | None) -> dict[str, Any]:
    root = root if root is not None else os.path.dirname(os.path.abspath(data_path))
    rows = read_records(data_path)
    sem = asyncio.Semaphore(max(1, concurrency))
    report: dict[str, Any] = {"written": 0, "kept": 0, "failed": []}

    async def one(where: str, rec: dict[str, Any]) -> dict[str, Any]:
        if only_missing and rec.get(key):
            report["kept"] += 1
            return rec
        async with sem:
            try:
                res = await fn(rec, _img(rec, root))
            except Exception as exc:  # noqa: BLE001 - one bad record must not stop the batch
                res = LLMResult(False, reason=f"{type(exc).__name__}: {exc}")
        if not res.ok:
            report["failed"].append({"where": where, "reason": res.reason, "raw": res.raw})
            return rec
        report["written"] += 1
        return {**rec, key: res.value, f"{key}_status": "draft"}

    recs = await asyncio.gather(*(one(w, r) for w, r, err in rows if r is not None))
    os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
    with open(out_path, "w", encoding="utf-8") as fh:
        for rec in recs:
            fh.write(json.dumps(rec, ensure_ascii=False, default=str) + "\n")
    report["unreadable"] = [{"where": w, "reason": err} for w, r, err in rows if r is None]
    return report


async def draft_checklists(client, data_path: str, out_path: str, *, only_missing: bool = True,
                           concurrency: int = 8, root: str | None = None, **kw: Any) -> dict[str, Any]:
    """Draft ``checklist`` for every record (by default only those without one) of a data.jsonl /
    parquet; write all records to ``out_path`` (drafted ones get ``checklist_status: "draft"``)."""
    async def fn(rec, image):
        return await draft_checklist(client, str(rec.get("prompt", "")), str(rec.get("implicit_explanation") or ""),
                                     image_path=image, category=str(rec.get("category", "")), **kw)
    return await _batch(data_path, out_path, fn, "checklist", only_missing=only_missing, concurrency=concurrency,
                        root=root)


async def enhance_prompts(client, data_path: str, out_path: str, *, only_missing: bool = True,
                          concurrency: int = 8, root: str | None = None, **kw: Any) -> dict[str, Any]:
    """Add ``enhanced_prompt`` (→ prompt variant ``pe`` when loaded) to every record; write to ``out_path``."""
    async def fn(rec, image):
        return await enhance_prompt(client, str(rec.get("prompt", "")), str(rec.get("implicit_explanation") or ""),
                                    image_path=image, **kw)
    return await _batch(data_path, out_path, fn, "enhanced_prompt", only_missing=only_missing,
                        concurrency=concurrency, root=root)
