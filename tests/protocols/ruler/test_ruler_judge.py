"""RULER-Bench judge flow against the loopback server: released input order, frames at ~2 fps with
the longest side ≤ 512, label/length validation, re-ask, unscored, errors."""

from __future__ import annotations

import asyncio
import json

import pytest

from _ruler_mmecof_fixtures import client_for, decode_image, keyed_script, moving_video, ruler_dataset, user_parts
from vreason.core.records import ScoreStatus, Video
from vreason.core.scoring import ScoreContext
from vreason.protocols.ruler.data import load_ruler
from vreason.protocols.ruler.protocol import RulerChecklistScorer, labels_to_metric_scores
from vreason.testing.loopback import LoopbackServer


def _ans(labels):
    return f"<think>looked at every frame</think><answer>{json.dumps(labels)}</answer>"


@pytest.fixture
def data(tmp_path):
    samples = {s.id: s for s in load_ruler(ruler_dataset(str(tmp_path / "data"))).samples}
    return tmp_path, samples


def _run(server, sample, video_path, **kw):
    client = client_for(server)
    ctx = ScoreContext(run_dir=".", judges={"default": client})
    video = Video(sample_id=sample.id, model="m1", seed=0, path=video_path)
    return asyncio.run(RulerChecklistScorer(**kw).ascore(sample, video, ctx))


def test_labels_to_scores_hand_computed():
    dims = ["Instruction Following", "Rule Coherence", "Rule Coherence", "Visual Fidelity"]
    assert labels_to_metric_scores(["Good", "Medium", "Poor", "Medium"], dims) == {"IF": 100.0, "RC": 25.0,
                                                                                  "VF": 50.0}


def test_request_follows_released_order_and_frame_policy(data):
    tmp, samples = data
    s = samples["color-1"]  # input image, no GT, input video, vision rule
    video = moving_video(str(tmp / "gen.mp4"), n=16, fps=8, w=640, h=360)
    with LoopbackServer(keyed_script([("PROMPT_COLOR", [_ans(["Good", "Medium", "Poor"])])])) as srv:
        scores = _run(srv, s, video)
        body = srv.requests[0]
    parts = user_parts(body)
    seq = []
    for p in parts:
        if p["type"] == "text":
            seq += [ln for ln in p["text"].splitlines() if ln.startswith("## ")]
        else:
            seq.append("IMG")
    vid_pos = seq.index("## Video to evaluate:")
    assert seq[:vid_pos] == ["## Input Image:", "IMG", "## Input Prompt:", "## Implicit Explanation:",
                             "## Input Video:", "IMG", "IMG"]  # 8 frames @ 8 fps → every 4th: 0, 4
    # 16 frames @ 8 fps, 2 fps → every 4th frame: 0, 4, 8, 12
    assert seq[vid_pos + 1:] == ["IMG"] * 4 + ["## CheckList Questions:"]
    imgs = [p for p in parts if p["type"] == "image_url"]
    gen = [decode_image(p) for p in imgs[-4:]]
    assert all(max(g.shape[:2]) <= 512 for g in gen) and gen[0].shape[1] == 512
    assert not all((gen[0] == g).all() for g in gen[1:])  # the moving square: frames differ
    text = "\n".join(p["text"] for p in parts if p["type"] == "text")
    assert text.index("Do the existing tiles stay?") < text.index("Is it clean?") < text.index("Is the next tile blue?")
    assert "# Question 3:" in text and "exactly 3 labels" in text
    system = [m for m in body["messages"] if m["role"] == "system"][0]["content"]
    assert "<answer>" in system and '"Poor"' in system
    by = {sc.metric: sc for sc in scores}
    assert set(by) == {"VC", "VF", "RC"}
    assert (by["VC"].value, by["VF"].value, by["RC"].value) == (100.0, 50.0, 0.0)
    ev = by["RC"].evidence
    assert ev.frame_policy == "fps:2+max_side=512" and ev.frame_indices == [0, 4, 8, 12]
    assert ev.judge.template == "ruler_judge" and ev.judge.template_version == "1"
    assert ev.judge.raw_reply.endswith("</answer>") and ev.details["labels"] == ["Good", "Medium", "Poor"]
    assert ev.details["metric_labels"] == ["Poor"] and ev.details["reasoning"] == "looked at every frame"
    assert ev.details["input_video_frame_indices"] == [0, 4]


def test_gt_image_and_t2v_sections(data):
    tmp, samples = data
    video = moving_video(str(tmp / "gen.mp4"))
    with LoopbackServer(keyed_script([("PROMPT_MAZE", [_ans(["Good"] * 4)]),
                                      ("PROMPT_PHYS", [_ans(["Good", "Good", "Medium", "Poor", "Medium"])])])) as srv:
        maze = _run(srv, samples["maze-3"], video)
        phys = _run(srv, samples["physics-0"], video)
        maze_heads = [ln for p in user_parts(srv.requests[0]) if p["type"] == "text"
                      for ln in p["text"].splitlines() if ln.startswith("## ")]
        phys_heads = [ln for p in user_parts(srv.requests[1]) if p["type"] == "text"
                      for ln in p["text"].splitlines() if ln.startswith("## ")]
    assert maze_heads == ["## Input Image:", "## Input Prompt:", "## Ground truth Image:", "## Implicit Explanation:",
                          "## Video to evaluate:", "## CheckList Questions:"]
    assert phys_heads == ["## Input Prompt:", "## Implicit Explanation:", "## Video to evaluate:",
                          "## CheckList Questions:"]
    assert {s.metric: s.value for s in maze} == {"IF": 100.0, "VC": 100.0, "VF": 100.0, "RC": 100.0}
    assert {s.metric: s.value for s in phys} == {"IF": 100.0, "VC": 100.0, "VF": 50.0, "RC": 25.0}


def test_malformed_then_valid_is_reasked(data):
    tmp, samples = data
    video = moving_video(str(tmp / "gen.mp4"))
    with LoopbackServer(keyed_script([("PROMPT_MAZE", ["I think it is good overall.",
                                                       _ans(["Good", "Poor", "Poor", "Medium"])])])) as srv:
        scores = _run(srv, samples["maze-3"], video)
        assert srv.count == 2
        assert "could not be used" in json.dumps(srv.requests[1])
    assert all(s.status == ScoreStatus.ok for s in scores)
    assert {s.metric: s.value for s in scores} == {"IF": 100.0, "VC": 0.0, "VF": 0.0, "RC": 50.0}
    assert scores[0].evidence.judge.attempts == 2


@pytest.mark.parametrize("bad,why", [
    (_ans(["Good", "Good", "Good"]), "3 labels, expected 4"),
    (_ans(["Good", "Excellent", "Good", "Poor"]), "is not one of"),
    ("<answer>Good, Good, Good, Good</answer>", "valid JSON"),
])
def test_wrong_length_or_label_becomes_unscored_never_zero(data, bad, why):
    tmp, samples = data
    video = moving_video(str(tmp / "gen.mp4"))
    with LoopbackServer(keyed_script([("PROMPT_MAZE", [bad, bad])])) as srv:
        scores = _run(srv, samples["maze-3"], video)
        assert srv.count == 2  # first ask + one re-ask
    assert {s.metric for s in scores} == {"IF", "VC", "VF", "RC"}
    for s in scores:
        assert s.status == ScoreStatus.unscored and s.value is None and s.normalized is None
        assert why in s.reason
        assert s.evidence.judge.raw_reply == bad and s.evidence.frame_indices == [0, 4, 8, 12]


def test_missing_video_and_missing_judge_are_errors(data):
    tmp, samples = data
    with LoopbackServer([]) as srv:
        scores = _run(srv, samples["maze-3"], str(tmp / "nope.mp4"))
        assert srv.count == 0
    assert all(s.status == ScoreStatus.error and "nope.mp4" in s.reason for s in scores)
    video = Video(sample_id="maze-3", model="m1", path=moving_video(str(tmp / "g.mp4")))
    out = asyncio.run(RulerChecklistScorer().ascore(samples["maze-3"], video, ScoreContext()))
    assert all(s.status == ScoreStatus.error and "no judge" in s.reason for s in out)
