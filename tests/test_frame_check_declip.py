"""``frame_check._declip``: its lookup-table path (uint8 RGB, the frames as decoded) gives what its per-pixel float
path gives on the same values, bit for bit, over random images near both clips and random exposures."""

from __future__ import annotations

import numpy as np

from vreason.verify.frame_check import _declip


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
        fast = _declip(raw, fixed, expected, gain, off)
        slow = _declip(raw.astype(np.float32), fixed.astype(np.float32), expected.astype(np.float32), gain, off)
        assert fast.dtype == np.uint8 and np.array_equal(fast, slow.astype(np.uint8)), k
        replaced += int((fast != fixed).sum())
    assert replaced > 0  # the draws reach the clips: some observations were read as clipped
