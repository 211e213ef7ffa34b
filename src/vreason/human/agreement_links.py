"""Which automatic score a human rubric label is compared with: the mapping table, per protocol.

A :class:`~vreason.human.records.RubricLabel` names a protocol metric (``rise:tc``); :data:`METRIC_LINKS` (the
:class:`~vreason.core.human.MetricLink` s each benchmark package declares) says which scorer and metric of the
run's :class:`~vreason.core.records.Score` records it meets, on which native
scale the paper compares them, whether the scale is a set of discrete labels (for ACC and κ), and where the
judge's value is read:

* ``value`` — the score's value, one per video; an annotator's labels on several items of that video and
  metric are averaged first (RISE RA: the yes/no answers per question → the share of yes, as the judge's RA);
* ``passed`` — the score's pass flag as 1/0 (the built-in suite's pass/fail);
* ``question_labels`` — a per-question label (RULER's) in the score's evidence (``details.questions`` ids with
  ``details.labels``, valued on the link's ``label_scale``: RULER's Good/Medium/Poor → 2/1/0 as the released
  ``score_map``), restricted to the questions of
  the link's metric code (all for ``ruler:checklist``), matched on the label's ``item`` = the question's index
  in the checklist (as the annotation app records it) or its rubric id;
* ``step_verdicts`` — a per-step verdict (MME-CoF-Pro's) in the evidence (``details.steps``: ``completed`` 1/0),
  matched on ``item`` = the step's 1-based index (as the annotation app records it) or its rubric id. A step
  whose reply did not parse is unscored; the other steps of that video keep their verdicts.

Native values on both sides are taken from ``normalized`` when it is set (``lo + normalized·(hi − lo)``), so
a label stored as 2/1/0 and a score stored as 100/50/0 meet on one scale; otherwise from ``value``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from vreason.core.human import MetricLink
from vreason.core.records import Score
from vreason.core.registry import load_builtins, metric_links

Key = tuple[str, str, int, str]
"""(sample_id, model, seed, item); item is ``""`` for per-video metrics."""


class _Links(Mapping[str, MetricLink]):
    """Every declared link (label metric → :class:`MetricLink`), from the benchmark packages' declarations."""

    def _all(self) -> dict[str, MetricLink]:
        load_builtins()
        return {name: metric_links.get(name) for name in metric_links.names()}

    def __getitem__(self, name: str) -> MetricLink:
        return self._all()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


METRIC_LINKS: Mapping[str, MetricLink] = _Links()


@dataclass
class JudgeCell:
    """What the automatic scorer said about one key: ``ok`` with native/normalised values, or why not."""

    status: str
    native: float | None = None
    norm: float | None = None
    judge: str = ""
    reason: str = ""


def _judge_name(s: Score) -> str:
    return s.evidence.judge.judge if s.evidence.judge else s.scorer


def _merge(cells: dict[Key, list[JudgeCell]]) -> dict[Key, JudgeCell]:
    """Several scores on one key: the mean of the ok ones; else ``error`` before ``unscored``."""
    out: dict[Key, JudgeCell] = {}
    for key, cs in cells.items():
        ok = [c for c in cs if c.status == "ok"]
        if ok:
            out[key] = JudgeCell("ok", sum(c.native for c in ok) / len(ok), sum(c.norm for c in ok) / len(ok),
                                 ", ".join(sorted({c.judge for c in ok})))
        else:
            bad = next((c for c in cs if c.status == "error"), cs[0])
            out[key] = bad
    return out


def judge_cells(link: MetricLink, scores: Sequence[Score]) -> tuple[dict[Key, JudgeCell], dict[Key, JudgeCell]]:
    """The judge's cells for ``link``: ``(per_key, per_video_failures)``. ``per_video_failures`` holds the
    non-ok scores of per-item links that carry no item detail (they fail every item of that video)."""
    cells: dict[Key, list[JudgeCell]] = {}
    video_fail: dict[Key, list[JudgeCell]] = {}
    for s in scores:
        if s.scorer not in link.scorers or (link.metric != "*" and not link.per_item and s.metric != link.metric):
            continue
        vid = (s.sample_id, s.model, s.seed, "")
        name = _judge_name(s)
        if link.source in ("value", "passed"):
            if s.status.value != "ok":
                cells.setdefault(vid, []).append(JudgeCell(s.status.value, judge=name, reason=s.reason or ""))
            elif link.source == "passed" and s.passed is None:
                cells.setdefault(vid, []).append(JudgeCell("unscored", judge=name, reason="no pass verdict"))
            else:
                v = float(s.passed) if link.source == "passed" else s.value
                n = float(s.passed) if link.source == "passed" else s.normalized
                cells.setdefault(vid, []).append(JudgeCell("ok", link.native(v, n), link.normalized(v, n), name))
            continue
        for item, cell in _item_cells(link, s, name):
            cells.setdefault((s.sample_id, s.model, s.seed, item), []).append(cell)
        if s.status.value != "ok" and not _has_items(link, s):
            video_fail.setdefault(vid, []).append(JudgeCell(s.status.value, judge=name, reason=s.reason or ""))
    if link.source == "question_labels":  # the four metric scores of a unit repeat the same labels: keep one
        cells = {k: v[:1] if all(c.status == "ok" for c in v) else v for k, v in cells.items()}
    return _merge(cells), _merge(video_fail)


def _has_items(link: MetricLink, s: Score) -> bool:
    d = s.evidence.details
    return bool(d.get("questions")) if link.source == "question_labels" else bool(d.get("steps"))


def _item_cells(link: MetricLink, s: Score, name: str) -> list[tuple[str, JudgeCell]]:
    d = s.evidence.details
    out: list[tuple[str, JudgeCell]] = []
    if link.source == "question_labels":
        label_score = {label: value for value, label in link.label_scale}

        questions, labels = d.get("questions") or [], d.get("labels")
        for k, q in enumerate(questions):
            if link.metric != "*" and q.get("metric") != link.metric:
                continue
            if s.status.value == "ok" and labels is not None and k < len(labels) and labels[k] in label_score:
                v = float(label_score[labels[k]])
                cell = JudgeCell("ok", v, v / link.hi, name)
            else:
                cell = JudgeCell(s.status.value if s.status.value != "ok" else "unscored", judge=name,
                                 reason=s.reason or "no label")
            out += [(item, cell) for item in dict.fromkeys((str(k), str(q.get("id", k))))]
    else:
        for k, step in enumerate(d.get("steps") or [], 1):
            if step.get("ok") and "completed" in step:
                v = 1.0 if step["completed"] else 0.0
                cell = JudgeCell("ok", v, v, name)
            else:
                cell = JudgeCell("unscored", judge=name,
                                 reason=str(step.get("unscored_reason") or s.reason or "no verdict"))
            out += [(item, cell) for item in dict.fromkeys((str(k), str(step.get("id", k))))]
    return out
