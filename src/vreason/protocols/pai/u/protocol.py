"""PAI-Bench-U (``vreason run pai-u``): a vision-language model answers multiple-choice questions on videos.

The **model under test is the judge backend** (``--judge``: a local checkpoint, a vLLM server, an API);
nothing is generated. ``--models NAME`` only names it in the tables (one name per run; the videos are the
items' own ``video_path``). As released (``reason/models.py``, Cosmos-Reason1-7B on vLLM): the prompt is the
question and one ``"{k}: {v}"`` line per option, then the video (frames at 4 fps: preset ``pai.u``); the
system prompt asks for ``<think>…</think>\\n<answer>…</answer>``; temperature 0.6, top_p 0.95,
repetition_penalty 1.05, max_tokens 16384 (the run seed is the sampling seed).

Correct (``check_answer``): the text between the first ``<answer>`` and the next ``</answer>``, lower-cased,
with "." and spaces removed, equals the answer letter (treated the same). A reply **without** an
``<answer>`` tag is, as released, the whole reply with " N/A" appended, compared the same way — a wrong
answer (``missing_answer=wrong``, default; such replies are counted beside every accuracy).
``--opt missing_answer=unscored`` re-asks it instead, then records it unscored with the raw reply.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import pandas as pd
from pydantic import Field

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
from vreason.core.protocol import AggregateResult, LoadResult, Protocol
from vreason.core.records import Evidence, Sample, Score, Video
from vreason.core.registry import benchmarks
from vreason.core.scoring import ScoreContext, Scorer
from vreason.frames.policy import FramePolicyField
from vreason.judge.scorer import JudgedScorer, Prepared, Unjudgeable
from vreason.protocols.judge_inputs import interleave


def normalise_letter(text: str) -> str:
    """The released ``check_answer`` normalisation: lower case, "." and spaces removed."""
    return text.lower().replace(".", "").replace(" ", "")


def answer_text(reply: str) -> str:
    """The text between the first ``<answer>`` and the next ``</answer>`` (or the reply's end), stripped; raises
    ParseFailure when there is no ``<answer>`` tag."""
    from vreason.judge.parsers import ParseFailure

    if not isinstance(reply, str) or "<answer>" not in reply:
        raise ParseFailure("no <answer> tag in the reply")
    return reply.split("<answer>")[1].split("</answer>")[0].strip()


def released_answer(reply: str) -> tuple[str, bool]:
    """The released ``reason/run.py`` extraction without a parse failure: (the ``<answer>`` text, True), or
    for a reply without the tag (the whole reply + " N/A", False) — which never equals a letter."""
    from vreason.judge.parsers import ParseFailure

    if not isinstance(reply, str):
        raise ParseFailure("no reply text")
    if "<answer>" in reply:
        return answer_text(reply), True
    return reply + " N/A", False


def is_correct(answer: str, expected: str) -> bool:
    return normalise_letter(answer) == normalise_letter(expected)


def choices_text(index2ans: dict[str, Any]) -> str:
    return "\n".join(f"{k}: {v}" for k, v in index2ans.items() if v is not None)


class PaiUMcqScorer(JudgedScorer):
    """PAI-Bench-U: one multiple-choice question per video, answered by the model under test (the judge)."""

    name: ClassVar[str] = "pai_u_mcq"
    version: ClassVar[str] = "1"
    metrics: ClassVar[tuple[str, ...]] = ("correct",)

    def __init__(self, *, frame_policy: str = "pai.u", judge_input: str = "frames", missing_answer: str = "wrong",
                 template: str = "pai_u_mcq", template_path: str | None = None, judge_role: str = "default",
                 temperature: float = 0.6, top_p: float | None = 0.95, max_tokens: int = 16384,
                 repetition_penalty: float | None = 1.05):
        self.frame_policy, self.judge_input, self.missing_answer = frame_policy, judge_input, missing_answer
        self.template, self.template_path, self.judge_role = template, template_path, judge_role
        self.temperature, self.top_p, self.max_tokens = temperature, top_p, max_tokens
        self.repetition_penalty = repetition_penalty

    def _parts(self, video: Video) -> tuple[list, list[int], str]:
        from vreason.frames import policy, sample_frames
        from vreason.judge.base import VideoPart

        if self.judge_input == "video":
            fps = policy(self.frame_policy).fps or 4.0
            return [VideoPart(str(video.path), fps=fps)], [], f"video@fps{fps:g}"
        got = sample_frames(str(video.path), self.frame_policy)
        return got.frames, got.indices, got.policy

    def _request(self, sample: Sample, parts: list, seed: int):
        from vreason.judge.base import Decoding, JudgeRequest
        from vreason.judge.templates import get_template

        tpl = get_template(self.template, path=self.template_path)
        system, user = tpl.render(question=sample.prompt, choices=choices_text(sample.metadata.get("index2ans", {})))
        extra = {"repetition_penalty": self.repetition_penalty} if self.repetition_penalty is not None else {}
        dec = Decoding(temperature=self.temperature, top_p=self.top_p, max_tokens=self.max_tokens, seed=seed,
                       extra=extra)
        return JudgeRequest(parts=interleave(user, {"VIDEO": parts}), system=system or None, decoding=dec,
                            template=tpl.name, template_version=tpl.version, sample_id=sample.id)

    def no_judge_reason(self) -> str:
        return "no judge client configured (the model under test is --judge)"

    def build(self, sample: Sample, video: Video, ctx: ScoreContext) -> Prepared:
        if not video.path:
            raise Unjudgeable("no video path")
        parts, indices, pol = self._parts(video)
        req = self._request(sample, parts, video.seed)
        return Prepared([req], released_answer if self.missing_answer == "wrong" else answer_text,
                        state=(indices, pol))

    def judge_evidence(self, sample: Sample, video: Video, ctx: ScoreContext, prepared: Prepared,
                       outcomes: list[Any]) -> Evidence:
        indices, pol = prepared.state
        details: dict[str, Any] = {"expected": str(sample.metadata.get("answer", "")),
                                   "missing_answer": self.missing_answer, "judge_input": self.judge_input}
        return Evidence(frame_policy=pol, frame_indices=indices, judge=outcomes[0].evidence(prepared.requests[0]),
                        details=details)

    def interpret(self, sample: Sample, video: Video, ctx: ScoreContext, prepared: Prepared, outcomes: list[Any],
                  evidence: Evidence) -> list[Score]:
        out, details = outcomes[0], evidence.details
        expected = details["expected"]
        if self.missing_answer == "wrong":
            details["answer"], tagged = out.value
            ok = is_correct(details["answer"], expected)
            if not tagged:
                details["no_answer_tag"] = True
                details["counted_wrong"] = "no <answer> tag: the reply + ' N/A' compared, as released (wrong)"
        else:
            details["answer"] = out.value
            ok = is_correct(out.value, expected)
        return [self.ok(sample, video, "correct", float(ok), float(ok), passed=ok, evidence=evidence)]


class PaiUOptions(SeedOptions):
    """Options of ``vreason run pai-u``; defaults reproduce the released ``reason/`` code."""

    video_root: str | None = Field(None, description="Folder the items' video_path resolve against (default: "
                                   "the --data folder).")
    frame_policy: FramePolicyField = Field(
        "pai.u", description="Frames the model sees (default `pai.u` = fps:4+qwen, as "
        "released; add +max_frames=N to cap).", json_schema_extra=RELEASED)
    judge_input: Literal["frames", "video"] = Field("frames", description="Sampled frames (any backend) or the "
                                                    "video file as a video part (vLLM servers).",
                                                    json_schema_extra=RELEASED)
    missing_answer: Literal["unscored", "wrong"] = Field("wrong", description="A reply without <answer>: a wrong "
                                                         "answer as released (default, counted in the tables) or "
                                                         "`unscored` (re-asked, then unscored).",
                                                         json_schema_extra=RELEASED)
    temperature: float = Field(0.6, ge=0, description="Sampling temperature (released: 0.6).",
                               json_schema_extra=RELEASED)
    top_p: float | None = Field(0.95, gt=0, le=1, description="top_p (released: 0.95).", json_schema_extra=RELEASED)
    max_tokens: int = Field(16384, ge=1, description="Completion-token cap (released: 16384).",
                            json_schema_extra=RELEASED)
    repetition_penalty: float | None = Field(1.05, description="vLLM repetition_penalty (released: 1.05); null "
                                             "for APIs that reject it.", json_schema_extra=RELEASED)
    template: str = Field("pai_u_mcq", description="Prompt template.", json_schema_extra=RELEASED)
    template_path: str | None = Field(None, description="A template YAML file.")
    judge_role: str = Field("default", description="Which judge (`--judge` = default) is the model under test.")
    n_boot: NBootField
    level: LevelField
    boot_seed: BootSeedField


@benchmarks.register("pai-u")
class PaiUProtocol(Protocol):
    """PAI-Bench-U: the judge backend answers multiple-choice video questions. Options: :class:`PaiUOptions`."""

    name: ClassVar[str] = "pai-u"
    summary: ClassVar[str] = "PAI-Bench-U: multiple-choice video understanding; the model under test is --judge"
    options_model: ClassVar[type[ProtocolOptions]] = PaiUOptions
    opts: PaiUOptions

    @classmethod
    def judge_roles(cls, opts: Any, samples: Any = None) -> tuple[str, ...]:
        """The model under test answers through the judge interface."""
        return (opts.judge_role,)

    def load(self) -> LoadResult:
        from vreason.protocols.pai.u.data import load_pai_u

        if not self.opts.data:
            raise ConfigError("pai-u needs --data pointing at the PAI-Bench-U items (JSON / JSONL / parquet and the "
                              "videos)")
        try:
            return load_pai_u(self.opts.data, video_root=self.opts.video_root)
        except (FileNotFoundError, ValueError) as exc:
            raise ConfigError(str(exc)) from None

    def locate_video(self, model: str, sample: Sample, seed: int) -> str | None:
        """The item's own video (``video_path``), for whatever name ``--models`` gives the model under test."""
        return sample.resolve(sample.input_video)

    def scorers(self) -> list[Scorer]:
        o = self.opts
        return [PaiUMcqScorer(frame_policy=o.frame_policy, judge_input=o.judge_input, missing_answer=o.missing_answer,
                              template=o.template, template_path=o.template_path, judge_role=o.judge_role,
                              temperature=o.temperature, top_p=o.top_p, max_tokens=o.max_tokens,
                              repetition_penalty=o.repetition_penalty)]

    def aggregate(self, scores: pd.DataFrame, samples: list[Sample], out_dir: str) -> AggregateResult:
        from vreason.protocols.pai.tables import aggregate_pai_u

        o = self.opts
        return aggregate_pai_u(scores, samples, out_dir, n_boot=o.n_boot, level=o.level, seed=o.boot_seed,
                               departing=departures(o))


__all__ = ["PaiUMcqScorer", "PaiUOptions", "PaiUProtocol", "answer_text", "choices_text", "is_correct",
           "normalise_letter", "released_answer"]
