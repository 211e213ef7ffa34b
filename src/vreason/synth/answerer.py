"""The built-in suite's QA answerer: a judge backend (``--judge suite``) that answers the suite's scripted
yes/no questions by evaluating each question's programmatic predicate on the frames it is sent.

It lets the whole VLM-QA path — frames sampled and sent, the template's prompt, the reply parsed, the
all-correct rule — run offline with known right answers. It reads the numbered questions of the request
(``1. …?`` lines, after a ``Questions`` heading when there is one), answers each with the predicate of the
suite's question grammar (:data:`vreason.synth.families.toolqa.family.QUESTIONS`) on the request's images in
order (first … last), and replies ``{"answers": ["yes" | "no", …]}``. A question outside the grammar, a request with no
numbered question or no image gets the reply ``I don't know.`` — which no QA parser accepts, so the
sample ends unscored with the raw reply, never counted as a wrong answer.
"""

from __future__ import annotations

import json
import re
from typing import Any

from vreason.judge.base import ImagePart, Judge, JudgeReply, JudgeRequest, TextPart, Usage

DONT_KNOW = "I don't know."
_NUMBERED = re.compile(r"^\s*(\d+)[.)]\s+(.+?)\s*$")


def questions(text: str) -> list[str]:
    """The numbered questions of a request text (those after the last line mentioning "Questions", if any)."""
    lines = text.splitlines()
    heads = [i for i, ln in enumerate(lines) if "question" in ln.lower() and not _NUMBERED.match(ln)]
    start = heads[-1] + 1 if heads else 0
    return [m.group(2) for ln in lines[start:] if (m := _NUMBERED.match(ln))]


class SuiteAnswerer(Judge):
    """Answers the suite's scripted questions by their predicates (offline, deterministic)."""

    backend = "suite"

    def __init__(self, name: str = "answerer", **_: Any) -> None:
        self.name = name or "answerer"
        self.requests = 0

    @property
    def identity(self) -> str:
        return f"suite:{self.name}"

    def settings(self) -> dict[str, Any]:
        return {}

    def reply_text(self, request: JudgeRequest) -> str:
        from vreason.synth.families.toolqa.family import answer

        text = "\n".join(p.text for p in request.parts if isinstance(p, TextPart))
        qs = questions(text)
        frames = [p.image for p in request.parts if isinstance(p, ImagePart)]
        if not qs or not frames:
            return DONT_KNOW
        answers = [answer(q, frames) for q in qs]
        if any(a is None for a in answers):
            return DONT_KNOW
        return json.dumps({"answers": answers})

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        self.requests += 1
        text = self.reply_text(request)
        n_img = sum(isinstance(p, ImagePart) for p in request.parts)
        return JudgeReply(text=text, usage=Usage(85 * n_img, max(1, len(text) // 4)), finish_reason="stop")
