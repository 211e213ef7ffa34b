"""The mock judge's replies to MME-CoF-Pro's templates (``--judge mock``), in each template's output schema."""

from __future__ import annotations

import json
import re

from vreason.judge.base import JudgeRequest
from vreason.judge.mock import Rng, Shape, yes_no


def _quality(r: Rng, q: float, req: JudgeRequest, t: str) -> str:
    m = re.search(r"integer from (-?\d+) \(worst\) to (-?\d+) \(best\)", t)
    lo, hi = (int(m.group(1)), int(m.group(2))) if m else (0, 9)
    keys = ("consistency", "temporal_consistency", "visual_stability", "hallucination", "physics_grounding")
    return json.dumps({**{k: r.grade(q, lo, hi) for k in keys}, "reason": "mock"})


MOCK_REPLIES: dict[str, Shape] = {
    "mmecof_step": lambda r, q, req, t: json.dumps({"reason": "mock", "completed": yes_no(r, q, "yes", "no")}),
    "mmecof_quality": _quality,
}
