"""Process checks of the maze family, in cells and seconds (never in frames of a particular video).

The agent's tracked positions are converted to fractional cell coordinates and measured with the
*corridor distance*: the length of the shortest legal route through the maze's open sides between
two points (a point in a corridor lies on the segment between two cell centres). Two rules follow:

* hop rule — between two consecutive observed frames ``dt`` apart the agent may travel at most
  ``min(MAX_HOP_CELLS, max(1, V_MAX·dt)) + HOP_TOL`` cells of corridor: one cell between frames that
  are close in time (stop-motion with multi-cell hops fails at any video length), more only when the
  frames are far apart and a route of that length exists at the fastest plausible speed; beyond
  ``MAX_HOP_CELLS`` the video samples the walk too sparsely to show it;
* window rule — between *any* two observed frames the corridor distance is at most
  ``V_MAX·Δt + WINDOW_SLACK`` (so 1-cell hops at 60 fps, 60 cells/s, fail too).

``V_MAX`` is 2.5× the fastest ground-truth walk (0.6 cell per frame at 16 fps = 9.6 cells/s): a
2× faster honest walk passes at 8, 16, 24 or 60 fps.
"""

from __future__ import annotations

from collections import deque

import numpy as np

V_MAX = 24.0
"""Fastest plausible agent speed, cells per second."""
MAX_HOP_CELLS = 3.0
"""Longest corridor distance between two consecutive frames (a sparser video does not show the walk)."""
HOP_TOL = 0.3
"""Tracking tolerance of one hop, cells (re-encoding, scaling, a 2-px shake move a centre < 0.1 cell)."""
WINDOW_SLACK = 1.3
"""Allowance of the window rule, cells: the one-cell floor of the hop rule plus the tracking tolerance."""

# N, E, S, W as (dr, dc) and bit (as in maze.py)
_DIRS = ((-1, 0, 1), (0, 1, 2), (1, 0, 4), (0, -1, 8))


def all_pairs(open_: list[list[int]]) -> np.ndarray:
    """Graph distances (moves) between every two cells, indexed ``r * cols + c``."""
    rows, cols = len(open_), len(open_[0])
    n = rows * cols
    out = np.full((n, n), 10 ** 6, dtype=np.float64)
    for src in range(n):
        out[src, src] = 0
        q = deque([src])
        while q:
            cur = q.popleft()
            r, c = divmod(cur, cols)
            for dr, dc, b in _DIRS:
                if open_[r][c] & b:
                    nb = (r + dr) * cols + (c + dc)
                    if out[src, nb] > out[src, cur] + 1:
                        out[src, nb] = out[src, cur] + 1
                        q.append(nb)
    return out


def locate(rc: np.ndarray, open_: list[list[int]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per point (fractional row, col; cell centres at integers): its cell, the two graph nodes of the
    corridor segment it lies on and its distance to each (both nodes equal when it is at a centre or
    pushed against a wall). Returns ``cell (N,)``, ``nodes (N, 2)``, ``dists (N, 2)``."""
    rows, cols = len(open_), len(open_[0])
    n = len(rc)
    cell = np.zeros(n, dtype=np.int64)
    nodes = np.zeros((n, 2), dtype=np.int64)
    dists = np.zeros((n, 2), dtype=np.float64)
    for k, (rf, cf) in enumerate(rc):
        r = int(np.clip(round(rf), 0, rows - 1))
        c = int(np.clip(round(cf), 0, cols - 1))
        dr, dc = rf - r, cf - c
        u = r * cols + c
        cell[k] = u
        if abs(dr) >= abs(dc):
            bit, nb, major, minor = (4 if dr > 0 else 1), (r + (1 if dr > 0 else -1), c), abs(dr), abs(dc)
        else:
            bit, nb, major, minor = (2 if dc > 0 else 8), (r, c + (1 if dc > 0 else -1)), abs(dc), abs(dr)
        if major > 1e-6 and open_[r][c] & bit and 0 <= nb[0] < rows and 0 <= nb[1] < cols:
            nodes[k] = (u, nb[0] * cols + nb[1])
            dists[k] = (np.hypot(major, minor), np.hypot(1 - major, minor))
        else:
            nodes[k] = (u, u)
            dists[k] = (np.hypot(dr, dc), np.hypot(dr, dc))
    return cell, nodes, dists


def corridor_distances(rc: np.ndarray, open_: list[list[int]], pairs: np.ndarray | None = None) -> np.ndarray:
    """Corridor distance (cells) between every two of the points ``rc`` (N, 2): an (N, N) matrix."""
    g = all_pairs(open_) if pairs is None else pairs
    cell, nodes, dists = locate(rc, open_)
    # min over the 2×2 node choices of d(p, a) + G(a, b) + d(b, q)
    d = (dists[:, None, :, None] + g[nodes[:, None, :, None], nodes[None, :, None, :]]
         + dists[None, :, None, :]).min(axis=(2, 3))
    # points in one cell or on one corridor segment: the straight distance
    same = (cell[:, None] == cell[None, :])
    seg = np.sort(nodes, axis=1)
    same |= (seg[:, None, 0] == seg[None, :, 0]) & (seg[:, None, 1] == seg[None, :, 1]) & (seg[:, None, 0]
                                                                                            != seg[:, None, 1])
    euclid = np.hypot(rc[:, None, 0] - rc[None, :, 0], rc[:, None, 1] - rc[None, :, 1])
    return np.where(same, np.minimum(d, euclid), d)


def hop_limit(dt: float) -> float:
    """Longest legal corridor distance between two consecutive observed frames ``dt`` seconds apart."""
    return min(MAX_HOP_CELLS, max(1.0, V_MAX * dt)) + HOP_TOL


def speed_violations(rc: np.ndarray, t: np.ndarray, open_: list[list[int]]) -> dict:
    """Hop-rule and window-rule violations of a track (``rc`` (N, 2) cells at times ``t`` (N,) s)."""
    if len(rc) < 2:
        return {"hops": [], "windows": 0, "worst_window": None, "sparse": [], "max_hop_ratio": None,
                "max_window_excess": None}
    d = corridor_distances(rc, open_)
    hops, sparse = [], []
    for k in range(len(rc) - 1):
        dt = float(t[k + 1] - t[k])
        dist = float(d[k, k + 1])
        if dist > hop_limit(dt):
            item = {"k": k, "cells": round(dist, 2), "dt": round(dt, 4)}
            (sparse if V_MAX * dt > MAX_HOP_CELLS else hops).append(item)
    dts = np.diff(t)
    ratio = max(float(d[k, k + 1]) / hop_limit(float(dts[k])) for k in range(len(rc) - 1))
    excess = d - V_MAX * np.abs(t[None, :] - t[:, None])
    bad = np.triu(excess > WINDOW_SLACK, k=1)
    peak = float(np.triu(excess, k=1)[np.triu_indices(len(rc), k=1)].max())
    worst = None
    if bad.any():
        i, j = np.unravel_index(int(np.argmax(np.where(bad, excess, -np.inf))), bad.shape)
        worst = {"i": int(i), "j": int(j), "cells": round(float(d[i, j]), 2), "seconds": round(float(t[j] - t[i]), 4)}
    return {"hops": hops, "windows": int(bad.sum()), "worst_window": worst, "sparse": sparse,
            "max_hop_ratio": round(ratio, 3), "max_window_excess": round(peak, 3)}
