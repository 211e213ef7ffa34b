"""The temporal residual beside strong edges (issue 24; ``verify.frame_check.CODEC_EDGE_PX``).

A low-bitrate P-frame smears a strong edge a few rows past where the first frame (an I-frame) had it: sliding's
oracle at H.264 250 kbit/s, frame 5, read 83/85/82 for 53 over 3 rows beside a 63-level tile edge, 89 px long.
Within ``CODEC_EDGE_PX`` of such an edge the rendering residual alone judges; the same faint band on a flat area
is still unexplained by the temporal residual (and only by it: two rows of it are under the rendering residual's floor).
"""

import numpy as np
import pytest

from vreason.verify.explain import explain_video
from vreason.verify.frame_check import CODEC_EDGE_LEVEL, CODEC_EDGE_PX

H, W = 360, 640
TOP, LEFT = 120, 160
"""The dark panel's top-left corner; it spans 300 × 140 px."""


def _page(r: np.random.Generator) -> np.ndarray:
    page = np.full((H, W, 3), int(r.integers(180, 215)), np.uint8)
    dark = int(page[0, 0, 0]) - int(r.integers(CODEC_EDGE_LEVEL + 20, 110))
    page[TOP:TOP + 140, LEFT:LEFT + 300] = dark
    return page


def _video(page: np.ndarray, band_at: tuple[int, int], rows: int, level: int) -> list[np.ndarray]:
    frames = [page.copy() for _ in range(8)]
    y, x = band_at
    f = frames[5].astype(np.int16)
    f[y:y + rows, x:x + 89] += level
    frames[5] = np.clip(f, 0, 255).astype(np.uint8)
    return frames


@pytest.mark.parametrize("draw", range(3))
def test_a_smeared_edge_is_explained_and_the_same_band_on_a_flat_area_is_not(draw):
    r = np.random.default_rng([24, draw])
    page = _page(r)
    t = np.arange(8) / 16.0
    level = int(r.integers(28, 34))  # the measured smear (5×5 means ~12: over the temporal 9, under the 18)

    def expect(i: int, frame: np.ndarray):  # noqa: ARG001
        return page, None

    x = LEFT + int(r.integers(20, 180))
    smear = _video(page, (TOP, x), CODEC_EDGE_PX, level)  # the rows just inside the panel's top edge
    rows = 2  # off an edge: 5×5 means of 2 × 30 / 5 = 12, over the temporal 9, under the rendering's 18
    assert explain_video(smear, t, page, expect).ok
    flat = _video(page, (TOP + 40 + int(r.integers(0, 40)), x), rows, level)  # inside the panel, 40+ px from edges
    got = explain_video(flat, t, page, expect)
    assert not got.ok and got.unexplained[0].index == 5, got.as_json()
    assert "changed since the first frame" in got.unexplained[0].reason  # the temporal residual caught it
    far = _video(page, (TOP - 20 - rows - int(r.integers(0, 20)), x), rows, level)  # on the light page above
    assert not explain_video(far, t, page, expect).ok
