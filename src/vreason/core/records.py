"""The typed records every stage of vreason passes around.

Three records carry a run end to end:

* :class:`Sample` — one benchmark item (what to generate and how to judge it);
* :class:`Video` — one generated or imported video for a (sample, model, seed);
* :class:`Score` — one metric value a scorer produced for a video, with its evidence.

All are pydantic v2 models, serialisable to JSON, so they cross process boundaries,
land in the SQLite store and export to JSONL/CSV unchanged.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Literal, TypedDict

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

# Ids become file names and store keys: a conservative alphabet, no path separators,
# no leading dot (so "..", ".hidden" and "../x" are all rejected).
_SAFE_ID = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]{0,199}$")


def check_safe_id(value: str, what: str = "id") -> str:
    """Return ``value`` if it is a safe identifier, else raise ``ValueError`` naming it."""
    if not isinstance(value, str) or not _SAFE_ID.match(value) or ".." in value:
        raise ValueError(
            f"unsafe {what} {value!r}: use letters, digits, '_', '-', '.' (no path separators, "
            "no leading dot, no '..', at most 200 characters)"
        )
    return value


def safe_id_from(text: str) -> str:
    """Derive a safe id from arbitrary text (e.g. RULER's ``task_name`` + ``index``)."""
    out = re.sub(r"[^A-Za-z0-9_.\-]+", "_", str(text)).strip("._-") or "x"
    out = out.replace("..", "_")
    return out[:200]


class Mode(str, Enum):
    """How a sample conditions the generator."""

    t2v = "t2v"
    i2v = "i2v"
    ti2v = "ti2v"
    v2v = "v2v"


class RubricItem(BaseModel):
    """One thing a scorer checks: a yes/no question, a checklist item or a reasoning step."""

    model_config = ConfigDict(extra="forbid")

    id: str = ""
    kind: Literal["question", "checklist", "step", "focus"] = "question"
    text: str
    dimension: str = ""
    """The metric dimension this item feeds (e.g. RULER's ``Rule Coherence``)."""
    expected: str | None = None
    """Expected answer when the benchmark has one (e.g. ``"yes"``)."""


class Sample(BaseModel):
    """One benchmark item.

    ``prompt`` is the default generation prompt; ``prompt_variants`` holds named alternatives
    (hint settings such as ``text_hint``, enhanced prompts such as ``pe``). Paths are stored as
    strings, relative to ``root`` when ``root`` is set.
    """

    model_config = ConfigDict(extra="forbid")

    id: str
    benchmark: str
    category: str = ""
    task: str = ""
    difficulty: str = ""
    mode: Mode = Mode.ti2v
    prompt: str = ""
    prompt_variants: dict[str, str] = Field(default_factory=dict)
    input_image: str | None = None
    input_video: str | None = None
    reference_image: str | None = None
    reference_video: str | None = None
    rubric: list[RubricItem] = Field(default_factory=list)
    root: str | None = None
    """Folder that relative paths in this sample are resolved against."""
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("id")
    @classmethod
    def _safe(cls, v: str) -> str:
        return check_safe_id(v, "sample id")

    def resolve(self, path: str | None) -> str | None:
        """Absolute path of one of this sample's files (or ``None``)."""
        if path is None:
            return None
        import os

        if os.path.isabs(path) or not self.root:
            return path
        return os.path.join(self.root, path)

    def prompt_for(self, variant: str | None = None) -> str:
        if not variant or variant == "default":
            return self.prompt
        if variant not in self.prompt_variants:
            raise KeyError(
                f"sample {self.id}: no prompt variant {variant!r} (has: {sorted(self.prompt_variants)})"
            )
        return self.prompt_variants[variant]


class VideoStatus(str, Enum):
    ok = "ok"
    missing = "missing"
    blocked = "blocked"
    failed = "failed"


class GenerationManifest(BaseModel):
    """How a video came to be: enough to reproduce or to explain a difference."""

    model_config = ConfigDict(extra="allow")

    model_id: str = ""
    revision: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    prompt: str | None = None
    """The prompt actually sent to the generator (after any rewriting)."""
    prompt_variant: str | None = None
    source: Literal["generated", "imported"] = "imported"


class Video(BaseModel):
    """One video for (sample, model, seed); ``status`` says whether it can be scored."""

    model_config = ConfigDict(extra="forbid")

    sample_id: str
    model: str
    seed: int = 0
    path: str | None = None
    status: VideoStatus = VideoStatus.ok
    reason: str | None = None
    manifest: GenerationManifest = Field(default_factory=GenerationManifest)
    fps: float | None = None
    n_frames: int | None = None
    width: int | None = None
    height: int | None = None

    @field_validator("sample_id")
    @classmethod
    def _safe_sample(cls, v: str) -> str:
        return check_safe_id(v, "sample id")

    @field_validator("model")
    @classmethod
    def _safe_model(cls, v: str) -> str:
        return check_safe_id(v, "model name")

    @model_validator(mode="after")
    def _path_when_ok(self) -> Video:
        if self.status == VideoStatus.ok and not self.path:
            raise ValueError(f"video {self.sample_id}/{self.model}/{self.seed}: status ok needs a path")
        if self.status != VideoStatus.ok and not self.reason:
            self.reason = self.status.value
        return self

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.sample_id, self.model, self.seed)


class ScoreStatus(str, Enum):
    ok = "ok"
    unscored = "unscored"
    """The scorer ran but could not produce a value (e.g. the judge reply never parsed)."""
    error = "error"
    """The input was bad (missing / corrupt video, malformed record) or the scorer crashed."""


class JudgeEvidence(BaseModel):
    """Who judged and exactly what came back."""

    model_config = ConfigDict(extra="allow")

    judge: str
    """Judge identity: backend + model (+ base_url host, never a key)."""
    template: str = ""
    template_version: str = ""
    decoding: dict[str, Any] = Field(default_factory=dict)
    raw_reply: str | None = None
    attempts: int = 1
    cached: bool = False


class Evidence(BaseModel):
    """What a score rests on."""

    model_config = ConfigDict(extra="allow")

    frame_policy: str | None = None
    frame_indices: list[int] = Field(default_factory=list)
    judge: JudgeEvidence | None = None
    debug_images: list[str] = Field(default_factory=list)
    details: dict[str, Any] = Field(default_factory=dict)


class Score(BaseModel):
    """One metric value for one video.

    ``value`` is on the metric's native scale (e.g. 1–5); ``normalized`` is in [0, 1].
    A non-ok score has ``value``/``normalized`` = ``None`` and a ``reason`` — never 0.
    """

    model_config = ConfigDict(extra="forbid")

    sample_id: str
    model: str
    seed: int = 0
    scorer: str
    scorer_version: str = "1"
    metric: str
    value: float | None = None
    normalized: float | None = None
    status: ScoreStatus = ScoreStatus.ok
    reason: str | None = None
    passed: bool | None = None
    evidence: Evidence = Field(default_factory=Evidence)

    @model_validator(mode="after")
    def _consistent(self) -> Score:
        if self.status == ScoreStatus.ok:
            if self.value is None or (isinstance(self.value, float) and math.isnan(self.value)):
                raise ValueError(f"score {self.metric} for {self.sample_id}: status ok needs a value")
            if self.normalized is not None and not (-1e-9 <= self.normalized <= 1 + 1e-9):
                raise ValueError(f"score {self.metric}: normalized {self.normalized} outside [0, 1]")
        else:
            if self.value is not None or self.normalized is not None:
                raise ValueError(f"score {self.metric}: a {self.status.value} score carries no value")
            if not self.reason:
                raise ValueError(f"score {self.metric}: a {self.status.value} score needs a reason")
        return self

    @classmethod
    def failed(
        cls,
        status: ScoreStatus,
        reason: str,
        *,
        sample_id: str,
        model: str,
        seed: int,
        scorer: str,
        scorer_version: str = "1",
        metric: str = "*",
        evidence: Evidence | None = None,
    ) -> Score:
        """A non-ok score (unscored / error) that carries its reason and no value."""
        return cls(
            sample_id=sample_id,
            model=model,
            seed=seed,
            scorer=scorer,
            scorer_version=scorer_version,
            metric=metric,
            status=status,
            reason=reason,
            evidence=evidence or Evidence(),
        )


def normalize_likert(value: float, lo: float, hi: float) -> float:
    """Map a score on [lo, hi] to [0, 1] as (v − lo)/(hi − lo), clipped."""
    if hi <= lo:
        raise ValueError(f"bad scale [{lo}, {hi}]")
    return min(1.0, max(0.0, (float(value) - lo) / (hi - lo)))


class LoadError(TypedDict):
    """One record (or file) a loader could not use: where (file, line or record index), the field at fault
    (``record`` for the whole record) and why. Loaders may add string keys (``task_id``…); it is stored and
    reported as this JSON object."""

    where: str
    field: str
    reason: str


@dataclass
class LoadResult:
    """What every loader returns: the samples that loaded, and one error per record that did not."""

    samples: list[Sample] = field(default_factory=list)
    errors: list[LoadError] = field(default_factory=list)
    source: str = ""
    """The file the records were read from, when there is one."""
