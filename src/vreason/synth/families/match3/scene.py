"""The match-3 board's scene (issue 24: every frame explained): each frame is parsed into the scale (0..1) of
every line's tiles and re-rendered with the family's own :func:`render`.

Parsing: in every cell of an object, the pixels of that object's colour (within :data:`COLOUR_TOL` of it on
every channel) form a square; its side over the full tile's side is the object's scale in that cell, and the
object's scale is the median over its cells (a line shrinks as one). The re-rendering then explains the
frame only when every tile of a line has that scale — a tile left behind, a tile of another colour, a copy or a
mark elsewhere are unexplained pixels.

A legal state (else the frame is unexplained with the reason):

* the single tiles are whole (they never clear): they are always rendered at scale 1;
* a line never grows back (scale at most :data:`GROW_TOL` above the last explained frame's): an object that
  vanishes for a frame and returns, a jump back to an earlier state;
* every tile shown (scale ≥ :data:`PLACED_SCALE`) sits on its cell's centre within :data:`OFF_CENTRE_PX`: a tile
  moved with its cell by 2–3 px is under every residual's tolerance;
* lines clear one at a time in the task's order: a line has started to clear (scale < :data:`STARTED`) only
  when every line before it in the order is gone (scale < :data:`GONE`).

A tile shrunk below a codec's chroma block (side < :data:`CHROMA_PX`) loses its colour: 4:2:0 spreads its
chroma over the fill and keeps its luma, so a 4×2-px red square decodes as (112, 78, 90), no mix of red and
the fill, and the strict parse reads the line as gone while its dots are still there (match3's honest
hue-turned video at hard, seeds 531969374 and 846885253: a 26-px blob at frame 54). While a line is still
shrinking (its last explained scale in (0, 1)), a strict scale under :data:`MIN_SCALE` is read again without
the colour test — the share along the tile's colour alone — and taken when it is at most the last scale and
under a chroma block; a line once gone is never read that way.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from vreason.synth import draw
from vreason.synth.base import RenderConfig

COLOUR_TOL = 60
"""An object's pixels: every channel within this many levels of its colour (flicker and codec colour bleed;
the palette's colours are ≥ 110 apart on some channel)."""
GROW_TOL = 0.15
STARTED = 0.85
GONE = 0.2
RING_PX = 3
FAINT = 0.1
"""Mixing shares below this are codec noise on the fill, not a tile's edge."""
INSET = 3
"""The grey fill's inset in its cell (as the family draws it); a whole tile covers 0.8 of the cell."""
SNAP_WHOLE = 0.995
"""A parsed scale this close to 1 is a whole tile (within a pixel of its edge)."""
PLACED_SCALE = 0.3
"""A tile's square from this scale on has a centre to check (:data:`OFF_CENTRE_PX`)."""
OFF_CENTRE_PX = 1.5
"""A tile's square (whole or shrinking about its centre) sits on its cell's centre within this many px: a tile
(with its cell) moved 2–3 px passed every residual — its edges against the grey fill and the page are under 40
levels of luma and within the chroma's 3-px range (bench seed 21073)."""
MIN_SCALE = 0.02
"""Below this scale a line is gone (as the render draws it)."""
CHROMA_PX = 8
"""A tile of a smaller side may have lost its colour to chroma subsampling (8×8 JPEG/MJPEG chroma blocks at
4:2:0 cover 16×16 px; H.264's 4×4 chroma transforms 8×8 px)."""


def fill_band(state: dict[str, Any]) -> np.ndarray:
    """Pixels of the grey fill no tile ever covers (2 px inside the fill, 1 px outside a whole tile)."""
    from vreason.synth.families.match3.family import _grid
    from vreason.verify.explain import box_mask

    g = _grid(state)
    w, h = state["canvas"]
    outer, inner = [], []
    for r in range(g.rows):
        for c in range(g.cols):
            x0, y0, x1, y1 = g.rect(r, c)
            outer.append((x0 + INSET + 2, y0 + INSET + 2, x1 - INSET - 2, y1 - INSET - 2))
            x, y = g.centre(r, c)
            half = 0.4 * g.cell + 1
            inner.append((x - half, y - half, x + half, y + half))
    return box_mask((h, w), outer) & ~box_mask((h, w), inner)


def object_scales(frame: np.ndarray, state: dict[str, Any], band: np.ndarray | None = None,
                  colour_test: bool = True, offsets: list | None = None) -> np.ndarray:
    """Per object (lines then singles) the median over its cells of the scale of its coloured square
    (``colour_test=False``: every pixel's share along the object's colour counts, a mix of the two or not).
    ``offsets``: filled with ``(object, cell, dx, dy)`` of every cell whose square shows (scale ≥
    :data:`PLACED_SCALE`): how far (px) its centre lies from the cell's."""
    from vreason.synth.families.match3.family import CELL_FILL, _grid

    g = _grid(state)
    full = 0.8 * g.cell
    img = frame.astype(np.float32)
    band = fill_band(state) if band is None else band
    fill = img[band][::3]  # exposure, from the grey fill (none left between the tiles at a small render size:
    gain = np.median(fill, axis=0) / np.array(CELL_FILL, np.float32) if len(fill) else np.ones(3, np.float32)  # 1)
    gain = np.clip(gain, 0.5, 1.5)  # a blank frame: any parse; its rendering will not explain it
    bg = np.array(CELL_FILL, np.float32) * gain
    out = []
    for o in state["lines"] + state["singles"]:
        d = np.array(draw.rgb(o["colour"]), np.float32) * gain - bg
        per = []
        for r, c in o["cells"]:
            x0, y0, x1, y1 = g.rect(r, c)
            patch = img[y0 + INSET:y1 - INSET, x0 + INSET:x1 - INSET] - bg
            alpha = np.clip(patch @ (d / float(d @ d)), 0.0, 1.0)  # share of the tile's colour over the fill
            off = alpha < FAINT
            if colour_test:
                off |= np.abs(patch - alpha[..., None] * d).max(axis=2) > COLOUR_TOL  # not a mix of the two
            alpha[off] = 0.0
            mass = float(alpha.sum())
            per.append(np.sqrt(mass) / full)
            if offsets is not None and per[-1] >= PLACED_SCALE:
                ys, xs = np.mgrid[0:alpha.shape[0], 0:alpha.shape[1]]
                cx, cy = g.centre(r, c)
                offsets.append((len(out), (r, c), float((alpha * (xs + 0.5)).sum()) / mass - (cx - x0 - INSET),
                                float((alpha * (ys + 0.5)).sum()) / mass - (cy - y0 - INSET)))
        out.append(float(np.median(per)))
    s = np.clip(np.array(out), 0.0, 1.0)
    return np.where(s >= SNAP_WHOLE, 1.0, s)


def _cell(state: dict[str, Any]) -> float:
    from vreason.synth.families.match3.family import _grid

    return float(_grid(state).cell)


def _ring(state: dict[str, Any], lines: np.ndarray, shape: tuple[int, int]) -> np.ndarray | None:
    """Free pixels: a ring of ±:data:`RING_PX` around the edge of every tile of a line that is shrinking
    (codec blur and chroma subsampling smear a small saturated square; its edge moves between frames)."""
    from vreason.synth.families.match3.family import _grid
    from vreason.verify.explain import box_mask

    g = _grid(state)
    outer, inner = [], []
    for o, s in zip(state["lines"], lines, strict=True):
        if not 0.0 < s < 1.0:
            continue
        half = 0.4 * g.cell * s
        for r, c in o["cells"]:
            x, y = g.centre(r, c)
            outer.append((x - half - RING_PX, y - half - RING_PX, x + half + RING_PX, y + half + RING_PX))
            if half > RING_PX:
                inner.append((x - half + RING_PX, y - half + RING_PX, x + half - RING_PX, y + half - RING_PX))
    if not outer:
        return None
    return box_mask(shape, outer) & ~box_mask(shape, inner)


def scene(state: dict[str, Any], cfg: RenderConfig) -> Any:
    from vreason.synth.families.match3.family import clearing, render
    from vreason.verify.explain import Scene

    n_lines = len(state["lines"])
    n_obj = n_lines + len(state["singles"])
    order = list(state["order"])
    start = render(state, [[1.0] * n_obj])[0]
    final = render(state, [clearing(state, order, 2)[-1]])[0]
    seen: dict[int, np.ndarray] = {}
    band = fill_band(state)

    def expect(i: int, frame: np.ndarray) -> tuple[np.ndarray, np.ndarray | None] | str:
        placed: list = []
        s = object_scales(frame, state, band, offsets=placed)
        moved = [p for p in placed if max(abs(p[2]), abs(p[3])) > OFF_CENTRE_PX]
        if moved:
            k, cell, dx, dy = max(moved, key=lambda p: max(abs(p[2]), abs(p[3])))
            name = (state["lines"] + state["singles"])[k]["colour"]
            return f"a {name} tile sits ({dx:+.1f}, {dy:+.1f}) px off the centre of cell {list(cell)}"
        lines = np.where(s[:n_lines] < MIN_SCALE, 0.0, s[:n_lines])
        before = [k for k in seen if k < i]
        if before:
            prev = seen[max(before)]
            tiny = (lines == 0.0) & (prev > 0.0) & (prev < 1.0)
            if tiny.any():  # a tile under a chroma block: its colour may be gone, its luma is not
                loose = object_scales(frame, state, band, colour_test=False)[:n_lines]
                small = CHROMA_PX / (0.8 * _cell(state))
                take = tiny & (loose >= MIN_SCALE) & (loose <= prev) & (loose < small)
                lines = np.where(take, loose, lines)
            grew = np.flatnonzero(lines > prev + GROW_TOL)
            if grew.size:
                j = int(grew[0])
                return (f"the {state['lines'][j]['colour']} line grew back (scale {prev[j]:.2f} -> "
                        f"{lines[j]:.2f})")
        for q in range(1, len(order)):
            if lines[order[q]] < STARTED:
                early = [order[p] for p in range(q) if lines[order[p]] >= GONE]
                if early:
                    return (f"the {state['lines'][order[q]]['colour']} line clears before the "
                            f"{state['lines'][early[0]]['colour']} line is gone")
        seen[i] = lines
        sizes = list(lines) + [1.0] * (n_obj - n_lines)
        return render(state, [sizes])[0], _ring(state, lines, (cfg.height, cfg.width))

    return Scene(start, expect, final=final)
