"""RISE judged metrics against the loopback OpenAI-compatible server with scripted replies."""

from __future__ import annotations

import asyncio
import json

import numpy as np
import pytest

from vreason.core.records import RubricItem, Sample, Video
from vreason.core.scoring import ScoreContext
from vreason.frames import write_video
from vreason.judge.retry import RetryPolicy
from vreason.judge.spec import make_judge
from vreason.protocols.rise.scorers import (
    RisePhysicalRationality,
    RiseReasoningJudge,
    RiseTemporalConsistency,
    RiseVisualQuality,
)
from vreason.testing.loopback import LoopbackServer

FAST = RetryPolicy(max_retries=2, base=0.01, cap=0.1, seed=0)


def client(srv):
    return make_judge({"backend": "vllm", "model": "judge-test", "base_url": srv.base_url, "timeout": 5},
                      retry=FAST, reasks=1)


def run(scorer, sample, video, tmp_path, **judges):
    async def go():
        ctx = ScoreContext(run_dir=str(tmp_path / "run"), judges=judges)
        try:
            return await scorer.ascore(sample, video, ctx)
        finally:
            for c in judges.values():
                await c.judge.aclose()

    return asyncio.run(go())


@pytest.fixture()
def video(tmp_path):
    frames = [np.full((32, 48, 3), (10 * i, 100, 200 - 10 * i), np.uint8) for i in range(16)]
    path = str(tmp_path / "v.mp4")
    write_video(path, frames, fps=8)
    return Video(sample_id="com_1", model="mA", path=path)


def sample(extra=2, n=2, cat="commonsense", sid="com_1", **meta):
    kind = "focus" if extra == "gt" else "question"
    return Sample(id=sid, benchmark="rise", category=cat, prompt="A ball rolls off the table.",
                  rubric=[RubricItem(id=f"q{i}", kind=kind, text=f"Question {i}?") for i in range(n)],
                  metadata={"extra_frame": extra, **meta})


def answers(*yes):
    return json.dumps([{"question": f"Question {i}?", "answer": "Yes" if y else "No", "reason": "seen"}
                       for i, y in enumerate(yes)])


def parts(body):
    content = body["messages"][-1]["content"]
    return [p["type"] for p in content], [p["text"] for p in content if p["type"] == "text"]


def test_ra_valid(tmp_path, video):
    with LoopbackServer([answers(True, False)]) as srv:
        [s] = run(RiseReasoningJudge(), sample(), video, tmp_path, default=client(srv))
        body = srv.requests[0]
    assert s.status.value == "ok" and s.metric == "ra" and s.value == 0.5 and s.normalized == 0.5
    assert not s.passed
    assert s.evidence.frame_policy == "fps:2+linspace"
    assert s.evidence.frame_indices == [0, 5, 10, 15]  # T=16 at 8 fps: interval 4 → linspace(0, 15, 4)
    assert s.evidence.judge.template == "rise_ra" and s.evidence.judge.template_version == "1"
    assert s.evidence.judge.raw_reply == answers(True, False) and "judge-test" in s.evidence.judge.judge
    assert s.evidence.details["n_yes"] == 1 and not s.evidence.details["count_mismatch"]
    types, texts = parts(body)
    assert types == ["image_url"] * 4 + ["text", "text"] and texts == ["Question 0?", "Question 1?"]
    assert "JSON list" in body["messages"][0]["content"] and body["temperature"] == 0.0
    assert body.get("max_tokens", body.get("max_completion_tokens")) == 8192


def test_ra_wrong_count_is_reasked_then_unscored(tmp_path, video):
    with LoopbackServer([answers(True), answers(True, True, True)]) as srv:
        [s] = run(RiseReasoningJudge(ra_count="asked"), sample(), video, tmp_path, default=client(srv))
        assert srv.count == 2
    assert s.status.value == "unscored" and s.value is None and s.normalized is None
    assert "3 answers for 2 questions" in s.reason
    assert s.evidence.judge.raw_reply == answers(True, True, True) and s.evidence.judge.attempts == 2


def test_ra_wrong_count_then_valid(tmp_path, video):
    with LoopbackServer([answers(True), answers(True, True)]) as srv:
        [s] = run(RiseReasoningJudge(ra_count="asked"), sample(), video, tmp_path, default=client(srv))
    assert s.status.value == "ok" and s.value == 1.0 and s.passed


def test_ra_count_returned_option(tmp_path, video):
    with LoopbackServer([answers(True, True, False)]) as srv:
        [s] = run(RiseReasoningJudge(ra_count="returned"), sample(), video, tmp_path, default=client(srv))
    assert s.status.value == "ok" and s.value == pytest.approx(2 / 3)
    assert s.evidence.details["count_mismatch"] and s.evidence.details["n_answers"] == 3


@pytest.mark.parametrize("reply", ["I think yes to both.", '[{"question": "Question 0?", "answer": "Maybe"}, '
                                   '{"question": "Question 1?", "answer": "Yes"}]', '{"answer": "Yes"}'])
def test_ra_malformed_is_unscored_with_raw(tmp_path, video, reply):
    with LoopbackServer([reply, reply]) as srv:
        [s] = run(RiseReasoningJudge(ra_yes="strict"), sample(), video, tmp_path, default=client(srv))
    assert s.status.value == "unscored" and s.value is None and s.evidence.judge.raw_reply == reply
    assert s.reason


def test_ra_tail_mode_frames(tmp_path, video):
    with LoopbackServer([answers(True)]) as srv:
        [s] = run(RiseReasoningJudge(), sample(extra=-1, n=1), video, tmp_path, default=client(srv))
        types, _ = parts(srv.requests[0])
    assert s.value == 1.0 and s.evidence.frame_policy == "last_fraction:3/0.4+round+dedupe"
    assert len(s.evidence.frame_indices) == 3 and s.evidence.frame_indices[-1] == 15
    assert types.count("image_url") == 3


def _gt_sample(tmp_path):
    from PIL import Image

    Image.fromarray(np.full((40, 40, 3), 180, np.uint8)).save(tmp_path / "gt.png")
    return sample(extra="gt", sid="log_4", cat="logical").model_copy(
        update={"reference_image": "gt.png", "root": str(tmp_path)})


def test_ra_reference_mode(tmp_path, video):
    replies = [json.dumps({"Question": "Question 0?", "Score": 4, "Reason": "close"}),
               json.dumps({"Question": "Question 1?", "Score": 5, "Reason": "same"})]

    def script(body):  # answer by the focus question asked (calls run concurrently)
        return replies[0] if "Question 0?" in json.dumps(body) else replies[1]

    with LoopbackServer(script) as srv:
        [s] = run(RiseReasoningJudge(), _gt_sample(tmp_path), video, tmp_path, default=client(srv))
        assert srv.count == 2
        types, texts = parts(srv.requests[0])
    assert s.status.value == "ok" and s.value == pytest.approx((4 / 5 + 5 / 5) / 2) and not s.passed
    assert s.evidence.frame_policy == "last" and s.evidence.frame_indices == [15]
    assert s.evidence.details["mode"] == "reference" and sorted(s.evidence.details["scores"]) == [4, 5]
    assert types.count("image_url") == 2 and any(t.startswith("FocusQuestion:") for t in texts)
    assert all(c["judge"]["raw_reply"] for c in s.evidence.details["calls"])


def test_ra_reference_mode_unscored_and_code_mode(tmp_path, video):
    with LoopbackServer(default="no json here") as srv:
        [s] = run(RiseReasoningJudge(), _gt_sample(tmp_path), video, tmp_path, default=client(srv))
    assert s.status.value == "unscored" and "focus question" in s.reason
    assert s.evidence.judge.raw_reply == "no json here"
    with LoopbackServer([answers(True, True)]) as srv:
        [c] = run(RiseReasoningJudge(ra_mode="code"), _gt_sample(tmp_path), video, tmp_path, default=client(srv))
        types, _ = parts(srv.requests[0])
    assert c.value == 1.0 and c.evidence.details["mode"] == "yes_no" and types.count("image_url") == 1


def test_tc_valid_and_instruction_in_system(tmp_path, video):
    reply = json.dumps({"Instruction": "A ball rolls off the table.", "Final Score": 4, "Reason": "flicker"})
    with LoopbackServer([reply]) as srv:
        [s] = run(RiseTemporalConsistency(), sample(), video, tmp_path, default=client(srv))
        body = srv.requests[0]
    assert s.metric == "tc" and s.value == 4 and s.normalized == 0.75 and not s.passed
    assert "Instruction: A ball rolls off the table." in body["messages"][0]["content"]
    assert parts(body)[0].count("image_url") == 16 and s.evidence.frame_policy == "uniform:16+round+dedupe"


def test_pr_reverse_logical_and_malformed(tmp_path, video):
    with LoopbackServer(['{"score": 5, "justification": "fine"}']) as srv:
        [s] = run(RisePhysicalRationality(), sample(reverse=True), video, tmp_path, default=client(srv))
    assert s.value == 5 and s.normalized == 1.0 and s.passed
    assert s.evidence.frame_indices == list(range(15, -1, -1)) and s.evidence.frame_policy == "uniform:16+reverse"
    assert not RisePhysicalRationality().applies(sample(cat="logical", sid="log_3"))
    with LoopbackServer(['{"score": 7}', '{"score": "high"}']) as srv:
        [u] = run(RisePhysicalRationality(), sample(), video, tmp_path, default=client(srv))
    assert u.status.value == "unscored" and u.value is None and u.evidence.judge.raw_reply == '{"score": "high"}'


def test_vq_uses_vq_judge(tmp_path, video):
    with LoopbackServer([]) as main, LoopbackServer(['```json\n{"score": 2, "justification": "soft"}\n```']) as vq:
        [s] = run(RiseVisualQuality(), sample(), video, tmp_path, default=client(main), vq=client(vq))
        assert main.count == 0 and vq.count == 1
        body = vq.requests[0]
    assert s.metric == "vq" and s.value == 2 and s.normalized == 0.5
    assert s.evidence.frame_indices == [3, 6, 9, 12] and "batch of 4 frames" in body["messages"][0]["content"]


def test_missing_video_and_missing_judge(tmp_path):
    bad = Video(sample_id="com_1", model="mA", path=str(tmp_path / "gone.mp4"))
    with LoopbackServer([]) as srv:
        [s] = run(RiseTemporalConsistency(), sample(), bad, tmp_path, default=client(srv))
        assert srv.count == 0
    assert s.status.value == "error" and "gone.mp4" in s.reason and s.value is None
    [n] = run(RiseVisualQuality(), sample(), bad, tmp_path)
    assert n.status.value == "error" and "no judge" in n.reason


def _repeats_client(replies, how):
    from vreason.judge.client import JudgeClient
    from vreason.judge.scripted import ScriptedJudge

    return JudgeClient(ScriptedJudge(replies), retry=FAST, repeats=len(replies), reduce=how)


def test_likert_repeats_are_not_truncated(tmp_path, video):
    """A judge asked 3 times and reduced by mean (or a median of an even count) keeps its fraction:
    4, 5, 5 is 14/3, not int(14/3) = 4."""
    tc = [json.dumps({"Final Score": v}) for v in (4, 5, 5)]
    [s] = run(RiseTemporalConsistency(), sample(), video, tmp_path, default=_repeats_client(tc, "mean"))
    assert s.status.value == "ok" and s.value == pytest.approx(14 / 3)
    assert s.normalized == pytest.approx((14 / 3 - 1) / 4) and not s.passed
    med = [json.dumps({"score": v}) for v in (2, 3, 3, 2)]
    [p] = run(RisePhysicalRationality(), sample(), video, tmp_path, default=_repeats_client(med, "median"))
    assert p.value == pytest.approx(2.5) and p.normalized == pytest.approx(0.375)


def test_ra_with_repeats_reduces_by_majority(tmp_path, video):
    replies = [answers(True, False), answers(True, False), answers(False, False)]
    [s] = run(RiseReasoningJudge(), sample(), video, tmp_path, default=_repeats_client(replies, "majority"))
    assert s.status.value == "ok" and s.value == 0.5
