"""The exposure fit against what clipped (``exposure.gain_offset``, ``_keeps_clips``): a clipped level says
"at least" (or "at most"), and a gain fitted on a few levels must not contradict it. Random draws
(``VREASON_ADV_SEED`` when set)."""

from __future__ import annotations

import os

import numpy as np
import pytest

from vreason.verify import exposure

SEED = int(os.environ.get("VREASON_ADV_SEED", "20261207"))


def _page(r: np.random.Generator, levels: list[int], white: float) -> np.ndarray:
    """A white page (``white`` of its pixels) with flat patches of ``levels`` (one channel's values, grey)."""
    h, w = 120, 240
    ref = np.full((h, w, 3), 255, np.uint8)
    cols = np.linspace(0, w * (1 - white), len(levels) + 1).astype(int)
    for lv, x0, x1 in zip(levels, cols[:-1], cols[1:], strict=True):
        ref[:, x0:x1] = lv
    return ref


@pytest.mark.parametrize("draw", range(6))
def test_a_gain_from_two_dark_levels_keeps_the_clipped_white(draw):
    """Two dark levels 40-60 apart whose observations (a codec's or a small region's) would fit a gain near 0.6,
    beside a page whose white the frame shows at 252-255: the fit maps the white to within
    ``CLIP_SLACK`` of what the frame shows (maze's region fit: blue 0.6 + 24 sent the page's clipped white to 177;
    P5 case 2043195823, bench seed 24101)."""
    r = np.random.default_rng([SEED, 71, draw])
    lo = int(r.integers(10, 30))
    hi = lo + int(r.integers(40, 60))
    ref = _page(r, [lo, hi], float(r.uniform(0.5, 0.9)))
    frame = ref.copy()
    frame[ref[..., 0] == lo] = lo + int(r.integers(12, 20))  # the dark level read brighter,
    frame[ref[..., 0] == hi] = hi - int(r.integers(0, 6))  # the other as it is: a narrow gain well under 1
    top = int(r.integers(252, 256))
    frame[ref[..., 0] == 255] = top
    g, o = exposure.gain_offset(frame, ref)
    shown = g * 255 + o
    assert np.all(shown >= min(top, 255 - exposure.CLIP_MARGIN) - exposure.CLIP_SLACK), (g, o, top)


@pytest.mark.parametrize("draw", range(4))
def test_an_honest_exposure_with_a_clipped_page_is_still_measured(draw):
    """Levels spread over the range through a true gain and offset, the page clipped: the gain within 2% and the
    offset within 3 levels (the clipped page agrees with the true fit, so it is kept)."""
    r = np.random.default_rng([SEED, 72, draw])
    levels = [int(v) for v in np.linspace(30, 200, 5) + r.integers(-8, 8, 5)]
    ref = _page(r, levels, 0.4)
    gain, off = float(r.uniform(1.0, 1.15)), float(r.uniform(0, 12))
    frame = np.clip(ref.astype(np.float64) * gain + off + r.normal(0, 1.0, ref.shape), 0, 255).round()
    g, o = exposure.gain_offset(frame.astype(np.uint8), ref)
    assert np.all(np.abs(g - gain) < 0.02) and np.all(np.abs(o - off) < 3), (g, o, gain, off)
