"""The maze's scene (issue 24): every frame is the maze with exactly one agent, re-rendered where it is seen.

Per aligned frame the green agent is found (HSV green, the largest blob; none of agent size, or two, is a frame
that shows no legal state) and the maze is re-rendered with the agent at the blob's centre. Free: a ring of
:data:`RING_PX` around the rendered disc's rim (codec smear and antialiasing of a moving disc). Whether the
position is reachable (walls, speed) is the family's tracker's job (:mod:`vreason.synth.families.maze.check`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from vreason.synth import draw
from vreason.synth.base import RenderConfig

RING_PX = 2.0
"""Half-width (px at the render size) of the free ring around the agent's rim."""
MIN_AREA_FRAC = 0.35
"""A green blob smaller than this fraction of the agent's area is no agent (a larger one elsewhere is a
second agent)."""


def agent_blobs(frame: np.ndarray, agent_area: float) -> list[tuple[float, float, int]]:
    """Agent-sized green blobs of an RGB frame: (x, y, area) by decreasing area."""
    import cv2

    hsv = cv2.cvtColor(np.ascontiguousarray(frame[..., :3]), cv2.COLOR_RGB2HSV)
    green = draw.hsv_mask(hsv, "green").astype(np.uint8)
    green = cv2.morphologyEx(green, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    n, _, stats, cents = cv2.connectedComponentsWithStats(green, connectivity=8)
    out = [(float(cents[k, 0]), float(cents[k, 1]), int(stats[k, cv2.CC_STAT_AREA])) for k in range(1, n)
           if stats[k, cv2.CC_STAT_AREA] >= MIN_AREA_FRAC * agent_area]
    return sorted(out, key=lambda b: -b[2])


def maze_scene(fam: Any, state: dict[str, Any], cfg: RenderConfig):
    """The :class:`~vreason.verify.explain.Scene` of a maze task (see the module)."""
    from vreason.synth.families.maze.family import AGENT_R
    from vreason.verify.explain import Scene

    grid = draw.GridLayout.from_json(state["grid"])
    bg = fam.background(state)
    h, w = bg.shape[:2]
    radius = AGENT_R * grid.cell
    area = float(np.pi * radius ** 2)
    green = draw.rgb("green")
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)

    def at(x: float, y: float) -> np.ndarray:
        img = bg.copy()
        draw.disc(img, (x, y), radius, green)
        return img

    def ring(x: float, y: float) -> np.ndarray:
        x0, x1 = max(0, int(x - radius - 4)), min(w, int(x + radius + 5))
        y0, y1 = max(0, int(y - radius - 4)), min(h, int(y + radius + 5))
        free = np.zeros((h, w), bool)
        d = np.hypot(xx[y0:y1, x0:x1] - x, yy[y0:y1, x0:x1] - y)
        free[y0:y1, x0:x1] = np.abs(d - radius) <= RING_PX
        return free

    sx, sy = grid.centre(*state["start"])
    gx, gy = grid.centre(*state["goal"])
    start, final = at(sx, sy), at(gx, gy)

    def expect(i: int, frame: np.ndarray) -> tuple[np.ndarray, np.ndarray | None] | str:
        if frame.shape[:2] != (h, w):
            return f"frame {i} is not at the render size"
        blobs = agent_blobs(frame, area)
        if not blobs:
            return "no agent (no agent-sized green blob)"
        if len(blobs) > 1:
            return f"{len(blobs)} agent-sized green blobs (one agent)"
        x, y, _ = blobs[0]
        return at(x, y), ring(x, y)

    return Scene(start, expect, final=final)
