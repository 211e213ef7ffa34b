"""The sorting family's scene (issue 24): every frame is the shelf with every bar whole somewhere on it.

Each aligned frame is parsed into the bars' positions (each bar's colour, its largest component at the render
size: left edge and bottom, the bar's own width and height) and re-rendered with :func:`draw_bars` — bars
resting, lifted, carried or set down alike. A bar that is not seen (or seen as a fragment) makes the frame
unexplained with that reason; a second copy, a mark, a ghost or anything else is left to the residual.

The scorer decodes this family at a quarter of the canvas (``Sorting.decode_scale``) and the verifier brings the
frames back to the render size: the state then carries ``decoded_size`` and the expected pictures are put
through the same reduction and enlargement (:mod:`vreason.synth.scene_soft`), so the enlargement's soft edges
are explained by the rendering rather than freed; each bar's edges are fitted to whole pixels on 1-D profiles
through the bar (softened alike), which resolves a bar lifted by one pixel at a quarter of the size.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from vreason.synth import draw
from vreason.synth.base import RenderConfig
from vreason.synth.scene_soft import soft_size, soften

MIN_PART = 0.5
"""A bar's largest component must cover this share of the bar (else the bar is missing or broken)."""
SEARCH_PX = 3
"""Whole-pixel shifts of each edge pair tried around the centroid's estimate (each with both roundings of the
bar's length: a bar resting or carried at a fractional position is drawn a pixel longer or shorter, and an edge
pair of the fixed length left one edge a pixel off: 36–43-px lines along a lifted bar's top, bench seed
108481430)."""


def parse(frame: np.ndarray, bars: list[dict], g: dict[str, float], h: int, bg: np.ndarray,
          size: tuple[int, int] | None = None) -> dict[int, tuple[float, float]] | str:
    """Each bar's (x centre, bottom lift in px) in ``frame`` (render size), or the reason it cannot be read."""
    import cv2

    labels = draw.hue_labels(draw.to_hsv(frame))
    n, lab, stats, cents = cv2.connectedComponentsWithStats((labels > 0).astype(np.uint8), connectivity=4)
    # each component's colour: its most frequent label (one pass over the picture)
    counts = np.bincount(lab.ravel().astype(np.int64) * 16 + labels.ravel(), minlength=n * 16).reshape(n, 16)
    colour_of = counts.argmax(axis=1)
    area = stats[:, cv2.CC_STAT_AREA].copy()
    area[0] = 0
    pos: dict[int, tuple[float, float]] = {}
    for b, bar in enumerate(bars):
        mine = np.flatnonzero((colour_of == draw.COLOUR_INDEX[bar["colour"]]) & (area > 0))
        if len(mine) == 0:
            return f"the {bar['colour']} bar is not seen"
        k = int(mine[np.argmax(area[mine])])
        if area[k] < MIN_PART * bar["h"] * h * g["bar_w"]:
            return f"the {bar['colour']} bar is not seen whole ({int(area[k])} px)"
        # the centroid (pixel centres + 0.5), then each edge pair fitted to whole pixels on 1-D profiles
        cx, cy = float(cents[k, 0]) + 0.5, float(cents[k, 1]) + 0.5
        pos[b] = _refine(frame, bg, bar, g, h, cx, cy + bar["h"] * h / 2, size)
    return pos


MAX_GAIN = 1.5
"""The largest exposure gain (or its inverse) a profile is matched under (:func:`_best`)."""


def _soft1(v: np.ndarray, n_small: int | None) -> np.ndarray:
    """A 1-D profile (L, 3) through the same reduction and enlargement as :func:`soften` (separable)."""
    import cv2

    if n_small is None:
        return v
    col = np.ascontiguousarray(v[:, None, :])
    small = cv2.resize(col, (1, max(2, n_small)), interpolation=cv2.INTER_AREA)
    return cv2.resize(small, (1, len(v)), interpolation=cv2.INTER_LINEAR)[:, 0, :]


def _best(got: np.ndarray, line: np.ndarray, lo: int, hi: int, spans: list[tuple[int, int]], colour: np.ndarray,
          n_small: int | None) -> int:
    """Index of the span (start, end) whose bar drawn on ``line`` (then softened) best matches ``got[lo:hi]``, each
    under the exposure (a gain and an offset per channel, least squares) that brings it nearest: the frame is read
    with its exposure on. Matched level for level, a frame darkened by 15% put a blue bar lifted 2 px back on the
    shelf — the light gap under it, darkened, lay nearer the bar's colour than the page's (sorting dark15, hard,
    VREASON_ADV_SEED=109332120: 36 px along the shelf unexplained)."""
    errs = []
    y = got[lo:hi].astype(np.float64)
    for a, e in spans:
        ref = line.copy()
        ref[max(0, a):max(0, e)] = colour
        x = _soft1(ref, n_small)[lo:hi].astype(np.float64)
        xm, ym = x.mean(axis=0), y.mean(axis=0)
        var = ((x - xm) ** 2).sum(axis=0)
        gain = np.where(var > 1e-6, ((x - xm) * (y - ym)).sum(axis=0) / np.maximum(var, 1e-6), 1.0)
        gain = np.clip(gain, 1 / MAX_GAIN, MAX_GAIN)  # an exposure, not any contrast
        errs.append(float(np.abs(gain * (x - xm) + ym - y).sum()))
    return int(np.argmin(errs))


def _place(a: int, e: int, size: float) -> float:
    """A float far edge ``c`` with ``round(c) == e`` and ``round(c - size) == a`` (as :func:`draw.rect` rounds each
    edge of a bar of float size): the middle of the interval where both hold (``e - a`` is ``size`` rounded
    down or up)."""
    lo, hi = max(e - 0.5, a + size - 0.5), min(e + 0.5, a + size + 0.5)
    return (lo + hi) / 2 if hi > lo else e


def _spans(centre: int, size: float) -> list[tuple[int, int]]:
    """Whole-pixel (start, end) spans of a bar of float ``size`` whose end lies within ±:data:`SEARCH_PX` of
    ``centre``: both roundings of the size (a bar at a fractional position is drawn one pixel longer or shorter)."""
    sizes = sorted({int(np.floor(size)), int(np.ceil(size))})
    return [(e - n, e) for e in range(centre - SEARCH_PX, centre + SEARCH_PX + 1) for n in sizes if n > 0]


def _refine(frame: np.ndarray, bg: np.ndarray, bar: dict, g: dict[str, float], h: int, x: float, bottom: float,
            size: tuple[int, int] | None) -> tuple[float, float]:
    """(x centre, lift) with the bar's edges at the whole pixels that best explain the frame's profiles through
    the bar's middle (rows across, columns down): its far edge within ±:data:`SEARCH_PX` of the centroid's
    estimate, its length either rounding of the bar's float size, returned as the float position that
    :func:`draw_bars` draws with exactly those edges."""
    H, W = frame.shape[:2]
    soft = size is not None
    inset = 6 if soft else 3
    colour = np.array(draw.rgb(bar["colour"]), np.float32)
    bw, bh = g["bar_w"], bar["h"] * h
    soft_w = int(size[0]) if soft and size else None
    soft_h = int(size[1]) if soft and size else None
    # vertical: a column band inside the bar
    xa, xb = int(round(x - bw / 2)) + inset, int(round(x + bw / 2)) - inset
    if xb > xa and 0 <= xa and xb <= W:
        got = frame[:, xa:xb].astype(np.float32).mean(axis=1)
        line = bg[:, (xa + xb) // 2].astype(np.float32)
        spans = _spans(int(round(bottom)), bh)
        lo, hi = max(0, min(a for a, _ in spans) - 10), min(H, max(e for _, e in spans) + 10)
        a, e = spans[_best(got, line, lo, hi, spans, colour, soft_h)]
        bottom = _place(a, e, bh)
    # horizontal: a row band inside the bar
    ya, yb = int(round(bottom - bh)) + inset, int(round(bottom)) - inset
    if yb > ya and 0 <= ya and yb <= H:
        got = frame[ya:yb].astype(np.float32).mean(axis=0)
        line = bg[(ya + yb) // 2].astype(np.float32)
        spans = _spans(int(round(x + bw / 2)), bw)
        lo, hi = max(0, min(a for a, _ in spans) - 10), min(W, max(e for _, e in spans) + 10)
        a, e = spans[_best(got, line, lo, hi, spans, colour, soft_w)]
        x = _place(a, e, bw) - bw / 2
    return x, g["base"] - bottom


def make_scene(state: dict[str, Any], cfg: RenderConfig):
    from vreason.synth.families.sorting.family import _geometry, background, draw_bars
    from vreason.verify.explain import Scene

    w, h = state["canvas"]
    if (w, h) != (cfg.width, cfg.height):
        return None
    bars = state["bars"]
    g = _geometry(len(bars), w, h)
    slot_x = [g["x0"] + (i + 0.5) * g["slot"] for i in range(len(bars))]
    size = soft_size(state, w)
    bg = background(w, h)

    def at_rest(arr: list[int]) -> np.ndarray:
        return soften(draw_bars(bg, bars, g, {b: (slot_x[s], 0.0) for s, b in enumerate(arr)}, h), size)

    start = at_rest(list(state["initial"]))
    final = at_rest(sorted(state["initial"]))

    def expect(i: int, frame: np.ndarray) -> tuple[np.ndarray, None] | str:
        pos = parse(frame, bars, g, h, bg, size)
        if isinstance(pos, str):
            return pos
        return soften(draw_bars(bg, bars, g, pos, h), size), None

    return Scene(start, expect, final=final, end_search=True)
