"""The JudgedScorer flow: judge lookup, build errors, the unscored path, multi-request units, interpretation."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, ClassVar

from vreason.core.errors import ConfigError, VideoError
from vreason.core.records import Evidence, JudgeEvidence, Sample, ScoreStatus, Video
from vreason.core.scoring import ScoreContext
from vreason.judge.scorer import JudgedScorer, Prepared, Unjudgeable, judge_for


@dataclass
class _Outcome:
    ok: bool
    value: Any = None
    reason: str | None = None
    raw: str | None = None

    def evidence(self, request: Any) -> JudgeEvidence:
        return JudgeEvidence(judge="fake", template=str(request), raw_reply=self.raw)


class _Client:
    """Replies by request: a reply text parsed by the scorer's parser; a parser failure is an unusable outcome."""

    def __init__(self, replies: dict[str, str]):
        self.replies, self.asked = replies, []

    async def ask(self, request: str, parser):
        self.asked.append(request)
        raw = self.replies[request]
        try:
            return _Outcome(True, parser(raw), raw=raw)
        except ValueError as exc:
            return _Outcome(False, reason=f"unparseable: {exc}", raw=raw)


def _yes(text: str) -> bool:
    if text not in ("yes", "no"):
        raise ValueError(f"{text!r} is not yes/no")
    return text == "yes"


class _Toy(JudgedScorer):
    name: ClassVar[str] = "toy_judged"
    metrics: ClassVar[tuple[str, ...]] = ("a", "b")

    def __init__(self, fail_with: Exception | None = None):
        self.fail_with = fail_with

    def build(self, sample: Sample, video: Video, ctx: ScoreContext) -> Prepared:
        if self.fail_with is not None:
            raise self.fail_with
        questions = [r.text for r in sample.rubric]
        return Prepared([f"{sample.id}:{q}" for q in questions], _yes, state=questions)

    def judge_evidence(self, sample, video, ctx, prepared, outcomes) -> Evidence:
        return Evidence(judge=outcomes[0].evidence(prepared.requests[0]),
                        details={"replies": [o.raw for o in outcomes]})

    def interpret(self, sample, video, ctx, prepared, outcomes, evidence):
        frac = sum(o.value for o in outcomes) / len(outcomes)
        return [self.ok(sample, video, "a", frac, frac, evidence=evidence),
                self.ok(sample, video, "b", len(outcomes), evidence=evidence)]


def _sample() -> Sample:
    return Sample.model_validate({"id": "s1", "benchmark": "toy", "prompt": "p",
                                  "rubric": [{"id": "q1", "text": "one", "kind": "question"},
                                             {"id": "q2", "text": "two", "kind": "question"}]})


def _run(scorer: JudgedScorer, judges: dict[str, Any]):
    video = Video(sample_id="s1", model="m", seed=0, path="v.mp4")
    return asyncio.run(scorer.ascore(_sample(), video, ScoreContext(judges=judges)))


def test_every_request_asked_and_interpreted_with_evidence():
    client = _Client({"s1:one": "yes", "s1:two": "no"})
    scores = _run(_Toy(), {"default": client})
    assert sorted(client.asked) == ["s1:one", "s1:two"]
    assert [(s.metric, s.status, s.value) for s in scores] == [("a", ScoreStatus.ok, 0.5), ("b", ScoreStatus.ok, 2.0)]
    assert scores[0].evidence.details["replies"] == ["yes", "no"]
    assert scores[0].evidence.judge.template == "s1:one"


def test_an_unusable_reply_is_unscored_on_every_metric_with_reason_and_evidence():
    scores = _run(_Toy(), {"default": _Client({"s1:one": "yes", "s1:two": "maybe"})})
    assert [s.status for s in scores] == [ScoreStatus.unscored] * 2
    assert {s.metric for s in scores} == {"a", "b"}
    assert all(s.value is None for s in scores)
    assert scores[0].reason == "judge reply unusable: unparseable: 'maybe' is not yes/no"
    assert scores[0].evidence.details["replies"] == ["yes", "maybe"]


def test_refusals_are_error_scores_with_their_reasons():
    judges = {"default": _Client({})}
    cases = [(VideoError("v.mp4", "cannot decode"), "cannot decode"),
             (ConfigError("no template 'x'"), "template: no template 'x'"),
             (Unjudgeable("sample s1 has no questions"), "sample s1 has no questions")]
    for exc, reason in cases:
        scores = _run(_Toy(fail_with=exc), judges)
        assert [s.status for s in scores] == [ScoreStatus.error] * 2, exc
        assert reason in scores[0].reason and scores[0].evidence.judge is None
    assert _run(_Toy(), {})[0].reason == "no judge client configured"


def test_judge_for_falls_back_to_the_default_role():
    a, b = object(), object()
    assert judge_for(ScoreContext(judges={"default": a, "vq": b}), "vq") is b
    assert judge_for(ScoreContext(judges={"default": a}), "vq") is a
    assert judge_for(ScoreContext(), "vq") is None
