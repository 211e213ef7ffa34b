"""A codec's lag (``residual(lagged=…)``, issue 24, principle 5): where the expected picture changed since the
previous frame, the frame may show anything between the two pictures, but the unmoved part of an object must still
be shown. Sizes, speeds, colours and lags are drawn from ``VREASON_ADV_SEED``."""

from __future__ import annotations

import os

import cv2
import numpy as np
import pytest

from test_verify_scene import h264
from vreason.verify.residual import MAX_BLOB, residual

SEED = int(os.environ.get("VREASON_ADV_SEED", "20261207"))


def scene(r: np.random.Generator) -> tuple[np.ndarray, tuple[int, int, int], tuple[int, int, int, int], int, int]:
    """A page, an object colour far from it, a box (x, y, w, h), a speed (px a frame, down) and a lag of 2-3 px, under
    the speed (a lag of 1 px lies within the residual's 1-px range already)."""
    page = r.integers(200, 256, 3)
    ink = tuple(int(v) for v in r.integers(0, 90, 3))
    w, h = int(r.integers(20, 60)), int(r.integers(20, 60))
    x, y = int(r.integers(40, 640 - w - 40)), int(r.integers(40, 200))
    speed = int(r.integers(3, 7))
    lag = int(r.integers(2, min(3, speed - 1) + 1))
    return page.astype(np.uint8), ink, (x, y, w, h), speed, lag


def picture(page: np.ndarray, ink: tuple[int, int, int], box: tuple[int, int, int, int], dy: int) -> np.ndarray:
    img = np.empty((360, 640, 3), np.uint8)
    img[:] = page
    x, y, w, h = box
    cv2.rectangle(img, (x, y + dy), (x + w - 1, y + dy + h - 1), ink, -1)
    return img


@pytest.mark.parametrize("draw_", range(4))
def test_an_object_s_leading_edge_a_few_px_behind_is_explained_as_a_lag(draw_):
    """The object moved ``speed`` px since the previous frame; the frame shows it ``lag`` px behind its parsed place
    (a P-frame's lag), through H.264: unexplained against the current picture alone, explained with the previous
    picture as the lag's other end."""
    r = np.random.default_rng([SEED, 101, draw_])
    page, ink, box, speed, lag = scene(r)
    before, now = picture(page, ink, box, 0), picture(page, ink, box, speed)
    shown = picture(page, ink, box, speed - lag)
    _, got = h264([before, shown])
    alone = residual(got, now)
    assert not alone.explained(MAX_BLOB), (draw_, box, speed, lag)
    assert residual(got, now, lagged=before).explained(MAX_BLOB), (draw_, box, speed, lag)


@pytest.mark.parametrize("draw_", range(3))
def test_an_object_that_vanishes_is_not_a_lag(draw_):
    """The same object gone from the frame (the page where it should be), or shown at its place two frames back
    (twice its speed behind): its unmoved part is unexplained even with the previous picture allowed."""
    r = np.random.default_rng([SEED, 102, draw_])
    page, ink, box, speed, _ = scene(r)
    before, now = picture(page, ink, box, 0), picture(page, ink, box, speed)
    gone = np.empty_like(now)
    gone[:] = page
    _, got = h264([before, gone])
    assert not residual(got, now, lagged=before).explained(MAX_BLOB), (draw_, box, speed)
    _, got = h264([before, picture(page, ink, box, -speed)])
    assert not residual(got, now, lagged=before).explained(MAX_BLOB), (draw_, box, speed)
