"""A mock judge (like Inspect's ``mockllm``): well-formed, deterministic replies for every template.

Replies are scores, not measurements: they come from a hash of (seed, template, request text), never
from call order, so concurrency does not change them. ``quality`` in [0, 1] is how often a binary
answer is the "good" one and how high a graded score sits on average. The reply shape for each
template is declared beside it: the engine's in :data:`SHAPES`, each benchmark's in its package
(``mock.py``); an unknown template gets a yes/no answer.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from vreason.core.errors import ConfigError
from vreason.judge.base import ImagePart, Judge, JudgeReply, JudgeRequest, TextPart, Usage, VideoPart
from vreason.judge.scripted import request_text


class Rng:
    """Uniform draws from a hash of the request: the same request always gets the same draws."""

    def __init__(self, key: str):
        self.key, self.n = key, 0

    def u(self) -> float:
        self.n += 1
        h = hashlib.sha256(f"{self.key}#{self.n}".encode()).digest()
        return int.from_bytes(h[:8], "big") / 2**64

    def good(self, q: float) -> bool:
        return self.u() < q

    def pick(self, options: str) -> str:
        return options[min(len(options) - 1, int(self.u() * len(options)))]

    def grade(self, q: float, lo: int, hi: int) -> int:
        # mean rises with quality: a draw around lo + q*(hi-lo), spread by one step
        x = lo + q * (hi - lo) + (self.u() - 0.5) * 2
        return max(lo, min(hi, round(x)))


def n_questions(req: JudgeRequest, text: str, *, per_text_part: bool = False) -> int:
    """How many questions a request asks: a stated count (``There are N questions``, ``Questions (N)``),
    else (``per_text_part``: RISE RA) one text part per question, else the numbered lines."""
    m = re.search(r"There are (\d+) questions|Questions \((\d+)\)", text)
    if m:
        return int(m.group(1) or m.group(2))
    if per_text_part:
        return max(1, sum(isinstance(p, TextPart) for p in req.parts))
    n = len(re.findall(r"(?m)^\s*(?:Q)?\d+[.):]\s+\S", text))
    return max(1, n)


def yes_no(r: Rng, q: float, yes: str = "Yes", no: str = "No") -> str:
    return yes if r.good(q) else no


def letters(t: str) -> str:
    found = "".join(dict.fromkeys(re.findall(r"(?m)^\s*([A-Z])\s*[:.)]\s", t)))
    return found or "ABCD"


def _improved(r: Rng, q: float, req: JudgeRequest, t: str) -> str:
    m = re.search(r"<VARIABLE>\s*(.*?)\s*</VARIABLE>", t, re.DOTALL)
    return f"<IMPROVED_VARIABLE>{(m.group(1) if m else '') or 'mock revised prompt'}</IMPROVED_VARIABLE>"


Shape = Callable[[Rng, float, JudgeRequest, str], str]
"""A reply shape: (draws, quality, request, request text) -> reply text that the template's parser accepts."""

SHAPES: dict[str, Shape] = {
    "generic_yes_no": lambda r, q, req, t: yes_no(r, q),
    "videotpo_loss": lambda r, q, req, t: "mock analysis: the videos only partly carry out the task.",
    "videotpo_gradient": lambda r, q, req, t: "mock feedback: state the expected outcome explicitly.",
    "videotpo_update": _improved,
}
"""The engine's templates' shapes; each benchmark package declares its own (``PackageDeclaration.mock_replies``:
a dict template name -> shape, in the package's ``mock.py``)."""


def shape_for(template: str | None) -> Shape:
    """The reply shape of ``template``: the engine's, a benchmark package's, else a yes/no answer."""
    if template in SHAPES:
        return SHAPES[template]
    from vreason.core.registry import load_builtins, mock_replies

    load_builtins()
    if template and template in mock_replies:
        return mock_replies.get(template)[template]
    return SHAPES["generic_yes_no"]


def _content_key(req: JudgeRequest) -> str:
    """What tells two requests with the same text apart: the sample id, the decoding seed and a coarse
    digest of the images (every 8th pixel) or video paths, so that two models' videos get different replies."""
    h = hashlib.sha256()
    for p in req.parts:
        if isinstance(p, ImagePart):
            img = np.ascontiguousarray(np.asarray(p.image)[::8, ::8])
            h.update(str(img.shape).encode() + img.tobytes())
        elif isinstance(p, VideoPart):
            h.update(p.path.encode())
    return f"{req.sample_id or ''}|{req.decoding.seed}|{h.hexdigest()[:16]}"


class MockJudge(Judge):
    backend = "mock"
    replies_by_sample = True  # the sample id is part of the draw: cached under it (judge/client.py)

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
        r = Rng(f"{self.seed}|{request.template}|{_content_key(request)}|{text}")
        shape = shape_for(request.template)
        reply = shape(r, self.quality, request, text)
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
