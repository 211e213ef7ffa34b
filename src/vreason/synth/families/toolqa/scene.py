"""Tool QA's scene (issue 24): every frame is the table as it started with each tool somewhere.

Each tool is found by its colour (the question predicates' colour test, :func:`vreason.verify.colour.named_spec`,
one HSV conversion per frame) and placed where its pixels' centroid says (less the offset its shape's centroid
has from its centre, measured on the start image); the frame is re-rendered with every tool there (tools drawn
over the slot, as the oracle does). A tool that vanishes (fewer than a third of its pixels) makes the frame
unexplained, and so does a frame where more than one tool has left its place (the prompt: the other tools stay;
a tool nudged by a few pixels is a changed background, not a carried tool). Free pixels: a 3-px band along
the edge of each tool away from home (motion blur, antialiasing of a moving shape); nothing else — a second
copy, a mark, a moved slot or a changed silhouette leaves a residual.
"""

from __future__ import annotations

from typing import Any

import numpy as np

MIN_SHARE = 1 / 3
"""A tool showing fewer than this share of its pixels (at home, in the start image) is missing."""
BLUR_PX = 3
QUANT = 0.25
"""Parsed positions are rounded to this (px) so that equal states share one rendering."""
AWAY_PX = 4.0
"""A tool this far (px) from its home has left its place; only one tool may (the one carried to the slot).
An honest 0.85° camera turn left a tool at home 2.5 px off after the interpolated alignment (a shift of
3 px is below this: not caught)."""


def make_scene(state: dict[str, Any]) -> Any:
    import cv2

    from vreason.synth.families.toolqa.family import TOOL_R, carry, render, slot_centre
    from vreason.verify.colour import named_spec
    from vreason.verify.explain import Scene
    from vreason.verify.scene import hue_mask, to_hsv

    w, h = state["canvas"]
    sx, sy = w / 640.0, h / 360.0
    tools = state["tools"]
    home = [list(t["home"]) for t in tools]
    start = render(state, [home])[0]
    specs = []
    for t in tools:
        spec = named_spec(t["colour"])
        ref = cv2.cvtColor(np.array([[list(spec.rgb)]], np.uint8), cv2.COLOR_RGB2HSV)[0, 0]
        specs.append((float(ref[0]), spec.hue_tol, spec.min_sat, spec.min_val))

    def masks(img: np.ndarray) -> list[np.ndarray]:
        hsv = to_hsv(img)
        return [hue_mask(hsv, *s) for s in specs]

    def centroid(m: np.ndarray) -> tuple[float, float, int]:
        mo = cv2.moments(m.astype(np.uint8), binaryImage=True)
        n = int(mo["m00"])
        return (mo["m10"] / n, mo["m01"] / n, n) if n else (0.0, 0.0, 0)

    base = [centroid(m) for m in masks(start)]
    offset = [(hx * sx - cx, hy * sy - cy) for (hx, hy), (cx, cy, _) in zip(home, base, strict=True)]
    cache: dict[tuple, tuple[np.ndarray, np.ndarray | None]] = {}
    k = np.ones((2 * BLUR_PX + 1, 2 * BLUR_PX + 1), np.uint8)
    reach = int(np.ceil((TOOL_R + 2 * BLUR_PX + 2) * min(sx, sy)))

    def draw(key: tuple) -> tuple[np.ndarray, np.ndarray | None]:
        got = cache.get(key)
        if got is not None:
            return got
        pos = [[x * QUANT, y * QUANT] for x, y in key]
        img = render(state, [pos])[0]
        free = None
        for (x, y), hm, m in zip(pos, home, masks(img), strict=True):
            if np.hypot(x - hm[0], y - hm[1]) < 0.5:
                continue
            if free is None:
                free = np.zeros((h, w), bool)
            cx, cy = int(round(x * sx)), int(round(y * sy))
            y0, y1, x0, x1 = max(0, cy - reach), min(h, cy + reach), max(0, cx - reach), min(w, cx + reach)
            roi = m[y0:y1, x0:x1].astype(np.uint8)
            free[y0:y1, x0:x1] |= (cv2.dilate(roi, k) > 0) & ~(cv2.erode(roi, k) > 0)
        if len(cache) > 128:
            cache.clear()
        got = cache[key] = (img, free)
        return got

    def expect(i: int, frame: np.ndarray):
        key, away = [], []
        for j, m in enumerate(masks(frame)):
            cx, cy, n = centroid(m)
            if n < MIN_SHARE * base[j][2]:
                return f"the {tools[j]['colour']} {tools[j]['shape']} is missing ({n} px of {base[j][2]})"
            x, y = (cx + offset[j][0]) / sx, (cy + offset[j][1]) / sy
            if np.hypot((x - home[j][0]) * sx, (y - home[j][1]) * sy) > AWAY_PX:
                away.append(f"{tools[j]['colour']} {tools[j]['shape']}")
            key.append((int(round(x / QUANT)), int(round(y / QUANT))))
        if len(away) > 1:
            return f"more than one tool left its place: {', '.join(away)}"
        return draw(tuple(key))

    final = render(state, carry(state, [(state["right"], slot_centre())], 2)[-1:])[0]
    return Scene(start, expect, final=final)
