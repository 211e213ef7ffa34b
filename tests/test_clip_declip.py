"""``clip.declip``: its lookup-table path (uint8 RGB, the frames as decoded) gives what its per-pixel float
path gives on the same values, bit for bit, over random images near both clips and random exposures."""

from __future__ import annotations

import numpy as np

from vreason.verify.clip import declip


def test_the_lookup_path_equals_the_float_path():
    r = np.random.default_rng(20261127)
    replaced = 0
    for k in range(60):
        h, w = int(r.integers(8, 120)), int(r.integers(8, 160))
        levels = np.array([0, 1, 2, 5, 7, 128, 247, 248, 250, 253, 254, 255])
        base = r.choice(levels, size=(h, w, 3)) if k % 2 else r.integers(0, 256, (h, w, 3))
        raw = np.clip(base + r.integers(-8, 9, base.shape), 0, 255).astype(np.uint8)
        expected = np.clip(base + r.integers(-30, 31, base.shape), 0, 255).astype(np.uint8)
        fixed = r.integers(0, 256, base.shape).astype(np.uint8)
        gain = r.uniform(0.7, 1.4, 3).astype(np.float32)
        off = r.uniform(-40, 40, 3).astype(np.float32)
        fast = declip(raw, fixed, expected, gain, off)
        slow = declip(raw.astype(np.float32), fixed.astype(np.float32), expected.astype(np.float32), gain, off)
        assert fast.dtype == np.uint8 and np.array_equal(fast, slow.astype(np.uint8)), k
        replaced += int((fast != fixed).sum())
    assert replaced > 0  # the draws reach the clips: some observations were read as clipped


def test_a_clipped_channel_is_bounded_with_the_exposure_s_largest_gain():
    """Gravity's blue ball brightened 15% with a 6° hue turn: the per-channel fit read blue's gain 1.03 (only the
    dark floor unclipped there) against 1.14 in red, so the ball's blue 225 mapped to 240 and its clipped 255 was
    left 15 levels off. With the largest channel gain, 225 lies past the clip and the clip is the value; a blue
    expected far under the clip at any of the gains stays as corrected. Random expected values on both sides."""
    gain = np.array([1.143, 1.098, 1.032], np.float32)
    off = np.array([-0.18, 3.5, 7.8], np.float32)
    rng = np.random.default_rng()
    for _ in range(50):
        near = int(rng.integers(216, 256))  # (253.5 - 7.8) / 1.143 - 6 = 209: past the clip with red's gain
        far = int(rng.integers(0, 200))
        expected = np.array([[[30, 80, near], [30, 80, far]]], np.uint8)
        raw = np.array([[[33, 70, 255], [33, 70, 255]]], np.uint8)
        fixed = np.clip((raw.astype(np.float32) - off) / gain, 0, 255).astype(np.uint8)
        out = declip(raw, fixed, expected, gain, off)
        assert out[0, 0, 2] == near, (near, out[0, 0])  # the clipped blue is the expected value
        assert out[0, 1, 2] == fixed[0, 1, 2], (far, out[0, 1])  # far under the clip: left as corrected
