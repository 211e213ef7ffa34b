"""The Scorer interface: verifiers, judged metrics and embedding metrics all implement it.

A *unit* of work is (sample, model, seed, scorer). A scorer returns one or more
:class:`~vreason.core.records.Score` rows for the unit (one per metric it produces). The runner
persists the unit's rows atomically, so a unit is either wholly done or not at all.

* ``kind = "cpu"`` scorers run ``score()`` in worker processes (they must be picklable).
* ``kind = "io"`` scorers run ``ascore()`` on the runner's event loop (judge calls), sharing
  the judge layer's concurrency and rate limits.

Scorers never turn a failure into a number: a bad video is an ``error`` score, a reply that
never parsed is ``unscored`` — both with a reason, neither with a value.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import os
from abc import ABC
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from vreason.core.decoding import decode_scope, unit_decode_evidence
from vreason.core.records import Evidence, Sample, Score, ScoreStatus, Video


@dataclass
class ScoreContext:
    """What a scorer may use besides the sample and the video."""

    run_dir: str = "."
    options: dict[str, Any] = field(default_factory=dict)
    judges: dict[str, Any] = field(default_factory=dict)
    """Runtime judge clients by role (``"default"``, ``"vq"``…); not pickled to workers."""

    def debug_path(self, scorer: str, video: Video, suffix: str = "png") -> str:
        """Where a scorer writes a debug image for this unit (folder created)."""
        folder = os.path.join(self.run_dir, "debug", scorer)
        os.makedirs(folder, exist_ok=True)
        return os.path.join(folder, f"{video.sample_id}__{video.model}__{video.seed}.{suffix}")

    def for_worker(self) -> ScoreContext:
        return ScoreContext(run_dir=self.run_dir, options=dict(self.options), judges={})


def _noted(scores: Any, notes: list[dict[str, Any]], video: Video) -> Any:
    """Scores with what the unit's reads found about decoding in ``evidence.details["decode"]``."""
    found = unit_decode_evidence(notes, video.path) if isinstance(scores, list) else None
    if found:
        for s in scores:
            if isinstance(s, Score):
                s.evidence.details.setdefault("decode", {}).update(found)
    return scores


def _mode(ctx: ScoreContext) -> str | None:
    """The protocol's ``decode`` option, if it declares one (a protocol without it keeps the ambient mode)."""
    opts = ctx.options or {}
    return opts["decode"] if "decode" in opts else None


def _in_decode_scope(fn: Any) -> Any:
    """Run a scorer's ``score``/``ascore`` with the protocol's ``decode`` option as the ambient decode mode
    (:mod:`vreason.frames.video`) and record declared vs decoded frame counts in its scores' evidence."""
    if getattr(fn, "_decode_scoped", False):
        return fn
    if inspect.iscoroutinefunction(fn):
        @functools.wraps(fn)
        async def arun(self: Any, sample: Sample, video: Video, ctx: ScoreContext, *a: Any, **k: Any) -> Any:
            with decode_scope(_mode(ctx)) as notes:
                return _noted(await fn(self, sample, video, ctx, *a, **k), notes, video)
        arun._decode_scoped = True  # type: ignore[attr-defined]
        return arun

    @functools.wraps(fn)
    def run(self: Any, sample: Sample, video: Video, ctx: ScoreContext, *a: Any, **k: Any) -> Any:
        with decode_scope(_mode(ctx)) as notes:
            return _noted(fn(self, sample, video, ctx, *a, **k), notes, video)
    run._decode_scoped = True  # type: ignore[attr-defined]
    return run


class Scorer(ABC):  # noqa: B024 - either score() or ascore() is overridden
    """Base class. Subclasses set ``name``, ``version``, ``metrics`` and implement ``score``
    (cpu) or ``ascore`` (io)."""

    name: ClassVar[str] = ""
    version: ClassVar[str] = "1"
    kind: ClassVar[Literal["cpu", "io"]] = "cpu"
    metrics: ClassVar[tuple[str, ...]] = ()
    resources: ClassVar[dict[str, Any]] = {"num_cpus": 1}
    """What one unit needs under ``--executor ray``: ``num_cpus``, ``num_gpus``, ``memory`` (bytes); with
    ``actor: True`` (or any ``num_gpus``) the scorer is loaded once per Ray actor (``actors: N``) and reused
    across units. The local executor ignores it."""

    def applies(self, sample: Sample) -> bool:
        """Whether this scorer scores this sample at all (e.g. PR skips RISE's logical tasks)."""
        return True

    def __init_subclass__(cls, **kw: object) -> None:
        super().__init_subclass__(**kw)
        if cls.name and cls.score is Scorer.score and cls.ascore is Scorer.ascore:
            raise TypeError(f"scorer {cls.__name__} ({cls.name!r}) must override score() or ascore()")
        for meth in ("score", "ascore"):  # each unit runs in the protocol's decode mode (its `decode` option)
            if meth in cls.__dict__:
                setattr(cls, meth, _in_decode_scope(cls.__dict__[meth]))

    def score(self, sample: Sample, video: Video, ctx: ScoreContext) -> list[Score]:
        """Synchronous scoring (cpu scorers). An io scorer that only has ``ascore`` is awaited instead."""
        raise TypeError(f"{type(self).__name__} is an io scorer: the runner awaits ascore()")

    async def ascore(self, sample: Sample, video: Video, ctx: ScoreContext) -> list[Score]:
        return await asyncio.to_thread(self.score, sample, video, ctx)

    # ------------------------------------------------------------ helpers for subclasses
    def ok(
        self,
        sample: Sample,
        video: Video,
        metric: str,
        value: float,
        normalized: float | None = None,
        *,
        passed: bool | None = None,
        evidence: Evidence | None = None,
    ) -> Score:
        return Score(
            sample_id=sample.id,
            model=video.model,
            seed=video.seed,
            scorer=self.name,
            scorer_version=self.version,
            metric=metric,
            value=float(value),
            normalized=None if normalized is None else float(normalized),
            passed=passed,
            evidence=evidence or Evidence(),
        )

    def fail(
        self,
        sample: Sample | str,
        video: Video,
        reason: str,
        *,
        status: ScoreStatus = ScoreStatus.error,
        metric: str | None = None,
        evidence: Evidence | None = None,
    ) -> list[Score]:
        """Non-ok scores with ``reason`` for every metric (or the one given)."""
        sid = sample if isinstance(sample, str) else sample.id
        names = [metric] if metric else (list(self.metrics) or ["*"])
        return [
            Score.failed(
                status,
                reason,
                sample_id=sid,
                model=video.model,
                seed=video.seed,
                scorer=self.name,
                scorer_version=self.version,
                metric=m,
                evidence=evidence,
            )
            for m in names
        ]
