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

from vreason.core.human import PASS_FAIL, Question
from vreason.core.records import Sample, Score, Video, VideoStatus
from vreason.core.registry import benchmarks, load_builtins
from vreason.human.schedule import VideoTask


def questions_for(protocol: str, sample: Sample, metrics: set[str]) -> list[Question]:
    """The questions of ``sample`` under ``protocol``; ``metrics`` = the metrics the run scored for it."""
    load_builtins()
    got = benchmarks.get(protocol).human_questions(sample, sorted(metrics)) if protocol in benchmarks else []
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
