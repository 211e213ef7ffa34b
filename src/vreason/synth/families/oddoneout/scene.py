"""Odd-one-out's scene (issue 24): every frame is the board as it started, plus at most one red mark around
one cell.

The red pixels a frame shows (a looser red than the answer check's) are assigned to the cell they are nearest; the cell
with the most is the marked one, and only there, in the ring around that cell (from just outside its shape to
an eighth of a cell beyond it) and within 3 px of a red pixel, may the frame differ from the start image (the
mark in any honest stroke, with its antialiased and chroma-smeared edge). A mark elsewhere, a second box, a
moved, recoloured or vanished shape leaves a residual; a frame without red must be the start image.
"""

from __future__ import annotations

from typing import Any

import numpy as np

OUTER = 0.62
"""The ring reaches this far from the cell's centre (in cells; the neighbours' shapes start at 0.67)."""
MARK_PAD_PX = 3
RED_HUE, RED_S, RED_V = 15, 60, 60
"""Red for the scene: looser than the answer check's (hue ±10, S ≥ 110, V ≥ 80): the first short piece of a
traced box, blurred by a half-size H.264 (crf 35) and a colour shift, is pink, not the check's red."""


def make_scene(state: dict[str, Any], start: np.ndarray, final: np.ndarray) -> Any:
    import cv2

    from vreason.synth import frametools as ft
    from vreason.synth.families.oddoneout.family import _cell_rect
    from vreason.verify.explain import Scene

    h, w = start.shape[:2]
    rows, cols, cell = state["rows"], state["cols"], state["cell"]
    yy, xx = np.mgrid[0:h, 0:w]
    # nearest cell of every pixel (the board's cells, extended beyond its edge)
    rr = np.clip((yy - state["gy"]) // cell, 0, rows - 1)
    cc = np.clip((xx - state["gx"]) // cell, 0, cols - 1)
    nearest = (rr * cols + cc).astype(np.int64)
    rings = []
    for r in range(rows):
        for c in range(cols):
            x0, y0, x1, y1 = _cell_rect(state, r, c)
            cheb = np.maximum(np.abs(xx + 0.5 - (x0 + x1) / 2), np.abs(yy + 0.5 - (y0 + y1) / 2))
            rings.append((cheb <= OUTER * cell) & (cheb > min(0.36 * cell, cell / 2 - 11)))
    k = np.ones((2 * MARK_PAD_PX + 1, 2 * MARK_PAD_PX + 1), np.uint8)
    # red outside every ring cannot be the mark, and must not choose its cell: a magenta letterbox (255, 17, 90)
    # left at the frame's edge outweighed the first piece of the box and chose an edge cell (principle 5, bench
    # seed 24100, case seed 1248297034); it is judged as any other pixel there is
    anywhere = np.logical_or.reduce(rings)

    def expect(i: int, frame: np.ndarray):
        red = ft.hue_mask(ft.hsv(frame), 0, RED_HUE, RED_S, RED_V) & anywhere
        if not red.any():
            return start, None
        counts = np.bincount(nearest[red], minlength=rows * cols)
        j = int(np.argmax(counts))
        free = rings[j] & (cv2.dilate(red.astype(np.uint8), k) > 0)
        return start, free

    return Scene(start, expect, final=final)
