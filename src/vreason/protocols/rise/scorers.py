"""RISE-Video scorers: Reasoning Alignment (judged or puzzle verifier), TC, PR and VQ.

Frame strategies per metric (issue 5, item 2; recorded in every score's evidence):

* RA: integer ``extra_frame`` F → ``fps:F+linspace`` (every ``int(video_fps // F)``-th frame,
  as ``linspace(0, T-1, ceil(T / interval))``); ``-1`` → ``last_fraction:3/0.4+round+dedupe``
  (3 frames from ``int(0.6 T)`` to ``T-1``, rounded with ``np.round`` and de-duplicated as the
  released ``uniform_indices`` does: T = 120 → 72, 96, 119); ``maze`` /
  ``sym`` / ``gt`` → ``last`` (the maze verifier reads every frame);
* TC: ``uniform:16+round+dedupe``; PR: ``uniform:16`` (``+reverse`` when the sample says so);
  VQ: ``uniform:6+drop_ends`` (4 frames).

Image encoding per metric, as the released code sends frames (issue 9, item 6; recorded in every
score's ``evidence.details["image_encoding"]``): RA JPEG quality 95 (the frames fps_clip.py saved
with ``cv2.imwrite``'s default, sent as file bytes), TC quality 90 (``cv2.imencode``), PR and VQ
quality 75 (Pillow's default); the ground-truth image of the ``ra_mode=paper`` reference question
goes as its original file bytes (the earlier released path read the file).
"""

from __future__ import annotations

import os
from abc import abstractmethod
from typing import Any, ClassVar, Literal

from vreason.core.errors import VideoError
from vreason.core.records import Evidence, Sample, Score, Video
from vreason.core.scoring import ScoreContext, Scorer
from vreason.judge.scorer import JudgedScorer, Prepared, Unjudgeable

RaMode = Literal["paper", "code"]
RaCount = Literal["asked", "returned"]

RA_TAIL_POLICY = "last_fraction:3/0.4+round+dedupe"
"""``extra_frame = -1``: the released extraction rounds (np.round) and de-duplicates the indices."""
TC_POLICY = "uniform:16+round+dedupe"
PR_POLICY = "uniform:16"
VQ_POLICY = "uniform:6+drop_ends"
RA_JPEG_QUALITY = 95
TC_JPEG_QUALITY = 90
PILLOW_DEFAULT_QUALITY = 75
"""Physical Rationality and Visual Quality frames: ``PIL.Image.save(format="JPEG")`` without a quality."""
MAX_TOKENS = 8192
"""Room for reasoning judges (GPT-5 counts its reasoning tokens here); temperature 0 as released."""


def _request(parts: list[Any], system: str, tpl: Any, sample_id: str | None = None):
    from vreason.judge.base import Decoding, JudgeRequest

    return JudgeRequest(parts=parts, system=system, decoding=Decoding(temperature=0.0, max_tokens=MAX_TOKENS),
                        template=tpl.name, template_version=tpl.version, sample_id=sample_id)


def ra_policy(sample: Sample) -> str:
    """The RA frame policy for a sample, from its ``extra_frame``."""
    extra = sample.metadata.get("extra_frame", 2)
    if extra in ("maze", "sym", "gt"):
        return "last"
    if extra == -1:
        return RA_TAIL_POLICY
    return f"fps:{int(extra)}+linspace"


def pr_policy(sample: Sample) -> str:
    return PR_POLICY + ("+reverse" if sample.metadata.get("reverse") else "")


def is_logical(sample: Sample) -> bool:
    return sample.category == "logical"


class _RiseJudged(JudgedScorer):
    """Shared plumbing of the judged metrics (kind io)."""

    judge_role: str = "default"
    jpeg_quality: ClassVar[int] = PILLOW_DEFAULT_QUALITY
    """The JPEG quality the released code sends this metric's frames at."""

    def no_judge_reason(self) -> str:
        return f"no judge configured for role {self.judge_role!r}"

    def _frames(self, sample: Sample, video: Video, spec: str):
        """The sampled frames; an unreadable video refuses the sample (``cannot read frames: …``)."""
        from vreason.frames import sample_frames

        try:
            if not video.path:
                raise VideoError(f"<{sample.id}/{video.model}>", "no video path")
            return sample_frames(video.path, spec)
        except (VideoError, ValueError) as exc:
            raise Unjudgeable(f"cannot read frames: {exc}") from None

    def unusable(self, prepared: Prepared, outcomes: list[Any]) -> str | None:
        bad = next((o for o in outcomes if not o.ok), None)
        return None if bad is None else (bad.reason or "judge reply unusable")


class _RiseLikert(_RiseJudged):
    """A metric judged on one integer scale from the frames and the template's text."""

    template: ClassVar[str] = ""
    lo: ClassVar[int] = 1
    hi: ClassVar[int] = 5
    key: ClassVar[str] = "score"

    @abstractmethod
    def spec(self, sample: Sample) -> str:  # pragma: no cover - each metric sets its own
        """The metric's rubric text for ``sample`` (each Likert metric defines it)."""

    def variables(self, sample: Sample) -> dict[str, Any]:
        return {}

    def build(self, sample: Sample, video: Video, ctx: ScoreContext) -> Prepared:
        from vreason.judge import parsers
        from vreason.judge.base import ImagePart, TextPart
        from vreason.judge.templates import get_template

        sf = self._frames(sample, video, self.spec(sample))
        tpl = get_template(self.template)
        system, user = tpl.render(num_frames=len(sf.frames), **self.variables(sample))
        parts: list[Any] = [ImagePart(f, quality=self.jpeg_quality) for f in sf.frames]
        if user:
            parts.append(TextPart(user))
        return Prepared([_request(parts, system, tpl, sample.id)], parsers.likert(self.lo, self.hi, key=self.key),
                        state=sf)

    def judge_evidence(self, sample: Sample, video: Video, ctx: ScoreContext, prepared: Prepared,
                       outcomes: list[Any]) -> Evidence:
        sf = prepared.state
        return Evidence(frame_policy=sf.policy, frame_indices=sf.indices,
                        judge=outcomes[0].evidence(prepared.requests[0]),
                        details={"scale": [self.lo, self.hi], "key": self.key,
                                 "image_encoding": f"jpeg:q{self.jpeg_quality}"})

    def interpret(self, sample: Sample, video: Video, ctx: ScoreContext, prepared: Prepared, outcomes: list[Any],
                  evidence: Evidence) -> list[Score]:
        s = outcomes[0].value  # an int; a mean/median over repeats may be fractional: kept, never truncated
        lo, hi = self.lo, self.hi
        return [self.ok(sample, video, self.metrics[0], s, (s - lo) / (hi - lo), passed=s == hi, evidence=evidence)]


class RiseTemporalConsistency(_RiseLikert):
    """RISE Temporal Consistency: 1–5 with the instruction given to the judge."""

    name = "rise_tc"
    version = "1"
    metrics = ("tc",)
    jpeg_quality = TC_JPEG_QUALITY
    template = "rise_tc"
    key = "Final Score"

    def spec(self, sample: Sample) -> str:
        return TC_POLICY

    def variables(self, sample: Sample) -> dict[str, Any]:
        return {"instruction": sample.prompt}


class RisePhysicalRationality(_RiseLikert):
    """RISE Physical Rationality: 1–5 amplitude-aware; not applied to the logical category."""

    name = "rise_pr"
    version = "1"
    metrics = ("pr",)
    template = "rise_pr"

    def applies(self, sample: Sample) -> bool:
        return not is_logical(sample)

    def spec(self, sample: Sample) -> str:
        return pr_policy(sample)


class RiseVisualQuality(_RiseLikert):
    """RISE Visual Quality: 1–3 on 4 frames; uses the ``vq`` judge when one is configured."""

    name = "rise_vq"
    version = "1"
    metrics = ("vq",)
    judge_role = "vq"
    template = "rise_vq"
    hi = 3

    def spec(self, sample: Sample) -> str:
        return VQ_POLICY


RaYes = Literal["contains", "strict"]
RA_YES = ("contains", "strict")


def _is_answer_list(value: list[Any]) -> bool:
    return bool(value) and all(isinstance(i, dict) for i in value)


def yes_no_list_parser(n_questions: int, count: RaCount, yes: RaYes = "contains"):
    """Parse the RA reply: a JSON list of {question, answer, reason}.

    The list may stand alone, sit in a code fence, follow prose or follow a ``<think>`` block
    (thinking judges such as Qwen3-VL answer that way). ``yes="contains"`` (default, released):
    an answer is Yes when it contains "yes" (case-insensitive), anything else counts No.
    ``yes="strict"``: its first word must be Yes or No, anything else fails the reply.
    ``count="asked"``: the list must hold exactly ``n_questions`` items (else ParseFailure, so
    the client re-asks and finally reports ``unscored``). ``count="returned"`` (released): any
    non-empty list; the score is then over the answers returned.
    """
    from vreason.judge import parsers

    if yes not in RA_YES:
        raise ValueError(f"yes must be one of {RA_YES}, got {yes!r}")

    def parse(text: str) -> list[dict[str, Any]]:
        items = parsers.find_last_list(text, accept=_is_answer_list)
        out = []
        for i, item in enumerate(items):
            if "answer" not in item:
                raise parsers.ParseFailure(f"item {i} is not an object with an 'answer'")
            raw = str(item["answer"])
            if yes == "contains":
                is_yes = "yes" in raw.lower()
            else:
                ans = raw.strip().lower().strip("*\"'. ")
                if ans.startswith("yes"):
                    is_yes = True
                elif ans.startswith("no"):
                    is_yes = False
                else:
                    raise parsers.ParseFailure(f"item {i}: answer {item['answer']!r} is neither Yes nor No")
            out.append({"question": item.get("question"), "answer": raw, "reason": item.get("reason"),
                        "yes": is_yes})
        if count == "asked" and len(out) != n_questions:
            raise parsers.ParseFailure(f"{len(out)} answers for {n_questions} questions")
        return out

    parse.__name__ = f"rise_yes_no_list[{n_questions},{count},{yes}]"
    return parse


class RiseReasoningJudge(_RiseJudged):
    """RISE Reasoning Alignment by the judge: Yes/No per question (or 1–5 vs the GT image)."""

    name = "rise_ra"
    version = "1"
    metrics = ("ra",)
    jpeg_quality = RA_JPEG_QUALITY

    def __init__(self, ra_mode: RaMode = "paper", ra_count: RaCount = "returned", ra_yes: RaYes = "contains"):
        if ra_mode not in ("paper", "code"):
            raise ValueError(f"ra_mode must be 'paper' or 'code', got {ra_mode!r}")
        if ra_count not in ("asked", "returned"):
            raise ValueError(f"ra_count must be 'asked' or 'returned', got {ra_count!r}")
        if ra_yes not in RA_YES:
            raise ValueError(f"ra_yes must be one of {RA_YES}, got {ra_yes!r}")
        self.ra_mode = ra_mode
        self.ra_count = ra_count
        self.ra_yes = ra_yes

    def applies(self, sample: Sample) -> bool:
        return sample.metadata.get("extra_frame") not in ("maze", "sym")

    def build(self, sample: Sample, video: Video, ctx: ScoreContext) -> Prepared:
        questions = [r.text for r in sample.rubric]
        if not questions:
            raise Unjudgeable(f"sample {sample.id} has no questions")
        sf = self._frames(sample, video, ra_policy(sample))
        if sample.metadata.get("extra_frame") == "gt" and self.ra_mode == "paper":
            return self._reference(sample, sf, questions)
        return self._yes_no(sample, sf, questions)

    def _yes_no(self, sample: Sample, sf: Any, questions: list[str]) -> Prepared:
        from vreason.judge.base import ImagePart, TextPart
        from vreason.judge.templates import get_template

        tpl = get_template("rise_ra")
        system, _ = tpl.render(question="")
        parts: list[Any] = [ImagePart(f, quality=self.jpeg_quality) for f in sf.frames]
        parts += [TextPart(tpl.render(question=q)[1]) for q in questions]
        req = _request(parts, system, tpl, sample.id)
        return Prepared([req], yes_no_list_parser(len(questions), self.ra_count, self.ra_yes),
                        state={"mode": "yes_no", "sf": sf, "questions": questions})

    def _reference(self, sample: Sample, sf: Any, questions: list[str]) -> Prepared:
        from vreason.judge import parsers
        from vreason.judge.base import ImagePart, TextPart, image_part_from_file
        from vreason.judge.templates import get_template

        gt_path = sample.resolve(sample.reference_image)
        try:
            from vreason.data.confine import sample_file  # never a file outside the dataset to the judge

            sample_file(sample, sample.reference_image)
            gt = image_part_from_file(gt_path or "", label="Image 2: ground-truth image")
        except (OSError, ValueError) as exc:  # missing, unreadable or undecodable: named per sample
            raise Unjudgeable(f"ground-truth image unusable: {gt_path}: {type(exc).__name__}: {exc}") from None
        tpl = get_template("rise_ra_ref")
        reqs = []
        for q in questions:
            system, user = tpl.render(question=q)
            parts = [ImagePart(sf.frames[-1], label="Image 1: final frame of the video", quality=self.jpeg_quality),
                     gt, TextPart(user)]
            reqs.append(_request(parts, system, tpl, sample.id))
        return Prepared(reqs, parsers.likert(1, 5, key="Score"),
                        state={"mode": "reference", "sf": sf, "questions": questions, "gt": gt})

    def judge_evidence(self, sample: Sample, video: Video, ctx: ScoreContext, prepared: Prepared,
                       outcomes: list[Any]) -> Evidence:
        st, reqs = prepared.state, prepared.requests
        sf, questions = st["sf"], st["questions"]
        if st["mode"] == "yes_no":
            details: dict[str, Any] = {"mode": "yes_no", "ra_count": self.ra_count, "ra_yes": self.ra_yes,
                                       "n_questions": len(questions),
                                       "image_encoding": f"jpeg:q{self.jpeg_quality}"}
            return Evidence(frame_policy=sf.policy, frame_indices=sf.indices, judge=outcomes[0].evidence(reqs[0]),
                            details=details)
        calls = [{"question": q, "score": o.value if o.ok else None, "ok": o.ok, "reason": o.reason,
                  "judge": o.evidence(r).model_dump()} for q, o, r in zip(questions, outcomes, reqs, strict=True)]
        bad = next((i for i, o in enumerate(outcomes) if not o.ok), None)
        main = bad if bad is not None else 0
        return Evidence(frame_policy=sf.policy, frame_indices=sf.indices,
                        judge=outcomes[main].evidence(reqs[main]),
                        details={"mode": "reference", "n_questions": len(questions), "calls": calls,
                                 "reference_image": sample.reference_image,
                                 "image_encoding": {"frames": f"jpeg:q{self.jpeg_quality}",
                                                    "reference_image": st["gt"].encoding()}})

    def unusable(self, prepared: Prepared, outcomes: list[Any]) -> str | None:
        if prepared.state["mode"] == "yes_no":
            return super().unusable(prepared, outcomes)
        bad = next((i for i, o in enumerate(outcomes) if not o.ok), None)
        return None if bad is None else f"focus question {bad + 1}: {outcomes[bad].reason or 'judge reply unusable'}"

    def interpret(self, sample: Sample, video: Video, ctx: ScoreContext, prepared: Prepared, outcomes: list[Any],
                  evidence: Evidence) -> list[Score]:
        questions = prepared.state["questions"]
        if prepared.state["mode"] == "yes_no":
            answers = outcomes[0].value
            n_yes = sum(a["yes"] for a in answers)
            denom = len(questions) if self.ra_count == "asked" else len(answers)
            evidence.details.update(answers=answers, n_answers=len(answers), n_yes=n_yes,
                                    count_mismatch=len(answers) != len(questions))
            value = n_yes / denom
            return [self.ok(sample, video, "ra", value, min(1.0, value), passed=value >= 1.0, evidence=evidence)]
        scores = [o.value for o in outcomes]  # not int(): a reduced value over repeats may be fractional
        value = sum(s / 5 for s in scores) / len(scores)
        evidence.details["scores"] = scores
        return [self.ok(sample, video, "ra", value, value, passed=all(s == 5 for s in scores), evidence=evidence)]


class RisePuzzleVerifier(Scorer):
    """RISE Reasoning Alignment for maze and symmetry samples: programmatic, {0, 0.5, 1}."""

    name = "rise_puzzle"
    version = "1"
    kind: ClassVar[Literal["cpu", "io"]] = "cpu"
    metrics = ("ra",)

    def __init__(self, maze_mode: str = "official", sym_jpeg: bool = True):
        if maze_mode not in ("strict", "official"):
            raise ValueError(f"maze_mode must be 'strict' or 'official', got {maze_mode!r}")
        self.maze_mode = maze_mode
        self.sym_jpeg = bool(sym_jpeg)

    def applies(self, sample: Sample) -> bool:
        return sample.metadata.get("extra_frame") in ("maze", "sym")

    def score(self, sample: Sample, video: Video, ctx: ScoreContext) -> list[Score]:
        import cv2

        from vreason.frames import sample_frames
        from vreason.protocols.rise.maze import verify_maze_video
        from vreason.protocols.rise.symmetry import read_image_rgb, verify_symmetry

        kind = sample.metadata.get("extra_frame")
        if not video.path:
            return self.fail(sample, video, "no video path")
        try:
            if kind == "maze":
                res = verify_maze_video(video.path, mode=self.maze_mode)  # type: ignore[arg-type]
                ev = Evidence(frame_policy="all", frame_indices=res.frame_indices, details=res.details())
            else:
                sf = sample_frames(video.path, "last")
                gt_path = sample.resolve(sample.reference_image) or ""
                res = verify_symmetry(sf.frames[-1], read_image_rgb(gt_path), sample.metadata.get("color_name", ""),
                                      jpeg=self.sym_jpeg)
                ev = Evidence(frame_policy=sf.policy, frame_indices=sf.indices, details=res.details())
        except VideoError as exc:
            return self.fail(sample, video, f"video unusable: {exc}")
        except ValueError as exc:
            return self.fail(sample, video, str(exc))
        if kind == "maze":
            ev.details["checks"] = {"no_wall_crossed": not res.details()["wall_crossed"],
                                    "goal_reached": bool(res.details()["goal_reached"])}
        else:
            ev.details["checks"] = {"every_cell_correct": res.fn == 0 and res.fp == 0,
                                    "accuracy_at_least_0.85": res.accuracy >= 0.85}
        if res.debug is not None:
            from vreason.frames.write import write_image
            from vreason.verify.overlay import annotate

            img = annotate(cv2.cvtColor(res.debug, cv2.COLOR_BGR2RGB), res.score, res.score >= 1.0,
                           ev.details["checks"], legend=PUZZLE_LEGENDS[kind])
            path = ctx.debug_path(self.name, video, "jpg")
            if write_image(path, cv2.cvtColor(img, cv2.COLOR_RGB2BGR)):
                ev.debug_images.append(os.path.relpath(path, ctx.run_dir) if ctx.run_dir else path)
        return [self.ok(sample, video, "ra", res.score, res.score, passed=res.score >= 1.0, evidence=ev)]


PUZZLE_LEGENDS = {  # what the released verifiers draw (RGB)
    "maze": [("tracked trajectory", (0, 0, 255)), ("last position", (255, 255, 0)), ("goal circle", (255, 0, 0))],
    "sym": [("cell left white that should be painted", (255, 0, 0)),
            ("cell painted that should be white", (0, 0, 255))],
}
