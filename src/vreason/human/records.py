"""Annotation records (pydantic v2): what one person said about one video or one pair of videos.

Two kinds:

* :class:`PairVote` — PAI-Bench's pairwise study: two videos of one sample from two models, shown
  anonymised with the sides randomised (``left_model`` is the model shown as "A"), one verdict per
  dimension: ``a`` (A better), ``b`` (B better), ``both_good`` or ``both_bad``.
* :class:`RubricLabel` — one answer to one of a protocol's questions about one video: RISE's Likert
  scales and yes/no answers, RULER's Good/Medium/Poor per checklist item, MME-CoF-Pro's step satisfied
  or not, the built-in suite's pass/fail. ``metric`` names the protocol metric the label is compared with
  (e.g. ``rise:tc``, ``ruler:checklist``, ``synth:score``); ``item`` the question within it (a RISE
  question index, a RULER checklist item); ``value`` is the label on the protocol's native scale and
  ``normalized`` the same on [0, 1] (as :class:`vreason.core.records.Score` does).

Every record carries its annotator, the time it was given and a unique id; a ``skip`` is recorded
(``skipped=True``, no verdict / value) so a schedule does not offer the item again.
"""

from __future__ import annotations

import time
import uuid
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Verdict = Literal["a", "b", "both_good", "both_bad"]
VERDICTS: tuple[str, ...] = ("a", "b", "both_good", "both_bad")


def _id() -> str:
    return uuid.uuid4().hex


class _Base(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(default_factory=_id)
    annotator: str = Field(min_length=1, max_length=80)
    created: float = Field(default_factory=time.time)
    source: str = "app"
    """``app`` (collected by ``vreason annotate``) or where an imported label came from."""


class PairVote(_Base):
    kind: Literal["pairwise"] = "pairwise"
    sample_id: str
    left_model: str
    """The model shown as A (sides are randomised per pair and recorded here)."""
    right_model: str
    seed: int = 0
    dimension: str
    verdict: Verdict | None = None
    skipped: bool = False

    @model_validator(mode="after")
    def _check(self) -> PairVote:
        if self.left_model == self.right_model:
            raise ValueError("a pair needs two different models")
        if self.skipped == (self.verdict is not None):
            raise ValueError("a vote has either a verdict or skipped=True")
        return self

    def preference(self, model: str) -> float | None:
        """PAI-Bench's score of ``model`` in this vote: 1 preferred, 0 not, 0.5 for both good / both bad."""
        if self.verdict is None or model not in (self.left_model, self.right_model):
            return None
        if self.verdict in ("both_good", "both_bad"):
            return 0.5
        winner = self.left_model if self.verdict == "a" else self.right_model
        return 1.0 if model == winner else 0.0


class RubricLabel(_Base):
    kind: Literal["rubric"] = "rubric"
    sample_id: str
    model: str
    seed: int = 0
    metric: str
    item: str = ""
    value: float | None = None
    normalized: float | None = None
    skipped: bool = False

    @model_validator(mode="after")
    def _check(self) -> RubricLabel:
        if self.skipped == (self.value is not None):
            raise ValueError("a label has either a value or skipped=True")
        if self.normalized is not None and not 0.0 <= self.normalized <= 1.0:
            raise ValueError("normalized must lie in [0, 1]")
        return self


Annotation = PairVote | RubricLabel
