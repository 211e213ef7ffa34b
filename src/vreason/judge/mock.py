"""A mock judge (like Inspect's ``mockllm``): well-formed, deterministic replies for every template.

Replies are scores, not measurements: they come from a hash of (seed, template, request text), never
from call order, so concurrency does not change them. ``quality`` in [0, 1] is how often a binary
answer is the "good" one and how high a graded score sits on average. The reply shape for each
template is declared in :data:`SHAPES` (one place); an unknown template gets a yes/no answer.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from typing import Any

from vreason.errors import ConfigError
from vreason.judge.base import ImagePart, Judge, JudgeReply, JudgeRequest, Usage
from vreason.judge.scripted import request_text


class _Rng:
    """Uniform draws from a hash of the request: the same request always gets the same draws."""

    def __init__(self, key: str):
        self.key, self.n = key, 0

    def u(self) -> float:
        self.n += 1
        h = hashlib.sha256(f"{self.key}#{self.n}".encode()).digest()
        return int.from_bytes(h[:8], "big") / 2**64

    def good(self, q: float) -> bool:
        return self.u() < q

    def grade(self, q: float, lo: int, hi: int) -> int:
        # mean rises with quality: a draw around lo + q*(hi-lo), spread by one step
        x = lo + q * (hi - lo) + (self.u() - 0.5) * 2
        return max(lo, min(hi, round(x)))


def _n_questions(text: str) -> int:
    m = re.search(r"There are (\d+) questions", text)
    if m:
        return int(m.group(1))
    n = len(re.findall(r"(?m)^\s*(?:Q)?\d+[.):]\s+\S", text))
    return max(1, n)


def _yn(r: _Rng, q: float, yes: str = "Yes", no: str = "No") -> str:
    return yes if r.good(q) else no


Shape = Callable[[_Rng, float, str], str]

SHAPES: dict[str, Shape] = {
    "generic_yes_no": lambda r, q, t: _yn(r, q),
    "pai_g_vqa": lambda r, q, t: _yn(r, q, "YES", "NO"),
    "rise_ra": lambda r, q, t: json.dumps(
        [{"question": f"Q{i + 1}", "answer": _yn(r, q), "reason": "mock"} for i in range(_n_questions(t))]
    ),
    "rise_ra_ref": lambda r, q, t: json.dumps({"Question": "mock", "Score": r.grade(q, 1, 5), "Reason": "mock"}),
    "rise_tc": lambda r, q, t: json.dumps(
        {"Instruction": "mock", "Final Score": r.grade(q, 1, 5), "Reason": "mock"}
    ),
    "rise_pr": lambda r, q, t: json.dumps({"score": r.grade(q, 1, 5), "justification": "mock"}),
    "rise_vq": lambda r, q, t: json.dumps({"score": r.grade(q, 1, 3), "justification": "mock"}),
    "mmecof_step": lambda r, q, t: json.dumps({"reason": "mock", "completed": _yn(r, q, "yes", "no")}),
    "tivibench_qa": lambda r, q, t: json.dumps(
        {"answers": [_yn(r, q, "yes", "no") for _ in range(_n_questions(t))]}
    ),
    "ruler_judge": lambda r, q, t: "<answer>"
    + json.dumps([("Good" if r.good(q) else ("Medium" if r.good(0.5) else "Poor")) for _ in range(_n_questions(t))])
    + "</answer>",
    "ruler_enhance": lambda r, q, t: json.dumps({"enhanced_prompt": "mock enhanced prompt"}),
    "pai_u_mcq": lambda r, q, t: f"<think>mock</think><answer>{'ABCD'[int(r.u() * 4)]}</answer>",
    "videotpo_gradient": lambda r, q, t: "mock feedback: state the expected outcome explicitly.",
    "videotpo_loss": lambda r, q, t: "mock analysis.",
    "videotpo_update": lambda r, q, t: "mock revised prompt",
}


class MockJudge(Judge):
    backend = "mock"

    def __init__(self, *, quality: float = 0.5, seed: int = 0):
        if not 0.0 <= quality <= 1.0:
            raise ConfigError(f"mock judge: quality must be in [0, 1], got {quality}")
        self.quality, self.seed = float(quality), int(seed)

    @property
    def identity(self) -> str:
        return f"mock:quality={self.quality:g},seed={self.seed}"

    def settings(self) -> dict[str, Any]:
        return {"mock": True, "quality": self.quality, "seed": self.seed}

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        text = request_text(request)
        r = _Rng(f"{self.seed}|{request.template}|{text}")
        shape = SHAPES.get(request.template, SHAPES["generic_yes_no"])
        reply = shape(r, self.quality, text)
        n_img = sum(isinstance(p, ImagePart) for p in request.parts)
        return JudgeReply(reply, Usage(len(text) // 4 + 85 * n_img, max(1, len(reply) // 4)), "stop")


def parse_mock_args(rest: str) -> dict[str, Any]:
    cfg: dict[str, Any] = {"backend": "mock"}
    for kv in filter(None, (s.strip() for s in rest.split(","))):
        k, _, v = kv.partition("=")
        if k not in ("quality", "seed") or not v:
            raise ConfigError(f"mock judge: expected quality=Q,seed=N, got {kv!r}")
        try:
            cfg[k] = float(v) if k == "quality" else int(v)
        except ValueError:
            raise ConfigError(f"mock judge: {k} must be a number, got {v!r}") from None
    return cfg
