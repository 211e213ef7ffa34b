"""The verifier primitives' fast paths against their plain numpy definitions (issue 26: the same numbers faster).

``exposure.gain_offset`` fits on OpenCV joint histograms, ``clip.declip`` copies with ``cv2.copyTo``,
``residual.missing`` compares against a lookup table of floored bounds: each is checked here against the
definition it replaced, written out the slow way, on random draws (``VREASON_ADV_SEED`` when set)."""

from __future__ import annotations

import os

import numpy as np
import pytest

from vreason.verify import exposure, residual
from vreason.verify.clip import CLIP_NOISE, declip
from vreason.verify.residual import MISSING_CONTRAST_PX, MISSING_EDGE_PX, MISSING_FRAC

SEED = int(os.environ.get("VREASON_ADV_SEED", "20261128"))


def _scene(r: np.random.Generator, h: int, w: int) -> np.ndarray:
    import cv2

    img = np.zeros((h, w, 3), np.uint8)
    img[:] = r.integers(0, 256, 3)
    for _ in range(int(r.integers(0, 12))):
        x, y = int(r.integers(0, w)), int(r.integers(0, h))
        colour = tuple(int(v) for v in r.integers(0, 256, 3))
        cv2.rectangle(img, (x, y), (x + int(r.integers(5, 200)), y + int(r.integers(5, 150))), colour, -1)
    return img


def _lower_median_by_bin(x: np.ndarray, y: np.ndarray) -> dict[int, int]:
    """For each 4-level bin of ``x``: the lower median of ``y`` over its samples (sorted, index (n - 1) // 2)."""
    return {int(b): int(np.sort(y[x // 4 == b])[(np.count_nonzero(x // 4 == b) - 1) // 2]) for b in np.unique(x // 4)}


@pytest.mark.parametrize("draw", range(3))
def test_the_fit_histograms_give_each_level_the_median_of_its_samples(draw):
    r = np.random.default_rng([SEED, 61, draw])
    h, w = int(r.integers(40, 300)), int(r.integers(40, 400))
    ref = _scene(r, h, w)
    frame = np.clip(ref * r.uniform(0.8, 1.25, 3) + r.normal(0, 4, ref.shape), 0, 255).astype(np.uint8)
    mask = (r.random((h, w)) < 0.7).astype(np.uint8)
    for ch in range(3):
        x, y = np.ascontiguousarray(ref[..., ch]), np.ascontiguousarray(frame[..., ch])
        hy, hx = exposure._hists(x, y, mask)
        xs, ys = x[mask > 0].astype(np.int64), y[mask > 0].astype(np.int64)
        assert hx.sum() == xs.size and np.array_equal(hx, np.bincount(xs, minlength=256))
        medians = exposure._median_rows(hy, np.arange(256))
        for b, med in _lower_median_by_bin(xs, ys).items():
            assert medians[b] == med


@pytest.mark.parametrize("draw", range(4))
def test_gain_offset_recovers_an_exposure(draw):
    """A scene of several flat levels seen through a random gain and offset (and codec-sized noise): the fit's
    gain within 2% and offset within 3 levels on every channel (levels that clip are left out by the fit)."""
    r = np.random.default_rng([SEED, 62, draw])
    h, w = 200, 320
    ref = np.zeros((h, w, 3), np.uint8)
    for i, level in enumerate(np.linspace(50, 190, 6)):
        ref[:, i * w // 6:(i + 1) * w // 6] = int(level) + r.integers(-10, 10, 3)
    gain, off = r.uniform(0.85, 1.15, 3), r.uniform(-15, 15, 3)
    frame = np.clip(ref * gain + off + r.normal(0, 1.5, ref.shape), 0, 255).round().astype(np.uint8)
    g, o = exposure.gain_offset(frame, ref)
    assert np.all(np.abs(g - gain) < 0.02), (g, gain)
    assert np.all(np.abs(o - off) < 3), (o, off)


def test_declip_sets_exactly_the_clipped_pixels():
    """``declip`` against its definition per pixel and channel (four tests of the observation and the expected
    value, see its doc; the clip bounds with the exposure's largest / smallest channel gain), on scenes with
    clipped areas."""
    r = np.random.default_rng([SEED, 63])
    for _ in range(20):
        h, w = int(r.integers(5, 120)), int(r.integers(5, 160))
        ref = r.integers(0, 256, (h, w, 3)).astype(np.uint8)
        ref[: h // 2] = r.choice([0, 1, 250, 254, 255])
        gain, off = r.uniform(0.8, 1.3, 3).astype(np.float32), r.uniform(-20, 20, 3).astype(np.float32)
        raw = np.clip(ref * gain + off + r.normal(0, 3, ref.shape), 0, 255).astype(np.uint8)
        fixed = exposure.undo_gain(raw, gain, off)
        e = ref.astype(np.float32)
        # the clip bounds with the largest (smallest) channel gain, the far bounds per channel
        lo, hi = (253.5 - off) / gain.max() - 6, (1.5 - off) / gain.min() + 6
        far_hi, far_lo = (254 + CLIP_NOISE - off) / gain, (1 - CLIP_NOISE - off) / gain
        m = ((raw >= 254) & (e >= lo)) | ((raw <= 1) & (e <= hi))
        m |= ((raw >= 254 - CLIP_NOISE) & (e >= far_hi)) | ((raw <= 1 + CLIP_NOISE) & (e <= far_lo))
        assert np.array_equal(declip(raw, fixed, ref, gain, off), np.where(m, ref, fixed))


def test_missing_is_its_float_definition():
    """``residual.missing`` against the float form of its rule (see its doc), tolerances 0–300."""
    import cv2

    r = np.random.default_rng([SEED, 64])
    for _ in range(40):
        h, w = int(r.integers(3, 100)), int(r.integers(3, 140))
        ref = cv2.GaussianBlur(r.integers(0, 256, (h, w, 3)).astype(np.uint8), (0, 0), float(r.uniform(0.3, 3)))
        frame = np.clip(ref.astype(int) + r.normal(0, r.uniform(0, 60), ref.shape), 0, 255).astype(np.uint8)
        tol = float(r.choice([40.0, 18.0, 7.5, 0.0, float(r.uniform(0, 300))]))
        fy, ey = (cv2.cvtColor(a, cv2.COLOR_RGB2GRAY).astype(np.float32) for a in (frame, ref))
        k = np.ones((2 * MISSING_EDGE_PX + 1,) * 2, np.uint8)
        kc = np.ones((2 * MISSING_CONTRAST_PX + 1,) * 2, np.uint8)
        lacks_dark = np.maximum(cv2.erode(fy, k) - ey, 0)
        lacks_bright = np.maximum(ey - cv2.dilate(fy, k), 0)
        depth_dark, depth_bright = cv2.dilate(ey, kc) - ey, ey - cv2.erode(ey, kc)
        want = ((lacks_dark > np.maximum(np.float32(tol), np.float32(MISSING_FRAC) * depth_dark))
                | (lacks_bright > np.maximum(np.float32(tol), np.float32(MISSING_FRAC) * depth_bright)))
        assert np.array_equal(residual.missing(frame, ref, tol), want)


@pytest.mark.parametrize("tol", [-1.0, -0.5, float("nan")])
def test_missing_refuses_a_tolerance_that_is_not_a_number_of_levels(tol):
    """Below 0 the float rule calls every pixel of a flat picture missing (0 > −1) and the lookup table none (its
    bounds are clipped to 0): the two forms part, so such a tolerance is refused, not read one way or the other."""
    img = np.full((8, 8, 3), 128, np.uint8)
    with pytest.raises(ValueError, match="tolerance"):
        residual.missing(img, img, tol)
