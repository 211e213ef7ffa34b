"""SAM2 video propagation (a tiny random-init Sam2VideoModel loaded offline, no processor) and PAI-C's
segmentation scored in the released propagate mode."""

from __future__ import annotations

import numpy as np
import pytest

from _pai_c_fixtures import write_dataset, write_results
from _tiny_models import tiny_model
from vreason.core.records import Video
from vreason.core.scoring import ScoreContext
from vreason.measure.base import Segmenter, VideoSegmenter
from vreason.measure.sam2_video import Sam2VideoSegmenter, sample_points
from vreason.measure.spec import make_segmenter
from vreason.protocols.pai.c import scorers as S
from vreason.protocols.pai.c.data import load_pai_c
from vreason.protocols.pai.c.protocol import PaiCOptions


@pytest.fixture(scope="module")
def sam2(tmp_path_factory):
    return f"transformers:{tiny_model('sam2_video', tmp_path_factory)}"


def _frames(n=4, h=40, w=56):
    rng = np.random.default_rng(0)
    return [rng.integers(0, 256, (h, w, 3), dtype=np.uint8) for _ in range(n)]


def test_sam2_video_loads_offline_and_propagates_masks_for_every_frame(sam2):
    seg = make_segmenter(sam2)
    assert isinstance(seg, VideoSegmenter) and isinstance(seg, Segmenter)
    assert seg.name.startswith("transformers:sam2_video@")
    boxes = [(5.0, 5.0, 30.0, 30.0), (20.0, 10.0, 50.0, 35.0)]
    out = seg.propagate(_frames(), boxes)
    assert len(out) == 4 and all(len(per) == 2 for per in out)
    assert all(m.shape == (40, 56) and m.dtype == bool for per in out for m in per)
    assert any(m.any() for per in out for m in per)  # the tracker produced masks, not only zeros
    again = seg.propagate(_frames(), boxes)
    assert all(np.array_equal(a, b) for p, q in zip(out, again, strict=True) for a, b in zip(p, q, strict=True))
    assert [len(p) for p in seg.propagate(_frames(), [])] == [0, 0, 0, 0]
    single = seg.masks_from_boxes(_frames(1)[0], boxes[:1])
    assert len(single) == 1 and single[0].shape == (40, 56)


def test_propagation_is_bounded_by_max_frames_and_rejects_a_size_change(sam2):
    seg = make_segmenter(sam2)
    bounded = Sam2VideoSegmenter(seg.loaded, max_frames=2)
    assert len(bounded.propagate(_frames(5), [(5.0, 5.0, 30.0, 30.0)])) == 2
    with pytest.raises(ValueError, match="frame 1"):
        seg.propagate(_frames(1) + _frames(1, 32, 32), [(5.0, 5.0, 30.0, 30.0)])


def test_points_are_sampled_inside_the_mask_and_seeded_by_its_content():
    mask = np.zeros((20, 30), bool)
    mask[5:9, 10:20] = True
    pts = sample_points(mask)
    assert pts.shape == (10, 2) and len({tuple(p) for p in pts}) == 10  # 40 pixels: drawn without replacement
    assert mask[pts[:, 1].astype(int), pts[:, 0].astype(int)].all()
    assert np.array_equal(pts, sample_points(mask.copy()))
    other = mask.copy()
    other[0, 0] = True
    assert not np.array_equal(pts, sample_points(other))
    tiny = np.zeros((5, 5), bool)
    tiny[2, 2] = True
    assert sample_points(tiny).tolist() == [[2.0, 2.0]] * 10
    assert sample_points(np.zeros((4, 4), bool)).shape == (0, 2)


def _score(scorer, sample, path):
    got = scorer.score(sample, Video(sample_id=sample.id, model="m", seed=0, path=path), ScoreContext())
    return {s.metric: s for s in got}


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("paic_sam2")
    root = write_dataset(tmp / "d", ids={"task_0001": "agibot"})
    noise = write_results(tmp / "n", root, "noise", k=1, ids=["task_0001"]) + "/task_0001__0.mp4"
    return load_pai_c(root).samples[0], noise


def test_pai_c_seg_propagates_with_a_sam2_video_segmenter(sam2, data, tmp_path_factory):
    sample, noise = data
    gt = sample.resolve(sample.reference_video)
    det = f"transformers:{tiny_model('grounding_dino', tmp_path_factory)}"
    o = PaiCOptions(detector=det, segmenter=sam2, seg_gt="recompute", box_threshold=0.0, text_threshold=0.0,
                    max_frames=4).model_dump()
    o["device"] = "cpu"
    same = _score(S.PaiCSegScorer(**o), sample, gt)
    m = same["seg_m_iou"]
    assert m.status.value == "ok", m.reason
    d = m.evidence.details
    assert d["seg_mode"] == "propagate" and d["frames_compared"] == 4 and m.evidence.frame_indices == [0, 1, 2, 3]
    assert d["segmenter"].startswith("transformers:sam2_video@") and d["pred_phrases"]
    # identical pipelines on identical frames: every matched phrase volume is identical (IoU 1); with random
    # weights two phrases' masks can coincide, and the later instance then takes every pixel (released
    # painting order), leaving the other phrase empty on both sides (IoU 0, so recall may be < 1)
    assert m.value == pytest.approx(1.0) and set(d["matched_ious"]) <= {0.0, 1.0} and 1.0 in d["matched_ious"]

    frame0 = _score(S.PaiCSegScorer(**{**o, "seg_propagate": False}), sample, gt)["seg_m_iou"]
    assert frame0.evidence.details["seg_mode"] == "frame0" and frame0.evidence.frame_indices == [0]

    released = {**o, "seg_gt": "pkl"}  # GT masks from sam2_pkls, on the same propagated frames
    bad = _score(S.PaiCSegScorer(**released), sample, noise)["seg_m_iou"]
    assert bad.status.value == "ok", bad.reason
    assert bad.evidence.details["seg_mode"] == "propagate" and bad.evidence.details["gt_masks"] == "sam2_pkls"
    assert bad.evidence.details["gt_phrases"] == ["a red box", "a blue ball"] and 0.0 <= bad.value <= 1.0


def test_pai_c_seg_keeps_frame0_mode_with_sam_v1(data, tmp_path_factory):
    sample, _ = data
    gt = sample.resolve(sample.reference_video)
    o = PaiCOptions(detector=f"transformers:{tiny_model('grounding_dino', tmp_path_factory)}",
                    segmenter=f"transformers:{tiny_model('sam', tmp_path_factory)}", seg_gt="recompute",
                    box_threshold=0.0, text_threshold=0.0, max_frames=4).model_dump()
    o["device"] = "cpu"
    m = _score(S.PaiCSegScorer(**o), sample, gt)["seg_m_iou"]
    assert m.status.value == "ok", m.reason
    assert m.evidence.details["seg_mode"] == "frame0" and m.evidence.frame_indices == [0]
