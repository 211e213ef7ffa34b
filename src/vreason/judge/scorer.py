"""One flow for every judged scorer: find the judge, build the request(s), ask, attach evidence, interpret.

A judged metric differs from another only in what it sends and how it reads the reply; the rest is the same
everywhere and lives here (:class:`JudgedScorer.ascore`):

1. :meth:`~JudgedScorer.precheck` (optional) may refuse the sample before any judge is looked up;
2. the judge client for :meth:`~JudgedScorer.role` (falling back to ``"default"``) is found, else every metric
   fails with :meth:`~JudgedScorer.no_judge_reason`;
3. :meth:`~JudgedScorer.build` runs in a thread (frames, images, template) and returns a :class:`Prepared`
   (requests, parsers, whatever the scorer keeps); a :class:`~vreason.core.errors.VideoError` fails every metric
   with :meth:`~JudgedScorer.video_error`, a :class:`~vreason.core.errors.ConfigError` with ``template: …``,
   an :class:`Unjudgeable` with its reason (and status);
4. every request is asked (concurrently) with its parser;
5. :meth:`~JudgedScorer.judge_evidence` builds the evidence (with each reply's judge evidence);
6. when :meth:`~JudgedScorer.unusable` names a reason the metrics are *unscored* with it and the evidence
   (never a number), else :meth:`~JudgedScorer.interpret` turns the parsed values into scores.

Multi-metric scorers override :meth:`~JudgedScorer.fail_all` when the metrics of a sample are not all of
:attr:`~vreason.core.scoring.Scorer.metrics`.
"""

from __future__ import annotations

import asyncio
from abc import abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from vreason.core.errors import ConfigError, VideoError
from vreason.core.records import Evidence, Sample, Score, ScoreStatus, Video
from vreason.core.scoring import ScoreContext, Scorer


def judge_for(ctx: Any, role: str) -> Any:
    """The judge client for ``role`` (falling back to ``"default"``), or ``None``."""
    judges = getattr(ctx, "judges", None) or {}
    return judges.get(role) or judges.get("default")


class Unjudgeable(Exception):  # noqa: N818 - a refusal, not a bug
    """Raised by a hook (precheck, build) when the sample cannot be sent to the judge: every metric fails with
    ``reason`` (status ``error`` unless given)."""

    def __init__(self, reason: str, status: ScoreStatus = ScoreStatus.error):
        super().__init__(reason)
        self.reason, self.status = reason, status


@dataclass
class Prepared:
    """What :meth:`JudgedScorer.build` made: the requests, one parser for all or one per request, and ``state``
    (anything the scorer's later hooks need: frames' policy and indices, items, an evidence skeleton…)."""

    requests: list[Any]
    parsers: Callable[[str], Any] | Sequence[Callable[[str], Any]]
    state: Any = None
    evidence: Evidence | None = None
    """An evidence skeleton, when the scorer builds it with the requests."""

    def parser_for(self, i: int) -> Callable[[str], Any]:
        return self.parsers if callable(self.parsers) else self.parsers[i]


class JudgedScorer(Scorer):
    """Base of the judged scorers (kind ``io``); subclasses implement :meth:`build`, :meth:`judge_evidence` and
    :meth:`interpret`, and may override the other hooks."""

    kind: ClassVar[Literal["cpu", "io"]] = "io"
    judge_role: str = "default"

    # ------------------------------------------------------------------ hooks
    def role(self) -> str:
        """Which judge scores this metric (``"default"`` = ``--judge``)."""
        return self.judge_role

    def no_judge_reason(self) -> str:
        """The reason of the scores when no judge is configured for :meth:`role`."""
        return "no judge client configured"

    def precheck(self, sample: Sample, video: Video, ctx: ScoreContext) -> None:
        """Raise :class:`Unjudgeable` to refuse the sample before the judge is looked up."""

    @abstractmethod
    def build(self, sample: Sample, video: Video, ctx: ScoreContext) -> Prepared:  # pragma: no cover - abstract
        """The request(s) and parser(s); runs in a thread. Raise VideoError, ConfigError or Unjudgeable."""

    def video_error(self, exc: VideoError) -> str:
        """The reason of the scores when reading the video (or an image) failed."""
        return str(exc)

    @abstractmethod
    def judge_evidence(self, sample: Sample, video: Video, ctx: ScoreContext, prepared: Prepared,
                       outcomes: list[Any]) -> Evidence:  # pragma: no cover - abstract
        """The evidence of the unit's scores, usable or not (each reply's ``outcome.evidence(request)``)."""

    def unusable(self, prepared: Prepared, outcomes: list[Any]) -> str | None:
        """The *unscored* reason when the replies cannot be interpreted, else ``None``. Default: the first reply
        that never parsed, as ``judge reply unusable: <reason>``."""
        bad = next((o for o in outcomes if not o.ok), None)
        return None if bad is None else f"judge reply unusable: {bad.reason}"

    @abstractmethod
    def interpret(self, sample: Sample, video: Video, ctx: ScoreContext, prepared: Prepared, outcomes: list[Any],
                  evidence: Evidence) -> list[Score]:  # pragma: no cover - abstract
        """The scores from usable replies."""

    def fail_all(self, sample: Sample, video: Video, reason: str, *, status: ScoreStatus = ScoreStatus.error,
                 evidence: Evidence | None = None) -> list[Score]:
        """Non-ok scores for every metric this unit would have produced."""
        return self.fail(sample, video, reason, status=status, evidence=evidence)

    # ------------------------------------------------------------------ the flow
    async def ascore(self, sample: Sample, video: Video, ctx: ScoreContext) -> list[Score]:
        try:
            self.precheck(sample, video, ctx)
        except Unjudgeable as exc:
            return self.fail_all(sample, video, exc.reason, status=exc.status)
        client = judge_for(ctx, self.role())
        if client is None:
            return self.fail_all(sample, video, self.no_judge_reason())
        try:
            prepared = await asyncio.to_thread(self.build, sample, video, ctx)
        except Unjudgeable as exc:
            return self.fail_all(sample, video, exc.reason, status=exc.status)
        except VideoError as exc:
            return self.fail_all(sample, video, self.video_error(exc))
        except ConfigError as exc:
            return self.fail_all(sample, video, f"template: {exc}")
        reqs = prepared.requests
        outcomes = list(await asyncio.gather(*(client.ask(r, prepared.parser_for(i)) for i, r in enumerate(reqs))))
        evidence = self.judge_evidence(sample, video, ctx, prepared, outcomes)
        reason = self.unusable(prepared, outcomes)
        if reason is not None:
            return self.fail_all(sample, video, reason, status=ScoreStatus.unscored, evidence=evidence)
        return self.interpret(sample, video, ctx, prepared, outcomes, evidence)


__all__ = ["JudgedScorer", "Prepared", "Unjudgeable", "judge_for"]
