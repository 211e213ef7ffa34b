"""TiViBench scorers: the programmatic check of a sample's metric family, and the VLM QA judge.

* ``tivibench_check`` (cpu) dispatches on the sample's metric family (its annotation, or its task type's
  default) to the check registered in :mod:`vreason.verify.checks`: it reads the frames the check
  declares (``last``, ``uniform:N``, ``all``) with the damage-checked readers, with their times, loads the
  ground-truth end state, builds the check's :class:`~vreason.verify.checks.CheckEnv` (OCR engine, feature
  backbone, detector — only those it uses) and records the result. ``vreason_synth`` samples (built-in
  suite instances exported in TiViBench's layout) run the suite's own verifier, exactly as ``run synth``.
* ``tivibench_qa`` (io) asks a judge the sample's yes/no questions about frames sampled uniformly from
  the video; the video passes only if every answer matches the expected one (appendix C.2).

Both write one metric, ``pass`` (1 = correct, 0 = wrong) with the ``passed`` flag. A check that could not
score (``passed=None``) and a judge reply that never parsed are ``unscored`` with the reason — never 0.
"""

from __future__ import annotations

import os
from typing import Any, ClassVar

import numpy as np
from pydantic import TypeAdapter, ValidationError

from vreason.core.errors import VideoError
from vreason.core.records import Evidence, Sample, Score, ScoreStatus, Video
from vreason.core.scoring import ScoreContext, Scorer
from vreason.judge.scorer import JudgedScorer, Prepared, Unjudgeable, judge_for
from vreason.verify.annotations import MetricParams, VlmQaParams

METRIC = "pass"
DEFAULT_FEATURES = "classical:hog-hsv"
"""The feature backbone when ``--features`` is not given (a classical descriptor, named in the evidence)."""
DEFAULT_QA_FRAMES = "uniform:16"
"""Frames the QA judge sees: 16 evenly spaced, first and last included (the paper gives Gemini the video;
the number of frames it samples is not stated)."""
_METRIC = TypeAdapter(MetricParams)
_ENV_CACHE: dict[tuple[str, str | None, str | None], Any] = {}


def metric_params(sample: Sample):
    """The sample's validated metric parameters (``ValueError`` naming the sample when absent/invalid)."""
    raw = sample.metadata.get("metric")
    if not isinstance(raw, dict):
        raise ValueError(f"sample {sample.id}: no TiViBench metric in its metadata")
    try:
        return _METRIC.validate_python(raw)
    except ValidationError as exc:
        e = exc.errors()[0]
        raise ValueError(f"sample {sample.id}: metric {'.'.join(map(str, e['loc']))}: {e['msg']}") from None


def _jsonable(obj: Any) -> Any:
    from vreason.synth.scorer import jsonable

    return jsonable(obj)


def _measure(kind: str, spec: str, device: str | None) -> Any:
    """A feature backbone (``--features``) or detector (``--detector``) from :mod:`vreason.measure.spec`
    (cached per process)."""
    key = (kind, spec, device)
    if key not in _ENV_CACHE:
        from vreason.measure import spec as ms

        make = ms.make_embedder if kind == "features" else ms.make_detector
        _ENV_CACHE[key] = make(spec, device=device or "cpu", option=f"--{kind}")
    return _ENV_CACHE[key]


def _ocr() -> Any:
    key = ("ocr", None, None)
    if key not in _ENV_CACHE:
        from vreason.verify.ocr import get_ocr

        _ENV_CACHE[key] = get_ocr()
    return _ENV_CACHE[key]


class TiviCheckScorer(Scorer):
    """The registered programmatic check of the sample's metric family (appendix C)."""

    name: ClassVar[str] = "tivibench_check"
    version: ClassVar[str] = "1"
    kind: ClassVar[str] = "cpu"
    metrics: ClassVar[tuple[str, ...]] = (METRIC,)

    def __init__(self, *, features: str | None = None, detector: str | None = None, device: str | None = None,
                 ocr: str = "rapidocr", max_side: int | None = None, max_frames: int = 480):
        self.features, self.detector, self.device = features, detector, device
        self.ocr, self.max_side, self.max_frames = ocr, max_side, max_frames

    def applies(self, sample: Sample) -> bool:
        return (sample.metadata.get("metric") or {}).get("family") not in (None, "vlm_qa")

    # ------------------------------------------------------------------ environment
    def env(self, needs: tuple[str, ...]) -> tuple[Any, dict[str, str]]:
        """``(CheckEnv, notes)``: the members the check uses; a member that cannot be built is left
        ``None`` (the check then says it could not score) and the note says why."""
        from vreason.verify.checks import CheckEnv

        env = CheckEnv(options={"device": self.device})
        notes: dict[str, str] = {}
        if "ocr" in needs:
            if self.ocr == "none":
                notes["ocr"] = "OCR disabled (--opt ocr=none)"
            else:
                try:
                    env.ocr = _ocr()
                except Exception as exc:  # noqa: BLE001 - extra missing / engine failed: recorded, not fatal
                    notes["ocr"] = f"no OCR engine ({type(exc).__name__}: {exc}); install the `ocr` extra"
        for member, spec in (("features", self.features or DEFAULT_FEATURES), ("detector", self.detector)):
            if member in needs and spec:
                try:
                    setattr(env, member, _measure(member, spec, self.device))
                except Exception as exc:  # noqa: BLE001 - ModelMissing, a bad folder: the unit is unscored
                    notes[member] = f"{member} {spec}: {type(exc).__name__}: {exc}"
        return env, notes

    # ------------------------------------------------------------------ frames
    def frame_spec(self, need: str, params: Any) -> str:
        kind, _, arg = need.partition(":")
        if kind == "uniform":
            n = getattr(params, "n_samples", None) or (int(arg) if arg.isdigit() else 16)
            spec = f"uniform:{int(n)}"
        elif kind in ("last", "all"):
            spec = kind
        else:
            raise ValueError(f"unknown frames need {need!r}")
        if kind == "all" and self.max_frames:
            spec += f"+max_frames={int(self.max_frames)}"
        return spec + (f"+max_side={int(self.max_side)}" if self.max_side else "")

    def score(self, sample: Sample, video: Video, ctx: ScoreContext) -> list[Score]:
        try:
            params = metric_params(sample)
        except ValueError as exc:
            return self.fail(sample, video, str(exc))
        if not video.path:
            return self.fail(sample, video, f"no video file for {sample.id}/{video.model}/{video.seed}")
        if params.family == "vreason_synth":
            return self._synth(sample, video, ctx, params)
        from vreason.verify.checks import get_check

        try:
            entry = get_check(params.family)
        except KeyError as exc:
            return self.fail(sample, video, str(exc.args[0]), status=ScoreStatus.unscored)
        from vreason.frames import sample_frames
        from vreason.protocols.judge_inputs import load_image

        spec = self.frame_spec(entry.frames, params)
        try:
            got = sample_frames(video.path, spec)
            gt = load_image(sample.resolve(sample.reference_image)) if sample.reference_image else None
        except VideoError as exc:
            return self.fail(sample, video, f"video error: {exc}")
        fps = got.info.fps if got.info.fps and got.info.fps > 0 else 1.0  # frames' own timestamps when they have them
        times = np.asarray(got.times, dtype=np.float64) if got.times else np.asarray(got.indices, np.float64) / fps
        env, notes = self.env(entry.needs)
        try:
            res = entry.fn(got.frames, times, gt, params, env)
        except Exception as exc:  # noqa: BLE001 - a check that crashed is an error with the reason, never a 0
            return self.fail(sample, video, f"{params.family} check crashed: {type(exc).__name__}: {exc}")
        details = {"family": params.family, "backend": res.backend, "reason": res.reason,
                   "graded": None if res.score is None else float(res.score),
                   "metric_source": sample.metadata.get("metric_source", ""),
                   "task_type": sample.metadata.get("task_type", ""), "check": _jsonable(res.details)}
        if notes:
            details["env"] = notes
        if gt is None:
            details["gt_end"] = "none"
        ev = Evidence(frame_policy=got.policy, frame_indices=list(got.indices), details=details)
        if res.overlay is not None:
            ev.debug_images.extend(self._overlay(res.overlay, ctx, video))
        if res.passed is None:
            why = res.reason or "the check could not score this video"
            if notes:
                why += " (" + "; ".join(notes.values()) + ")"
            return self.fail(sample, video, f"{params.family}: {why}", status=ScoreStatus.unscored, evidence=ev)
        v = 1.0 if res.passed else 0.0
        return [self.ok(sample, video, METRIC, v, v, passed=bool(res.passed), evidence=ev)]

    def _overlay(self, img: np.ndarray, ctx: ScoreContext, video: Video) -> list[str]:
        import cv2

        from vreason.frames.write import write_image

        path = ctx.debug_path(self.name, video)
        rgb = np.ascontiguousarray(np.asarray(img, dtype=np.uint8))
        if rgb.ndim == 2:
            rgb = np.stack([rgb] * 3, axis=-1)
        if write_image(path, cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR)):
            return [os.path.relpath(path, ctx.run_dir)]
        return []

    def _synth(self, sample: Sample, video: Video, ctx: ScoreContext, params: Any) -> list[Score]:
        """An exported built-in suite instance: the family's own verifier, exactly as ``run synth``."""
        from vreason.synth.scorer import SynthVerifierScorer

        proxy = Sample(id=sample.id, benchmark="synth", metadata={"family": params.synth_family,
                                                                  "state": params.state, "render": params.render})
        got = SynthVerifierScorer().score(proxy, video, ctx)[0]
        ev = got.evidence
        ev.details = {**ev.details, "family": "vreason_synth", "synth_family": params.synth_family,
                      "backend": f"vreason-synth:{params.synth_family}",
                      "graded": got.normalized, "task_type": sample.metadata.get("task_type", "")}
        if got.status != ScoreStatus.ok:
            return self.fail(sample, video, got.reason or "synth verifier failed", status=got.status, evidence=ev)
        v = 1.0 if got.passed else 0.0
        return [self.ok(sample, video, METRIC, v, v, passed=bool(got.passed), evidence=ev)]


def qa_parser(n: int):
    """Reply → ``n`` booleans: a JSON object ``{"answers": ["yes"|"no", …]}`` (also true/false, or an object
    keyed ``"1".."n"``); the wrong count or a value that is not yes/no raises ParseFailure."""
    from vreason.judge import parsers

    def one(i: int, v: Any) -> bool:
        if isinstance(v, bool):
            return v
        if isinstance(v, dict):
            v = v.get("answer", v.get("value"))
        s = str(v).strip().strip(".").lower() if isinstance(v, (str, bool)) else ""
        if s in ("yes", "true", "y"):
            return True
        if s in ("no", "false", "n"):
            return False
        raise parsers.ParseFailure(f"answer {i + 1} is {v!r}, expected yes or no")

    def parse(text: str) -> list[bool]:
        obj = parsers.find_last_object(text)
        ans = obj.get("answers", obj.get("answer"))
        if isinstance(ans, dict):
            try:
                ans = [ans[k] for k in sorted(ans, key=lambda k: int(str(k).strip().lstrip("qQ")))]
            except ValueError:
                raise parsers.ParseFailure("answers object is not keyed by question number") from None
        if not isinstance(ans, list):
            raise parsers.ParseFailure(f"JSON object has no 'answers' list (keys: {sorted(obj)[:6]})")
        if len(ans) != n:
            raise parsers.ParseFailure(f"{len(ans)} answers for {n} questions")
        return [one(i, v) for i, v in enumerate(ans)]

    parse.__name__ = f"tivibench_qa[{n}]"
    return parse


class TiviQaScorer(JudgedScorer):
    """TiViBench VLM QA: yes/no questions about the video; correct only if every answer matches."""

    name: ClassVar[str] = "tivibench_qa"
    version: ClassVar[str] = "1"
    metrics: ClassVar[tuple[str, ...]] = (METRIC,)

    def __init__(self, *, frame_policy: str = DEFAULT_QA_FRAMES, template: str | None = None,
                 template_path: str | None = None, judge_role: str = "default", max_tokens: int = 512):
        self.frame_policy, self.template, self.template_path = frame_policy, template or "tivibench_qa", template_path
        self.judge_role, self.max_tokens = judge_role, max_tokens

    def applies(self, sample: Sample) -> bool:
        return (sample.metadata.get("metric") or {}).get("family") == "vlm_qa"

    def _request(self, questions: list[str], frames: list[np.ndarray], sample_id: str | None = None):
        from vreason.judge.base import Decoding, JudgeRequest
        from vreason.judge.templates import get_template
        from vreason.protocols.judge_inputs import interleave

        tpl = get_template(self.template, path=self.template_path)
        system, user = tpl.render(questions=questions, n_questions=len(questions), n_frames=len(frames))
        return JudgeRequest(parts=interleave(user, {"VIDEO": frames}), system=system or None,
                            decoding=Decoding(max_tokens=self.max_tokens), template=tpl.name,
                            template_version=tpl.version, sample_id=sample_id)

    def precheck(self, sample: Sample, video: Video, ctx: ScoreContext) -> None:
        try:
            params = metric_params(sample)
        except ValueError as exc:
            raise Unjudgeable(str(exc)) from None
        if not isinstance(params, VlmQaParams):
            raise Unjudgeable(f"sample {sample.id}: metric {params.family} is not vlm_qa")

    def no_judge_reason(self) -> str:
        return "no judge client configured (pass --judge)"

    def video_error(self, exc: VideoError) -> str:
        return f"video error: {exc}"

    def build(self, sample: Sample, video: Video, ctx: ScoreContext) -> Prepared:
        from vreason.frames import sample_frames

        params = metric_params(sample)
        if not video.path:
            raise Unjudgeable(f"no video file for {sample.id}/{video.model}/{video.seed}")
        questions = [q.text for q in params.questions]
        got = sample_frames(video.path, self.frame_policy)
        req = self._request(questions, got.frames, sample.id)
        return Prepared([req], qa_parser(len(questions)), state=(params, got))

    def judge_evidence(self, sample: Sample, video: Video, ctx: ScoreContext, prepared: Prepared,
                       outcomes: list[Any]) -> Evidence:
        params, got = prepared.state
        details: dict[str, Any] = {"family": "vlm_qa", "backend": judge_for(ctx, self.role()).identity,
                                   "questions": [q.model_dump() for q in params.questions],
                                   "task_type": sample.metadata.get("task_type", "")}
        return Evidence(frame_policy=got.policy, frame_indices=list(got.indices),
                        judge=outcomes[0].evidence(prepared.requests[0]), details=details)

    def interpret(self, sample: Sample, video: Video, ctx: ScoreContext, prepared: Prepared, outcomes: list[Any],
                  evidence: Evidence) -> list[Score]:
        params = prepared.state[0]
        answers = ["yes" if a else "no" for a in outcomes[0].value]
        match = [a == q.expected for a, q in zip(answers, params.questions, strict=True)]
        evidence.details.update({"answers": answers, "match": match, "n_correct": sum(match)})
        ok = all(match)
        return [self.ok(sample, video, METRIC, float(ok), float(ok), passed=ok, evidence=evidence)]


__all__ = ["DEFAULT_FEATURES", "DEFAULT_QA_FRAMES", "METRIC", "TiviCheckScorer", "TiviQaScorer", "metric_params",
           "qa_parser"]
