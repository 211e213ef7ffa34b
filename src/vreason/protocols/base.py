"""The Protocol interface: one benchmark protocol binds its loader, scorers and aggregator.

``vreason run <protocol>`` does, for every (sample, model, seed):
import-or-generate the video → run every applicable scorer → aggregate into the protocol's
tables. A protocol module registers its class with ``@benchmarks.register(name)``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pandas as pd

from vreason.records import Sample
from vreason.scoring import Scorer


@dataclass
class LoadResult:
    """Samples that loaded, and one error per record that did not (file + reason)."""

    samples: list[Sample] = field(default_factory=list)
    errors: list[dict[str, str]] = field(default_factory=list)


@dataclass
class AggregateResult:
    """Tables keyed by name (each a DataFrame) plus a JSON-able summary."""

    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    summary: dict[str, Any] = field(default_factory=dict)
    charts: dict[str, str] = field(default_factory=dict)
    """Chart name → PNG path (written by the aggregator)."""


class Protocol(ABC):
    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    default_seeds: ClassVar[tuple[int, ...]] = (0,)

    def __init__(self, **options: Any):
        self.options = options

    @abstractmethod
    def load(self) -> LoadResult:
        """Load the benchmark's samples (from ``options['data']`` or generated)."""

    @abstractmethod
    def scorers(self) -> list[Scorer]:
        """The scorers this protocol runs on every video."""

    def generator(self, model: str):
        """A Generator for a built-in model name, or ``None`` (videos must be imported)."""
        return None

    @abstractmethod
    def aggregate(self, scores: pd.DataFrame, samples: list[Sample], out_dir: str) -> AggregateResult:
        """Turn the run's score table (one row per Score, see ``RunStore.scores_frame``)
        into the paper's tables; write charts under ``out_dir``."""
