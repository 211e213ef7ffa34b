"""Measurements of the connect family, in cells of line and seconds.

Per pair colour and frame the verifier measures the colour's area, the part of it joined to the
pair's dots, the part lying off the board's grid paths (farther than half a line width + 0.12 cell
from every row/column centre line, outside the dots) and the line length drawn so far in cells
(sampled on the centre lines between neighbouring cells, beyond what frame 0's dots cover). A
*persistent* length (the minimum over the rest of the video) ignores codec and shake flicker when
deciding which line grows when.

Rules (see :mod:`vreason.synth.families.connect.family`):

* speed — the lines together grow by at most ``min(MAX_HOP_CELLS, max(1, V_LINE·dt)) + HOP_TOL``
  cells between consecutive frames and by at most ``V_LINE·Δt + WINDOW_SLACK`` over any stretch;
* one colour after another — the times two lines are being drawn (from 15% to 85% of their final
  length, whatever the speed) never overlap;
* steady — while a line grows, no step adds more than ``STEADY_RATIO`` × its median step + 0.35
  cell (a screen wipe reveals a vertical run at once);
* grid paths — off-path area ≤ ``OFF_PATH_CELLS`` cell of line in every frame (a diagonal fails);
* stray — colour not joined to a dot ≤ ``STRAY_DOT_FRACTION`` of a dot in every frame;
* nothing else — no blob of another colour or of black on the board (≥ ``STRAY_DOT_FRACTION`` of a dot).
"""

from __future__ import annotations

from typing import Any

import numpy as np

V_LINE = 24.0
"""Fastest plausible drawing speed, cells of line per second (the ground truth draws ≤ 8.3 cells/s)."""
MAX_HOP_CELLS = 3.0
HOP_TOL = 0.5
WINDOW_SLACK = 1.5
STEADY_RATIO = 2.0
OFF_PATH_CELLS = 0.15
STRAY_DOT_FRACTION = 0.2
GROW_EPS = 0.1
"""A line grows in a step (of 1/16 s) when its persistent length rises by more than this many cells."""
ACTIVE_LO, ACTIVE_HI = 0.15, 0.85
"""A line is being drawn from when it passes 15% of its final length until it passes 85% (flicker ≤ 0.2 cell)."""


def skeleton_distance(h: int, w: int, grid) -> np.ndarray:
    """Per pixel, the distance (px) to the nearest row or column centre line of the board."""
    ys = np.arange(h) + 0.5
    xs = np.arange(w) + 0.5
    ry = (ys - grid.y0) / grid.cell - 0.5
    cx = (xs - grid.x0) / grid.cell - 0.5
    dy = np.abs(ry - np.clip(np.round(ry), 0, grid.rows - 1)) * grid.cell
    dx = np.abs(cx - np.clip(np.round(cx), 0, grid.cols - 1)) * grid.cell
    return np.minimum(dy[:, None], dx[None, :])


def speed_violations(length: np.ndarray, t: np.ndarray) -> dict[str, Any]:
    """Hop and window violations of the total drawn length (cells) at times ``t``."""
    if len(length) < 2:
        return {"hops": [], "sparse": [], "windows": 0, "worst": None, "max_hop_ratio": None,
                "max_window_excess": None}
    hops, sparse = [], []
    for k in range(len(length) - 1):
        dt = float(t[k + 1] - t[k])
        d = float(length[k + 1] - length[k])
        if d > min(MAX_HOP_CELLS, max(1.0, V_LINE * dt)) + HOP_TOL:
            (sparse if V_LINE * dt > MAX_HOP_CELLS else hops).append(
                {"k": k, "cells": round(d, 2), "dt": round(dt, 4)})
    dts = np.diff(t)
    ratio = float(max((length[k + 1] - length[k]) / (min(MAX_HOP_CELLS, max(1.0, V_LINE * dts[k])) + HOP_TOL)
                      for k in range(len(length) - 1)))
    # window rule: max over i < j of (L_j − V t_j) − (L_i − V t_i)
    g = length - V_LINE * t
    low = np.minimum.accumulate(g)
    excess = g[1:] - low[:-1]
    j = int(np.argmax(excess))
    worst = float(excess[j])
    return {"hops": hops, "sparse": sparse, "windows": int((excess > WINDOW_SLACK).sum()),
            "worst": round(worst, 2) if worst > WINDOW_SLACK else None, "max_hop_ratio": round(ratio, 3),
            "max_window_excess": round(worst, 3)}


STEP_S = 1 / 16
"""Growth is compared on a grid of this many seconds (or the frame interval, when longer), the lengths
linearly interpolated between frames: the same steps at 8, 16, 24 or 60 fps."""
SAMPLES_PER_EDGE = 10


def path_samples(grid) -> tuple[np.ndarray, np.ndarray]:
    """Pixel (xs, ys) of ``SAMPLES_PER_EDGE`` points on the middle 60% of every centre-to-centre edge of the
    board (near a cell centre a corner's round cap covers the stubs of the other edges: flicker)."""
    pts = []
    fr = 0.2 + 0.6 * (np.arange(SAMPLES_PER_EDGE) + 0.5) / SAMPLES_PER_EDGE
    for r in range(grid.rows):
        for c in range(grid.cols):
            for dr, dc in ((0, 1), (1, 0)):
                if r + dr < grid.rows and c + dc < grid.cols:
                    a, b = grid.centre(r, c), grid.centre(r + dr, c + dc)
                    pts += [(a[0] + (b[0] - a[0]) * u, a[1] + (b[1] - a[1]) * u) for u in fr]
    arr = np.array(pts)
    return np.round(arr[:, 0] - 0.5).astype(int), np.round(arr[:, 1] - 0.5).astype(int)


def path_length(masks: np.ndarray, xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """Cells of grid path covered by each frame's mask (T,): the line's centre, blind to edge flicker (each
    edge counts one cell when its sampled middle is covered)."""
    h, w = masks.shape[1:]
    xs, ys = np.clip(xs, 0, w - 1), np.clip(ys, 0, h - 1)
    return masks[:, ys, xs].sum(axis=1) / SAMPLES_PER_EDGE


def on_time_grid(values: np.ndarray, t: np.ndarray, step_s: float = STEP_S) -> np.ndarray:
    """Rows of ``values`` (P, T) interpolated at multiples of the step (``step_s`` or the frame interval,
    when longer) and at the end."""
    step = max(step_s, float(np.median(np.diff(t)))) if len(t) > 1 else step_s
    grid = np.append(np.arange(0.0, float(t[-1]), step), float(t[-1]))
    return np.stack([np.interp(grid, t, row) for row in values]) if len(values) else np.zeros((0, len(grid)))


def growth_spans(persist: np.ndarray, eps: float = GROW_EPS) -> tuple[list[tuple[int, int] | None], list[float]]:
    """Per line (rows of ``persist`` (P, S), on a time grid): first and last step in which it grows by
    more than ``eps`` cells, and how unsteady it grows ((largest step − 0.35 cell) / median step;
    ≤ STEADY_RATIO is steady)."""
    steps = np.diff(persist, axis=1)
    spans: list[tuple[int, int] | None] = []
    ratios: list[float] = []
    for row in steps:
        idx = np.flatnonzero(row > eps)
        if len(idx) == 0:
            spans.append(None)
            ratios.append(0.0)
            continue
        spans.append((int(idx[0]), int(idx[-1])))
        grow = row[idx]
        ratios.append(max(0.0, float(grow.max() - 0.35)) / max(float(np.median(grow)), 1e-6))
    return spans, ratios


def drawing_intervals(persist: np.ndarray, t: np.ndarray) -> list[tuple[float, float] | None]:
    """Per line (rows of ``persist`` (P, T)): the time it passes ``ACTIVE_LO`` and ``ACTIVE_HI`` of its final
    length (None for a line under half a cell) — when it is being drawn, whatever its speed."""
    out: list[tuple[float, float] | None] = []
    for row in persist:
        final = float(row[-1])
        if final < 0.5:
            out.append(None)
            continue
        lo = float(t[int(np.argmax(row >= ACTIVE_LO * final))])
        hi = float(t[int(np.argmax(row >= ACTIVE_HI * final))])
        out.append((lo, hi))
    return out


def interleaved(spans: list[tuple[float, float] | None]) -> int:
    """How many pairs of lines are drawn at overlapping times (intervals from :func:`drawing_intervals`)."""
    s = [x for x in spans if x is not None]
    return sum(1 for i in range(len(s)) for j in range(i + 1, len(s)) if min(s[i][1], s[j][1]) > max(s[i][0], s[j][0]))
