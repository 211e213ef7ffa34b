"""PAI-Bench-G (``vreason run pai-g``): quality dimensions + the domain score (yes/no questions to a judge).

* Quality (``pai_g_quality``, cpu): the eight VBench dimensions of the seed's appendix A.2, from local
  backbones (see :mod:`vreason.protocols.pai.g.measure`); a dimension whose model is not given is unscored.
* Domain (``pai_g_domain``, judge): each question of ``vqa/<video_id>.json`` asked on its own, frames at
  2 fps (preset ``pai.g`` = qwen-vl-utils' frame count at fps 2, as the released code), the released
  prompts (template ``pai_g_vqa``), greedy decoding, ``max_tokens`` 1024. Correct (``answer_rule=official``,
  the released ``check_answer_accuracy``): the lower-cased reply contains the expected word and not the
  other, as substrings ("not" contains "no"). A reply with neither word is a wrong answer, as released
  (``unparsed=wrong``, default; such replies are counted and shown beside every number);
  ``--opt unparsed=unscored`` re-asks it, then records it unscored with the raw reply.

The released judge is Qwen2.5-VL-72B-Instruct (code default); the paper used Qwen3-VL-235B-A22B at 2 fps.
Any ``--judge`` spec works; its identity is recorded with every score.
"""

from __future__ import annotations

import os
import re
from typing import Any, ClassVar, Literal

import pandas as pd
from pydantic import Field, field_validator

from vreason.core.errors import ConfigError
from vreason.core.options import (
    RELEASED,
    BootSeedField,
    LevelField,
    NBootField,
    ProtocolOptions,
    SeedOptions,
    departures,
)
from vreason.core.protocol import AggregateResult, LoadResult, Protocol, Requirement
from vreason.core.records import Evidence, Sample, Score, Video
from vreason.core.registry import benchmarks
from vreason.core.scoring import ScoreContext, Scorer
from vreason.frames.policy import FramePolicyField
from vreason.judge.scorer import JudgedScorer, Prepared, Unjudgeable
from vreason.protocols.judge_inputs import interleave

AnswerRule = Literal["official", "word"]
_WORD = {w: re.compile(rf"\b{w}\b", re.IGNORECASE) for w in ("yes", "no")}


def official_correct(reply: str, expected: str) -> bool:
    """The released rule: lower-cased substring test; for yes (no) the reply must contain "yes" ("no") and not
    "no" ("yes"); any other expected answer must occur in the reply."""
    a, e = reply.lower().strip(), expected.lower()
    if e == "yes":
        return "yes" in a and "no" not in a
    if e == "no":
        return "no" in a and "yes" not in a
    return e in a


def has_answer_word(reply: str | None, expected: str) -> bool:
    """Whether ``reply`` holds an answer word at all: "yes" or "no" (or, for another expected answer, that
    answer), as substrings of the lower-cased reply. A reply without one is what ``unparsed`` is about."""
    if not isinstance(reply, str):
        return False
    low, e = reply.lower(), expected.strip().lower()
    return "yes" in low or "no" in low or (e not in ("yes", "no") and bool(e) and e in low)


def reply_parser(expected: str, rule: AnswerRule = "official", strict: bool = True):
    """Reply → whether it is correct. ``official``: :func:`official_correct`; with ``strict`` a reply holding
    neither "yes" nor "no" (nor, for another expected answer, that answer) is unparseable, without it such a
    reply is simply wrong (the released rule: no re-ask). ``word``: whole words only, a reply with both or
    neither word is unparseable."""
    from vreason.judge.parsers import ParseFailure

    e = expected.strip().lower()

    def parse(text: str) -> bool:
        if not isinstance(text, str):
            raise ParseFailure("no reply text")
        if rule == "official" and not strict:
            return official_correct(text, expected)
        if not text.strip():
            raise ParseFailure("empty reply")
        low = text.lower()
        if rule == "official":
            if e in ("yes", "no"):
                if "yes" not in low and "no" not in low:
                    raise ParseFailure("reply contains neither 'yes' nor 'no'")
            elif e not in low and "yes" not in low and "no" not in low:
                raise ParseFailure(f"reply contains neither the expected answer {expected!r} nor yes/no")
            return official_correct(text, expected)
        has = {w: bool(p.search(text)) for w, p in _WORD.items()}
        if has["yes"] == has["no"]:
            raise ParseFailure("reply contains both 'yes' and 'no'" if has["yes"] else "reply has no yes/no word")
        return ("yes" if has["yes"] else "no") == e

    parse.__name__ = f"pai_g_yes_no[{rule}]"
    return parse


class PaiGDomainScorer(JudgedScorer):
    """PAI-Bench-G domain score: the video's yes/no questions, one judge call each; value = fraction correct."""

    name: ClassVar[str] = "pai_g_domain"
    version: ClassVar[str] = "1"
    metrics: ClassVar[tuple[str, ...]] = ("domain",)

    def __init__(self, *, frame_policy: str = "pai.g", judge_input: str = "frames", answer_rule: AnswerRule =
                 "official", unparsed: str = "wrong", template: str = "pai_g_vqa", template_path: str | None = None,
                 judge_role: str = "default", max_tokens: int = 1024):
        self.frame_policy, self.judge_input = frame_policy, judge_input
        self.answer_rule, self.unparsed = answer_rule, unparsed
        self.template, self.template_path = template, template_path
        self.judge_role, self.max_tokens = judge_role, max_tokens

    def applies(self, sample: Sample) -> bool:
        return any(i.kind == "question" and i.expected for i in sample.rubric)

    def _video_parts(self, video: Video) -> tuple[list, list[int], str]:
        from vreason.frames import policy, sample_frames
        from vreason.judge.base import VideoPart

        if self.judge_input == "video":
            fps = policy(self.frame_policy).fps or 2.0
            return [VideoPart(str(video.path), fps=fps)], [], f"video@fps{fps:g}"
        got = sample_frames(str(video.path), self.frame_policy)
        return got.frames, got.indices, got.policy

    def _request(self, question: str, parts: list, sample_id: str | None = None):
        from vreason.judge.base import Decoding, JudgeRequest
        from vreason.judge.templates import get_template

        tpl = get_template(self.template, path=self.template_path)
        system, user = tpl.render(question=question)
        return JudgeRequest(parts=interleave(user, {"VIDEO": parts}), system=system or None,
                            decoding=Decoding(temperature=0.0, max_tokens=self.max_tokens, top_p=1.0),
                            template=tpl.name, template_version=tpl.version, sample_id=sample_id)

    def build(self, sample: Sample, video: Video, ctx: ScoreContext) -> Prepared:
        if not video.path:
            raise Unjudgeable("no video path")
        items = [i for i in sample.rubric if i.kind == "question" and i.expected]
        parts, indices, pol = self._video_parts(video)
        requests = [self._request(i.text, parts, sample.id) for i in items]
        strict = self.unparsed != "wrong"
        return Prepared(requests, [reply_parser(i.expected or "", self.answer_rule, strict) for i in items],
                        state=(items, indices, pol))

    def _counted_wrong(self, out: Any) -> bool:
        """An unparseable reply counted as a wrong answer (``unparsed=wrong``, the released rule)."""
        return self.unparsed == "wrong" and out.raw is not None

    def judge_evidence(self, sample: Sample, video: Video, ctx: ScoreContext, prepared: Prepared,
                       outcomes: list[Any]) -> Evidence:
        items, indices, pol = prepared.state
        rows = []
        for item, req, out in zip(items, prepared.requests, outcomes, strict=True):
            ev = out.evidence(req)
            row: dict[str, Any] = {"uid": item.id, "question": item.text, "expected": item.expected,
                                   "task": item.dimension, "reply": out.raw, "attempts": ev.attempts}
            if out.raw is not None and not has_answer_word(out.raw, item.expected or ""):
                row["no_answer_word"] = True
            if out.ok:
                row["correct"] = bool(out.value)
                if row.get("no_answer_word"):
                    row["counted_wrong"] = "no yes/no word in the reply: a wrong answer (released rule)"
            elif self._counted_wrong(out):
                row["correct"], row["counted_wrong"] = False, f"unparseable, counted wrong (official): {out.reason}"
            else:
                row["unscored_reason"] = out.reason
            rows.append(row)
        scored = [r["correct"] for r in rows if "correct" in r]
        details = {"questions": rows, "answer_rule": self.answer_rule, "unparsed": self.unparsed,
                   "judge_input": self.judge_input, "n_questions": len(rows), "n_scored": len(scored),
                   "n_counted_wrong": sum(1 for r in rows if "counted_wrong" in r)}
        return Evidence(frame_policy=pol, frame_indices=indices,
                        judge=outcomes[0].evidence(prepared.requests[0]) if outcomes else None, details=details)

    def unusable(self, prepared: Prepared, outcomes: list[Any]) -> str | None:
        failed = [f"{item.id}: {out.reason}" for item, out in zip(prepared.state[0], outcomes, strict=True)
                  if not out.ok and not self._counted_wrong(out)]
        return "judge reply unusable for question(s) " + "; ".join(failed) if failed else None

    def interpret(self, sample: Sample, video: Video, ctx: ScoreContext, prepared: Prepared, outcomes: list[Any],
                  evidence: Evidence) -> list[Score]:
        scored = [r["correct"] for r in evidence.details["questions"] if "correct" in r]
        acc = sum(scored) / len(scored)
        return [self.ok(sample, video, "domain", acc, acc, passed=all(scored), evidence=evidence)]


class PaiGOptions(SeedOptions):
    """Options of ``vreason run pai-g``; defaults reproduce the released code where vreason can."""

    prompt_file: str | None = Field(None, description="Prompt file inside --data (default: "
                                    "cosmos_predict2_bench_full_info.json, else the only JSON file).")
    quality: bool = Field(True, description="Run the quality dimensions.")
    domain: bool = Field(True, description="Run the domain (yes/no judge) score.")
    features: str | None = Field(None, description="Subject / i2v-subject features (`--features`): "
                                 "transformers:/local/dino-folder (released: DINO ViT-B/16).")
    clip: str | None = Field(None, description="CLIP folder for background consistency (released: ViT-B/32) and "
                             "the clip-mean substitute: transformers:/local/clip-folder.")
    aesthetic_clip: str | None = Field(None, description="CLIP ViT-L/14 folder under the aesthetic head "
                                       "(default: `clip`).")
    aesthetic_head: str | None = Field(None, description="LAION aesthetic linear head (.pth state dict, "
                                       "Linear(768, 1)).")
    imaging_model: str | None = Field(None, description="Imaging-quality model: a TorchScript file (frame in [0,1] "
                                      "-> MUSIQ-scale score 0-100).")
    interpolator: str | None = Field(None, description="Frame interpolator of motion smoothness: `linear` "
                                     "(classical substitute, recorded) or torchscript:/file.pt; unset = unscored "
                                     "(the released code uses AMT).", json_schema_extra=RELEASED)
    overall_consistency: Literal["clip-mean"] | None = Field(None, description="Video-text backend: `clip-mean` "
                                                             "(substitute for ViCLIP, recorded); unset = unscored.",
                                                             json_schema_extra=RELEASED)
    i2v_background_features: str | None = Field(None, description="Features of i2v background (released: "
                                                "DreamSim, not in vreason): any image-embedder spec, recorded.",
                                                json_schema_extra=RELEASED)
    formula: Literal["released", "paper"] = Field("released", description="Consistency / i2v formulas: the "
                                                  "released VBench code (cosines clamped at 0; i2v = 0.4 max + 0.3 "
                                                  "mean + 0.3 min) or the paper's equations (1), (2), (5), (6).",
                                                  json_schema_extra=RELEASED)
    dimensions: str | None = Field(None, description="Quality dimensions to compute, comma-separated (as VBench's "
                                   "--dimension); default all eight. Quality / Overall average the chosen ones and "
                                   "say so in the cell.", json_schema_extra=RELEASED)
    dimension_mean: Literal["released", "per_video"] = Field("released", description="How a dimension is "
                                                             "averaged: `released` (consistency = summed frame "
                                                             "similarities / summed frame pairs, others = mean over "
                                                             "video files) or `per_video` (mean over videos).",
                                                             json_schema_extra=RELEASED)
    clamp: bool = Field(False, description="Clamp normalised quality values to [0, 1] (released: unbounded, e.g. "
                        "aesthetic / 10 above 1; such values are counted in the report).", json_schema_extra=RELEASED)
    device: str | None = Field(None, description="Device of the local models (`--device`): cpu, cuda, auto.")
    dtype: Literal["float32", "float16", "bfloat16"] = Field("float32", description="dtype of the local models.")
    batch_size: int = Field(16, ge=1, description="Frames per batch (memory is bounded by the batch).")
    frame_policy: FramePolicyField = Field(
        "pai.g", description="Frames the domain judge sees (default `pai.g` = fps:2+qwen, "
        "as the released code).", json_schema_extra=RELEASED)
    judge_input: Literal["frames", "video"] = Field("frames", description="Send sampled frames (any judge) or the "
                                                    "video file as a video part at 2 fps (vLLM servers).",
                                                    json_schema_extra=RELEASED)
    answer_rule: AnswerRule = Field("official", description="Yes/no correctness: `official` substring rule "
                                    "or `word` (whole words; both words = unparseable).", json_schema_extra=RELEASED)
    unparsed: Literal["unscored", "wrong"] = Field("wrong", description="A reply with no answer word: a wrong "
                                                   "answer as released (default, counted in the tables) or "
                                                   "`unscored` (re-asked, then unscored with the raw reply).",
                                                   json_schema_extra=RELEASED)
    template: str = Field("pai_g_vqa", description="Judge template of the domain questions.")
    template_path: str | None = Field(None, description="A template YAML file for the domain questions.")
    judge_role: str = Field("default", description="Which judge (`--judge` = default) answers the questions.")
    max_tokens: int = Field(1024, ge=1, description="Completion-token cap of the judge (released: 1024).")
    n_boot: NBootField
    level: LevelField
    boot_seed: BootSeedField

    @field_validator("dimensions")
    @classmethod
    def _dims(cls, v: str | None) -> str | None:
        from vreason.protocols.pai.g.quality import DIMENSIONS

        if v is None:
            return v
        names = [d.strip() for d in v.split(",") if d.strip()]
        bad = [d for d in names if d not in DIMENSIONS]
        if bad or not names:
            raise ValueError(f"unknown dimension(s) {', '.join(bad) or '(none given)'}; known: {', '.join(DIMENSIONS)}")
        return ",".join(d for d in DIMENSIONS if d in names)

    def dimension_list(self) -> list[str] | None:
        return self.dimensions.split(",") if self.dimensions else None

    @field_validator("interpolator")
    @classmethod
    def _interp(cls, v: str | None) -> str | None:
        if v is not None and v != "linear" and not (v.startswith("torchscript:") and len(v) > 12):
            raise ValueError("must be `linear` or torchscript:/path/to/model.pt")
        return v


@benchmarks.register("pai-g")
class PaiGProtocol(Protocol):
    """PAI-Bench-G: quality dimensions and the domain score. Options: :class:`PaiGOptions`."""

    name: ClassVar[str] = "pai-g"
    summary: ClassVar[str] = "PAI-Bench-G: VBench quality dimensions + yes/no domain questions (judge)"
    options_model: ClassVar[type[ProtocolOptions]] = PaiGOptions
    requires = (Requirement("deep", "the learned quality dimensions (--opt features, clip, aesthetic_head, "
                            "imaging_model, interpolator=torchscript:…); unscored without them", weights=True),)

    @classmethod
    def judge_roles(cls, opts: Any, samples: Any = None) -> tuple[str, ...]:
        """The domain questions are judged (``domain=false`` runs without a judge)."""
        return (opts.judge_role,) if opts.domain else ()
    layout: ClassVar[str] = "pai"
    opts: PaiGOptions

    def load(self) -> LoadResult:
        from vreason.protocols.pai.g.data import load_pai_g

        if not self.opts.data:
            raise ConfigError("pai-g needs --data pointing at the PAI-Bench-G snapshot (prompt file, vqa/, "
                              "condition_image/)")
        try:
            return load_pai_g(self.opts.data, prompt_file=self.opts.prompt_file)
        except (FileNotFoundError, ValueError) as exc:
            raise ConfigError(str(exc)) from None

    def locate_video(self, model: str, sample: Sample, seed: int) -> str | None:
        """``{videos}/{model}/{video_id}__{seed}.mp4``, else the flat ``{videos}/{video_id}__{seed}.mp4`` (one
        model per flat folder), else for seed 0 a bare ``{video_id}.mp4`` (probed by the released code)."""
        root = self.opts.videos
        if not root:
            return None
        cands = [os.path.join(root, model, f"{sample.id}__{seed}.mp4"), os.path.join(root, f"{sample.id}__{seed}.mp4")]
        if seed == 0:
            cands += [os.path.join(root, model, f"{sample.id}.mp4"), os.path.join(root, f"{sample.id}.mp4")]
        return next((c for c in cands if os.path.isfile(c)), cands[1])

    def scorers(self) -> list[Scorer]:
        from vreason.protocols.pai.g.measure import PaiGQualityScorer

        o = self.opts
        out: list[Scorer] = []
        if o.quality:
            out.append(PaiGQualityScorer(features=o.features, clip=o.clip, aesthetic_clip=o.aesthetic_clip,
                                         aesthetic_head=o.aesthetic_head, imaging_model=o.imaging_model,
                                         interpolator=o.interpolator, overall_consistency=o.overall_consistency,
                                         i2v_background_features=o.i2v_background_features, formula=o.formula,
                                         device=o.device or "cpu", dtype=o.dtype, batch_size=o.batch_size,
                                         dimensions=tuple(o.dimension_list() or ()) or None))
        if o.domain:
            out.append(PaiGDomainScorer(frame_policy=o.frame_policy, judge_input=o.judge_input,
                                        answer_rule=o.answer_rule, unparsed=o.unparsed, template=o.template,
                                        template_path=o.template_path, judge_role=o.judge_role,
                                        max_tokens=o.max_tokens))
        return out

    def aggregate(self, scores: pd.DataFrame, samples: list[Sample], out_dir: str) -> AggregateResult:
        from vreason.protocols.pai.tables import aggregate_pai_g

        o = self.opts
        return aggregate_pai_g(scores, samples, out_dir, n_boot=o.n_boot, level=o.level, seed=o.boot_seed,
                               departing=departures(o), dimension_mean=o.dimension_mean, clamp=o.clamp,
                               dimensions=o.dimension_list(), elo=_run_elo(out_dir))


def _run_elo(out_dir: str) -> pd.DataFrame | None:
    """The human study's ELO half of Table 8 from the run's pairwise votes, if the run folder holds any."""
    run_dir = os.path.dirname(os.path.abspath(out_dir))
    if not os.path.isfile(os.path.join(run_dir, "results.sqlite")):
        return None
    import sqlite3

    from vreason.human.ratings import pai_elo_half
    from vreason.human.store import AnnotationStore

    try:
        with AnnotationStore(run_dir) as ann:
            votes = ann.votes()
    except (OSError, ValueError, RuntimeError, sqlite3.Error):
        return None
    return pai_elo_half(votes)


__all__ = ["PaiGDomainScorer", "PaiGOptions", "PaiGProtocol", "has_answer_word", "official_correct", "reply_parser"]
