"""RULER-Bench: a checklist judged Good / Medium / Poor over four metrics.

Per video, one judge call gets (in the released order) the input image, the prompt, the
ground-truth image, the implicit explanation, the input video's frames, the generated video's
frames at about 2 fps with the longest side ≤ 512 (frame policy preset ``ruler`` =
``fps:2+max_side=512``) and the checklist questions. Images go as the released ``eval.py`` sends
them: the input and ground-truth images as their original file bytes (with the file's own MIME
type; the released code labels every one ``image/jpeg``), the frames of both videos as JPEG at
quality 95 (``cv2.imencode``'s default); ``evidence.details["image_encoding"]`` records it. The reply must end in
``<answer>[...]</answer>`` with one label per question; a wrong length or label is re-asked by
the judge client and finally ``unscored`` with the reason and the raw reply (never 0).

Each metric's score for a video is the mean over its questions of Good/Medium/Poor → 2/1/0,
× 50 (0–100). Aggregation (``ruler_tables``) follows the released ``cal_acc.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Literal

import pandas as pd
from pydantic import Field

from vreason.core.errors import ConfigError, VideoError
from vreason.core.human import GOOD_MEDIUM_POOR, Question
from vreason.core.options import (
    RELEASED,
    BootSeedField,
    LevelField,
    NBootField,
    ProtocolOptions,
    SeedOptions,
    departures,
)
from vreason.core.protocol import AggregateResult, LoadResult, Protocol
from vreason.core.records import Evidence, Sample, Score, ScoreStatus, Video
from vreason.core.registry import benchmarks
from vreason.core.scoring import ScoreContext, Scorer
from vreason.frames.policy import FramePolicyField
from vreason.judge.scorer import JudgedScorer, Prepared
from vreason.protocols.judge_inputs import encodings_by_marker, interleave, jpeg_parts, sample_image_part
from vreason.protocols.ruler.data import METRIC_CODE, METRICS, load_ruler, ruler_video_path

LABELS = ("Good", "Medium", "Poor")
LABEL_SCORE = {"Good": 2, "Medium": 1, "Poor": 0}
FRAME_JPEG_QUALITY = 95
"""``cv2.imencode('.jpg', frame)`` without parameters: OpenCV's default JPEG quality."""


def labels_to_metric_scores(labels: list[str], dims: list[str]) -> dict[str, float]:
    """Per metric code: mean over its questions of 2/1/0, × 50 (0–100)."""
    acc: dict[str, list[int]] = {}
    for lab, dim in zip(labels, dims, strict=True):
        acc.setdefault(METRIC_CODE.get(dim, dim), []).append(LABEL_SCORE[lab])
    return {code: sum(v) / len(v) * 50.0 for code, v in acc.items()}


class RulerChecklistScorer(JudgedScorer):
    """RULER-Bench checklist judge: Good/Medium/Poor per question → IF, VC, VF, RC (0–100)."""

    name: ClassVar[str] = "ruler_checklist"
    version: ClassVar[str] = "1"
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
            images["INPUT_IMAGE"] = [sample_image_part(sample, sample.input_image)]
        if sample.reference_image:
            images["GT_IMAGE"] = [sample_image_part(sample, sample.reference_image)]
        in_idx: list[int] = []
        if sample.input_video:
            got = sample_frames(sample.resolve(sample.input_video), self.input_video_policy)
            images["INPUT_VIDEO"], in_idx = jpeg_parts(got.frames, FRAME_JPEG_QUALITY), got.indices
        if not video.path:
            raise VideoError(str(video.path), "no video path")
        gen = sample_frames(video.path, self.frame_policy)
        images["VIDEO"] = jpeg_parts(gen.frames, FRAME_JPEG_QUALITY)
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
                               template=tpl.name, template_version=tpl.version, sample_id=sample.id)
        details: dict[str, Any] = {"image_encoding": encodings_by_marker(images)}
        if in_idx:
            details["input_video_frame_indices"] = in_idx
        evidence = Evidence(frame_policy=gen.policy, frame_indices=gen.indices, details=details)
        return request, evidence, items

    def build(self, sample: Sample, video: Video, ctx: ScoreContext) -> Prepared:
        from vreason.judge import parsers

        request, evidence, items = self.build_request(sample, video)
        return Prepared([request], parsers.answer_labels(LABELS, len(items)), state=items, evidence=evidence)

    def judge_evidence(self, sample: Sample, video: Video, ctx: ScoreContext, prepared: Prepared,
                       outcomes: list[Any]) -> Evidence:
        evidence = prepared.evidence or Evidence()
        evidence.judge = outcomes[0].evidence(prepared.requests[0])
        evidence.details["questions"] = [{"id": i.id, "metric": METRIC_CODE.get(i.dimension, i.dimension),
                                          "text": i.text} for i in prepared.state]
        return evidence

    def interpret(self, sample: Sample, video: Video, ctx: ScoreContext, prepared: Prepared, outcomes: list[Any],
                  evidence: Evidence) -> list[Score]:
        items, outcome = prepared.state, outcomes[0]
        labels = list(outcome.value)
        evidence.details["labels"] = labels
        evidence.details["reasoning"] = _think(outcome.raw)
        per_metric = labels_to_metric_scores(labels, [i.dimension for i in items])
        out = []
        for code in self._metrics_of(sample):
            ev = evidence.model_copy(deep=True)
            ev.details["metric_labels"] = [lab for lab, i in zip(labels, items, strict=True)
                                           if METRIC_CODE.get(i.dimension, i.dimension) == code]
            out.append(self.ok(sample, video, code, per_metric[code], per_metric[code] / 100.0, evidence=ev))
        return out

    def fail_all(self, sample: Sample, video: Video, reason: str, *, status: ScoreStatus = ScoreStatus.error,
                 evidence: Evidence | None = None) -> list[Score]:
        """One non-ok score per metric the sample's checklist has (all four when it has none)."""
        out: list[Score] = []
        for m in self._metrics_of(sample) or list(self.metrics):
            out.extend(self.fail(sample, video, reason, status=status, metric=m, evidence=evidence))
        return out


def _think(raw: str | None) -> str:
    import re

    if not raw:
        return ""
    m = re.search(r"<think>(.*?)</think>", raw, re.DOTALL | re.IGNORECASE)
    return m.group(1).strip() if m else ""


class RulerOptions(SeedOptions):
    """Options of ``vreason run ruler``; the defaults reproduce the released eval.py + cal_acc.py."""

    data: str | None = Field(None, description="RULER-Bench's data.jsonl, the parquet file or their folder "
                             "(required).")
    videos: str | None = Field(None, description="The videos root ({model}/{task_name}/{index}.mp4).")
    root: str | None = Field(None, description="Folder the records' image/video paths resolve against; default: "
                             "the data file's folder.")
    check_files: bool = Field(True, description="Check at load time that every referenced file exists.")
    frame_policy: FramePolicyField = Field(
        "ruler", description="Frames the judge sees: default `ruler` = fps:2+max_side=512, "
        "every int(fps/2)-th frame, longest side <= 512, as the released code.", json_schema_extra=RELEASED)
    template: str = Field("ruler_judge", description="Judge prompt template name (default: vreason's wording of "
                          "the released prompt, same inputs and order).", json_schema_extra=RELEASED)
    template_path: str | None = Field(None, description="A template YAML file overriding `template`.",
                                      json_schema_extra=RELEASED)
    judge_role: str = Field("default", description="Which judge (`--judge` = default) scores the checklist.")
    missing_metric: Literal["zero", "skip"] = Field(
        "zero", description="A judged instance without a question for a metric counts `zero` on it (default, as "
        "the released cal_acc.py) or is left out (`skip`).", json_schema_extra=RELEASED)
    win_rate: Literal["pairwise_strict", "best_share", "pairwise_half"] = Field(
        "pairwise_strict", description="The Win Rate row's definition (the paper does not define it; the released "
        "code has none): `pairwise_strict` (default, on the published ~0.24 magnitude), `best_share` or "
        "`pairwise_half`; all three are in ruler_win_rate.")
    n_boot: NBootField = Field(description="Bootstrap resamples for the intervals (no effect on point values).")
    level: LevelField
    boot_seed: BootSeedField
    prompt_variant: str | None = Field(None, description="Give the generator this prompt variant (`pe` for "
                                       "prompt-enhanced runs); the judge still sees the original prompt.",
                                       json_schema_extra=RELEASED)


@benchmarks.register("ruler")
class RulerProtocol(Protocol):
    """RULER-Bench: checklist judged Good/Medium/Poor over IF, VC, VF, RC. Options: :class:`RulerOptions`."""

    name: ClassVar[str] = "ruler"
    summary: ClassVar[str] = "RULER-Bench: checklist judged Good/Medium/Poor over four metrics"
    layout: ClassVar[str] = "ruler"
    """Default layout of ``--videos``: ``{model}/{task_name}/{index}.mp4`` (the released one)."""
    options_model: ClassVar[type[ProtocolOptions]] = RulerOptions
    opts: RulerOptions

    @classmethod
    def human_questions(cls, sample: Sample, metrics: Sequence[str]) -> list[Question]:
        """Good / Medium / Poor (2 / 1 / 0) per checklist item; metric = the item's metric code (``ruler:IF``
        …), item = its index in the checklist."""
        return [Question(f"ruler:{METRIC_CODE.get(item.dimension, item.dimension) or 'checklist'}", str(i),
                         item.text, GOOD_MEDIUM_POOR) for i, item in enumerate(sample.rubric)]


    @classmethod
    def judge_roles(cls, opts: Any, samples: Any = None) -> tuple[str, ...]:
        """Every metric is judged against the checklist."""
        return (opts.judge_role,)

    def load(self) -> LoadResult:
        data = self.opts.data
        if not data:
            raise ConfigError("ruler needs --data pointing at RULER-Bench's data.jsonl (or the parquet file)")
        result = load_ruler(data, root=self.opts.root, check_files=self.opts.check_files)
        variant = self.opts.prompt_variant
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
        o = self.opts
        return [RulerChecklistScorer(frame_policy=o.frame_policy, template=o.template, template_path=o.template_path,
                                     judge_role=o.judge_role)]

    @staticmethod
    def video_path(videos_root: str, model: str, sample: Sample) -> str:
        """The released layout ``{root}/{model}/{task_name}/{index}.mp4``."""
        return ruler_video_path(videos_root, model, sample)

    def aggregate(self, scores: pd.DataFrame, samples: list[Sample], out_dir: str) -> AggregateResult:
        from vreason.protocols.ruler.tables import aggregate_ruler

        o = self.opts
        departing = departures(o)  # the options marked RELEASED (what the judge sees, missing_metric)
        return aggregate_ruler(scores, samples, out_dir, missing_metric=o.missing_metric, n_boot=o.n_boot,
                               level=o.level, seed=o.boot_seed, win_rate=o.win_rate, departing=departing)


__all__ = ["LABELS", "LABEL_SCORE", "METRICS", "RulerChecklistScorer", "RulerOptions", "RulerProtocol",
           "labels_to_metric_scores"]
