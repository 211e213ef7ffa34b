"""The graph traversal's scene (issue 24: every frame explained): each frame is parsed into the token's position
and re-rendered with the family's own :func:`render` (the network never changes).

Parsing: the token is the frame's blue pixels (every channel within :data:`COLOUR_TOL` of the token's colour,
the exposure measured on the white canvas); its position is their centroid. The re-rendering explains the
frame only when those pixels are one token-sized disc there — a second token, a mark, a moved node or a
missing line are unexplained pixels. A free ring of :data:`RING_PX` px around the token's edge takes motion
blur and antialiasing.

A legal state (else the frame is unexplained with the reason):

* there is a token (none: a blank frame, a dropped token);
* it lies on the network's lines (within :data:`ON_LINE` node spacings of an edge): it never cuts across;
* it moves at most :data:`MAX_STEP` spacings between two changed frames: it slides, never teleports;
* it never moves away from the destination: its distance in hops along the lines (an edge's fraction counts as
  that fraction of a hop) never grows by more than :data:`BACK_TOL` (a jump back to an earlier frame and
  forth again; the route with the fewest hops only comes closer).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from vreason.synth import draw
from vreason.synth.base import RenderConfig

COLOUR_TOL = 70
ON_LINE = 0.15
MAX_STEP = 0.75
BACK_TOL = 0.15
RING_PX = 2.0
MIN_AREA = 0.3
"""Fewer blue pixels than this share of the token's area: no token."""


def _seg_dist(p: np.ndarray, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distance of point ``p`` from each segment a[k]–b[k] and the fraction along it of the nearest point."""
    d = b - a
    u = np.clip(((p - a) * d).sum(axis=1) / np.maximum((d * d).sum(axis=1), 1e-9), 0.0, 1.0)
    return np.hypot(*(a + u[:, None] * d - p).T), u


def hops_to(goal: int, n: int, edges: np.ndarray) -> np.ndarray:
    """Hops from every node to ``goal`` along the edges."""
    from collections import deque

    adj: list[list[int]] = [[] for _ in range(n)]
    for x, y in edges:
        adj[int(x)].append(int(y))
        adj[int(y)].append(int(x))
    d = np.full(n, np.inf)
    d[goal] = 0
    q = deque([goal])
    while q:
        u = q.popleft()
        for v in adj[u]:
            if d[v] == np.inf:
                d[v] = d[u] + 1
                q.append(v)
    return d


def token_at(frame: np.ndarray, state: dict[str, Any]) -> tuple[tuple[float, float] | None, int]:
    """The centroid of the frame's token-coloured pixels (None when fewer than :data:`MIN_AREA` of a token)."""
    from vreason.synth.families.graph.family import TOKEN_R
    from vreason.verify.colour import near_rgb_on_page

    mask = near_rgb_on_page(frame, draw.rgb("blue"), COLOUR_TOL)
    n = int(mask.sum())
    area = np.pi * (TOKEN_R * state["spacing"]) ** 2
    if n < MIN_AREA * area:
        return None, n
    ys, xs = np.nonzero(mask)
    return (float(xs.mean()), float(ys.mean())), n


def scene(state: dict[str, Any], cfg: RenderConfig) -> Any:
    from vreason.synth.families.graph.family import TOKEN_R, render
    from vreason.verify.explain import Scene

    sp = float(state["spacing"])
    nodes = np.array(state["nodes"], np.float64)
    edges = np.array(state["edges"], np.int64)
    a, b = nodes[edges[:, 0]], nodes[edges[:, 1]]
    route = state["route"]
    start = render(state, [tuple(nodes[route[0]])])[0]
    final = render(state, [tuple(nodes[route[-1]])])[0]
    h, w = cfg.height, cfg.width
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    r = TOKEN_R * sp
    hops = hops_to(int(route[-1]), len(nodes), edges)
    ha, hb = hops[edges[:, 0]], hops[edges[:, 1]]
    seen: dict[int, tuple[np.ndarray, float]] = {}

    def expect(i: int, frame: np.ndarray) -> tuple[np.ndarray, np.ndarray] | str:
        xy, _ = token_at(frame, state)
        if xy is None:
            return "no token in the frame"
        p = np.array(xy)
        dist, u = _seg_dist(p, a, b)
        k = int(np.argmin(dist))
        if dist[k] / sp > ON_LINE:
            return f"the token is off the lines ({dist[k] / sp:.2f} node spacings from the nearest)"
        togo = float(min(u[k] + ha[k], 1.0 - u[k] + hb[k]))
        before = [j for j in seen if j < i]
        if before:
            q, was = seen[max(before)]
            step = float(np.hypot(*(p - q))) / sp
            if step > MAX_STEP:
                return f"the token jumps {step:.2f} node spacings between two frames"
            if togo > was + BACK_TOL:
                return f"the token moves away from the destination ({was:.2f} -> {togo:.2f} hops to go)"
        seen[i] = (p, togo)
        x0, x1 = int(max(0, p[0] - r - 4)), int(min(w, p[0] + r + 5))
        y0, y1 = int(max(0, p[1] - r - 4)), int(min(h, p[1] + r + 5))
        free = np.zeros((h, w), bool)
        d = np.hypot(xx[y0:y1, x0:x1] - p[0], yy[y0:y1, x0:x1] - p[1])
        free[y0:y1, x0:x1] = np.abs(d - r) <= RING_PX
        return render(state, [xy])[0], free

    return Scene(start, expect, final=final)
