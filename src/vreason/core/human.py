"""What the annotation app asks about a video: a question on its protocol's native scale.

A protocol declares its questions with :meth:`vreason.core.protocol.Protocol.human_questions`; the scales
below are the ones the seed protocols use.
"""

from __future__ import annotations

from dataclasses import dataclass

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
