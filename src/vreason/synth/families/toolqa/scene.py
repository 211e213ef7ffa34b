"""Tool QA's scene (issue 24): every frame is the table as it started with each tool somewhere.

Each tool is found by its colour (the question predicates' colour test, :func:`vreason.verify.colour.named_spec`,
one HSV conversion per frame) and placed where its pixels' centroid says (less the offset its shape's centroid
has from its centre, measured on the start image); the frame is re-rendered with every tool there (tools drawn
over the slot, as the oracle does; the tool farthest from home drawn last: it is carried above the others).
The pixels of a tool are its colour's largest blob and the blobs within a tool's reach of it: a codec mixes the
colours along an edge (H.264's cyan triangle over the purple frame makes a blue fringe that is no part of the
blue tool 210 px away; counted, it moved that tool's centroid by 8 px). A tool partly hidden by a carried one is
placed where its visible part, re-rendered under the others, has the centroid seen (a few fixed-point steps
from its position in the last frame parsed before; a tool hidden whole stays there), not where the visible
part's own centroid lies. A tool that vanishes (fewer than a third of its pixels) makes the frame
unexplained, and so does a frame where more than one tool has left its place (the prompt: the other tools stay;
a tool nudged by a few pixels is a changed background, not a carried tool). A tool other than the right one that
has not left its place (within :data:`AWAY_PX`) is drawn at home, not where it was parsed: a nudge of 2-3 px is
then a residual along its edges (P1 ``shift_background`` by (±2, ±2) was explained on 5 of 6 draws, the tool
re-rendered where it stood; an honest camera's error is the re-alignment's to absorb, not the tool's).
Free pixels: a 3-px band along the edge of each tool away from home (motion blur, antialiasing of a moving
shape); nothing else — a second copy, a mark, a moved slot or a changed silhouette leaves a residual.
"""

from __future__ import annotations

from typing import Any

import numpy as np

TRAIL = 2
"""Frames after a tool passed over a pixel that a codec's trail of it is allowed for (judged per pixel only,
``explain_video(trail=...)``, as sliding's): decoded at half size, a P-frame left a tool's leading edge 2-3 px behind
the parsed place for one frame — 40-77 px over the 5×5 means (honest ``half_size``, easy, suite seeds 5018 and
637579840; 2 of 30 seeds failed before, 1 of 60 after: seed 5028, a 1-row lag over the per-pixel tolerance)."""
MIN_SHARE = 1 / 3
"""A tool showing fewer than this share of its pixels (at home, in the start image) is missing."""
BLUR_PX = 3
QUANT = 0.25
"""Parsed positions are rounded to this (px) so that equal states share one rendering."""
AWAY_PX = 4.0
"""A tool this far (px) from its home has left its place; only one tool may (the one carried to the slot).
An honest 0.85° camera turn left a tool at home 2.5 px off after the interpolated alignment (a shift of
3 px is below this: not caught)."""
HIDDEN = 0.9
"""A tool showing fewer than this share of its pixels, near another tool, is placed by its visible part."""
FIT_STEPS = 4


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

    link = 2 * TOOL_R * min(sx, sy)

    def pixels(m: np.ndarray) -> np.ndarray:
        """The tool's own blobs: the largest and those within ``link`` of it (not a codec's colour fringe)."""
        n, lab, stats, cents = cv2.connectedComponentsWithStats(m.astype(np.uint8), connectivity=8)
        if n <= 2:
            return m
        a = int(np.argmax(stats[1:, cv2.CC_STAT_AREA])) + 1
        keep = np.hypot(cents[:, 0] - cents[a, 0], cents[:, 1] - cents[a, 1]) <= link
        keep[0] = False
        return keep[lab]

    def at(pos: list[list[float]]) -> np.ndarray:
        """The table with tool j at pos[j], the tools drawn in order of their distance from home (the carried
        one over the others)."""
        order = sorted(range(len(tools)), key=lambda j: np.hypot(pos[j][0] - home[j][0], pos[j][1] - home[j][1]))
        st = {**state, "tools": [tools[j] for j in order], "right": order.index(state["right"])}
        return render(st, [[pos[j] for j in order]])[0]

    base = [centroid(m) for m in masks(start)]
    offset = [(hx * sx - cx, hy * sy - cy) for (hx, hy), (cx, cy, _) in zip(home, base, strict=True)]
    cache: dict[tuple, tuple[np.ndarray, np.ndarray | None]] = {}
    k = np.ones((2 * BLUR_PX + 1, 2 * BLUR_PX + 1), np.uint8)
    reach = int(np.ceil((TOOL_R + 2 * BLUR_PX + 2) * min(sx, sy)))
    parsed: dict[int, list[list[float]]] = {}

    def draw(key: tuple) -> tuple[np.ndarray, np.ndarray | None]:
        got = cache.get(key)
        if got is not None:
            return got
        pos = [[x * QUANT, y * QUANT] for x, y in key]
        img = at(pos)
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

    def unhide(j: int, seen: tuple[float, float], pos: list, prior: list[float] | None) -> list[float]:
        """Tool j, partly hidden: the position whose visible part, re-rendered under the others, has the
        centroid ``seen`` (fixed-point steps from the previous frame's position when it is near)."""
        p = list(prior) if prior is not None and np.hypot(prior[0] - pos[j][0], prior[1] - pos[j][1]) < TOOL_R \
            else list(pos[j])
        for _ in range(FIT_STEPS):
            cx, cy, n = centroid(pixels(masks(at([p if q == j else pos[q] for q in range(len(pos))]))[j]))
            if not n:
                return pos[j]
            dx, dy = (seen[0] - cx) / sx, (seen[1] - cy) / sy
            p = [p[0] + dx, p[1] + dy]
            if np.hypot(dx, dy) < QUANT:
                break
        return p

    def expect(i: int, frame: np.ndarray):
        pos: list[list[float] | None] = []
        seen, shown = [], []
        for j, m in enumerate(masks(frame)):
            cx, cy, n = centroid(pixels(m))
            pos.append([(cx + offset[j][0]) / sx, (cy + offset[j][1]) / sy] if n else None)
            seen.append((cx, cy))
            shown.append(n / base[j][2])
        before = [k for k in parsed if k < i]
        prior = parsed[max(before)] if before else None

        def near(j: int) -> bool:
            ref = pos[j] or (prior[j] if prior else None)
            return ref is not None and any(p is not None and np.hypot(ref[0] - p[0], ref[1] - p[1]) < 2 * TOOL_R
                                           for q, p in enumerate(pos) if q != j)

        hidden = [j for j in range(len(tools)) if shown[j] < HIDDEN and near(j)]
        for j in range(len(tools)):
            if shown[j] < MIN_SHARE and j not in hidden or pos[j] is None and not prior:
                return (f"the {tools[j]['colour']} {tools[j]['shape']} is missing ({round(shown[j] * base[j][2])} px "
                        f"of {base[j][2]})")
            if pos[j] is None and prior:
                pos[j] = prior[j]
        for j in hidden:
            if shown[j] > 0:
                pos[j] = unhide(j, seen[j], pos, prior[j] if prior else None)
        parsed[i] = pos
        away = [f"{tools[j]['colour']} {tools[j]['shape']}" for j, (x, y) in enumerate(pos)
                if np.hypot((x - home[j][0]) * sx, (y - home[j][1]) * sy) > AWAY_PX]
        if len(away) > 1:
            return f"more than one tool left its place: {', '.join(away)}"
        for j in range(len(tools)):  # a tool that is not carried stays at home: drawn there, a nudge is a residual
            if j != state["right"] and np.hypot((pos[j][0] - home[j][0]) * sx, (pos[j][1] - home[j][1]) * sy) \
                    <= AWAY_PX:
                pos[j] = list(home[j])
        return draw(tuple((int(round(x / QUANT)), int(round(y / QUANT))) for x, y in pos))

    final = render(state, carry(state, [(state["right"], slot_centre())], 2)[-1:])[0]
    return Scene(start, expect, final=final, trail=TRAIL)
