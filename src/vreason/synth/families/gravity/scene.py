"""The gravity family's scene (issue 24): every frame is the sky, the floor and one ball, wherever it is.

Each aligned frame is parsed into the ball's centre (the component of the ball's hue closest to the ball's
area, its centroid at the render size: anti-aliased edges are symmetric) and re-rendered with the family's own
ball drawing (:func:`render_ball`, sub-pixel centre) — hanging, falling, bouncing or rolling alike. A frame
without a ball-sized blob of its colour is unexplained with that reason; a second ball, a ghost, a mark or
anything else is left to the residual. Whether the positions follow the physics is the trajectory checks'
job (:mod:`vreason.synth.families.gravity.check`), not the scene's. A picture decoded smaller than the canvas
(a portrait letterbox) is compared with equally softened renderings (:mod:`vreason.synth.scene_soft`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from vreason.synth import frametools as ft
from vreason.synth.base import RenderConfig
from vreason.synth.scene_soft import soft_size, soften

HUE_MARGIN, S_MIN, V_MIN = 12, 100, 70
AREA_RANGE = (0.35, 2.2)
"""A ball-sized blob: its area within this factor of the ball's."""


def render_ball(bg: np.ndarray, state: dict[str, Any], x: float, y: float) -> np.ndarray:
    """``bg`` with the ball at (x, y) (any sub-pixel position; the renderer's 1/16 px grid)."""
    import cv2

    fr = bg.copy()
    colour = tuple(int(c) for c in state["ball_color"])
    cv2.circle(fr, (int(round(x * 16)), int(round(y * 16))), int(round(state["r"] * 16)), colour, -1,
               cv2.LINE_AA, 4)
    return fr


def parse(frame: np.ndarray, state: dict[str, Any]) -> tuple[float, float] | str:
    """The ball's centre in ``frame`` (render size), or the reason it cannot be read."""
    import cv2

    want = np.pi * state["r"] ** 2
    mask = ft.hue_mask(ft.hsv(frame), state["hue"], HUE_MARGIN, S_MIN, V_MIN)
    n, _, stats, cents = cv2.connectedComponentsWithStats(mask.astype(np.uint8), connectivity=8)
    if n < 2:
        return f"no {state['ball_name']} ball is seen"
    ratio = stats[1:, cv2.CC_STAT_AREA] / want
    ok = (ratio >= AREA_RANGE[0]) & (ratio <= AREA_RANGE[1])
    if not ok.any():
        return f"no ball-sized {state['ball_name']} blob (largest {int(stats[1:, cv2.CC_STAT_AREA].max())} px)"
    err = np.where(ok, np.abs(np.log(np.maximum(ratio, 1e-6))), np.inf)
    k = 1 + int(np.argmin(err))
    return float(cents[k, 0]), float(cents[k, 1])


def make_scene(state: dict[str, Any], cfg: RenderConfig):
    from vreason.synth.families.gravity.family import _background
    from vreason.verify.explain import Scene

    if (state.get("width"), state.get("height")) != (cfg.width, cfg.height):
        return None
    bg = _background(state, cfg)
    size = soft_size(state, cfg.width)
    start = soften(render_ball(bg, state, *state["start"]), size)
    final = soften(render_ball(bg, state, *state["final"]), size)

    def expect(i: int, frame: np.ndarray) -> tuple[np.ndarray, None] | str:
        at = parse(frame, state)
        if isinstance(at, str):
            return at
        return soften(render_ball(bg, state, *at), size), None

    return Scene(start, expect, final=final)
