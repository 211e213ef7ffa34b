"""TiViBench scorers: dispatch to the registered check (frames, times, ground truth, env, unscored, overlay,
damage, crash) and the VLM QA judge with a scripted judge (all answers must match; unparseable → unscored)."""

from __future__ import annotations

import asyncio
import json
import os

import numpy as np
import pytest

from _tivibench_fixtures import BOX, QA, release, video
from vreason.core.records import Video
from vreason.core.scoring import ScoreContext
from vreason.judge.client import JudgeClient
from vreason.judge.scripted import ScriptedJudge, request_text
from vreason.protocols.tivibench.protocol import TiviBenchProtocol
from vreason.protocols.tivibench.scorers import TiviCheckScorer, TiviQaScorer
from vreason.verify import checks


@pytest.fixture
def samples(tmp_path):
    return {s.id: s for s in TiviBenchProtocol(data=release(str(tmp_path / "data"))).load().samples}


@pytest.fixture
def seen(monkeypatch):
    """A fake region check (uniform:5, uses features): passes when the last frame is bright red, cannot score
    a video without blue."""
    checks.load_checks()
    got: dict = {}

    def fake(frames, times, gt, params, env):
        got.update(n=len(frames), times=list(times), gt=None if gt is None else gt.shape, env=env,
                   threshold=params.threshold)
        red = float(frames[-1][..., 0].mean())
        if frames[-1][..., 2].mean() < 1:  # no blue: the fixture's "dark" video
            return checks.CheckResult(passed=None, reason="cannot see anything")
        return checks.CheckResult(passed=red > 60, score=red / 255, reason=f"red {red:.0f}",
                                  details={"red": red}, backend=getattr(env.features, "name", "?"),
                                  overlay=np.zeros((8, 8, 3), np.uint8))

    monkeypatch.setitem(checks.CHECKS, "region", checks.CheckEntry("region", fake, "uniform:5", ("features",)))
    return got


def _v(path, seed=0):
    return Video(sample_id="SV_easy_shape_001", model="m", seed=seed, path=path)


def test_check_scorer_reads_declared_frames_and_records_evidence(tmp_path, samples, seen):
    s = samples["SV_easy_shape_001"]
    ctx = ScoreContext(run_dir=str(tmp_path))
    sc = TiviCheckScorer()
    assert sc.applies(s) and not sc.applies(samples["AT_easy_tool_001"])
    (score,) = sc.score(s, _v(video(str(tmp_path / "a.mp4"), n=12, fps=8)), ctx)
    assert score.status.value == "ok" and score.passed is True and score.value == 1.0 and score.metric == "pass"
    assert seen["n"] == 5 and seen["times"][0] == 0 and seen["times"][-1] == pytest.approx(11 / 8)
    assert seen["gt"] == (36, 64, 3) and seen["threshold"] == 0.9
    d = score.evidence.details
    assert d["backend"] == "classical:hog-hsv" and d["family"] == "region" and d["check"]["red"] > 60
    assert score.evidence.frame_policy.startswith("uniform:5") and score.evidence.frame_indices[-1] == 11
    assert os.path.isfile(os.path.join(str(tmp_path), score.evidence.debug_images[0]))
    (short,) = sc.score(s, _v(video(str(tmp_path / "b.mp4"), n=5, fps=8), 1), ctx)  # last frame red = 40
    assert short.passed is False and short.value == 0.0


def test_check_scorer_unscored_damaged_and_crash(tmp_path, samples, seen, monkeypatch):
    s = samples["SV_easy_shape_001"]
    ctx = ScoreContext(run_dir=str(tmp_path))
    dark = video(str(tmp_path / "dark.mp4"), n=1, colour=(0, 0, 0))
    (one,) = TiviCheckScorer().score(s, _v(dark), ctx)  # a still image is not a video
    assert one.status.value == "error" and "video error" in one.reason
    dark = video(str(tmp_path / "dark6.mp4"), n=6, colour=(0, 0, 0))
    (u,) = TiviCheckScorer().score(s, _v(dark), ctx)
    assert u.status.value == "unscored" and u.value is None and "cannot see anything" in u.reason
    bad = tmp_path / "bad.mp4"
    bad.write_bytes(b"\x00" * 100)
    (e,) = TiviCheckScorer().score(s, _v(str(bad)), ctx)
    assert e.status.value == "error" and "video error" in e.reason

    def boom(*a):
        raise RuntimeError("bug")

    monkeypatch.setitem(checks.CHECKS, "region", checks.CheckEntry("region", boom, "last", ()))
    (c,) = TiviCheckScorer().score(s, _v(video(str(tmp_path / "c.mp4"))), ctx)
    assert c.status.value == "error" and "region check crashed: RuntimeError: bug" in c.reason
    # a family with no registered check is unscored, never a 0
    monkeypatch.delitem(checks.CHECKS, "region")
    monkeypatch.setattr(checks, "_MODULES", ())
    (n,) = TiviCheckScorer().score(s, _v(video(str(tmp_path / "c.mp4"))), ctx)
    assert n.status.value == "unscored" and "no check registered" in n.reason


def test_missing_feature_model_is_noted(tmp_path, samples, seen):
    s = samples["SV_easy_shape_001"]
    sc = TiviCheckScorer(features=f"transformers:{tmp_path / 'no_such_model'}")
    (score,) = sc.score(s, _v(video(str(tmp_path / "a.mp4"))), ScoreContext(run_dir=str(tmp_path)))
    assert seen["env"].features is None and "features" in score.evidence.details["env"]


def _qa(samples, tmp_path, replies, reasks=1):
    judge = ScriptedJudge(replies)
    client = JudgeClient(judge, reasks=reasks)
    s = samples["AT_easy_tool_001"]
    v = Video(sample_id=s.id, model="m", path=video(str(tmp_path / "q.mp4"), n=20))
    sc = TiviQaScorer()
    assert sc.applies(s) and not sc.applies(samples["SV_easy_shape_001"])
    (score,) = asyncio.run(sc.ascore(s, v, ScoreContext(judges={"default": client})))
    return score, judge


def test_qa_all_answers_must_match(tmp_path, samples):
    ok, judge = _qa(samples, tmp_path, ['Looking at it: {"answers": ["Yes", "no"]}'])
    assert ok.status.value == "ok" and ok.passed is True and ok.value == 1.0
    assert ok.evidence.details["answers"] == ["yes", "no"] and len(ok.evidence.frame_indices) == 16
    text = request_text(judge.requests[0])
    assert "1. Is the wrench picked up?" in text and "2. Does the nut fall off?" in text
    assert "expected" not in text.lower()
    assert len([p for p in judge.requests[0].parts if type(p).__name__ == "ImagePart"]) == 16
    wrong, _ = _qa(samples, tmp_path, ['{"answers": ["yes", "yes"]}'])
    assert wrong.status.value == "ok" and wrong.passed is False and wrong.evidence.details["match"] == [True, False]
    keyed, _ = _qa(samples, tmp_path, ['{"answers": {"2": "no", "1": "yes"}}'])
    assert keyed.passed is True


def test_qa_unparseable_is_unscored_with_the_raw_reply(tmp_path, samples):
    bad, judge = _qa(samples, tmp_path, ["I think so.", '{"answers": ["yes"]}'])
    assert bad.status.value == "unscored" and bad.value is None and "1 answers for 2 questions" in bad.reason
    assert bad.evidence.judge.raw_reply == '{"answers": ["yes"]}' and bad.evidence.judge.attempts == 2
    assert len(judge.requests) == 2  # asked again once with a repair instruction
    fixed, _ = _qa(samples, tmp_path, ["maybe", '{"answers": ["yes", "no"]}'])
    assert fixed.passed is True
    s = samples["AT_easy_tool_001"]
    (none,) = asyncio.run(TiviQaScorer().ascore(s, Video(sample_id=s.id, model="m", path="x.mp4"), ScoreContext()))
    assert none.status.value == "error" and "no judge" in none.reason


def test_region_metric_roundtrips_through_json(samples):
    m = samples["SV_easy_shape_001"].metadata["metric"]
    assert json.loads(json.dumps(m))["box"] == BOX and samples["AT_easy_tool_001"].metadata["metric"] == {**QA}
