"""The suite's own adversarial set: cheats that must fail and honest variants that must pass.

Each :class:`Variant` turns a task instance into a clip (frames + frame rate) the way a model
gaming the metric (``honest=False``) or an honest model rendering differently (``honest=True``:
another fps, size, exposure, hue, a small shake, letterboxing, a longer legal solution) would.
:func:`score_clip` scores a clip exactly as ``vreason run synth`` does: the clip is encoded to
H.264, decoded and passed through :class:`~vreason.synth.scorer.SynthVerifierScorer`.

The set is used by the tests (zero false passes and zero false fails are required) and by
``benchmarks/bench_synth_validity.py`` (false-pass / false-fail counts per family on fresh seeds).
Variants are registered per family with :func:`variant` in ``vreason.synth.families.<family>.adversary``.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from vreason.synth.base import DIFFICULTIES, RenderConfig, TaskInstance

ADVERSARY_MODULES = tuple(f"vreason.synth.families.{f}.adversary" for f in (
    "maze", "symmetry", "sorting", "connect", "oddoneout", "sequence", "gravity", "sliding", "sudoku", "arithmetic",
    "choice", "numseq", "graph", "counting", "match3", "toolqa"))
"""Each family's adversarial variants (``vreason.synth.families.<family>.adversary``), in registration order."""


@dataclass
class Clip:
    frames: list[np.ndarray]
    fps: float


MakeClip = Callable[[TaskInstance, RenderConfig, np.random.Generator], Clip]


@dataclass(frozen=True)
class Variant:
    family: str
    name: str
    honest: bool
    """True: an honest solution that must pass. False: a cheat that must fail."""
    make: MakeClip
    difficulties: tuple[str, ...] = DIFFICULTIES
    doc: str = ""


VARIANTS: dict[str, list[Variant]] = {}


def variant(family: str, name: str, *, honest: bool, difficulties: tuple[str, ...] = DIFFICULTIES,
            doc: str = "") -> Callable[[MakeClip], MakeClip]:
    """Register ``fn(inst, cfg, rng) -> Clip`` as a variant of ``family``."""

    def deco(fn: MakeClip) -> MakeClip:
        names = {v.name for v in VARIANTS.get(family, [])}
        if name in names:
            raise ValueError(f"variant {family}/{name} registered twice")
        VARIANTS.setdefault(family, []).append(
            Variant(family, name, honest, fn, tuple(difficulties), doc or (fn.__doc__ or "").strip()))
        return fn

    return deco


def load_variants() -> dict[str, list[Variant]]:
    """Import every adversary module once and return the registry."""
    for mod in ADVERSARY_MODULES:
        importlib.import_module(mod)
    return VARIANTS


def score_clip(family: str, difficulty: str, index: int, seed: int, clip: Clip, workdir: str,
               cfg: RenderConfig | None = None, tag: str = "clip"):
    """Score ``clip`` for instance (family, difficulty, index, seed) through the suite's scorer.

    The clip is written as H.264 at ``clip.fps`` (as a model's MP4 would arrive), so the verdict
    includes what encoding and decoding do. Returns the :class:`~vreason.core.records.Score`."""
    from vreason.core.records import Video
    from vreason.core.scoring import ScoreContext
    from vreason.frames import write_video
    from vreason.synth.scorer import SynthVerifierScorer
    from vreason.synth.suite import make_sample

    os.makedirs(workdir, exist_ok=True)
    sample = make_sample(family, difficulty, index, seed, cfg)
    path = os.path.join(workdir, f"{sample.id}-{tag}.mp4")
    write_video(path, [np.ascontiguousarray(f) for f in clip.frames], fps=clip.fps)
    video = Video(sample_id=sample.id, model=tag, seed=0, path=path)
    (score,) = SynthVerifierScorer().score(sample, video, ScoreContext(run_dir=workdir))
    return score


def run_variant(v: Variant, difficulty: str, index: int, seed: int, workdir: str,
                cfg: RenderConfig | None = None):
    """Build the instance, make the variant's clip and score it; returns the Score."""
    from vreason.synth.suite import make_instance

    cfg = cfg or RenderConfig()
    inst = make_instance(v.family, difficulty, index, seed, cfg)
    rng = np.random.default_rng([seed, index, DIFFICULTIES.index(difficulty), len(v.name)])
    clip = v.make(inst, cfg, rng)
    return score_clip(v.family, difficulty, index, seed, clip, workdir, cfg, tag=v.name)
