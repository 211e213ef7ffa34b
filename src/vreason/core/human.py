"""What the annotation app asks about a video: a question on its protocol's native scale.

A protocol declares its questions with :meth:`vreason.core.protocol.Protocol.human_questions`; the scales
below are the ones the seed protocols use.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

LIKERT_5 = tuple((float(v), str(v)) for v in range(1, 6))
LIKERT_3 = tuple((float(v), str(v)) for v in range(1, 4))
YES_NO = ((1.0, "yes"), (0.0, "no"))
PASS_FAIL = ((1.0, "pass"), (0.0, "fail"))
GOOD_MEDIUM_POOR = ((2.0, "Good"), (1.0, "Medium"), (0.0, "Poor"))


@dataclass(frozen=True)
class Question:
    metric: str
    """``<protocol>:<metric>`` (e.g. ``rise:tc``, ``ruler:IF``, ``mmecof:RS``, ``synth:pass``)."""
    item: str
    text: str
    choices: tuple[tuple[float, str], ...]
    """(value on the protocol's native scale, label), in the order the keys 1, 2, 3… pick them."""

    def normalized(self, value: float) -> float:
        values = [c[0] for c in self.choices]
        lo, hi = min(values), max(values)
        return (value - lo) / (hi - lo) if hi > lo else 1.0


Source = Literal["value", "passed", "question_labels", "step_verdicts"]
"""Where a link reads the judge's side: the score's ``value`` (``normalized``), its ``passed``, one label per
checklist question (``details.questions`` + ``details.labels``, on ``label_scale``), or one verdict per step
(``details.steps[*].completed``)."""


@dataclass(frozen=True)
class MetricLink:
    label_metric: str
    scorers: tuple[str, ...]
    metric: str
    lo: float
    hi: float
    levels: tuple[float, ...] | None
    source: Source
    paper: str
    from_normalized: bool = True
    """Read native values from ``normalized`` when set (False: from ``value``, for unmapped metrics)."""

    label_scale: tuple[tuple[float, str], ...] = ()
    """For ``question_labels``: the judge's label → its value (e.g. Good 2 / Medium 1 / Poor 0)."""

    @property
    def per_item(self) -> bool:
        return self.source in ("question_labels", "step_verdicts")

    def native(self, value: float | None, normalized: float | None) -> float | None:
        if normalized is not None and (self.from_normalized or value is None):
            return self.lo + float(normalized) * (self.hi - self.lo)
        return None if value is None else float(value)

    def normalized(self, value: float | None, normalized: float | None) -> float | None:
        if normalized is not None:
            return float(normalized)
        return None if value is None else (float(value) - self.lo) / (self.hi - self.lo)
