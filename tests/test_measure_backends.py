"""measure backends on tiny random-init checkpoints: every kind loads offline from a folder and runs;
embeddings are unit-norm, identical images agree, streaming equals one-shot; boxes lie inside the image;
depth maps and masks have the frame's size."""

from __future__ import annotations

import numpy as np
import pytest

from _tiny_models import tiny_model
from vreason.measure.base import Detection, Detector, ImageEmbedder, TextImageEmbedder
from vreason.measure.detectors import nms
from vreason.measure.spec import make_depth, make_detector, make_embedder, make_segmenter, make_text_image


def _images(n: int, seed: int = 0, h: int = 48, w: int = 64) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 256, (h, w, 3), dtype=np.uint8) for _ in range(n)]


@pytest.mark.parametrize("kind", ["dinov2", "dino_vit", "clip", "siglip"])
def test_embedders(kind, tmp_path_factory):
    folder = tiny_model(kind, tmp_path_factory)
    emb = make_embedder(f"transformers:{folder}", batch_size=3)
    model_type = "vit" if kind == "dino_vit" else kind
    assert isinstance(emb, ImageEmbedder) and emb.name.startswith(f"transformers:{model_type}@")
    a, b = _images(2)
    odd = _images(1, seed=5, h=31, w=90)[0]  # any size
    f = emb.embed([a, a.copy(), b, odd])
    assert f.dtype == np.float32 and f.shape[0] == 4
    assert np.allclose(np.linalg.norm(f, axis=1), 1, atol=1e-5)
    assert f[0] @ f[1] == pytest.approx(1.0, abs=1e-5)
    assert f[0] @ f[2] < f[0] @ f[1] - 1e-4
    frames = _images(7, seed=3)
    one_shot = emb.embed(frames)
    chunks = list(emb.embed_stream(iter(frames), batch_size=3))
    assert [c.shape[0] for c in chunks] == [3, 3, 1]
    np.testing.assert_allclose(np.concatenate(chunks), one_shot, atol=1e-5)


@pytest.mark.parametrize("kind", ["clip", "siglip"])
def test_text_image(kind, tmp_path_factory):
    folder = tiny_model(kind, tmp_path_factory)
    ti = make_text_image(f"transformers:{folder}")
    assert isinstance(ti, TextImageEmbedder)
    t = ti.embed_text(["a red box", "a cat", "a red box"])
    i = ti.embed(_images(1))
    assert t.shape[1] == i.shape[1] and np.allclose(np.linalg.norm(t, axis=1), 1, atol=1e-5)
    assert t[0] @ t[2] == pytest.approx(1.0, abs=1e-5) and t[0] @ t[1] < 0.9999


@pytest.mark.parametrize("kind", ["grounding_dino", "owlv2"])
def test_detectors_boxes_inside_the_image(kind, tmp_path_factory):
    folder = tiny_model(kind, tmp_path_factory)
    det = make_detector(f"transformers:{folder}")
    assert isinstance(det, Detector)
    for h, w in ((48, 80), (90, 40)):
        img = _images(1, h=h, w=w)[0]
        found = det.detect(img, ["red box", "cat"], box_threshold=0.0, text_threshold=0.0)
        assert found, "with thresholds at 0 every query is a detection"
        for d in found:
            x0, y0, x1, y1 = d.box
            assert 0 <= x0 <= x1 <= w and 0 <= y0 <= y1 <= h
            assert d.label in ("red box", "cat") and 0 <= d.score <= 1
        assert [d.score for d in found] == sorted((d.score for d in found), reverse=True)
    assert det.detect(img, ["cat"], box_threshold=1.0) == []
    with pytest.raises(ValueError, match="label"):
        det.detect(img, [" "])


class _FixedOutput:
    """Stands in for a detector model: one query with a known box and known logits."""

    def __init__(self, det, box, logit_per_token):
        self.config = det.loaded.model.config
        self.box, self.logits = box, logit_per_token

    def __call__(self, **inputs):
        from types import SimpleNamespace

        import torch

        n = inputs["input_ids"].shape[0] if "pixel_mask" not in inputs else self.config.max_text_len
        logits = torch.full((1, 1, n), self.logits)
        return SimpleNamespace(logits=logits, pred_boxes=torch.tensor([[self.box]]))


@pytest.mark.parametrize("kind,box,expected", [
    ("grounding_dino", (0.5, 0.5, 0.2, 0.2), (32.0, 16.0, 48.0, 24.0)),  # relative to the image
    ("owlv2", (0.5, 0.25, 0.2, 0.1), (32.0, 16.0, 48.0, 24.0)),  # relative to the padded square (80×80)
])
def test_detector_boxes_are_in_input_pixels(kind, box, expected, tmp_path_factory):
    from dataclasses import replace

    det = make_detector(f"transformers:{tiny_model(kind, tmp_path_factory)}")
    det.loaded = replace(det.loaded, model=_FixedOutput(det, box, 2.0))
    found = det.detect(_images(1, h=40, w=80)[0], ["cat"], box_threshold=0.5, text_threshold=0.5)
    assert len(found) == 1 and found[0].label == "cat"
    assert found[0].box == pytest.approx(expected, abs=1e-4)
    det.loaded = replace(det.loaded, model=_FixedOutput(det, box, -2.0))  # sigmoid(-2) = 0.12 < 0.5
    assert det.detect(_images(1, h=40, w=80)[0], ["cat"], box_threshold=0.5, text_threshold=0.5) == []


def test_nms_keeps_one_box_per_object_and_label():
    dets = [Detection("a", 0.9, (0, 0, 10, 10)), Detection("a", 0.8, (1, 1, 10, 10)),
            Detection("b", 0.7, (0, 0, 10, 10)), Detection("a", 0.6, (30, 30, 40, 40))]
    kept = nms(dets, 0.5)
    assert [(d.label, d.score) for d in kept] == [("a", 0.9), ("b", 0.7), ("a", 0.6)]
    assert len(nms(dets, None)) == 4


def test_depth_map_has_the_frame_size(tmp_path_factory):
    folder = tiny_model("depth_anything", tmp_path_factory)
    dep = make_depth(f"transformers:{folder}", batch_size=2)
    frames = _images(3, h=50, w=70) + _images(1, h=33, w=41)
    maps = dep.depth(frames)
    assert [m.shape for m in maps] == [(50, 70)] * 3 + [(33, 41)]
    assert all(m.dtype == np.float32 and np.isfinite(m).all() for m in maps)
    np.testing.assert_allclose(dep.depth(frames[1:2])[0], maps[1], rtol=1e-4, atol=1e-4)  # batching is exact


def test_sam_masks_from_boxes(tmp_path_factory):
    folder = tiny_model("sam", tmp_path_factory)
    seg = make_segmenter(f"transformers:{folder}", batch_size=2)
    img = _images(1, h=48, w=80)[0]
    boxes = [(5, 5, 30, 30), (40, 10, 75, 45), (0, 0, 80, 48)]
    masks = seg.masks_from_boxes(img, boxes)
    assert len(masks) == 3 and all(m.shape == (48, 80) and m.dtype == bool for m in masks)
    one = seg.masks_from_boxes(img, boxes[2:])
    np.testing.assert_array_equal(one[0], masks[2])  # prompt batching does not change a mask
    assert seg.masks_from_boxes(img, []) == []


def test_stream_memory_is_bounded_by_the_batch(tmp_path_factory):
    """The model never sees more than ``batch_size`` frames at once and the stream is consumed lazily."""
    from dataclasses import replace

    emb = make_embedder(f"transformers:{tiny_model('dinov2', tmp_path_factory)}", batch_size=4)
    real, seen = emb.loaded.model, []

    def spy(**kw):
        seen.append(int(kw["pixel_values"].shape[0]))
        return real(**kw)

    emb.loaded = replace(emb.loaded, model=spy)
    pulled = []

    def frames():
        for i, f in enumerate(_images(10, seed=9)):
            pulled.append(i)
            yield f

    stream = emb.embed_stream(frames(), batch_size=4)
    first = next(stream)
    assert first.shape[0] == 4 and len(pulled) == 4  # nothing read ahead of the batch
    assert sum(c.shape[0] for c in stream) == 6
    emb.embed(_images(10, seed=9))  # a long list in one call is chunked too
    assert seen == [4, 4, 2, 4, 4, 2]
