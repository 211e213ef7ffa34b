"""The judge contract: what every judge backend takes and returns.

A :class:`JudgeRequest` is a system prompt plus ordered content parts (text, images given as
frames, optionally a whole video) and decoding settings. A backend returns a
:class:`JudgeReply` (raw text + usage). Parsing, retries, re-asks, caching and accounting
live above the backends (``vreason.judge.client``), so every backend gets them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np


@dataclass
class TextPart:
    text: str
    type: Literal["text"] = "text"


@dataclass
class ImagePart:
    """An RGB uint8 frame (H×W×3). ``label`` is optional text placed before it by templates."""

    image: np.ndarray
    label: str | None = None
    type: Literal["image"] = "image"


@dataclass
class VideoPart:
    """A whole video, for servers that accept ``video_url`` parts (e.g. vLLM)."""

    path: str
    fps: float | None = None
    type: Literal["video"] = "video"


Part = TextPart | ImagePart | VideoPart


@dataclass
class Decoding:
    temperature: float = 0.0
    seed: int | None = 0
    max_tokens: int | None = 2048
    top_p: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        d = {"temperature": self.temperature, "seed": self.seed, "max_tokens": self.max_tokens}
        if self.top_p is not None:
            d["top_p"] = self.top_p
        d.update(self.extra)
        return d


@dataclass
class JudgeRequest:
    parts: list[Part]
    system: str | None = None
    decoding: Decoding = field(default_factory=Decoding)
    template: str = ""
    template_version: str = ""


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass
class JudgeReply:
    text: str
    usage: Usage = field(default_factory=Usage)
    finish_reason: str | None = None
    cached: bool = False
    max_tokens: int | None = None
    """The completion-token cap the reply was produced under, when the client had to grow it."""


class Judge(ABC):
    """A backend. ``identity`` names it in every score (backend/model@host, never a key)."""

    backend: str = ""

    @property
    @abstractmethod
    def identity(self) -> str: ...

    @abstractmethod
    async def complete(self, request: JudgeRequest) -> JudgeReply:
        """One request, one reply. Raise on transport errors; the client retries by class."""

    async def aclose(self) -> None:  # pragma: no cover - default no-op
        return None
