"""Adversarial generators by principle (issue 24): parametric cheats and honest renderings for ANY family.

The per-family adversarial set (:mod:`vreason.synth.adversary`) holds hand-made instances of cheats each
family's authors thought of. This module grows the set by **principle** instead: every generator uses only
the family's oracle video (``inst.solution``) and generic image operations, so it applies to every family,
and it draws its parameters (colour, opacity, size, position, window, angle, codec, …) from a seed, so every
run tries cases nobody has seen.

* ``P1`` explain every pixel — a mark, a translucent ghost of an object, a second copy of an object, a
  background element shifted by a few pixels, an object recoloured (in the final frames, outside the
  region the answer/process changes);
* ``P2`` every frame — a jump to other frames of the oracle and back (process families), an object dropped
  for 1–3 frames, a blank frame;
* ``P3`` one scene from the given start — mirrored, reversed, starting from the final state, a mosaic of
  copies, a cut to another instance's video, ending before the final state;
* ``P4`` answer meaning (text families) — the answer written twice (its patch duplicated beside it);
* ``P5`` honest renderings — letterbox of any colour and aspect (portrait too), a constant rotation ≤ 2°,
  a slow zoom ≤ 5%, exposure flicker ±3%, MJPEG / low-bitrate H.264 / MPEG-4, variable frame rate with true
  timestamps.

Each generated case knows whether it must pass (``honest``) or fail. The kinds live in
:mod:`vreason.synth.adversary_principles_kinds`; this module holds the registry, the sampling of cases
from a seed and the scoring (written with the case's encoder and timestamps, decoded and scored by the
suite's scorer exactly as ``vreason run synth`` scores a model's video). Used by
``tests/test_synth_principles.py`` (a sampled set) and ``benchmarks/bench_synth_validity.py`` (the full set).
"""

from __future__ import annotations

import importlib
import os
import random
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from vreason.synth.adversary import Clip
from vreason.synth.base import DIFFICULTIES, RenderConfig, TaskInstance

PRINCIPLES = ("P1", "P2", "P3", "P4", "P5")
PRINCIPLE_NAMES = {"P1": "explain every pixel", "P2": "every frame", "P3": "one scene from the start",
                   "P4": "answer meaning", "P5": "honest renderings"}
TEXT_FAMILIES = frozenset({"sudoku", "arithmetic", "choice", "numseq"})
"""Families whose answer is written text (P4 applies)."""


class NotApplicable(Exception):
    """The kind's draw cannot make a meaningful case for this instance (e.g. no room); draw again."""


class Impossible(NotApplicable):
    """No draw of the kind can make a case for this instance (e.g. it has no static object)."""


@dataclass
class Made:
    """A generated clip and how it is delivered."""

    clip: Clip
    params: dict[str, Any] = field(default_factory=dict)
    codec: str | None = None
    """``None``: H.264 at the writer's default quality (as :func:`~vreason.synth.adversary.score_clip`)."""
    bitrate: int | None = None
    times: list[float] | None = None
    """Presentation times in seconds (variable frame rate); ``None``: ``i / clip.fps``."""


MakeCase = Callable[[TaskInstance, RenderConfig, np.random.Generator], Made]


@dataclass(frozen=True)
class Kind:
    principle: str
    name: str
    honest: bool
    make: MakeCase
    process_only: bool = False
    text_only: bool = False
    doc: str = ""

    def applies(self, family: str) -> bool:
        if self.text_only and family not in TEXT_FAMILIES:
            return False
        if self.process_only:
            from vreason.synth.suite import get_family

            return bool(get_family(family).process_rule)
        return True


KINDS: dict[str, list[Kind]] = {p: [] for p in PRINCIPLES}


def kind(principle: str, name: str, *, honest: bool, process_only: bool = False,
         text_only: bool = False) -> Callable[[MakeCase], MakeCase]:
    """Register ``fn(inst, cfg, rng) -> Made`` as a generator of ``principle``."""

    def deco(fn: MakeCase) -> MakeCase:
        if any(k.name == name for k in KINDS[principle]):
            raise ValueError(f"principle kind {principle}/{name} registered twice")
        KINDS[principle].append(Kind(principle, name, honest, fn, process_only, text_only,
                                     (fn.__doc__ or "").strip()))
        return fn

    return deco


def load_kinds() -> dict[str, list[Kind]]:
    importlib.import_module("vreason.synth.adversary_principles_kinds")
    return KINDS


def kinds_for(principle: str, family: str) -> list[Kind]:
    return [k for k in load_kinds()[principle] if k.applies(family)]


@dataclass(frozen=True)
class Case:
    """One generated case: the instance (family, difficulty, index, suite seed) and the generator's seed."""

    principle: str
    family: str
    kind: str
    honest: bool
    difficulty: str
    index: int
    seed: int
    case_seed: int

    @property
    def id(self) -> str:
        return f"{self.principle}-{self.family}-{self.difficulty}-{self.kind}-{self.case_seed}"


def _case_seed(*parts: object) -> int:
    return zlib.crc32(":".join(map(str, parts)).encode()) & 0x7FFFFFFF


def sample_cases(families: list[str], seed: int, *, per_kind: int | None = None,
                 principles: tuple[str, ...] = PRINCIPLES, index: int = 0) -> list[Case]:
    """Cases drawn from ``seed``.

    ``per_kind=None``: one case per principle × family (a random applicable kind, difficulty and case
    seed: the tests' sampled set). ``per_kind=k``: every applicable kind of every principle ``k`` times per
    family, each at a random difficulty (the benchmark's full set)."""
    rng = random.Random(seed)
    out = []
    for fam in families:
        for p in principles:
            ks = kinds_for(p, fam)
            if not ks:
                continue
            chosen = [rng.choice(ks)] if per_kind is None else [k for k in ks for _ in range(per_kind)]
            for k in chosen:
                d = rng.choice(DIFFICULTIES)
                out.append(Case(p, fam, k.name, k.honest, d, index, seed,
                                _case_seed(seed, fam, p, k.name, d, rng.random())))
    return out


def get_kind(case: Case) -> Kind:
    for k in load_kinds()[case.principle]:
        if k.name == case.kind:
            return k
    raise KeyError(f"unknown principle kind {case.principle}/{case.kind}")


def make_case(case: Case, cfg: RenderConfig | None = None) -> Made:
    """Build the case's clip; a kind that is not applicable to this instance is redrawn (new draws of its
    parameters) up to 20 times before :class:`NotApplicable` propagates."""
    from vreason.synth.suite import make_instance

    cfg = cfg or RenderConfig()
    inst = make_instance(case.family, case.difficulty, case.index, case.seed, cfg)
    k = get_kind(case)
    rng = np.random.default_rng(case.case_seed)
    last: NotApplicable | None = None
    for _ in range(20):
        try:
            return k.make(inst, cfg, rng)
        except Impossible:
            raise
        except NotApplicable as exc:
            last = exc
    assert last is not None
    raise last


def write_case(path: str, made: Made) -> None:
    """Write the clip with the case's encoder; with ``times``, each frame's timestamp is its true time."""
    if made.times is None and made.codec is None:
        from vreason.frames import write_video

        write_video(path, [np.ascontiguousarray(f) for f in made.clip.frames], fps=made.clip.fps,
                    bitrate=made.bitrate)
        return
    import av

    codec = made.codec or "libx264"
    tb = Fraction(1, 1000)
    with av.open(path, "w") as container:
        stream = container.add_stream(codec, rate=Fraction(made.clip.fps).limit_denominator(1001))
        h, w = made.clip.frames[0].shape[:2]
        stream.width, stream.height = w // 2 * 2, h // 2 * 2
        stream.pix_fmt = "yuvj420p" if codec == "mjpeg" else "yuv420p"
        stream.time_base = tb
        if made.bitrate:
            stream.bit_rate = int(made.bitrate)
        if codec == "mjpeg" and "q" in made.params:
            # a fixed quantiser q (ffmpeg's -q:v): qmin = qmax = q. An option named "q:v" (the command line's
            # alias) the encoder ignores — its rate control then lowered the quality over the first 8 frames of
            # one picture (116 → 47 kB a frame) — and global_quality with the qscale flag stays at q = 2 here
            q = str(int(made.params["q"]))
            stream.options = {"qmin": q, "qmax": q}
        elif codec == "libx264" and not made.bitrate:
            stream.options = {"crf": "18", "preset": "veryfast"}
        times = made.times or [i / made.clip.fps for i in range(len(made.clip.frames))]
        for f, t in zip(made.clip.frames, times, strict=True):
            img = np.ascontiguousarray(np.asarray(f, np.uint8)[: h // 2 * 2, : w // 2 * 2, :3])
            frame = av.VideoFrame.from_ndarray(img, format="rgb24")
            frame.pts = int(round(t / tb))
            frame.time_base = tb
            for pkt in stream.encode(frame):
                container.mux(pkt)
        for pkt in stream.encode():
            container.mux(pkt)


@dataclass
class Outcome:
    case: Case
    passed: bool
    ok: bool
    """The scorer returned a score (status ok)."""
    reason: str | None
    params: dict[str, Any]

    @property
    def wrong(self) -> bool:
        """A false pass (cheat passed) or a false fail (honest failed)."""
        return self.passed != self.case.honest


def fallback_cases(case: Case) -> list[Case]:
    """The case, then the other kinds of its principle for the same family (same instance), in a fixed
    order drawn from the case's seed: what the sampled set tries when a kind cannot apply to an instance."""
    others = [k for k in kinds_for(case.principle, case.family) if k.name != case.kind]
    random.Random(case.case_seed).shuffle(others)
    return [case] + [Case(case.principle, case.family, k.name, k.honest, case.difficulty, case.index, case.seed,
                          _case_seed(case.case_seed, k.name)) for k in others]


def run_case(case: Case, workdir: str, cfg: RenderConfig | None = None, *, fallback: bool = False) -> Outcome | None:
    """Make the case's clip, write it with its encoder, decode and score it through the suite's scorer.

    ``None`` when the kind cannot make a case for this instance; with ``fallback``, the principle's other
    kinds are tried in turn (the outcome names the case that ran)."""
    from vreason.core.records import Video
    from vreason.core.scoring import ScoreContext
    from vreason.synth.scorer import SynthVerifierScorer
    from vreason.synth.suite import make_sample

    made = None
    for c in fallback_cases(case) if fallback else [case]:
        try:
            made = make_case(c, cfg)
        except NotApplicable:
            continue
        case = c
        break
    if made is None:
        return None
    os.makedirs(workdir, exist_ok=True)
    sample = make_sample(case.family, case.difficulty, case.index, case.seed, cfg)
    ext = ".mkv" if made.codec == "mjpeg" else ".mp4"
    path = os.path.join(workdir, f"{case.id}{ext}")
    write_case(path, made)
    video = Video(sample_id=sample.id, model=case.kind, seed=0, path=path)
    (score,) = SynthVerifierScorer().score(sample, video, ScoreContext(run_dir=workdir))
    reason = (score.evidence.details.get("reason") if score.evidence else None) or score.reason
    ok = score.status.value == "ok"
    return Outcome(case, bool(score.passed) and ok, ok, None if reason is None else str(reason), made.params)
