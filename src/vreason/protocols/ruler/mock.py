"""The mock judge's replies to RULER-Bench's templates (``--judge mock``), in each template's output schema."""

from __future__ import annotations

import json
import re

from vreason.judge.base import JudgeRequest
from vreason.judge.mock import Rng, Shape, n_questions

_ASPECTS = ("Instruction Following", "Visual Consistency", "Visual Fidelity", "Rule Coherence")


def _checklist(r: Rng, q: float, req: JudgeRequest, t: str) -> str:
    aspects = [a for a in _ASPECTS if not (a == "Instruction Following" and "do NOT write Instruction" in t)]
    m = re.search(r"Write (\d+) to (\d+) questions", t)
    n = max(len(aspects), int(m.group(1)) if m else 0)
    items = [aspects[i] if i < len(aspects) else "Rule Coherence" for i in range(n)]
    return json.dumps([{a: f"mock question {i + 1}: is the expected outcome visible?"} for i, a in enumerate(items)])


MOCK_REPLIES: dict[str, Shape] = {
    "ruler_judge": lambda r, q, req, t: "<think>mock</think><answer>"
    + json.dumps(
        [("Good" if r.good(q) else ("Medium" if r.good(0.5) else "Poor")) for _ in range(n_questions(req, t))]
    )
    + "</answer>",
    "ruler_checklist": _checklist,
    "ruler_enhance": lambda r, q, req, t: json.dumps(
        {"enhanced_prompt": "mock enhanced prompt: the expected outcome is shown clearly."}
    ),
}
