"""The built-in verifiable suite as a protocol: ``vreason run synth --models oracle,static,…``.

Options: :class:`SynthOptions` (``vreason list --options``). A built suite's images go under
``<run_dir>/synth_data`` (or ``<out_dir>/synth_data``); without either they go to a cache folder
keyed by the config (``$VREASON_CACHE`` or ``~/.cache/vreason``).
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any, ClassVar, Literal

import pandas as pd
from pydantic import Field, field_validator

from vreason.core.options import INTERNAL, ProtocolOptions
from vreason.core.protocol import AggregateResult, LoadResult, Protocol, Requirement
from vreason.core.records import Sample
from vreason.core.registry import benchmarks
from vreason.core.scoring import Scorer
from vreason.synth.scorer import DEFAULT_MAX_FRAMES, SynthVerifierScorer

__all__ = ["OCR_FAMILIES", "SynthOptions", "SynthProtocol", "SynthVerifierScorer"]

OCR_FAMILIES = ("sudoku", "arithmetic", "numseq")
"""Families whose verifier reads text with OCR (the ``ocr`` extra; tests/test_list_extras.py checks it)."""


class SynthOptions(ProtocolOptions):
    """Options of ``vreason run synth`` (the built-in suite)."""

    data: str | None = Field(None, description="A folder written by `vreason synth generate`; without it the "
                             "suite is built here from the options below.")
    families: list[str] | None = Field(None, description="Task families to build (list or comma-separated); "
                                       "default: all. Unknown names fail when the suite is built.")
    difficulties: list[Literal["easy", "medium", "hard"]] | None = Field(
        None, description="Difficulties to build (list or comma-separated); default: easy, medium, hard.")
    per_task: int = Field(10, ge=1, description="Instances per family × difficulty.")
    seed: int = Field(0, description="Seed of the task generator (`--suite-seed`).")
    width: int = Field(640, ge=16, description="Render width in pixels.")
    height: int = Field(360, ge=16, description="Render height in pixels.")
    fps: int = Field(16, ge=1, description="Render frame rate.")
    seconds: float = Field(4.0, gt=0, description="Length of a solution video in seconds.")
    write_videos: bool = Field(False, description="Also write the ground-truth solution videos when building.")
    shortcut_mode: Literal["fade", "cut"] | None = Field(
        None, description="How the `shortcut` model reaches the end state: a cross-fade or a cut; default: the "
        "model's own (fade).")
    max_frames: int = Field(DEFAULT_MAX_FRAMES, ge=1, description="Decode cap per video for the verifiers "
                            "(frames beyond it are not read).")
    out_dir: str | None = Field(None, description="Where a built suite goes when there is no run folder.",
                                json_schema_extra=INTERNAL)

    @field_validator("families", "difficulties", mode="before")
    @classmethod
    def _split(cls, v: Any) -> Any:
        if v is None or v == "" or v == []:
            return None
        if isinstance(v, str):
            return [x.strip() for x in v.split(",") if x.strip()] or None
        return v


@benchmarks.register("synth", summary="Built-in procedurally generated, verifiable suite (offline)")
class SynthProtocol(Protocol):
    """Built-in suite: maze, symmetry, sorting, connect colours, odd-one-out, sequence, gravity, sliding."""

    name = "synth"
    summary = "Built-in procedurally generated, verifiable suite (offline)"
    default_seeds = (0,)
    options_model: ClassVar[type[ProtocolOptions]] = SynthOptions
    requires = (Requirement("ocr", "families " + ", ".join(OCR_FAMILIES) + " (unscored without it)"),)
    opts: SynthOptions

    def __init__(self, **options: Any):
        super().__init__(**options)
        from vreason.synth.base import RenderConfig

        o = self.opts
        self.families, self.difficulties = o.families, o.difficulties
        self.per_task, self.seed = o.per_task, o.seed
        self.cfg = RenderConfig(width=o.width, height=o.height, fps=o.fps, seconds=o.seconds)

    def _build_dir(self) -> str:
        base = self.opts.run_dir or self.opts.out_dir
        if base:
            return os.path.join(str(base), "synth_data")
        key = json.dumps([self.families, self.difficulties, self.per_task, self.seed, self.cfg.__dict__],
                         sort_keys=True, default=str)
        digest = hashlib.sha1(key.encode()).hexdigest()[:12]
        cache = os.environ.get("VREASON_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "vreason")
        return os.path.join(cache, "synth", digest)

    def load(self) -> LoadResult:
        from vreason.synth.suite import build_samples, load_benchmark

        if self.opts.data:
            return load_benchmark(self.opts.data)
        samples = build_samples(self.families, self.difficulties, self.per_task, self.seed, self.cfg,
                                self._build_dir(), write_videos=self.opts.write_videos)
        return LoadResult(samples=samples)

    def scorers(self) -> list[Scorer]:
        return [SynthVerifierScorer()]

    def generator(self, model: str):
        from vreason.synth.models import BUILTIN_MODELS

        cls = BUILTIN_MODELS.get(model)
        if cls is None:
            return None
        params: dict[str, Any] = {}
        if model == "shortcut" and self.opts.shortcut_mode:
            params["mode"] = self.opts.shortcut_mode
        return cls(**params)

    def aggregate(self, scores: pd.DataFrame, samples: list[Sample], out_dir: str) -> AggregateResult:
        from vreason.protocols.synth.tables import synth_tables

        return synth_tables(scores, out_dir)
