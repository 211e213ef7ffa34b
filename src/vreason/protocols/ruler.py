"""RULER-Bench: a checklist judged Good / Medium / Poor over four metrics.

Per video, one judge call gets (in the released order) the input image, the prompt, the
ground-truth image, the implicit explanation, the input video's frames, the generated video's
frames at about 2 fps with the longest side ≤ 512 (frame policy preset ``ruler`` =
``fps:2+max_side=512``) and the checklist questions. The reply must end in
``<answer>[...]</answer>`` with one label per question; a wrong length or label is re-asked by
the judge client and finally ``unscored`` with the reason and the raw reply (never 0).

Each metric's score for a video is the mean over its questions of Good/Medium/Poor → 2/1/0,
× 50 (0–100). Aggregation (``ruler_tables``) follows the released ``cal_acc.py``.
"""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

import pandas as pd

from vreason.data.ruler import METRIC_CODE, METRICS, load_ruler, ruler_video_path
from vreason.errors import ConfigError, VideoError
from vreason.protocols.base import AggregateResult, LoadResult, Protocol
from vreason.protocols.judge_inputs import interleave, judge_for, load_image
from vreason.records import Evidence, Sample, Score, ScoreStatus, Video
from vreason.registry import benchmarks
from vreason.scoring import ScoreContext, Scorer

LABELS = ("Good", "Medium", "Poor")
LABEL_SCORE = {"Good": 2, "Medium": 1, "Poor": 0}


def labels_to_metric_scores(labels: list[str], dims: list[str]) -> dict[str, float]:
    """Per metric code: mean over its questions of 2/1/0, × 50 (0–100)."""
    acc: dict[str, list[int]] = {}
    for lab, dim in zip(labels, dims, strict=True):
        acc.setdefault(METRIC_CODE.get(dim, dim), []).append(LABEL_SCORE[lab])
    return {code: sum(v) / len(v) * 50.0 for code, v in acc.items()}


class RulerChecklistScorer(Scorer):
    """RULER-Bench checklist judge: Good/Medium/Poor per question → IF, VC, VF, RC (0–100)."""

    name: ClassVar[str] = "ruler_checklist"
    version: ClassVar[str] = "1"
    kind: ClassVar[str] = "io"
    metrics: ClassVar[tuple[str, ...]] = ("IF", "VC", "VF", "RC")

    def __init__(
        self,
        *,
        frame_policy: str = "ruler",
        input_video_policy: str = "ruler",
        template: str = "ruler_judge",
        template_path: str | None = None,
        judge_role: str = "default",
        max_tokens: int = 8192,
    ):
        self.frame_policy = frame_policy
        self.input_video_policy = input_video_policy
        self.template = template
        self.template_path = template_path
        self.judge_role = judge_role
        self.max_tokens = max_tokens

    def applies(self, sample: Sample) -> bool:
        return any(item.kind == "checklist" for item in sample.rubric)

    def _metrics_of(self, sample: Sample) -> list[str]:
        seen = dict.fromkeys(METRIC_CODE.get(i.dimension, i.dimension) for i in sample.rubric
                             if i.kind == "checklist")
        return list(seen)

    def build_request(self, sample: Sample, video: Video):
        """The JudgeRequest and the evidence skeleton (frame policy + indices). Raises VideoError."""
        from vreason.frames import sample_frames
        from vreason.judge.base import Decoding, JudgeRequest
        from vreason.judge.templates import get_template

        items = [i for i in sample.rubric if i.kind == "checklist"]
        tpl = get_template(self.template, path=self.template_path)
        images: dict[str, list[Any]] = {"INPUT_IMAGE": [], "GT_IMAGE": [], "INPUT_VIDEO": [], "VIDEO": []}
        if sample.input_image:
            images["INPUT_IMAGE"] = [load_image(sample.resolve(sample.input_image))]
        if sample.reference_image:
            images["GT_IMAGE"] = [load_image(sample.resolve(sample.reference_image))]
        in_idx: list[int] = []
        if sample.input_video:
            got = sample_frames(sample.resolve(sample.input_video), self.input_video_policy)
            images["INPUT_VIDEO"], in_idx = got.frames, got.indices
        if not video.path:
            raise VideoError(str(video.path), "no video path")
        gen = sample_frames(video.path, self.frame_policy)
        images["VIDEO"] = gen.frames
        system, user = tpl.render(
            prompt=sample.metadata.get("prompt_original", sample.prompt),
            implicit_explanation=sample.metadata.get("implicit_explanation", ""),
            has_input_image=bool(images["INPUT_IMAGE"]),
            has_gt_image=bool(images["GT_IMAGE"]),
            has_input_video=bool(images["INPUT_VIDEO"]),
            questions=[i.text for i in items],
        )
        request = JudgeRequest(parts=interleave(user, images), system=system or None,
                               decoding=Decoding(max_tokens=self.max_tokens),
                               template=tpl.name, template_version=tpl.version)
        evidence = Evidence(frame_policy=gen.policy, frame_indices=gen.indices,
                            details={"input_video_frame_indices": in_idx} if in_idx else {})
        return request, evidence, items

    async def ascore(self, sample: Sample, video: Video, ctx: ScoreContext) -> list[Score]:
        from vreason.judge import parsers

        metrics = self._metrics_of(sample)
        client = judge_for(ctx, self.judge_role)
        if client is None:
            return self._fail_all(sample, video, metrics, "no judge client configured", ScoreStatus.error, None)
        try:
            request, evidence, items = await asyncio.to_thread(self.build_request, sample, video)
        except VideoError as exc:
            return self._fail_all(sample, video, metrics, str(exc), ScoreStatus.error, None)
        except ConfigError as exc:
            return self._fail_all(sample, video, metrics, f"template: {exc}", ScoreStatus.error, None)
        outcome = await client.ask(request, parsers.answer_labels(LABELS, len(items)))
        evidence.judge = outcome.evidence(request)
        evidence.details["questions"] = [{"id": i.id, "metric": METRIC_CODE.get(i.dimension, i.dimension),
                                          "text": i.text} for i in items]
        if not outcome.ok:
            return self._fail_all(sample, video, metrics, f"judge reply unusable: {outcome.reason}",
                                  ScoreStatus.unscored, evidence)
        labels = list(outcome.value)
        evidence.details["labels"] = labels
        evidence.details["reasoning"] = _think(outcome.raw)
        per_metric = labels_to_metric_scores(labels, [i.dimension for i in items])
        out = []
        for code in metrics:
            ev = evidence.model_copy(deep=True)
            ev.details["metric_labels"] = [lab for lab, i in zip(labels, items, strict=True)
                                           if METRIC_CODE.get(i.dimension, i.dimension) == code]
            out.append(self.ok(sample, video, code, per_metric[code], per_metric[code] / 100.0, evidence=ev))
        return out

    def _fail_all(self, sample, video, metrics, reason, status, evidence) -> list[Score]:
        out: list[Score] = []
        for m in metrics or list(self.metrics):
            out.extend(self.fail(sample, video, reason, status=status, metric=m, evidence=evidence))
        return out


def _think(raw: str | None) -> str:
    import re

    if not raw:
        return ""
    m = re.search(r"<think>(.*?)</think>", raw, re.DOTALL | re.IGNORECASE)
    return m.group(1).strip() if m else ""


@benchmarks.register("ruler")
class RulerProtocol(Protocol):
    """RULER-Bench: checklist judged Good/Medium/Poor over IF, VC, VF, RC.

    Options: ``data`` (data.jsonl, parquet or their folder; required), ``root`` (folder the
    image/video paths resolve against; default the data file's folder), ``check_files``
    (default True), ``frame_policy`` (default ``ruler``), ``template`` / ``template_path``,
    ``judge_role`` (default ``default``), ``missing_metric`` (``zero`` = released behaviour,
    or ``skip``), ``win_rate`` (``pairwise_strict`` default, ``best_share``, ``pairwise_half``;
    see ``ruler_tables``), ``n_boot`` (1000), ``level`` (0.95), ``boot_seed`` (0), ``prompt_variant``
    (``pe`` for prompt-enhanced runs).
    """

    name: ClassVar[str] = "ruler"
    summary: ClassVar[str] = "RULER-Bench: checklist judged Good/Medium/Poor over four metrics"
    convention: ClassVar[str] = "ruler"
    """Default layout of ``--videos``: ``{model}/{task_name}/{index}.mp4`` (the released one)."""

    def load(self) -> LoadResult:
        data = self.options.get("data")
        if not data:
            raise ConfigError("ruler needs --data pointing at RULER-Bench's data.jsonl (or the parquet file)")
        result = load_ruler(str(data), root=self.options.get("root"),
                            check_files=bool(self.options.get("check_files", True)))
        variant = self.options.get("prompt_variant")
        if variant and variant != "default":
            kept = []
            for s in result.samples:
                if variant in s.prompt_variants:
                    # the generator gets the variant; the judge still sees the original prompt
                    meta = {**s.metadata, "prompt_original": s.prompt, "prompt_variant": variant}
                    kept.append(s.model_copy(update={"prompt": s.prompt_variants[variant], "metadata": meta}))
                else:
                    result.errors.append({"where": s.id, "reason": f"no prompt variant {variant!r}; "
                                          "run enhance-prompts first"})
            result.samples = kept
        return result

    def scorers(self) -> list[Scorer]:
        o = self.options
        return [RulerChecklistScorer(frame_policy=o.get("frame_policy", "ruler"),
                                     template=o.get("template", "ruler_judge"),
                                     template_path=o.get("template_path"),
                                     judge_role=o.get("judge_role", "default"))]

    @staticmethod
    def video_path(videos_root: str, model: str, sample: Sample) -> str:
        """The released layout ``{root}/{model}/{task_name}/{index}.mp4``."""
        return ruler_video_path(videos_root, model, sample)

    def aggregate(self, scores: pd.DataFrame, samples: list[Sample], out_dir: str) -> AggregateResult:
        from vreason.protocols.ruler_tables import aggregate_ruler

        o = self.options
        from vreason.protocols.ruler_tables import DEFAULT_WIN_RATE

        departing = {k: o[k] for k in ("frame_policy", "template", "template_path", "prompt_variant")
                     if o.get(k) not in (None, "", {"frame_policy": "ruler", "template": "ruler_judge"}.get(k))}
        return aggregate_ruler(scores, samples, out_dir, missing_metric=o.get("missing_metric", "zero"),
                               n_boot=int(o.get("n_boot", 1000)), level=float(o.get("level", 0.95)),
                               seed=int(o.get("boot_seed", 0)), win_rate=str(o.get("win_rate") or DEFAULT_WIN_RATE),
                               departing=departing)


__all__ = ["LABELS", "LABEL_SCORE", "METRICS", "RulerChecklistScorer", "RulerProtocol",
           "labels_to_metric_scores"]
