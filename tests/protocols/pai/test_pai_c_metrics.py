"""PAI-Bench-C formulas against hand-computed values on tiny arrays, and their validity (self = best,
noise near the bottom)."""

from __future__ import annotations

import os
import pickle

import cv2
import numpy as np
import pytest
from scipy.ndimage import uniform_filter

from vreason.protocols.pai.c import metrics as M
from vreason.protocols.pai.c.data import iter_npz_frames
from vreason.protocols.pai.c.masks import (
    PhraseMask,
    UnsafePickle,
    decode_mask,
    encode_mask,
    load_pickle,
    phrase_masks,
    rle_decode_counts,
)

RNG = np.random.default_rng(0)


def _textured(h=40, w=56, seed=0):
    rng = np.random.default_rng(seed)
    img = np.zeros((h, w, 3), np.uint8)
    img[:, :, 0] = (np.arange(w)[None] * 4) % 256
    img[:, :, 1] = (np.arange(h)[:, None] * 6) % 256
    img[8:30, 10:40, 2] = 200
    return np.clip(img.astype(int) + rng.integers(-3, 4, img.shape), 0, 255).astype(np.uint8)


# ------------------------------------------------------------------ SSIM
def _ssim_map_by_hand(x: np.ndarray, y: np.ndarray, rng: float) -> np.ndarray:
    """Wang et al. SSIM with skimage's defaults: 7×7 uniform window, sample covariance, K1=.01, K2=.03."""
    x, y = x.astype(np.float64), y.astype(np.float64)
    n = 49
    cov = n / (n - 1)
    mx, my = uniform_filter(x, 7), uniform_filter(y, 7)
    vx = cov * (uniform_filter(x * x, 7) - mx * mx)
    vy = cov * (uniform_filter(y * y, 7) - my * my)
    vxy = cov * (uniform_filter(x * y, 7) - mx * my)
    c1, c2 = (0.01 * rng) ** 2, (0.03 * rng) ** 2
    return ((2 * mx * my + c1) * (2 * vxy + c2)) / ((mx * mx + my * my + c1) * (vx + vy + c2))


def test_blur_ssim_matches_the_hand_formula_on_a_blurred_pair():
    gt, pred = M.bilateral(_textured(seed=0)), M.bilateral(_textured(seed=0)[:, ::-1].copy())
    rng = float(gt.max()) - float(gt.min())
    by_hand = np.mean([_ssim_map_by_hand(gt[..., c], pred[..., c], rng) for c in range(3)])
    assert M.ssim_full_mean(gt, pred) == pytest.approx(by_hand, abs=1e-9)
    # the released code averages the *full* map (borders included), not skimage's cropped mean
    from skimage.metrics import structural_similarity

    cropped = structural_similarity(gt, pred, data_range=rng, channel_axis=2)
    assert abs(M.ssim_full_mean(gt, pred) - cropped) > 1e-4


def test_blur_constants_and_validity():
    assert M.BILATERAL == {"d": 30, "sigma_color": 150.0, "sigma_space": 100.0}
    f = _textured()
    assert np.array_equal(M.bilateral(f), cv2.bilateralFilter(f, 30, 150, 100))
    same, noise = M.BlurAcc(), M.BlurAcc()
    for s in range(3):
        g = _textured(seed=s)
        same.add(g, g.copy())
        noise.add(g, RNG.integers(0, 256, g.shape, dtype=np.uint8))
    assert same.result()["blur_ssim"] == pytest.approx(1.0)
    assert same.result()["blur_mse"] == 0.0
    assert noise.result()["blur_ssim"] < 0.3


def test_blur_mse_is_float_not_uint8_wraparound():
    acc = M.BlurAcc()
    g = np.full((8, 8, 3), 10, np.uint8)
    acc.add(g, np.full((8, 8, 3), 20, np.uint8), blurred=True)
    assert acc.result()["blur_mse"] == pytest.approx(100.0)  # uint8 10-20 would wrap to 246


def test_uniform_ground_truth_frame_gives_nan_not_a_number():
    acc = M.BlurAcc()
    acc.add(np.full((16, 16, 3), 7, np.uint8), _textured(16, 16), blurred=True)
    assert acc.uniform_frames == [0]


# ------------------------------------------------------------------ Canny
def test_canny_f1_pooled_over_pixels_and_frames_by_hand():
    acc = M.CannyCounts()
    g1 = np.zeros((4, 4), bool)
    g1[0, :4] = True            # 4 gt edges
    p1 = np.zeros((4, 4), bool)
    p1[0, :2] = True
    p1[3, 3] = True             # 2 TP, 1 FP, 2 FN
    g2 = np.zeros((4, 4), bool)
    g2[1, 1] = True
    p2 = g2.copy()              # 1 TP
    acc.add_edges(g1, p1)
    acc.add_edges(g2, p2)
    assert (acc.tp, acc.fp, acc.fn) == (3, 1, 2)
    r = acc.result()
    assert r["canny_precision"] == pytest.approx(3 / 4)
    assert r["canny_recall"] == pytest.approx(3 / 5)
    assert r["canny_f1_score"] == pytest.approx(2 * (3 / 4) * (3 / 5) / (3 / 4 + 3 / 5))
    assert acc.degenerate is None


def test_canny_presets_self_noise_and_degenerate():
    assert M.CANNY_PRESETS["medium"] == (100, 200)
    assert M.CANNY_PRESETS == {"very_low": (20, 50), "low": (50, 100), "medium": (100, 200), "high": (200, 300),
                               "very_high": (300, 400)}
    f = _textured()
    assert np.array_equal(M.canny(f), cv2.Canny(f, 100, 200) > 0)
    assert np.array_equal(M.canny(f, gray=True), cv2.Canny(cv2.cvtColor(f, cv2.COLOR_RGB2GRAY), 100, 200) > 0)
    same, noise, blank = M.CannyCounts(), M.CannyCounts(), M.CannyCounts()
    e = M.canny(f)
    same.add_edges(e, M.canny(f.copy()))
    noise.add_edges(e, M.canny(RNG.integers(0, 256, f.shape, dtype=np.uint8)))
    blank.add_edges(e, M.canny(np.full_like(f, 128)))
    assert same.result()["canny_f1_score"] == 1.0
    assert noise.result()["canny_f1_score"] < 0.3
    assert "prediction has no Canny edge" in blank.degenerate
    assert blank.result()["canny_f1_score"] == 0.0


# ------------------------------------------------------------------ depth
def test_si_rmse_hand_values_scale_invariance_and_cap():
    gt = np.array([[1.0, 2.0], [3.0, 4.0]])
    assert M.si_rmse_frame(gt * 3.7, gt) == pytest.approx(0.0, abs=1e-12)
    pred = np.array([[1.0, 1.0], [3.0, 4.0]])  # median ratio 2.5 / 2 = 1.25
    want = np.sqrt(np.mean((gt.ravel() - pred.ravel() * 1.25) ** 2))
    assert M.si_rmse_frame(pred, gt) == pytest.approx(want)
    assert want == pytest.approx(np.sqrt((0.25 ** 2 + 0.75 ** 2 + 0.75 ** 2 + 1.0) / 4))
    far = np.array([1.0, 1.0, 100.0])
    assert M.si_rmse_frame(np.ones(3), far, cap=10.0) == pytest.approx(np.sqrt(100 / 3))
    assert M.si_rmse_frame(np.ones(3), far, cap=None) == pytest.approx(np.sqrt(99 ** 2 / 3))
    # pixels where either depth is 0 are not valid
    assert M.si_rmse_frame(np.array([2.0, 0.0]), np.array([4.0, 9.0])) == 0.0
    assert M.si_rmse_frame(np.zeros(3), np.ones(3)) is None


def test_depth_mean_counts_frames_without_valid_pixels_as_zero():
    acc = M.DepthAcc(cap=None)
    acc.add(np.array([[1.0, 1.0]]), np.array([[1.0, 3.0]]))    # median ratio 2 → residual [-1, 1] → 1
    acc.add(np.zeros((1, 2)), np.ones((1, 2)))                   # no valid pixel: 0 (released)
    assert acc.empty_frames == 1
    assert acc.result() == pytest.approx(0.5)
    noise = M.DepthAcc()
    gt = np.linspace(1, 5, 400).reshape(20, 20)
    noise.add(RNG.uniform(0.1, 5, gt.shape), gt)
    same = M.DepthAcc()
    same.add(gt * 2, gt)
    assert same.result() == pytest.approx(0.0, abs=1e-12) and noise.result() > 0.5


def test_depth_with_no_valid_pixel_anywhere_is_the_released_zero_or_unscored_by_option():
    # released depth_metrics: a frame's error starts at 0.0 and is set only where valid pixels exist, and the
    # video's value is the mean over frames: no valid pixel in any frame gives 0.0 (a "perfect" score)
    acc = M.DepthAcc()
    for _ in range(3):
        acc.add(np.zeros((4, 4)), RNG.uniform(1, 2, (4, 4)))
    assert acc.all_empty and acc.result() == 0.0
    assert acc.result(empty="unscored") is None
    assert M.DepthAcc().result() is None  # nothing compared at all: never a number


def _released_nearest(depth: np.ndarray, h: int, w: int) -> np.ndarray:
    """torch.nn.functional.interpolate(mode="nearest") index rule, as the released comparison resizes a depth
    map of another size: src = floor(dst * in / out), written out independently of vreason's helper."""
    out = np.empty((h, w), dtype=depth.dtype)
    for y in range(h):
        for x in range(w):
            out[y, x] = depth[int(np.floor(y * depth.shape[0] / h)), int(np.floor(x * depth.shape[1] / w))]
    return out


@pytest.mark.parametrize("src,dst", [((6, 8), (12, 16)), ((12, 16), (5, 7)), ((7, 9), (10, 4))])
def test_depth_maps_of_another_size_are_resized_by_nearest_neighbour_as_released(src, dst):
    pred = RNG.uniform(0.5, 4, src)
    gt = RNG.uniform(0.5, 4, dst)
    want = M.si_rmse_frame(_released_nearest(pred, *dst), gt)
    acc = M.DepthAcc()
    acc.add(pred, gt)
    assert acc.resized == 1 and acc.result() == pytest.approx(want, abs=1e-12)
    # values are copied, never blended: every resized value is one of the input's
    assert set(np.unique(M.resize_nearest(pred, *dst))) <= set(np.unique(pred))
    linear = M.DepthAcc(resize="linear")
    linear.add(pred, gt)
    assert linear.result() != pytest.approx(want, abs=1e-9)  # the old rule is a different, named option


def test_released_zero_depth_is_counted_beside_the_number():
    import json

    import pandas as pd

    from vreason.protocols.pai.c.tables import aggregate_pai_c

    def row(sid, value, empty):
        ev = json.dumps({"details": {"depth_no_valid_pixel": empty}})
        return {"model": "m", "sample_id": sid, "seed": 0, "metric": "depth_si_rmse", "value": value,
                "status": "ok", "category": "robotics", "evidence": ev}

    df = pd.DataFrame([row("a", 0.0, True), row("b", 0.8, False), row("c", 0.4, False)])
    res = aggregate_pai_c(df, [], n_boot=50)
    got = res.tables["pai_c_metrics"].set_index("metric").loc["depth_si_rmse"]
    assert got["released_zero"] == 1 and got["n"] == 3 and got["mean"] == pytest.approx(0.4)
    assert res.summary["depth_no_valid_pixel_scored_0"] == 1


def test_npz_frames_stream_equals_np_load(tmp_path):
    arr = RNG.random((5, 7, 9))
    for name, save in (("c.npz", np.savez_compressed), ("u.npz", np.savez)):
        save(tmp_path / name, data=arr, other=np.zeros(2))
        got = np.stack(list(iter_npz_frames(tmp_path / name)))
        assert np.array_equal(got, arr)
        assert len(list(iter_npz_frames(tmp_path / name, limit=3))) == 3
    with pytest.raises(ValueError, match="no array 'depth'"):
        list(iter_npz_frames(tmp_path / "c.npz", key="depth"))


# ------------------------------------------------------------------ segmentation
def _m(*idx, n=10):
    a = np.zeros((1, 1, n), bool)
    a[0, 0, list(idx)] = True
    return a


def test_hungarian_miou_by_hand():
    gt = [_m(0, 1, 2, 3), _m(6, 7, 8, 9)]
    pred = [_m(6, 7, 8), _m(0, 1, 2, 3, 4)]          # listed in the other order
    iou, recall, matched = M.hungarian_miou(gt, pred)
    assert sorted(matched.tolist()) == pytest.approx([3 / 4, 4 / 5])
    assert iou == pytest.approx((3 / 4 + 4 / 5) / 2) and recall == 1.0
    # a match at IoU ≤ 0.1 is not counted in the mean, and lowers recall
    iou2, recall2, m2 = M.hungarian_miou([_m(0, 1, 2, 3, n=20), _m(*range(5, 20), n=20)],
                                        [_m(0, 1, 2, 3, n=20), _m(19, n=20)])
    assert sorted(m2.tolist()) == pytest.approx([1 / 15, 1.0])
    assert iou2 == 1.0 and recall2 == 0.5
    # Hungarian, not greedy max: one pred cannot serve two gt masks
    iou3, recall3, _ = M.hungarian_miou([_m(0, 1), _m(0, 1, 2)], [_m(0, 1)])
    assert recall3 == 1.0 and iou3 == 1.0
    assert M.hungarian_miou(gt, []) == (0.0, 0.0, pytest.approx(np.zeros(0)))


def test_self_masks_score_one_and_phrase_union_later_instance_wins():
    red = np.zeros((2, 4, 4), bool)
    red[:, :2, :2] = True
    red2 = np.zeros_like(red)
    red2[:, 3, 3] = True
    blue = np.zeros_like(red)
    blue[:, 1:3, 1:3] = True  # overlaps red at (1,1): the later instance (blue) takes it
    pm = phrase_masks([PhraseMask("red", red), PhraseMask("blue", blue), PhraseMask("red", red2)])
    assert list(pm) == ["red", "blue"]
    assert pm["red"].sum() == 2 * (3 + 1) and pm["blue"].sum() == 2 * 4
    iou, recall, _ = M.hungarian_miou(list(pm.values()), list(pm.values()))
    assert iou == 1.0 and recall == 1.0


def test_rle_matches_pycocotools_strings_and_unpickling_is_restricted():
    m = np.zeros((2, 3, 4), bool)
    m[0, 1, 1:3] = True
    m[1, :, 3] = True
    # strings produced by pycocotools.mask.encode(np.array(m.reshape(-1, 1), order="F"))
    assert encode_mask(m)["data"] == {"size": [24, 1], "counts": b"528OK000"}
    assert np.array_equal(decode_mask({"size": [24, 1], "counts": b"528OK000"}, m.shape), m)
    big = np.zeros((1, 40, 50), bool)
    big[0, 10:30, 5:45] = True
    coco = b"i?X1:" + b"0" * 37 + b"_?"
    assert encode_mask(big)["data"]["counts"] == coco
    assert np.array_equal(decode_mask({"size": [2000, 1], "counts": coco}, big.shape), big)
    assert rle_decode_counts([3, 2]) == [3, 2]
    with pytest.raises(ValueError, match="runs cover"):
        decode_mask({"counts": [3, 2]}, (2, 2, 2))

    class Evil:
        def __reduce__(self):
            return (os.system, ("echo pwned",))

    with pytest.raises(UnsafePickle, match="refused to load"):
        load_pickle(pickle.dumps([Evil()]))
    ok = load_pickle(pickle.dumps([{"phrase": "x", "segmentation_mask_rle": np.zeros((1, 2, 2), bool)}]))
    assert ok[0]["segmentation_mask_rle"].shape == (1, 2, 2)


# ------------------------------------------------------------------ resize and diversity
def test_fit_frame_interpolation_choice():
    small = RNG.integers(0, 256, (10, 16, 3), dtype=np.uint8)
    big = RNG.integers(0, 256, (40, 64, 3), dtype=np.uint8)
    assert np.array_equal(M.fit_frame(small, 20, 32), cv2.resize(small, (32, 20), interpolation=cv2.INTER_LINEAR))
    assert np.array_equal(M.fit_frame(big, 20, 32), cv2.resize(big, (32, 20), interpolation=cv2.INTER_AREA))
    assert M.fit_frame(big, 40, 64) is big


def test_diversity_is_the_mean_over_ordered_pairs_and_splits_into_rows():
    vids = [[np.full((2, 2, 3), v + t, np.uint8) for t in range(3)] for v in (0, 10, 40)]

    def dist(a, b):  # stub: |mean difference| per frame
        return [abs(float(x.mean()) - float(y.mean())) for x, y in zip(a, b, strict=True)]

    pairs = [abs(a - b) for a in (0, 10, 40) for b in (0, 10, 40) if a != b]
    assert M.diversity(vids, dist) == pytest.approx(np.mean(pairs))
    rows = [np.mean(M.diversity_row(i, vids, dist)) for i in range(3)]
    assert np.mean(rows) == pytest.approx(np.mean(pairs))
    same = [vids[0]] * 3
    assert M.diversity(same, dist) == 0.0
