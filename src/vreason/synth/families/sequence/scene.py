"""The sequence family's scene (issue 24): every frame parsed into the row's state and re-rendered.

A frame (on the start image's grid) is parsed once, and the parse serves both the scene and the family's rules:

* its exposure (per-channel gain/offset on everything but the blank card, :func:`frametools.colour_fix`);
* every other card's content: the nearest of every shape × count state the card could show and the bare card
  (analysis by synthesis on ink-coverage maps, ``CARD_RATIO_MAX``) and its element's colour (nearest palette
  colour of the element's pixels);
* the blank card: which element (the answer or a distractor) is shown at which opacity ``alpha`` (least squares
  of the card against the blend of the empty card and the element: the fade-in's in-between states).

The expected picture is the start image with the blank card holding the parsed element at the parsed opacity
(quantised to 1/64); a frame whose other cards do not parse as their own state and colour is not a legal state
of the task (the reason is returned instead). No free pixels: the fade is a blend of two renders.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from vreason.synth import frametools as ft
from vreason.synth.base import RenderConfig
from vreason.synth.shapes import PALETTE

ALPHA_STEPS = 64
"""The parsed opacity is quantised to this many steps (≤ 2 levels of blend error on the suite's contrasts)."""
FILL_SCALE = 2
"""The blank card is parsed at 1/``FILL_SCALE`` resolution (area average)."""
KEEP_FRAMES = 4
"""Parsed frames kept (the last ones: the answer check reads the end state from them)."""
ALPHA_SPREAD = 0.12
"""How far the opacity may vary across the blank card around its parsed value (per pixel, along the element's
own colour only): a codec updates a fade's blocks at slightly different frames (an H.264 re-encode at half size
left a 3-px stripe 0.05–0.07 behind the rest)."""
FADE_LOCK = 0.3
"""Once the blank card showed an element above this opacity, the element is the card's: a blink of it or an
element swapped in for it is not a legal state (issue 24: the answer dropped for one frame at window [52, 1] of
seed 58419 was explained). Below it the card may still change its mind (a faint start reads as any element)."""
FADE_BACK = 0.15
"""How far the locked element's opacity may fall back from the highest it showed: the parse of one frame against
the next moves by ≤ 0.07 under the suite's codecs (:data:`ALPHA_SPREAD`: the spread of a fade across the card),
twice that is kept. A fade shown ahead for a few frames and then resumed falls back further (P2 ``jump``, easy,
index 3, case seed 284501574: frames 32–33 at 1.00 between 0.56 and 0.71 — a fall of 0.29, under the 0.3 that
served as both levels before)."""
CONTRAST_MIN = 30.0
"""Pixels where the element differs from the empty card by less than this (RGB distance) keep the card's
opacity (their own is not measurable)."""


@dataclass
class _Card:
    index: int
    inside: tuple[slice, slice]
    colour: list[int]
    want: str
    labels: list[str]
    cands: np.ndarray
    ys: np.ndarray
    xs: np.ndarray


@dataclass
class Prepared:
    """Everything a frame's parse needs that depends on the task only (computed once per task)."""

    start: np.ndarray
    ref_small: np.ndarray
    mask: np.ndarray
    blank: tuple[int, int, int, int]
    fills: list[tuple[str, np.ndarray]]
    """(name, blank card holding that element fully, uint8): "answer" first, then the distractors."""
    empty: np.ndarray
    cards: list[_Card]
    pal_names: list[str]
    pal: np.ndarray
    _small_e: np.ndarray = field(init=False)
    _small_d: np.ndarray = field(init=False)
    _dd: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        e = _down(self.empty)
        self._small_e = e
        self._small_d = np.stack([_down(c) - e for _, c in self.fills])  # K × h × w × 3
        self._dd = np.maximum((self._small_d ** 2).reshape(len(self.fills), -1).sum(axis=1), 1e-6)


@dataclass
class FrameParse:
    """The state one frame shows."""

    fill: str
    alpha: float
    fill_error: float
    gain: list[float]
    offset: list[float]
    cards: list[dict[str, Any]]
    """Per other card: index, read state, ratio (expected distance / nearest other), colour read."""
    alpha_map: np.ndarray | None = None
    """The opacity per pixel of the blank card (within ``ALPHA_SPREAD`` of ``alpha``), or None (uniform)."""
    frame: np.ndarray | None = None
    """The frame parsed (on the start image's grid): kept for the last few parsed frames only."""

    def wrong(self, ratio_max: float) -> list[str]:
        out = []
        for c in self.cards:
            if c["ratio"] > ratio_max:
                out.append(f"card {c['card'] + 1} reads as {c['read']}")
            if c["colour"] != c["own_colour"]:
                out.append(f"card {c['card'] + 1} reads as {c['colour']}")
        return out


def _down(img: np.ndarray) -> np.ndarray:
    import cv2

    h, w = img.shape[:2]
    return cv2.resize(img, (w // FILL_SCALE, h // FILL_SCALE), interpolation=cv2.INTER_AREA).astype(np.float32)


_CACHE: dict[str, Prepared] = {}


def prepare(state: dict[str, Any], cfg: RenderConfig) -> Prepared:
    """The task's :class:`Prepared` (cached per state and size: several videos of one task reuse it)."""
    key = json.dumps([state, cfg.width, cfg.height], sort_keys=True, default=str)
    got = _CACHE.get(key)
    if got is None:
        if len(_CACHE) >= 8:
            _CACHE.pop(next(iter(_CACHE)))
        got = _CACHE[key] = _prepare(state, cfg)
    return got


def _prepare(state: dict[str, Any], cfg: RenderConfig) -> Prepared:
    import cv2

    from vreason.synth.families.sequence.family import CARD_INSET, _card_candidates, cell_rect, render_row

    start = render_row(state, cfg)
    size = (cfg.width // 4, cfg.height // 4)
    ref_small = ft.small(start, size)
    x0, y0, x1, y1 = cell_rect(state, state["missing"])
    mask = np.ones(ref_small.shape[:2], bool)
    mask[max(0, y0 // 4 - 1):y1 // 4 + 2, max(0, x0 // 4 - 1):x1 // 4 + 2] = False
    blank = (x0, y0, x1, y1)
    fills = [(name, render_row(state, cfg, spec)[y0:y1, x0:x1].copy()) for name, spec in
             [("answer", state["answer"])] + [(f"distractor_{i}", d) for i, d in enumerate(state["distractors"])]]
    names = list(PALETTE)
    pal = np.array([PALETTE[n] for n in names], dtype=np.float32)
    cards = []
    for i, spec in enumerate(state["cells"]):
        if i == state["missing"]:
            continue
        labels, cands = _card_candidates(state, i)
        cx0, cy0, cx1, cy1 = cell_rect(state, i)
        cell = start[cy0:cy1, cx0:cx1].astype(np.float32)
        ink = np.abs(cell - np.array(spec["color"], np.float32)).max(axis=2) < 30
        ink = cv2.erode(ink.astype(np.uint8), np.ones((3, 3), np.uint8)) > 0
        ys, xs = np.nonzero(ink)
        want = names[int(np.argmin(np.abs(pal - np.array(spec["color"], np.float32)).sum(axis=1)))]
        cards.append(_Card(i, (slice(cy0 + CARD_INSET, cy1 - CARD_INSET), slice(cx0 + CARD_INSET, cx1 - CARD_INSET)),
                           list(spec["color"]), want, labels, cands, ys + cy0, xs + cx0))
    return Prepared(start, ref_small, mask, blank, fills, start[y0:y1, x0:x1].copy(), cards, names, pal)


def parse_frame(pre: Prepared, frame: np.ndarray) -> FrameParse:
    """The state ``frame`` (on the start image's grid, exposure not undone) shows."""
    from vreason.synth.families.sequence.family import _card_feat

    gain, off = ft.colour_fix(frame, pre.ref_small, pre.mask)
    cards = []
    for c in pre.cards:
        f = _card_feat(ft.apply_fix(frame[c.inside], gain, off), c.colour)
        dist = np.abs(c.cands - f[None]).mean(axis=1)
        other = float(dist[1:].min())
        ratio = float(dist[0]) / max(other, 1e-6)
        colour = c.want
        if len(c.ys) >= 12:
            mean = (frame[c.ys, c.xs].astype(np.float32).mean(axis=0) - off) / gain
            colour = pre.pal_names[int(np.argmin(np.linalg.norm(pre.pal - mean, axis=1)))]
        cards.append({"card": c.index, "read": c.labels[int(np.argmin(dist))], "ratio": round(ratio, 3),
                      "nearest_other": c.labels[1 + int(np.argmin(dist[1:]))], "colour": colour,
                      "own_colour": c.want})
    x0, y0, x1, y1 = pre.blank
    obs = _down(ft.apply_fix(frame[y0:y1, x0:x1], gain, off)) - pre._small_e
    k = len(pre.fills)
    alpha = np.clip((pre._small_d * obs[None]).reshape(k, -1).sum(axis=1) / pre._dd, 0.0, 1.0)
    err = np.abs(obs[None] - alpha[:, None, None, None] * pre._small_d).reshape(k, -1).mean(axis=1)
    best = int(np.argmin(err))
    a = float(alpha[best])
    if a < 0.5 / ALPHA_STEPS:  # no element shows (codec noise projects on every candidate a little)
        a = 0.0
    name = pre.fills[best][0] if a > 0 else "empty"
    amap = None
    if a > 0:
        import cv2

        d = pre._small_d[best]
        dd = (d * d).sum(axis=2)
        local = np.where(dd > CONTRAST_MIN ** 2, (d * obs).sum(axis=2) / np.maximum(dd, 1e-6), a)
        local = np.clip(local, max(0.0, a - ALPHA_SPREAD), min(1.0, a + ALPHA_SPREAD)).astype(np.float32)
        amap = cv2.resize(local, (x1 - x0, y1 - y0), interpolation=cv2.INTER_LINEAR)
    return FrameParse(name, round(a, 3), round(float(err[best]), 2), [round(float(v), 3) for v in gain],
                      [round(float(v), 2) for v in off], cards, amap)


def render_parse(pre: Prepared, p: FrameParse, cache: dict[tuple[str, int], np.ndarray]) -> np.ndarray:
    """The start image with the blank card holding the parsed element at the parsed opacity (as
    ``render_row`` blends it)."""
    q = int(round(p.alpha * ALPHA_STEPS))
    if p.fill == "empty":
        return pre.start
    x0, y0, x1, y1 = pre.blank
    if p.alpha_map is not None:
        full = dict(pre.fills)[p.fill].astype(np.float32)
        out = pre.start.copy()
        a = p.alpha_map[..., None]
        out[y0:y1, x0:x1] = (pre.empty * (1 - a) + full * a).astype(np.uint8)
        return out
    if q == 0:
        return pre.start
    got = cache.get((p.fill, q))
    if got is None:
        a = q / ALPHA_STEPS
        full = dict(pre.fills)[p.fill]
        got = pre.start.copy()
        got[y0:y1, x0:x1] = full if q >= ALPHA_STEPS else (
            pre.empty * (1 - a) + full.astype(np.float32) * a).astype(np.uint8)
        if len(cache) > 256:
            cache.clear()
        cache[(p.fill, q)] = got
    return got


def _faded_back(shown: dict[str, Any], p: FrameParse) -> str | None:
    """Why the blank card's element went back (None: it did not). An element fades in and stays: once shown
    above :data:`FADE_LOCK`, its opacity may not fall by more than :data:`FADE_BACK`, nor may another element (or
    the bare card) take its place — a blink of the answer, a wrong element swapped in. Below that the card may still
    change its mind (a faint start reads as any element). ``shown`` keeps the element and its peak."""
    level = p.alpha if p.fill != "empty" else 0.0
    peak = float(shown["peak"])
    if peak > FADE_LOCK:
        now = level if p.fill in (shown["fill"], "empty") else 0.0
        if peak - now > FADE_BACK:
            was = f"{shown['fill']} at {peak:.2f}"
            return (f"the blank card's {was} went back to {p.fill}" if p.fill not in (shown["fill"], "empty")
                    else f"the blank card's {was} faded back to {level:.2f}")
    if p.fill != "empty" and (p.fill == shown["fill"] or peak <= FADE_LOCK):
        shown["peak"] = max(peak, level) if p.fill == shown["fill"] else level
        shown["fill"] = p.fill
    return None


def make_scene(state: dict[str, Any], cfg: RenderConfig, records: dict[int, FrameParse] | None = None,
               ratio_max: float = 1.0) -> Any:
    """The family's :class:`vreason.verify.explain.Scene`; each frame's parse is stored in ``records``."""
    from vreason.verify.explain import Scene

    pre = prepare(state, cfg)
    cache: dict[tuple[str, int], np.ndarray] = {}
    rec = {} if records is None else records

    shown = {"fill": "empty", "peak": 0.0}  # the element the blank card has shown and its highest opacity

    def expect(i: int, frame: np.ndarray) -> tuple[np.ndarray, None] | str:
        p = parse_frame(pre, frame)
        p.frame = frame
        for j in [j for j, q in rec.items() if j < i - KEEP_FRAMES and q.frame is not None]:
            rec[j].frame = None
        rec[i] = p
        bad = p.wrong(ratio_max)
        back = _faded_back(shown, p)
        if bad or back:
            return "not a legal state: " + "; ".join(bad + ([back] if back else []))
        return render_parse(pre, p, cache), None

    final = render_parse(pre, FrameParse("answer", 1.0, 0.0, [], [], []), cache)
    return Scene(pre.start, expect, final=final)
