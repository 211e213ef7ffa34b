"""The Protocol interface: one benchmark protocol binds its loader, scorers and aggregator.

``vreason run <protocol>`` does, for every (sample, model, seed):
import-or-generate the video → run every applicable scorer → aggregate into the protocol's
tables. A protocol module registers its class with ``@benchmarks.register(name)``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pandas as pd

from vreason.core.human import Question
from vreason.core.options import DeclaredOptions, ProtocolOptions, resolve_options, resolved_dict
from vreason.core.records import LoadError, LoadResult, Sample  # noqa: F401  (part of the contract)
from vreason.core.scoring import Scorer


@dataclass
class AggregateResult:
    """Tables keyed by name (each a DataFrame) plus a JSON-able summary."""

    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    summary: dict[str, Any] = field(default_factory=dict)
    charts: dict[str, str] = field(default_factory=dict)
    """Chart name → PNG path (written by the aggregator)."""


@dataclass(frozen=True)
class Requirement:
    """Something beyond the core install that part of a protocol needs (``vreason list`` shows it)."""

    extra: str | None
    """The pip extra (``ocr``, ``deep``…), or ``None`` when only local files are needed."""
    part: str
    """What needs it, e.g. ``families sudoku, arithmetic, numseq`` or ``--opt features=…``."""
    weights: bool = False
    """Whether local model weights (a checkpoint folder or file given by an option) are needed too."""
    optional: bool = False
    """Only when an option asks for it (the default run does without)."""

    def describe(self) -> str:
        need = " + ".join(x for x in (self.extra, "local weights" if self.weights else None) if x)
        return f"{need} for {self.part}"


class Protocol(ABC):
    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    default_seeds: ClassVar[tuple[int, ...]] = (0,)
    options_model: ClassVar[type[ProtocolOptions] | None] = None
    """The protocol's typed options (unknown keys rejected); ``None`` for a plugin that takes any."""
    requires: ClassVar[tuple[Requirement, ...]] = ()
    """Extras (and local weights) parts of the protocol need; the core install runs the rest."""
    judge_note: ClassVar[str] = ""
    """Shown by ``vreason list`` beside the judge roles when they depend on more than the options."""
    layout: ClassVar[str | None] = None
    """The registered video layout (``--convention``) its videos folder follows by default; ``None``: the
    ``vreason`` layout (what ``vreason run`` writes)."""

    @classmethod
    def judge_roles(cls, opts: Any, samples: Sequence[Sample] | None = None) -> tuple[str, ...]:
        """The judge roles a run with these options needs (default: none): the runner refuses to start
        (exit code 2) when one of them has no judge. A role is served by a judge given for it or, failing
        that, by the ``default`` judge (``--judge``).

        ``opts`` is the validated options model (``None`` for a protocol without one). ``samples`` are the
        loaded samples once known: a protocol whose judged scorer applies to some samples only names its
        role when one of them is there (with ``None``, only what the options alone decide)."""
        return ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        old = cls.__dict__.get("convention")
        if isinstance(old, str) and "layout" not in cls.__dict__:  # the hook's name before 0.2
            import warnings

            warnings.warn(f"{cls.__name__}.convention is now Protocol.layout; the old name works for one release",
                          DeprecationWarning, stacklevel=2)
            cls.layout = old

    def __init__(self, **options: Any):
        self.opts: Any = None
        """The validated options model (``None`` without ``options_model``): read options from it."""
        self._given = options
        if self.options_model is not None:
            self.opts = resolve_options(self.name or type(self).__name__, self.options_model, options)

    @property
    def options(self) -> dict[str, Any]:
        """The options as a dict: every declared option resolved (a ``get`` of an undeclared key
        raises), or, for a protocol without an options model, the options as given."""
        if self.opts is None:
            return self._given
        return DeclaredOptions(self.opts.model_dump())

    @options.setter
    def options(self, value: dict[str, Any]) -> None:
        """Replace the options (validated again when the protocol declares a model)."""
        self._given = dict(value)
        if self.options_model is not None:
            self.opts = resolve_options(self.name or type(self).__name__, self.options_model, self._given)

    def resolved_options(self, *, internal: bool = False) -> dict[str, Any]:
        """Every option with its resolved value (defaults filled in), JSON-able: for the manifest and
        the scorers' context. Without an options model: the options as given."""
        if self.opts is None:
            return dict(self.options)
        return resolved_dict(self.opts, internal=internal)

    @abstractmethod
    def load(self) -> LoadResult:
        """Load the benchmark's samples (from ``options['data']`` or generated)."""

    @abstractmethod
    def scorers(self) -> list[Scorer]:
        """The scorers this protocol runs on every video."""

    def locate_video(self, model: str, sample: Sample, seed: int) -> str | None:
        """Where this protocol finds ``model``'s video of ``sample`` by itself (e.g. under its ``videos``
        option), or ``None`` (default: videos are imported or generated)."""
        return None

    @classmethod
    def human_questions(cls, sample: Sample, metrics: Sequence[str]) -> list[Question]:
        """The annotation app's questions for one video of ``sample`` (:class:`~vreason.core.human.Question` s),
        limited to ``metrics``; default: none (the protocol has no human rubric)."""
        return []

    def generator(self, model: str):
        """A Generator for a built-in model name, or ``None`` (videos must be imported)."""
        return None

    @abstractmethod
    def aggregate(self, scores: pd.DataFrame, samples: list[Sample], out_dir: str) -> AggregateResult:
        """Turn the run's score table (one row per Score, see ``RunStore.scores_frame``)
        into the paper's tables; write charts under ``out_dir``."""
