"""The built-in verifiable suite as a protocol: ``vreason run synth --models oracle,static,…``.

Options (all optional; ``--opt key=value`` strings are coerced):

* ``data`` — a folder written by ``vreason synth generate`` (else the suite is built here);
* ``families`` / ``difficulties`` — lists or comma-separated strings (default: all / easy,medium,hard);
* ``per_task`` (10), ``seed`` (0) — instances per family × difficulty and the suite seed;
* ``width`` (640), ``height`` (360), ``fps`` (16), ``seconds`` (4.0) — render config;
* ``run_dir`` / ``out_dir`` — where a built suite's images go (``<dir>/synth_data``); without
  one they go to a cache folder keyed by the config (``$VREASON_CACHE`` or ``~/.cache/vreason``);
* ``write_videos`` — also write ground-truth videos when building;
* ``shortcut_mode`` (``fade``/``cut``) — how the ``shortcut`` model reaches the end state;
* ``max_frames`` (480) — decode cap per video (read by the scorer from the run options).
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

import pandas as pd

from vreason.protocols.base import AggregateResult, LoadResult, Protocol
from vreason.records import Sample
from vreason.registry import benchmarks
from vreason.scoring import Scorer
from vreason.synth.scorer import SynthVerifierScorer

__all__ = ["SynthProtocol", "SynthVerifierScorer"]


def _list(v: Any) -> list[str] | None:
    if v is None or v == "" or v == []:
        return None
    if isinstance(v, str):
        return [x.strip() for x in v.split(",") if x.strip()]
    return [str(x) for x in v]


def _bool(v: Any) -> bool:
    return v if isinstance(v, bool) else str(v).strip().lower() in ("1", "true", "yes", "on")


@benchmarks.register("synth", summary="Built-in procedurally generated, verifiable suite (offline)")
class SynthProtocol(Protocol):
    """Built-in suite: maze, symmetry, sorting, connect colours, odd-one-out, sequence, gravity, sliding."""

    name = "synth"
    summary = "Built-in procedurally generated, verifiable suite (offline)"
    default_seeds = (0,)

    def __init__(self, **options: Any):
        super().__init__(**options)
        from vreason.synth.base import RenderConfig

        self.families = _list(options.get("families"))
        self.difficulties = _list(options.get("difficulties"))
        self.per_task = int(options.get("per_task", 10))
        self.seed = int(options.get("seed", 0))
        self.cfg = RenderConfig(width=int(options.get("width", 640)), height=int(options.get("height", 360)),
                                fps=int(options.get("fps", 16)), seconds=float(options.get("seconds", 4.0)))

    def _build_dir(self) -> str:
        base = self.options.get("run_dir") or self.options.get("out_dir")
        if base:
            return os.path.join(str(base), "synth_data")
        key = json.dumps([self.families, self.difficulties, self.per_task, self.seed, self.cfg.__dict__],
                         sort_keys=True, default=str)
        digest = hashlib.sha1(key.encode()).hexdigest()[:12]
        cache = os.environ.get("VREASON_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "vreason")
        return os.path.join(cache, "synth", digest)

    def load(self) -> LoadResult:
        from vreason.synth.suite import build_samples, load_benchmark

        data = self.options.get("data")
        if data:
            return load_benchmark(str(data))
        samples = build_samples(self.families, self.difficulties, self.per_task, self.seed, self.cfg,
                                self._build_dir(), write_videos=_bool(self.options.get("write_videos", False)))
        return LoadResult(samples=samples)

    def scorers(self) -> list[Scorer]:
        return [SynthVerifierScorer()]

    def generator(self, model: str):
        from vreason.synth.models import BUILTIN_MODELS

        cls = BUILTIN_MODELS.get(model)
        if cls is None:
            return None
        params: dict[str, Any] = {}
        if model == "shortcut" and self.options.get("shortcut_mode"):
            params["mode"] = str(self.options["shortcut_mode"])
        return cls(**params)

    def aggregate(self, scores: pd.DataFrame, samples: list[Sample], out_dir: str) -> AggregateResult:
        from vreason.aggregate.synth_tables import synth_tables

        return synth_tables(scores, out_dir)
