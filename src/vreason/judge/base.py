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
    """An RGB uint8 frame (H×W×3). ``label`` is optional text placed before it by templates.

    How it is encoded for the judge is the backend's default (its ``image`` settings) unless the
    part says otherwise: ``quality`` = JPEG at that quality (what a protocol's released code sends,
    e.g. RISE Temporal Consistency at 90); ``data`` = send these original file bytes untouched, as
    ``mime`` (``image`` is then their decoded pixels, used by backends that take pixels and by the
    dry-run estimate). See :func:`image_part_from_file` and :meth:`encoding`.
    """

    image: np.ndarray
    label: str | None = None
    type: Literal["image"] = "image"
    quality: int | None = None
    data: bytes | None = None
    mime: str | None = None

    def __post_init__(self) -> None:
        if self.quality is not None and not 1 <= int(self.quality) <= 100:
            raise ValueError(f"JPEG quality must be in 1..100, got {self.quality}")
        if self.data is not None and not self.mime:
            raise ValueError("an image part with original bytes needs their MIME type")

    def encoding(self) -> str:
        """What the part asks for: ``original-bytes:<mime>``, ``jpeg:q<quality>`` or ``judge-default``."""
        if self.data is not None:
            return f"original-bytes:{self.mime}"
        if self.quality is not None:
            return f"jpeg:q{int(self.quality)}"
        return "judge-default"


def image_part_from_file(path: str, *, label: str | None = None) -> ImagePart:
    """An :class:`ImagePart` carrying a file's original bytes (sent untouched, with the file's own
    MIME type) and their decoded RGB pixels. Raises ``OSError`` / ``PIL.UnidentifiedImageError``
    when the file cannot be read or decoded."""
    import io

    from PIL import Image

    with open(path, "rb") as f:
        data = f.read()
    with Image.open(io.BytesIO(data)) as im:
        fmt = (im.format or "").upper()
        pixels = np.asarray(im.convert("RGB"))
    mime = Image.MIME.get(fmt) or "application/octet-stream"
    return ImagePart(pixels, label=label, data=data, mime=mime)


def image_encodings(parts: list[Part]) -> list[str]:
    """The distinct encodings the image parts of ``parts`` ask for, in order of first appearance."""
    return list(dict.fromkeys(p.encoding() for p in parts if isinstance(p, ImagePart)))


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
    sample_id: str | None = None
    """The sample the request is about (set by the scorers; not sent, not part of the cache key): lets a
    scripted judge match a rule by sample and the mock judge tell samples with the same text apart."""


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
