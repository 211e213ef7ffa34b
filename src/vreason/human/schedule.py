"""Which pair or video a person sees next. Stateless: everything is derived from the run's videos and the
annotations already in the store, so a reload or a restarted server continues where each person left off.

Pairwise: a *pair task* is (sample, seed, two models) with both videos ok; with the dimension set it is the
unit a person answers once. A person's pair is *done* when they gave a verdict or a skip for every
dimension; a half-answered pair comes back first, with the sides it was shown with. Among the rest the
schedule takes the model pair with the fewest answers so far (over all annotators), then the task seen by
the fewest people, then a per-person shuffle, so votes spread evenly over model pairs and people
see different items first. Sides (which model is "A") are drawn per person and task from a hash, so a
reload shows the same sides, and are recorded in each vote (``left_model``).

Rubric: a *video task* is (sample, model, seed) with its questions; done for a person when every question
has a label or a skip from them. Next: a half-answered video, else the video with the fewest labels
over all annotators, then the model with the fewest, then the per-person shuffle.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import combinations

from vreason.core.human import Question
from vreason.core.records import Video, VideoStatus
from vreason.human.records import PairVote, RubricLabel


def _hash(*parts: object) -> int:
    return int.from_bytes(hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()[:8], "big")


@dataclass(frozen=True)
class PairTask:
    sample_id: str
    seed: int
    models: tuple[str, str]
    """Sorted: the pair's identity does not depend on the sides shown."""

    @property
    def key(self) -> tuple[str, int, tuple[str, str]]:
        return (self.sample_id, self.seed, self.models)

    def sides(self, annotator: str) -> tuple[str, str]:
        """(model shown as A, model shown as B): a fair coin per person and task, stable across reloads."""
        a, b = self.models
        return (a, b) if _hash("sides", annotator, *self.key) % 2 == 0 else (b, a)


def pair_tasks(videos: Iterable[Video], models: Iterable[str] | None = None) -> list[PairTask]:
    """Every (sample, seed, model pair) with both videos ok (optionally only among ``models``)."""
    keep = set(models) if models is not None else None
    by_item: dict[tuple[str, int], set[str]] = {}
    for v in videos:
        if v.status == VideoStatus.ok and v.path and (keep is None or v.model in keep):
            by_item.setdefault((v.sample_id, v.seed), set()).add(v.model)
    return [PairTask(s, seed, pair) for (s, seed), ms in sorted(by_item.items())
            for pair in combinations(sorted(ms), 2)]


def _vote_key(v: PairVote) -> tuple[str, int, tuple[str, str]]:
    return (v.sample_id, v.seed, tuple(sorted((v.left_model, v.right_model))))  # type: ignore[return-value]


@dataclass
class PairState:
    task: PairTask | None
    left: str = ""
    right: str = ""
    answered: dict[str, str] = field(default_factory=dict)
    """dimension → verdict (or ``skip``) this person already gave for ``task``."""
    done: int = 0
    total: int = 0


def next_pair(tasks: list[PairTask], votes: Iterable[PairVote], annotator: str,
              dimensions: list[str]) -> PairState:
    dims = set(dimensions)
    votes = [v for v in votes if v.dimension in dims]
    mine: dict[tuple, dict[str, PairVote]] = {}
    for v in votes:
        if v.annotator == annotator:
            mine.setdefault(_vote_key(v), {})[v.dimension] = v
    keys = {t.key for t in tasks}
    done = {k for k, d in mine.items() if dims <= set(d) and k in keys}
    state = PairState(task=None, done=len(done), total=len(tasks))
    pending = [t for t in tasks if t.key not in done]
    if not pending:
        return state
    partial = [t for t in pending if t.key in mine]
    if partial:
        task = partial[0]
        given = mine[task.key]
        first = next(iter(given.values()))
        state.task, state.left, state.right = task, first.left_model, first.right_model
        state.answered = {d: (v.verdict or "skip") for d, v in given.items()}
        return state
    per_pair = Counter(_vote_key(v)[2] for v in votes)
    per_task_people: dict[tuple, set[str]] = {}
    for v in votes:
        per_task_people.setdefault(_vote_key(v), set()).add(v.annotator)
    task = min(pending, key=lambda t: (per_pair[t.models], len(per_task_people.get(t.key, ())),
                                       _hash("order", annotator, *t.key)))
    state.task = task
    state.left, state.right = task.sides(annotator)
    return state



@dataclass(frozen=True)
class VideoTask:
    sample_id: str
    model: str
    seed: int
    questions: tuple[Question, ...]

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.sample_id, self.model, self.seed)


@dataclass
class RubricState:
    task: VideoTask | None
    answered: dict[str, float | None] = field(default_factory=dict)
    """``metric|item`` → value (None = skipped) this person already gave for ``task``."""
    done: int = 0
    total: int = 0


def qkey(metric: str, item: str) -> str:
    return f"{metric}|{item}"


def next_video(tasks: list[VideoTask], labels: Iterable[RubricLabel], annotator: str) -> RubricState:
    labels = list(labels)
    mine: dict[tuple[str, str, int], dict[str, float | None]] = {}
    for lab in labels:
        if lab.annotator == annotator:
            mine.setdefault((lab.sample_id, lab.model, lab.seed), {})[qkey(lab.metric, lab.item)] = lab.value

    def finished(t: VideoTask) -> bool:
        got = mine.get(t.key, {})
        return all(qkey(q.metric, q.item) in got for q in t.questions)

    pending = [t for t in tasks if not finished(t)]
    state = RubricState(task=None, done=len(tasks) - len(pending), total=len(tasks))
    if not pending:
        return state
    partial = [t for t in pending if t.key in mine]
    if partial:
        state.task, state.answered = partial[0], dict(mine[partial[0].key])
        return state
    per_video = Counter((lab.sample_id, lab.model, lab.seed) for lab in labels)
    per_model = Counter(lab.model for lab in labels)
    state.task = min(pending, key=lambda t: (per_video[t.key], per_model[t.model],
                                             _hash("order", annotator, *t.key)))
    return state
