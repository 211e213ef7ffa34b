"""A protocol's questions about one video, on their native scales, for the rubric task.

Which questions a video gets follows the run: a metric is asked when the run recorded a score of it for
that video (any status, so items a judge left unscored are asked too), and the labels carry the same
metric names as the run's scores, prefixed by the protocol (``rise:tc`` ↔ the score ``tc``):

* RISE — ``tc`` and ``pr`` on Likert 1–5, ``vq`` on 1–3, ``ra`` one yes/no per question of the sample
  (item = the question's index; yes = 1, no = 0);
* RULER-Bench — Good / Medium / Poor (2 / 1 / 0) per checklist item, metric = the item's metric code
  (``ruler:IF`` …), item = its index in the checklist;
* MME-CoF-Pro — per annotated step, satisfied or not (``mmecof:RS``, item = the step's 1-based index);
* the built-in suite and any other protocol — pass / fail of the video (``<protocol>:pass``).
"""

from __future__ import annotations

from collections import defaultdict

from vreason.core.records import Sample, Score, Video, VideoStatus
from vreason.human.schedule import Question, VideoTask

LIKERT_5 = tuple((float(v), str(v)) for v in range(1, 6))
LIKERT_3 = tuple((float(v), str(v)) for v in range(1, 4))
YES_NO = ((1.0, "yes"), (0.0, "no"))
PASS_FAIL = ((1.0, "pass"), (0.0, "fail"))
GOOD_MEDIUM_POOR = ((2.0, "Good"), (1.0, "Medium"), (0.0, "Poor"))

RISE_LIKERT = {
    "tc": ("Temporal consistency: does the video keep what the instruction does not change "
           "(1 = not at all, 5 = fully)?", LIKERT_5),
    "pr": ("Physical rationality: does the motion obey physics (1 = violates it badly, 5 = fully plausible)?",
           LIKERT_5),
    "vq": ("Visual quality (1 = poor, 3 = good)?", LIKERT_3),
}


def _rise(sample: Sample, metrics: set[str]) -> list[Question]:
    out = [Question(f"rise:{m}", "", text, scale) for m, (text, scale) in RISE_LIKERT.items() if m in metrics]
    if "ra" in metrics:
        out += [Question("rise:ra", str(i), item.text, YES_NO) for i, item in enumerate(sample.rubric)]
    return out


def _ruler(sample: Sample) -> list[Question]:
    from vreason.data.ruler import METRIC_CODE

    return [Question(f"ruler:{METRIC_CODE.get(item.dimension, item.dimension) or 'checklist'}", str(i), item.text,
                     GOOD_MEDIUM_POOR) for i, item in enumerate(sample.rubric)]


def _mmecof(sample: Sample) -> list[Question]:
    steps = [i for i in sample.rubric if i.kind == "step"]
    return [Question("mmecof:RS", str(k), f"Step {k}: {s.text}", ((1.0, "satisfied"), (0.0, "not satisfied")))
            for k, s in enumerate(steps, 1)]


def questions_for(protocol: str, sample: Sample, metrics: set[str]) -> list[Question]:
    """The questions of ``sample`` under ``protocol``; ``metrics`` = the metrics the run scored for it."""
    if protocol == "rise":
        got = _rise(sample, metrics)
    elif protocol == "ruler":
        got = _ruler(sample)
    elif protocol == "mmecof":
        got = _mmecof(sample)
    else:
        got = []
    return got or [Question(f"{protocol}:pass", "", "Does the video do what the prompt asks (pass) or not (fail)?",
                            PASS_FAIL)]


def video_tasks(protocol: str, samples: list[Sample], videos: list[Video], scores: list[Score]) -> list[VideoTask]:
    """One task per ok video of the run, with the questions its protocol asks about it."""
    by_id = {s.id: s for s in samples}
    metrics: dict[tuple[str, str, int], set[str]] = defaultdict(set)
    for sc in scores:
        metrics[(sc.sample_id, sc.model, sc.seed)].add(sc.metric)
    tasks = []
    for v in sorted(videos, key=lambda v: (v.sample_id, v.seed, v.model)):
        if v.status != VideoStatus.ok or not v.path or v.sample_id not in by_id:
            continue
        qs = questions_for(protocol, by_id[v.sample_id], metrics.get(v.key, set()))
        tasks.append(VideoTask(v.sample_id, v.model, v.seed, tuple(qs)))
    return tasks
