"""MME-CoF-Pro judge flows against the loopback server: one call per step on every 10th frame,
RS = completed / N, re-ask and unscored, generation quality on the declared scale."""

from __future__ import annotations

import asyncio
import json

import pytest

from _ruler_mmecof_fixtures import client_for, keyed_script, moving_video, user_parts
from test_mmecof_loader import RECORDS, write
from vreason.core.records import ScoreStatus, Video
from vreason.core.scoring import ScoreContext
from vreason.protocols.mmecof.protocol import MmeCofProtocol, MmeCofQualityScorer, MmeCofStepScorer
from vreason.testing.loopback import LoopbackServer


def _yes(r="seen"):
    return json.dumps({"reason": r, "completed": "yes"})


def _no(r="absent"):
    return json.dumps({"reason": r, "completed": "no"})


@pytest.fixture
def setup(tmp_path):
    data = write(str(tmp_path / "d"), RECORDS)
    video = moving_video(str(tmp_path / "v.mp4"), n=45, fps=24)
    return data, video


def _score(scorer, server, sample, video_path):
    ctx = ScoreContext(judges={"default": client_for(server)})
    return asyncio.run(scorer.ascore(sample, Video(sample_id=sample.id, model="m", path=video_path), ctx))


def test_each_step_judged_alone_on_every_10th_frame(setup):
    data, video = setup
    proto = MmeCofProtocol(data=data, hint="text")
    sample = {s.id: s for s in proto.load().samples}["vd-001"]
    assert sample.prompt.endswith("top left.")  # the generator gets the text-hint prompt
    rules = [("The camera moves to the sign", [_yes()]), ("The sign fills the frame", [_no()]),
             ("The text is legible", ["Yes"])]  # a bare Yes is a valid verdict
    with LoopbackServer(keyed_script(rules)) as srv:
        scores = _score(proto.scorers()[0], srv, sample, video)
        assert srv.count == 3
        for body in srv.requests:
            parts = user_parts(body)
            text = "\n".join(p["text"] for p in parts if p["type"] == "text")
            assert sum(step in text for step, _ in rules) == 1
            assert "Zoom into the sign and read it." in text and "top left" not in text  # no-hint task for the judge
            assert sum(p["type"] == "image_url" for p in parts) == 1 + 5  # input image + frames 0,10,20,30,40
    (rs,) = scores
    assert rs.metric == "RS" and rs.status == ScoreStatus.ok
    assert rs.value == pytest.approx(200 / 3) and rs.normalized == pytest.approx(2 / 3) and rs.passed is False
    ev = rs.evidence
    assert ev.frame_policy == "every:10" and ev.frame_indices == [0, 10, 20, 30, 40]
    assert ev.details["hint"] == "text" and ev.details["completed"] == 2 and ev.details["n_steps"] == 3
    assert [d["completed"] for d in ev.details["steps"]] == [True, False, True]
    assert ev.details["steps"][1]["reason"] == "absent"
    assert ev.details["steps"][0]["judge"]["template"] == "mmecof_step"


def test_unparseable_step_makes_rs_unscored(setup):
    data, video = setup
    proto = MmeCofProtocol(data=data)
    sample = {s.id: s for s in proto.load().samples}["ph-002"]
    rules = [("The apple detaches", [_yes()]), ("The apple falls", ["maybe", '{"completed": "perhaps"}']),
             ("It lands", [_no()])]
    with LoopbackServer(keyed_script(rules)) as srv:
        (rs,) = _score(proto.scorers()[0], srv, sample, video)
        assert srv.count == 4  # step 2 re-asked once
    assert rs.status == ScoreStatus.unscored and rs.value is None
    assert "s2" in rs.reason and "perhaps" in rs.reason
    assert rs.evidence.details["steps"][1]["judge"]["raw_reply"] == '{"completed": "perhaps"}'
    assert rs.evidence.details["steps"][0]["completed"] is True


def test_all_steps_completed_passes(setup):
    data, video = setup
    sample = {s.id: s for s in MmeCofProtocol(data=data).load().samples}["ph-002"]
    with LoopbackServer(keyed_script([("Step to check", [_yes()])])) as srv:
        (rs,) = _score(MmeCofStepScorer(), srv, sample, video)
    assert rs.value == 100.0 and rs.passed is True


def test_visual_hint_run_keeps_only_visual_samples_and_judges_original_image(setup, tmp_path):
    data, video = setup
    proto = MmeCofProtocol(data=data, hint="visual")
    samples = proto.load().samples
    assert [s.id for s in samples] == ["vd-001"] and proto.skipped == ["ph-002"]
    s = samples[0]
    assert s.input_image == "img/vd1_hint.png" and s.metadata["image_no_hint"] == "img/vd1.png"
    with pytest.raises(Exception, match="hint must be one of"):
        MmeCofProtocol(data=data, hint="both").load()


def test_quality_scores_on_declared_scale(setup):
    data, video = setup
    sample = MmeCofProtocol(data=data).load().samples[0]
    good = json.dumps({"consistency": 9, "temporal_consistency": 6, "visual_stability": 3, "hallucination": 0,
                       "physics_grounding": 4, "reason": "ok"})
    with LoopbackServer(keyed_script([("rate the visual quality", [good])])) as srv:
        scores = _score(MmeCofQualityScorer(), srv, sample, video)
        system = [m for m in srv.requests[0]["messages"] if m["role"] == "system"][0]["content"]
        assert "from 0 (worst) to 9 (best)" in system
    by = {s.metric: s for s in scores}
    assert set(by) == {"CS", "TC", "VS", "Hallu", "PG"}
    assert (by["CS"].value, by["CS"].normalized) == (9, 1.0)
    assert by["TC"].normalized == pytest.approx(6 / 9) and by["Hallu"].normalized == 0.0
    assert by["PG"].evidence.details["scale"] == [0, 9]


@pytest.mark.parametrize("bad,why", [
    (json.dumps({"consistency": 10, "temporal_consistency": 6, "visual_stability": 3, "hallucination": 0,
                 "physics_grounding": 4}), "outside the scale"),
    (json.dumps({"consistency": 5}), "no 'temporal_consistency'"),
    ("The video looks fine.", "no valid JSON"),
])
def test_quality_bad_reply_is_unscored(setup, bad, why):
    data, video = setup
    sample = MmeCofProtocol(data=data).load().samples[0]
    with LoopbackServer(keyed_script([("rate the visual quality", [bad])])) as srv:
        scores = _score(MmeCofQualityScorer(), srv, sample, video)
        assert srv.count == 2
    assert len(scores) == 5
    assert all(s.status == ScoreStatus.unscored and s.value is None and why in s.reason for s in scores)


def test_missing_video_is_an_error_naming_it(setup, tmp_path):
    data, _ = setup
    sample = MmeCofProtocol(data=data).load().samples[0]
    with LoopbackServer([]) as srv:
        (rs,) = _score(MmeCofStepScorer(), srv, sample, str(tmp_path / "gone.mp4"))
        gq = _score(MmeCofQualityScorer(), srv, sample, str(tmp_path / "gone.mp4"))
        assert srv.count == 0
    assert rs.status == ScoreStatus.error and "gone.mp4" in rs.reason
    assert all(s.status == ScoreStatus.error for s in gq)
