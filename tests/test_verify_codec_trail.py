"""A low-bitrate codec's motion trail (issue 24; ``explain_video(trail=...)``, ``verify.frame_check._trail``).

Sliding's ground truth at H.264 CRF 35, decoded at half size: two frames after a tile crossed the dark gap beside
its neighbour, a 6×5-px smear of the two tiles' colours stood in the gap (luma up to 46 over the rendering: a 37-px
blob by the residual's 5×5 rule, 8 px over its per-pixel tolerance). Where the expected picture changed within
``trail`` frames, the rendering residual judges per pixel only. Off (``trail=0``) nothing changes; the same smear
where nothing moved, or a strong mark in the trail, is still unexplained.
"""

import numpy as np
import pytest

from vreason.verify.explain import explain_video
from vreason.verify.residual import TOL

H, W = 360, 640
N = 12
SIDE = 60
Y0 = 150


def _x(i: int) -> int:
    """The square's left edge in frame ``i``: still for 3 frames, then 25 px a frame to the right."""
    return 100 + 25 * max(0, i - 3)


def _picture(i: int, bg: int, fg: tuple[int, int, int]) -> np.ndarray:
    img = np.full((H, W, 3), bg, np.uint8)
    img[Y0:Y0 + SIDE, _x(i):_x(i) + SIDE] = fg
    return img


def _video(r: np.random.Generator, level: int, at: tuple[int, int], size: tuple[int, int]):
    bg, fg = int(r.integers(40, 70)), (int(r.integers(30, 80)), int(r.integers(150, 240)), int(r.integers(60, 140)))
    pics = [_picture(i, bg, fg) for i in range(N)]
    frames = [p.copy() for p in pics]
    k = 7
    y, x = at
    f = frames[k].astype(np.int16)
    f[y:y + size[1], x:x + size[0]] += level  # a light smear (all channels: luma)
    frames[k] = np.clip(f, 0, 255).astype(np.uint8)

    def expect(i: int, frame: np.ndarray):  # noqa: ARG001
        return pics[i], None

    return frames, pics, expect, k


@pytest.mark.parametrize("draw", range(3))
def test_a_smear_in_a_motion_trail_is_explained_only_with_trail(draw):
    r = np.random.default_rng([24, 7, draw])
    t = np.arange(N) / 16.0
    level = int(r.integers(30, 39))  # per pixel under TOL (40), 5×5 means over the patch rule's 18
    k = 7
    # the square's trailing edge left these pixels 1-2 frames before frame k
    at = (Y0 + int(r.integers(10, SIDE - 10)), _x(k) - int(r.integers(8, 20)))
    frames, pics, expect, k = _video(r, level, at, (7, 7))
    off = explain_video(frames, t, pics[0], expect, final=pics[-1])
    assert not off.ok and off.unexplained[0].index == k, off.as_json()
    on = explain_video(frames, t, pics[0], expect, final=pics[-1], trail=2)
    assert on.ok, on.as_json()
    # the same smear far from anything that moved is unexplained with trail on
    far = (Y0 + SIDE + 60 + int(r.integers(0, 40)), 100 + int(r.integers(0, 300)))
    frames, pics, expect, k = _video(r, level, far, (7, 7))
    got = explain_video(frames, t, pics[0], expect, final=pics[-1], trail=2)
    assert not got.ok and got.unexplained[0].index == k, got.as_json()
    # a strong mark in the trail (over the per-pixel tolerance) is unexplained with trail on
    frames, pics, expect, k = _video(r, TOL + 40, at, (7, 7))
    got = explain_video(frames, t, pics[0], expect, final=pics[-1], trail=2)
    assert not got.ok and got.unexplained[0].index == k, got.as_json()
