"""TiViBench as a protocol: ``vreason run tivibench --data DIR --videos DIR --models NAME [--judge SPEC]``.

Loader: :mod:`vreason.protocols.tivibench.data` (release layout + ``vreason_annotations.jsonl``). Scorers:
:mod:`vreason.protocols.tivibench.scorers` (the programmatic check of each sample's metric family; the
VLM QA judge for ``vlm_qa`` samples). Tables: :mod:`vreason.protocols.tivibench.tables` (Pass@1 and
unbiased Pass@5 per dimension × difficulty, Tables 1–2 of the paper). Default seeds 0..4, as the release's
``<key>-{0..4}.mp4``.

Videos: the release's layout ``<DIM>_<key>/<DIM>_<key>-<seed>.mp4`` (convention ``tivibench``) directly under
``--videos`` for one model, or under ``--videos/<model>/`` for several (found by :meth:`locate_video`).
"""

from __future__ import annotations

import os
from typing import Any, ClassVar, Literal

import pandas as pd
from pydantic import Field, field_validator

from vreason.core.errors import ConfigError
from vreason.core.options import (
    BootSeedField,
    LevelField,
    NBootField,
    ProtocolOptions,
    SeedOptions,
)
from vreason.core.protocol import AggregateResult, LoadResult, Protocol, Requirement
from vreason.core.records import Sample
from vreason.core.registry import benchmarks
from vreason.core.scoring import Scorer
from vreason.frames.policy import FramePolicyField
from vreason.protocols.tivibench.scorers import DEFAULT_QA_FRAMES, TiviCheckScorer, TiviQaScorer
from vreason.synth.scorer import DEFAULT_MAX_FRAMES


class TiviOptions(SeedOptions):
    """Options of ``vreason run tivibench``; TiViBench released no evaluation code, so the defaults follow the
    paper (appendix C) and every open point is documented in docs/tivibench.md."""

    data: str | None = Field(None, description="The TiViBench release folder (eval_cache/, images/, "
                             "vreason_annotations.jsonl); required.")
    annotations: str | None = Field(None, description="vreason annotations JSONL; default: "
                                    "DATA/vreason_annotations.jsonl.")
    field_map: str | dict[str, Any] | None = Field(None, description="Field names of the prompt files (key, "
                                                   "prompt): a YAML file or a mapping; entries given replace the "
                                                   "default candidates.")
    dimensions: list[Literal["SS", "SV", "SL", "AT"]] | None = Field(
        None, description="Only these dimensions (list or comma-separated), as the planned `--dimension`.")
    features: str | None = Field(None, description="Feature backbone of the region check (`--features`): "
                                 "transformers:/local/dinov2-folder; default: the classical descriptor "
                                 "classical:hog-hsv (named in every score's evidence).")
    detector: str | None = Field(None, description="Open-vocabulary detector of grounding / tracking checks "
                                 "(`--detector`): transformers:/local/folder; default: none (rendered tasks use "
                                 "their colour).")
    device: str | None = Field(None, description="Device of local models (`--device`): cpu, cuda, cuda:1, auto.")
    ocr: Literal["rapidocr", "none"] = Field("rapidocr", description="OCR engine of the sudoku / math / mcq / "
                                             "sequence checks; `none`: those samples are unscored.")
    max_side: int | None = Field(None, ge=16, description="Resize frames so their longest side is at most this "
                                 "before checking (default: full size).")
    max_frames: int = Field(DEFAULT_MAX_FRAMES, ge=1, description="Decode cap for checks that read every frame "
                            "(and for exported built-in suite instances, as `run synth`).")
    qa_frames: FramePolicyField = Field(
        DEFAULT_QA_FRAMES, description="Frames the VLM QA judge sees (frame policy); default "
        "16 evenly spaced.")
    qa_template: str | None = Field(None, description="Judge template of the QA scorer (default `tivibench_qa`).")
    qa_template_path: str | None = Field(None, description="A template YAML file for the QA judge.")
    judge_role: str = Field("default", description="Which judge (`--judge` = default) answers the QA questions.")
    n_boot: NBootField
    level: LevelField
    boot_seed: BootSeedField

    @field_validator("dimensions", mode="before")
    @classmethod
    def _split(cls, v: Any) -> Any:
        if v is None or v == "" or v == []:
            return None
        if isinstance(v, str):
            return [x.strip() for x in v.split(",") if x.strip()] or None
        return v


@benchmarks.register("tivibench")
class TiviBenchProtocol(Protocol):
    """TiViBench: 24 task types × 3 difficulties, programmatic checks and VLM QA, Pass@1 / Pass@5.
    Options: :class:`TiviOptions`."""

    name: ClassVar[str] = "tivibench"
    summary: ClassVar[str] = "TiViBench: 24 task types, programmatic checks + VLM QA, Pass@1 / Pass@5"
    default_seeds: ClassVar[tuple[int, ...]] = (0, 1, 2, 3, 4)
    layout: ClassVar[str] = "tivibench"
    options_model: ClassVar[type[ProtocolOptions]] = TiviOptions
    opts: TiviOptions
    requires = (Requirement("ocr", "the sudoku, math, sequence and text-mcq checks (unscored without it)"),
                Requirement("deep", "--opt features=transformers:… and detector=transformers:…", weights=True,
                            optional=True))
    judge_note = "default (--judge) once the data holds VLM-QA samples"

    @classmethod
    def judge_roles(cls, opts: Any, samples: Any = None) -> tuple[str, ...]:
        """Only the VLM-QA samples are judged: named once the loaded samples hold one."""
        if samples is None or not any((s.metadata.get("metric") or {}).get("family") == "vlm_qa" for s in samples):
            return ()
        return (opts.judge_role,)

    def load(self) -> LoadResult:
        from vreason.protocols.tivibench.data import load_tivibench

        if not self.opts.data:
            raise ConfigError("tivibench needs --data pointing at the release folder (eval_cache/, images/)")
        return load_tivibench(self.opts.data, field_map=self.opts.field_map, annotations=self.opts.annotations,
                              dimensions=self.opts.dimensions)

    def locate_video(self, model: str, sample: Sample, seed: int = 0) -> str | None:
        """``--videos/<model>/<id>/<id>-<seed>.mp4`` (several models) or ``--videos/<id>/<id>-<seed>.mp4``."""
        root = self.opts.videos
        if not root:
            return None
        name = f"{sample.id}-{seed}.mp4"
        for path in (os.path.join(root, model, sample.id, name), os.path.join(root, sample.id, name)):
            if os.path.isfile(path):
                return path
        return os.path.join(root, model, sample.id, name)

    def scorers(self) -> list[Scorer]:
        o = self.opts
        return [TiviCheckScorer(features=o.features, detector=o.detector, device=o.device, ocr=o.ocr,
                                max_side=o.max_side, max_frames=o.max_frames),
                TiviQaScorer(frame_policy=o.qa_frames, template=o.qa_template, template_path=o.qa_template_path,
                             judge_role=o.judge_role)]

    def aggregate(self, scores: pd.DataFrame, samples: list[Sample], out_dir: str) -> AggregateResult:
        from vreason.protocols.tivibench.tables import tivibench_tables

        o = self.opts
        return tivibench_tables(scores, samples, n_boot=o.n_boot, level=o.level, seed=o.boot_seed,
                                backends={"features": o.features or "classical:hog-hsv",
                                          "detector": o.detector or "colour (none given)"})


__all__ = ["TiviBenchProtocol", "TiviOptions"]
