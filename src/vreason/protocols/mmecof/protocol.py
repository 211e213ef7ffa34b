"""MME-CoF-Pro: per-step Reasoning Score under no / text / visual hints, plus generation quality.

* Reasoning Score (``mmecof_rs``): frames every 10th (preset ``mmecof`` = ``every:10``); each
  annotated step judged on its own (yes/no with a reason); RS = completed steps / N, reported
  ×100. If any step's reply never parses the RS is ``unscored`` (with every step's evidence).
* Generation quality (``mmecof_gq``): one call per video rating CS (consistency), TC (temporal
  consistency), VS (visual stability), Hallu (hallucination, higher = fewer) and PG (physics
  grounding) on a declared integer scale, default 0–9 (the paper's "0-9 mean as %").

The judge sees the task's no-hint instruction and the original image under every hint
setting, so the three settings are judged identically (the rubric is shared, paper §3.1.1).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Literal

import pandas as pd
from pydantic import Field, field_validator

from vreason.core.errors import ConfigError, VideoError
from vreason.core.human import Question
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
from vreason.core.records import Evidence, Sample, Score, Video, normalize_likert
from vreason.core.registry import benchmarks
from vreason.core.scoring import ScoreContext, Scorer
from vreason.data.loaderrors import load_error
from vreason.frames.policy import FramePolicyField
from vreason.judge.scorer import JudgedScorer, Prepared
from vreason.protocols.judge_inputs import encodings_by_marker, interleave, sample_image_part
from vreason.protocols.mmecof.data import VISUAL_HINT_CATEGORIES, hint_inputs, load_field_map, load_mmecof

VISUAL_PROMPT_MODES = ("require", "text_hint")
"""``visual_prompt``: a visual-hint sample without a visual-hint prompt is an error (``require``,
default) or gets the text-hint prompt with the annotated image (``text_hint``, recorded)."""
GQ_KEYS = {"CS": "consistency", "TC": "temporal_consistency", "VS": "visual_stability",
           "Hallu": "hallucination", "PG": "physics_grounding"}


def step_parser():
    """Reply → ``(completed: bool, reason: str)``: a JSON object with ``completed`` yes/no (or
    true/false), else a bare Yes/No reply. Anything else raises ParseFailure."""
    from vreason.judge import parsers

    yn = parsers.yes_no()

    def parse(text: str) -> tuple[bool, str]:
        try:
            obj = parsers.find_last_object(text)
        except parsers.ParseFailure:
            return yn(text), ""
        if "completed" not in obj:
            raise parsers.ParseFailure(f"JSON object has no 'completed' field (keys: {sorted(obj)[:6]})")
        v = obj["completed"]
        if isinstance(v, bool):
            done = v
        elif isinstance(v, str) and v.strip().lower() in ("yes", "no", "true", "false"):
            done = v.strip().lower() in ("yes", "true")
        else:
            raise parsers.ParseFailure(f"'completed' is {v!r}, expected yes or no")
        return done, str(obj.get("reason", ""))

    parse.__name__ = "mmecof_step"
    return parse


def quality_parser(lo: int, hi: int):
    """Reply → ``{code: int}`` for the five dimensions; missing or out-of-scale values fail."""
    from vreason.judge import parsers

    def parse(text: str) -> dict[str, int]:
        obj = parsers.find_last_object(text)
        out = {}
        for code, key in GQ_KEYS.items():
            if key not in obj:
                raise parsers.ParseFailure(f"JSON object has no {key!r} field")
            out[code] = parsers.likert(lo, hi)(str(obj[key]))
        return out

    parse.__name__ = f"mmecof_quality[{lo},{hi}]"
    return parse


class _MmeCofJudged(JudgedScorer):

    def __init__(self, *, frame_policy: str = "mmecof", template: str | None = None, template_path: str | None = None,
                 judge_role: str = "default", hint: str | None = None, max_tokens: int = 1024):
        self.frame_policy = frame_policy
        self.template = template or self.default_template
        self.template_path = template_path
        self.judge_role = judge_role
        self.hint = hint
        self.max_tokens = max_tokens

    default_template: ClassVar[str] = ""

    def _inputs(self, sample: Sample, video: Video):
        from vreason.frames import sample_frames

        image_path = sample.metadata.get("image_no_hint") or sample.input_image
        image = sample_image_part(sample, image_path)
        if not video.path:
            raise VideoError(str(video.path), "no video path")
        got = sample_frames(video.path, self.frame_policy)
        return image, got

    def _request(self, user_vars: dict[str, Any], image, frames, sample_id: str | None = None):
        from vreason.judge.base import Decoding, JudgeRequest
        from vreason.judge.templates import get_template

        tpl = get_template(self.template, path=self.template_path)
        system, user = tpl.render(**user_vars)
        return JudgeRequest(parts=interleave(user, {"INPUT_IMAGE": [image], "VIDEO": frames}), system=system or None,
                            decoding=Decoding(max_tokens=self.max_tokens), template=tpl.name,
                            template_version=tpl.version, sample_id=sample_id)

    @staticmethod
    def _encoding(image, frames) -> dict[str, str]:
        """What the judge gets: the input image's original file bytes (no released code to follow;
        no re-encoding loss), the frames at the judge's own image settings."""
        return encodings_by_marker({"INPUT_IMAGE": [image], "VIDEO": frames})

    def _hint(self, sample: Sample, ctx: ScoreContext) -> str:
        return str(self.hint or sample.metadata.get("hint") or ctx.options.get("hint") or "none")


class MmeCofStepScorer(_MmeCofJudged):
    """MME-CoF-Pro Reasoning Score: each step judged yes/no on frames every 10th; RS = completed / N."""

    name: ClassVar[str] = "mmecof_rs"
    version: ClassVar[str] = "1"
    metrics: ClassVar[tuple[str, ...]] = ("RS",)
    default_template: ClassVar[str] = "mmecof_step"

    def applies(self, sample: Sample) -> bool:
        return any(i.kind == "step" for i in sample.rubric)

    def build(self, sample: Sample, video: Video, ctx: ScoreContext) -> Prepared:
        steps = [i for i in sample.rubric if i.kind == "step"]
        instruction = sample.metadata.get("prompt_no_hint") or sample.prompt
        image, got = self._inputs(sample, video)
        requests = [self._request({"instruction": instruction, "n_frames": len(got.frames), "step": s.text,
                                   "step_index": k, "n_steps": len(steps)}, image, got.frames, sample.id)
                    for k, s in enumerate(steps, 1)]
        return Prepared(requests, step_parser(), state=(steps, image, got))

    def judge_evidence(self, sample: Sample, video: Video, ctx: ScoreContext, prepared: Prepared,
                       outcomes: list[Any]) -> Evidence:
        steps, image, got = prepared.state
        details: list[dict[str, Any]] = []
        for s, req, out in zip(steps, prepared.requests, outcomes, strict=True):
            row: dict[str, Any] = {"id": s.id, "text": s.text, "ok": bool(out.ok),
                                   "judge": out.evidence(req).model_dump(mode="json")}
            if out.ok:
                row["completed"], row["reason"] = bool(out.value[0]), out.value[1]
            else:
                row["unscored_reason"] = out.reason
            details.append(row)
        return Evidence(frame_policy=got.policy, frame_indices=got.indices,
                        judge=outcomes[0].evidence(prepared.requests[0]) if outcomes else None,
                        details={"hint": self._hint(sample, ctx), "steps": details,
                                 "image_encoding": self._encoding(image, got.frames)})

    def unusable(self, prepared: Prepared, outcomes: list[Any]) -> str | None:
        failed = [f"{s.id}: {out.reason}" for s, out in zip(prepared.state[0], outcomes, strict=True) if not out.ok]
        return "judge reply unusable for step(s) " + "; ".join(failed) if failed else None

    def interpret(self, sample: Sample, video: Video, ctx: ScoreContext, prepared: Prepared, outcomes: list[Any],
                  evidence: Evidence) -> list[Score]:
        steps = prepared.state[0]
        done = sum(1 for d in evidence.details["steps"] if d["completed"])
        rs = done / len(steps)
        evidence.details.update({"completed": done, "n_steps": len(steps)})
        return [self.ok(sample, video, "RS", 100.0 * rs, rs, passed=done == len(steps), evidence=evidence)]


class MmeCofQualityScorer(_MmeCofJudged):
    """MME-CoF-Pro generation quality: CS, TC, VS, Hallu, PG on a declared scale (default 0–9)."""

    name: ClassVar[str] = "mmecof_gq"
    version: ClassVar[str] = "1"
    metrics: ClassVar[tuple[str, ...]] = tuple(GQ_KEYS)
    default_template: ClassVar[str] = "mmecof_quality"

    def __init__(self, *, scale: tuple[int, int] = (0, 9), **kw: Any):
        super().__init__(**kw)
        self.lo, self.hi = int(scale[0]), int(scale[1])
        if self.hi <= self.lo:
            raise ConfigError(f"bad quality scale {scale}")

    def build(self, sample: Sample, video: Video, ctx: ScoreContext) -> Prepared:
        instruction = sample.metadata.get("prompt_no_hint") or sample.prompt
        image, got = self._inputs(sample, video)
        req = self._request({"instruction": instruction, "n_frames": len(got.frames), "lo": self.lo,
                             "hi": self.hi}, image, got.frames, sample.id)
        return Prepared([req], quality_parser(self.lo, self.hi), state=(image, got))

    def judge_evidence(self, sample: Sample, video: Video, ctx: ScoreContext, prepared: Prepared,
                       outcomes: list[Any]) -> Evidence:
        image, got = prepared.state
        return Evidence(frame_policy=got.policy, frame_indices=got.indices,
                        judge=outcomes[0].evidence(prepared.requests[0]),
                        details={"hint": self._hint(sample, ctx), "scale": [self.lo, self.hi],
                                 "image_encoding": self._encoding(image, got.frames)})

    def interpret(self, sample: Sample, video: Video, ctx: ScoreContext, prepared: Prepared, outcomes: list[Any],
                  evidence: Evidence) -> list[Score]:
        return [self.ok(sample, video, code, v, normalize_likert(v, self.lo, self.hi), evidence=evidence)
                for code, v in outcomes[0].value.items()]


def _parse_scale(spec: Any) -> tuple[int, int]:
    if isinstance(spec, (tuple, list)) and len(spec) == 2:
        return int(spec[0]), int(spec[1])
    a, sep, b = str(spec).partition("-")
    if not sep:
        raise ConfigError(f"quality scale must look like 0-9, got {spec!r}")
    return int(a), int(b)


Hint = Literal["none", "text", "visual"]


class MmeCofOptions(SeedOptions):
    """Options of ``vreason run mmecof``; MME-CoF-Pro's code is not public, so the defaults follow the paper."""

    data: str | None = Field(None, description="The MME-CoF-Pro records: JSONL, JSON, parquet or their folder "
                             "(required).")
    field_map: str | dict[str, Any] | None = Field(None, description="Field names of the records: a YAML file or a "
                                                   "mapping; entries given replace the default candidates.")
    root: str | None = Field(None, description="Folder the records' image paths resolve against.")
    hint: Hint = Field("none", description="Hint setting the generator gets (`--hint`): none, text or visual "
                       "(visual: only samples with a visual-hint image).")
    visual_prompt: Literal["require", "text_hint"] = Field(
        "require", description="A visual-hint sample without a visual-hint prompt is a load error (`require`, "
        "default) or gets the text-hint prompt with the annotated image (`text_hint`, recorded per sample).",
        json_schema_extra=RELEASED)
    frame_policy: FramePolicyField = Field(
        "mmecof", description="Frames the judge sees: default `mmecof` = every 10th frame, "
        "as the paper.", json_schema_extra=RELEASED)
    quality: bool = Field(True, description="Also run the generation-quality judge (CS, TC, VS, Hallu, PG), as "
                          "the paper.", json_schema_extra=RELEASED)
    quality_scale: str = Field("0-9", description="Integer scale of the quality judge, `lo-hi` (default 0-9, the "
                               "paper's '0-9 mean as %').", json_schema_extra=RELEASED)
    step_template: str | None = Field(None, description="Judge template of the per-step Reasoning Score "
                                      "(default `mmecof_step`).", json_schema_extra=RELEASED)
    step_template_path: str | None = Field(None, description="A template YAML file for the step judge.")
    quality_template: str | None = Field(None, description="Judge template of generation quality (default "
                                         "`mmecof_quality`).", json_schema_extra=RELEASED)
    quality_template_path: str | None = Field(None, description="A template YAML file for the quality judge.")
    judge_role: str = Field("default", description="Which judge (`--judge` = default) scores the steps.")
    quality_judge_role: str | None = Field(None, description="Which judge rates quality; default: `judge_role`.")
    compare_runs: dict[Hint, Any] = Field(default_factory=dict, description="Hint -> another hint run's directory "
                                          "or exported scores table, for the paired hint deltas.")
    n_boot: NBootField = Field(description="Bootstrap resamples for the intervals (no effect on point values).")
    level: LevelField
    boot_seed: BootSeedField

    @field_validator("quality_scale", mode="before")
    @classmethod
    def _scale(cls, v: Any) -> Any:
        try:
            lo, hi = _parse_scale(v)
        except (ConfigError, ValueError, TypeError):
            raise ValueError("must look like 0-9 (lo-hi, integers)") from None
        if hi <= lo:
            raise ValueError("the top of the scale must be above the bottom")
        return f"{lo}-{hi}"


@benchmarks.register("mmecof")
class MmeCofProtocol(Protocol):
    """MME-CoF-Pro: per-step Reasoning Score under hint settings, plus generation quality.
    Options: :class:`MmeCofOptions`."""

    name: ClassVar[str] = "mmecof"
    summary: ClassVar[str] = "MME-CoF-Pro: per-step Reasoning Score under hint settings"
    options_model: ClassVar[type[ProtocolOptions]] = MmeCofOptions
    opts: MmeCofOptions

    @classmethod
    def human_questions(cls, sample: Sample, metrics: Sequence[str]) -> list[Question]:
        """Per annotated step, satisfied or not (``mmecof:RS``, item = the step's 1-based index)."""
        steps = [i for i in sample.rubric if i.kind == "step"]
        return [Question("mmecof:RS", str(k), f"Step {k}: {s.text}", ((1.0, "satisfied"), (0.0, "not satisfied")))
                for k, s in enumerate(steps, 1)]


    @classmethod
    def judge_roles(cls, opts: Any, samples: Any = None) -> tuple[str, ...]:
        """The steps are judged; so is generation quality unless ``quality=false``."""
        return (opts.judge_role, *((opts.quality_judge_role or opts.judge_role,) if opts.quality else ()))

    @property
    def hint(self) -> str:
        return self.opts.hint

    @property
    def visual_prompt(self) -> str:
        return self.opts.visual_prompt

    def load(self) -> LoadResult:
        data = self.opts.data
        if not data:
            raise ConfigError("mmecof needs --data pointing at the MME-CoF-Pro records (JSONL/JSON/parquet)")
        hint = self.hint
        fmap = load_field_map(self.opts.field_map)
        res = load_mmecof(data, field_map=fmap, root=self.opts.root)
        if hint == "visual" and res.samples and not any(s.metadata.get("has_visual_hint") for s in res.samples):
            raise ConfigError(
                "mmecof --hint visual: no record has a visual-hint image (fields tried: "
                f"{', '.join(fmap.visual_hint_image)}); the run would silently fall back to another "
                "setting. Name the field with --opt field_map=fields.yaml (visual_hint_image: ...).")
        out: list[Sample] = []
        self.skipped: list[str] = []
        for s in res.samples:
            meta = {**s.metadata, "hint": hint, "prompt_no_hint": s.prompt, "image_no_hint": s.input_image}
            if hint == "visual":
                if not s.metadata.get("has_visual_hint"):
                    self.skipped.append(s.id)
                    why = ("has no visual-hint image" if s.category in VISUAL_HINT_CATEGORIES else
                           f"category {s.category!r} has no visual-hint setting (MME-CoF-Pro-mini: 8 categories)")
                    res.errors.append(load_error(s.metadata.get("record") or s.id, "visual_hint_image",
                                                 f"sample {s.id} not run under --hint visual: {why}",
                                                 sample_id=s.id))
                    continue
                if "visual" not in s.prompt_variants:
                    if self.visual_prompt != "text_hint":
                        self.skipped.append(s.id)
                        res.errors.append(load_error(s.metadata.get("record") or s.id, "prompt_visual_hint", (
                            f"sample {s.id} has a visual-hint image but no visual-hint prompt (fields tried: "
                            f"{', '.join(fmap.prompt_visual_hint)}); map the field, or pass "
                            "--opt visual_prompt=text_hint to pair the image with the text-hint prompt"),
                            sample_id=s.id))
                        continue
                    s = s.model_copy(update={"prompt_variants": {**s.prompt_variants,
                                                                 "visual": s.prompt_for("text")}})
                    meta["visual_prompt_source"] = "text_hint"
                else:
                    meta["visual_prompt_source"] = "visual_hint"
            prompt, _ = hint_inputs(s, hint)
            image = s.metadata["visual_hint_image"] if hint == "visual" else s.input_image
            out.append(s.model_copy(update={"prompt": prompt, "input_image": image, "metadata": meta}))
        return LoadResult(samples=out, errors=res.errors)

    def scorers(self) -> list[Scorer]:
        o = self.opts
        out: list[Scorer] = [MmeCofStepScorer(frame_policy=o.frame_policy, template=o.step_template,
                                              template_path=o.step_template_path, judge_role=o.judge_role,
                                              hint=o.hint)]
        if o.quality:
            out.append(MmeCofQualityScorer(frame_policy=o.frame_policy, template=o.quality_template,
                                           template_path=o.quality_template_path,
                                           judge_role=o.quality_judge_role or o.judge_role,
                                           hint=o.hint, scale=_parse_scale(o.quality_scale)))
        return out

    def aggregate(self, scores: pd.DataFrame, samples: list[Sample], out_dir: str) -> AggregateResult:
        from vreason.protocols.mmecof.tables import aggregate_mmecof

        o = self.opts
        return aggregate_mmecof(scores, samples, out_dir, default_hint=o.hint, departing=departures(o),
                                other_runs=dict(o.compare_runs), n_boot=o.n_boot, level=o.level, seed=o.boot_seed)


__all__ = ["GQ_KEYS", "MmeCofOptions", "MmeCofProtocol", "MmeCofQualityScorer", "MmeCofStepScorer", "quality_parser",
           "step_parser"]
