"""The counting family's scene (issue 24: every frame explained): each frame is parsed into the positions of its
blue coins and re-rendered with the family's own :func:`~vreason.synth.families.counting.family.render` (the
card, its stars and the tray never change).

Parsing: the coins are the frame's blue pixels (every channel within :data:`COLOUR_TOL` of the coin's colour,
the exposure measured on the white canvas). Each connected blob is split into coins by fitting circles of the
coin's radius to its outline (:func:`coins_in`): a coin sliding over a resting one makes one blob of two discs,
and each disc's visible arc fixes its centre. A free ring of :data:`RING_PX` px around every coin's edge takes
antialiasing and motion blur; anything else that differs from the re-rendering is unexplained — a mark, a coin
of another size or colour, a changed star or tray.

A legal state (else the frame is unexplained with the reason):

* never more coins than the pile had (a coin drawn into the tray, a clone);
* no pile coin is nudged and left: a coin outside the tray, unmoved since the last parsed frame, may not rest
  2.5–8 px off its place in the pile (:func:`_nudged`);
* no coin vanishes: the coins of this frame are matched one to one with those of the last frame that showed them
  all (the assignment of least total distance, a match within :data:`HIDDEN_R` coin radii); a coin left without
  one must be hidden (occlusion) — within :data:`COVER_R` radii under a coin that moved onto it, or, if it was
  moving, for at most :data:`HIDDEN_FRAMES` frames, under a coin that close to its way between the frame before it
  hid and the frame it shows again (checked then: the verdict names the frame it hid in). A coin that is just gone
  — a dropped coin, a blank frame — is missing, even beside a neighbour that overlaps it: one coin cannot stand
  for two, and a coin 1.23 radii from another still shows most of itself (:class:`_Coins`).

The task has no process rule (a cut to the right tray is a right answer), so a coin may move any distance between
two frames; the count in the tray at the end is the verifier's goal check, not the scene's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from vreason.synth import draw
from vreason.synth.base import RenderConfig

COLOUR_TOL = 70
RING_PX = 2.0
MIN_AREA = 0.15
"""A blue blob smaller than this share of a coin is no coin (left to the residual: unexplained if large)."""
ARC_TOL = 1.5
"""Outline pixels within this many px of a fitted circle are its inliers."""
MIN_ARC = 0.2
"""A circle needs inliers along at least this share of its circumference to be a coin."""
HIDDEN_R = 1.5
"""A coin of this frame within this many coin radii of a coin of the last full frame may be that coin."""
COVER_R = 0.5
"""A coin not found is hidden only under a coin within this many coin radii of it (or of its way): a coin
farther from the one on top shows a crescent of over 30% of its area, which the parser finds. Honest occlusions
measured 0.01–0.09 radii (counting's oracles and honest cameras, 2026-11-28); the cheat that left this rule's
old bound of 1.5 radii dropped a coin 1.23 radii from a resting neighbour."""
UNCOVERED = 0.1
HIDDEN_FRAMES = 2
"""A moving coin may stay hidden under a coin on its way for at most this many frames in a row."""
NUDGE_PX = (2.5, 8.0)
STILL_PX = 0.75
MOVED_PX = 2.0
"""A coin that moved at least this far since the last frame that showed every coin is a moving coin."""


def blue_mask(frame: np.ndarray) -> np.ndarray:
    from vreason.verify.colour import near_rgb_on_page

    return near_rgb_on_page(frame, draw.rgb("blue"), COLOUR_TOL)


def _centres(p: np.ndarray, q: np.ndarray, r: float) -> np.ndarray:
    """Both centres of the circles of radius ``r`` through each pair p[k], q[k] (2N × 2)."""
    m = (p + q) / 2
    d = q - p
    L = np.hypot(d[:, 0], d[:, 1])
    ok = (L > 1e-6) & (L < 2 * r)
    h = np.sqrt(np.clip(r * r - (L / 2) ** 2, 0, None))
    n = np.stack([-d[:, 1], d[:, 0]], axis=1) / np.maximum(L, 1e-6)[:, None]
    c = np.concatenate([m + n * h[:, None], m - n * h[:, None]])
    return c[np.concatenate([ok, ok])]


def _refine(c: np.ndarray, pts: np.ndarray, r: float) -> np.ndarray:
    """Gauss–Newton on Σ(|p − c| − r)² over the inliers ``pts`` (radius fixed)."""
    for _ in range(5):
        v = pts - c
        d = np.maximum(np.hypot(v[:, 0], v[:, 1]), 1e-6)
        res = d - r
        jac = -v / d[:, None]
        try:
            step = np.linalg.lstsq(jac, -res, rcond=None)[0]
        except np.linalg.LinAlgError:  # pragma: no cover - degenerate arc
            break
        c = c + step
        if float(np.hypot(*step)) < 0.05:
            break
    return c


def coins_in(comp: np.ndarray, r: float, offset: tuple[int, int]) -> list[tuple[float, float]]:
    """The coins (centres, frame px) of one blob (``comp``: its bool mask cropped, ``offset`` its corner): circles
    of radius ``r`` fitted greedily to its outline (candidate centres from outline point pairs about ``r`` apart
    along it; the one with most inliers, refined, its inliers removed; again while an arc of :data:`MIN_ARC` is
    left)."""
    import cv2

    cs, _ = cv2.findContours(comp.astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    if not cs:
        return []
    pts = np.concatenate([c.reshape(-1, 2) for c in cs]).astype(np.float64)
    area = float(comp.sum())
    if area <= 1.15 * np.pi * r * r and len(cs) == 1:  # one coin (or less): its centroid
        ys, xs = np.nonzero(comp)
        return [(float(xs.mean()) + offset[0], float(ys.mean()) + offset[1])]
    r_fit = r - 0.5  # the outline runs through the edge pixels' centres
    out: list[tuple[float, float]] = []
    left = pts
    need = MIN_ARC * 2 * np.pi * r
    for _ in range(12):
        if len(left) < need:
            break
        k = max(2, int(round(r)))
        idx = np.arange(len(left))
        p, q = left[idx], left[(idx + k) % len(left)]
        cand = _centres(p, q, r_fit)
        if not len(cand):
            break
        cand = cand[:: max(1, len(cand) // 400)]
        d = np.abs(np.hypot(*(left[None, :, :] - cand[:, None, :]).transpose(2, 0, 1)) - r_fit)
        inl = (d <= ARC_TOL).sum(axis=1)
        b = int(np.argmax(inl))
        if inl[b] < need:
            break
        c = _refine(cand[b], left[d[b] <= ARC_TOL], r_fit)
        out.append((float(c[0]) + offset[0], float(c[1]) + offset[1]))
        dist = np.hypot(*(left - c).T)
        left = left[dist > r_fit + ARC_TOL]
    return _complete(comp, out, r, offset)


def _complete(comp: np.ndarray, found: list[tuple[float, float]], r: float, offset: tuple[int, int]
              ) -> list[tuple[float, float]]:
    """A blob's pixels that no found coin covers (more than :data:`UNCOVERED` of a coin): a coin almost under
    another, whose thin crescent's arc was too short (or too blurred by a codec) to fit — placed along the
    direction from the nearest found coin to the crescent, as far as the crescent reaches."""
    ys, xs = np.nonzero(comp)
    px = np.stack([xs + offset[0], ys + offset[1]], axis=1).astype(np.float64)
    out = list(found)
    for _ in range(3):
        if not out:
            break
        cs = np.array(out, np.float64)
        d = np.hypot(*(px[:, None, :] - cs[None, :, :]).transpose(2, 0, 1))
        near = d.argmin(axis=1)
        left = d.min(axis=1) > r + 1.0
        if left.sum() < UNCOVERED * np.pi * r * r:
            break
        c0 = cs[np.bincount(near[left]).argmax()]
        v = px[left].mean(axis=0) - c0
        u = v / max(float(np.hypot(*v)), 1e-6)
        reach = float(np.percentile((px[left] - c0) @ u, 95))
        c = c0 + u * max(0.0, reach - (r - 0.5))
        out.append((float(c[0]), float(c[1])))
    return out


def parse(frame: np.ndarray, state: dict[str, Any], r: float) -> list[tuple[float, float]]:
    """Every coin's centre in the frame (px)."""
    import cv2

    mask = blue_mask(frame)
    n, lab, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8), connectivity=8)
    out: list[tuple[float, float]] = []
    coin = np.pi * r * r
    for j in range(1, n):
        x, y, w, h, a = (int(v) for v in stats[j])
        if a < MIN_AREA * coin:
            continue
        out += coins_in(lab[y:y + h, x:x + w] == j, r, (x, y))
    return out


def _nudged(cur: np.ndarray, prev: np.ndarray, slots: np.ndarray, tray: np.ndarray, r: float) -> str | None:
    """A coin outside the tray resting (within :data:`STILL_PX` of a coin of the last parsed frame) between
    :data:`NUDGE_PX` of its place in the pile: moved off its place and left there (the other coins stay in the
    pile; a coin leaving for the tray keeps moving)."""
    if not len(cur) or not len(prev):
        return None
    inside = (cur[:, 0] > tray[0]) & (cur[:, 0] < tray[2]) & (cur[:, 1] > tray[1]) & (cur[:, 1] < tray[3])
    d_slot = np.hypot(*(cur[:, None, :] - slots[None, :, :]).transpose(2, 0, 1)).min(axis=1)
    d_prev = np.hypot(*(cur[:, None, :] - prev[None, :, :]).transpose(2, 0, 1)).min(axis=1)
    bad = ~inside & (d_slot > NUDGE_PX[0]) & (d_slot <= NUDGE_PX[1]) & (d_prev <= STILL_PX)
    if bad.any():
        j = int(np.argmax(bad))
        return f"a pile coin rests {d_slot[j]:.1f} px off its place at {[round(v) for v in cur[j]]}"
    return None


class _Coins:
    """The coins' identities from frame to frame: no coin vanishes (the module's doc). A coin of the last frame
    that showed every coin is matched one to one with those of this frame (the assignment of least total
    distance); one left without a match within :data:`HIDDEN_R` radii is hidden only under a coin that moved onto
    it (within :data:`COVER_R` radii) or, if it was moving, until it shows again: then a coin of each frame it was
    hidden in must lie within :data:`COVER_R` radii of its way between the two sightings."""

    def __init__(self, pool: np.ndarray, r: float, total: int) -> None:
        self.r, self.total = r, total
        self.last, self.before, self.last_i = pool, pool, 0  # the last two frames that showed every coin
        self.hidden: dict[int, dict[int, np.ndarray]] = {}  # coin of ``last`` → {frame: its coins}

    @staticmethod
    def _match(prev: np.ndarray, cur: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        from scipy.optimize import linear_sum_assignment

        dist = np.hypot(*(prev[:, None, :] - cur[None, :, :]).transpose(2, 0, 1))
        rows, cols = linear_sum_assignment(dist)
        return rows, cols, dist[rows, cols]

    def short(self, i: int, cur: np.ndarray) -> str | None:
        """A frame with fewer coins: why the coins not found are missing (None: each may be hidden)."""
        if not len(cur):
            return f"no coins in the frame, the pile had {self.total}"
        prev, r = self.last, self.r
        rows, cols, d = self._match(prev, cur)
        found = np.full(len(prev), np.inf)
        found[rows] = d
        movers = cur[cols[d >= MOVED_PX]]  # the coins of this frame that moved since the last full one
        for j in np.nonzero(found > HIDDEN_R * r)[0]:
            if len(movers) and float(np.hypot(*(movers - prev[j]).T).min()) <= COVER_R * r:
                continue  # under a coin that moved onto it
            k = int(np.hypot(*(self.before - prev[j]).T).argmin())
            moving = float(np.hypot(*(prev[j] - self.before[k]))) >= MOVED_PX
            if not moving or i - self.last_i > HIDDEN_FRAMES:
                return f"{len(prev) - len(cur)} coin(s) vanished ({len(cur)} of {self.total} found, none hiding them)"
            self.hidden.setdefault(int(j), {})[i] = cur  # checked on its way when it shows again
        return None

    def full(self, i: int, cur: np.ndarray) -> str | None:
        """A frame with every coin: each moving coin hidden since the last such frame was under a coin on its way."""
        if self.hidden:
            rows, cols, _ = self._match(self.last, cur)
            to = dict(zip(rows.tolist(), cols.tolist(), strict=True))
            for j, frames in sorted(self.hidden.items()):
                a, b = self.last[j], cur[to[j]]
                seg = b - a
                for k, there in sorted(frames.items()):
                    u = np.clip(((there - a) @ seg) / max(float(seg @ seg), 1e-9), 0.0, 1.0)
                    if float(np.hypot(*(a + u[:, None] * seg - there).T).min()) > COVER_R * self.r:
                        return (f"a moving coin hidden in frame {k} lay under no coin on its way from "
                                f"{[round(v) for v in a]} to {[round(v) for v in b]}")
            self.hidden = {}
        if i != self.last_i:
            self.before = self.last
        self.last, self.last_i = cur, i
        return None


def scene(state: dict[str, Any], cfg: RenderConfig) -> Any:
    from vreason.synth.families.counting.family import COIN_R, TRAY, moves, render
    from vreason.verify.explain import Scene

    w, h = cfg.width, cfg.height
    sx, sy = w / 640.0, h / 360.0
    r = COIN_R * min(sx, sy)
    total = int(state["total"])
    pool = [list(p) for p in state["pool"]]
    start = render(state, [pool])[0]
    final = render(state, moves(state, state["order"][:state["k"]], 2)[-1:])[0]
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    pool_px = np.array([[x * sx, y * sy] for x, y in pool], np.float64)
    coins = _Coins(pool_px, r, total)
    hist = {"parsed": pool_px}  # the coins of the last frame parsed
    tray = np.array(TRAY, np.float64) * [sx, sy, sx, sy]

    def expect(i: int, frame: np.ndarray) -> tuple[np.ndarray, np.ndarray] | str:
        got = parse(frame, state, r)
        if len(got) > total:
            return f"{len(got)} coins in the frame, the pile had {total}"
        cur = np.array(got, np.float64).reshape(-1, 2)
        why = coins.short(i, cur) if len(got) < total else coins.full(i, cur)
        if why:
            return why
        nudged = _nudged(cur, hist["parsed"], pool_px, tray, r)
        hist["parsed"] = cur
        if nudged:
            return nudged
        free = np.zeros((h, w), bool)
        for x, y in got:
            x0, x1 = int(max(0, x - r - 4)), int(min(w, x + r + 5))
            y0, y1 = int(max(0, y - r - 4)), int(min(h, y + r + 5))
            d = np.hypot(xx[y0:y1, x0:x1] - x, yy[y0:y1, x0:x1] - y)
            free[y0:y1, x0:x1] |= np.abs(d - r) <= RING_PX
        return render(state, [[(x / sx, y / sy) for x, y in got]])[0], free

    # the last frame's camera also by the full search against the final picture: on the mostly white page the
    # frame-to-frame candidates missed a 4.5% zoom after H.264 (case seed 585283613: every frame from 4 on re-aligned
    # alone, frames 50 and 54-63 not at all); with it, no frame needed re-aligning
    return Scene(start, expect, final=final, end_search=True)
