"""The connect board's scene (issue 24): every frame is the board with lines drawn along its grid paths.

Per aligned frame and pair colour, the colour's mask is sampled on the centre line of every grid segment (between
two neighbouring cell centres); each segment is drawn in full, or from one or both of its ends up to where the
colour stops (the line's round tip, half a line width past its end point). The board (grid and dots) is then
re-rendered with those lines by the family's own line drawing (:func:`vreason.synth.draw.thick_line`). Free: a
ring of :data:`RING_PX` around the rim of each growing tip (its position is read to a pixel or two).

A line never loses what it has drawn: a segment sample of a colour seen in an earlier frame and missing now
(beyond :data:`LOST_CELLS` cell per colour: a tip's codec flicker) makes the frame unexplained — a line that
vanishes for a frame is missing, whatever the family's tracker forgives. Whether the lines are the task's paths,
joined, drawn one after another and steadily is the tracker's job (:mod:`vreason.synth.families.connect.check`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from vreason.synth import draw
from vreason.synth.base import RenderConfig

RING_PX = 3.0
"""Half-width (px at the render size) of the free ring around a growing tip's rim."""
TIP_SLACK_PX = 2.0
"""A run from a segment's end no longer than the end's own cover (another segment's line width there, or the
dot) plus this is not a line into the segment."""
NEAR_LEVELS = 90
"""A pixel counts as the line's only this close (levels, every channel) to the line's colour: codec blur and
downscaling fill a tip's surroundings (a neck between it and a dot) with a pale tint of it."""
LOST_CELLS = 0.35
"""Most line (cells, per colour) drawn earlier that a frame may miss (a tip's flicker)."""
HELD_PX = 3
"""A line's sample is *drawn* when it lies this deep inside the line's colour, and *lost* later only when no pixel
of that colour lies within this distance of it: the edge of a line's width, where a perpendicular segment's
samples start, flickers with a shaking camera. Measured with an honest 2-px shake (every frame its own move,
H.264): the union of the samples seen over a video held up to 0.7 cell of such edge samples that one frame
missed — 7 of 18 shaken videos failed with the samples counted at the line's edge (twelfth session)."""


def segments(grid: draw.GridLayout) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Every grid segment between two neighbouring cells: ((r, c), (r', c'))."""
    out = []
    for r in range(grid.rows):
        for c in range(grid.cols):
            if c + 1 < grid.cols:
                out.append(((r, c), (r, c + 1)))
            if r + 1 < grid.rows:
                out.append(((r, c), (r + 1, c)))
    return out


def connect_scene(fam: Any, state: dict[str, Any], cfg: RenderConfig):
    """The :class:`~vreason.verify.explain.Scene` of a connect task (see the module)."""
    import cv2

    from vreason.synth.families.connect.family import DOT_R, LINE_W
    from vreason.verify.explain import Scene

    grid = draw.GridLayout.from_json(state["grid"])
    base = fam.board(state)
    h, w = base.shape[:2]
    segs = segments(grid)
    n_samp = int(np.ceil(grid.cell)) + 1
    step = grid.cell / (n_samp - 1)
    u = np.linspace(0.0, 1.0, n_samp)
    ends = np.array([[grid.centre(*a), grid.centre(*b)] for a, b in segs])  # (S, 2, 2) x, y
    px = ends[:, 0, None, :] + (ends[:, 1, None, :] - ends[:, 0, None, :]) * u[None, :, None]  # (S, L, 2)
    sx = np.clip(np.round(px[..., 0]).astype(np.int64), 0, w - 1)
    sy = np.clip(np.round(px[..., 1]).astype(np.int64), 0, h - 1)
    lw = LINE_W * grid.cell
    cap = max(1, int(round(lw))) / 2.0
    colours = [pr["colour"] for pr in state["pairs"]]
    labels_of = [draw.COLOUR_INDEX[c] for c in colours]
    rgbs = [draw.rgb(c) for c in colours]
    # per colour and segment end, how far the colour covers it without a line into the segment
    own = np.full((len(colours), len(segs), 2), cap + TIP_SLACK_PX)
    for k, pr in enumerate(state["pairs"]):
        dots = {tuple(pr["a"]), tuple(pr["b"])}
        for s, (a, b) in enumerate(segs):
            for e, cell in enumerate((a, b)):
                if cell in dots:
                    own[k, s, e] = DOT_R * grid.cell + TIP_SLACK_PX
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    kernel = np.ones((3, 3), np.uint8)
    dot_r = DOT_R * grid.cell

    held_k = np.ones((2 * HELD_PX + 1, 2 * HELD_PX + 1), np.uint8)

    def cover(frame: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(colours, S, L) bool each: every colour seen on each segment's centre-line samples; seen there at least
        :data:`HELD_PX` inside the colour (drawn); that colour within :data:`HELD_PX` of them (not lost)."""
        hsv = cv2.cvtColor(np.ascontiguousarray(frame[..., :3]), cv2.COLOR_RGB2HSV)
        lab = draw.hue_labels(hsv)
        out = np.zeros((len(colours), len(segs), n_samp), bool)
        deep, near = out.copy(), out.copy()
        on_line = frame[sy, sx, :3].astype(np.int16)
        for k, li in enumerate(labels_of):
            m = cv2.morphologyEx((lab == li).astype(np.uint8), cv2.MORPH_OPEN, kernel)
            col = np.array(rgbs[k], np.int16)
            out[k] = (m[sy, sx] > 0) & (np.abs(on_line - col).max(axis=-1) <= NEAR_LEVELS)
            deep[k] = out[k] & (cv2.erode(m, held_k)[sy, sx] > 0)
            near[k] = cv2.dilate(m, held_k)[sy, sx] > 0
        return out, deep, near

    def runs(cov: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Leading covered samples from each end, px: (colours, S, 2)."""
        full = cov.all(axis=2)
        first_gap = np.where(full, n_samp, np.argmax(~cov, axis=2))
        last_gap = np.where(full, n_samp, np.argmax(~cov[..., ::-1], axis=2))
        return np.stack([first_gap, last_gap], axis=2) * step, full

    index = {seg: s for s, seg in enumerate(segs)}
    cont = np.full((len(segs), 2), -1)  # the collinear segment beyond each end (that end is its other end)
    for s, (a, b) in enumerate(segs):
        d = (b[0] - a[0], b[1] - a[1])
        cont[s, 0] = index.get(((a[0] - d[0], a[1] - d[1]), a), -1)
        cont[s, 1] = index.get((b, (b[0] + d[0], b[1] + d[1])), -1)
    perp: dict[tuple[int, int], list[tuple[int, int]]] = {}  # (segment, end) -> the (segment, end)s across it
    for s, (a, b) in enumerate(segs):
        for e, cell in enumerate((a, b)):
            perp[(s, e)] = [(t, f) for t, seg in enumerate(segs) for f in (0, 1)
                            if seg[f] == cell and (seg[0][0] == seg[1][0]) != (a[0] == b[0])]

    def overshoot(k: int, s: int, e: int, run: np.ndarray) -> float:
        """How far (px) the line's end lies past joint ``e`` of segment ``s`` (negative: short of it), read from
        how far its round cap reaches into the segment beyond (or across, at the board's edge)."""
        if cont[s, e] >= 0:
            return float(np.clip(run[k, cont[s, e], 1 - e] - cap, -cap, TIP_SLACK_PX))
        across = max((float(run[k, t, f]) for t, f in perp[(s, e)]), default=cap)
        return -float(np.sqrt(max(cap * cap - min(across, cap) ** 2, 0.0)))

    def ring_at(free: np.ndarray, tip: np.ndarray) -> None:
        x0, x1 = max(0, int(tip[0] - cap - 5)), min(w, int(tip[0] + cap + 6))
        y0, y1 = max(0, int(tip[1] - cap - 5)), min(h, int(tip[1] + cap + 6))
        dist = np.hypot(xx[y0:y1, x0:x1] - tip[0], yy[y0:y1, x0:x1] - tip[1])
        free[y0:y1, x0:x1] |= np.abs(dist - cap) <= RING_PX

    tips: dict[tuple[int, int, int], tuple[tuple[int, int, int, int], np.ndarray, np.ndarray]] = {}

    def tip_drawings(k: int, s: int, e: int) -> tuple[tuple[int, int, int, int], np.ndarray, np.ndarray]:
        """The patch around the rim where colour ``k``'s line on segment ``s`` meets the dot at end ``e`` (x0, y0,
        x1, y1), the line drawn there with each tip distance :func:`touch` tries (n × patch, int16), and those
        distances: the same for every frame, drawn once."""
        key = (k, s, e)
        if key not in tips:
            u = (ends[s, 1 - e] - ends[s, e]) / grid.cell
            mid = ends[s, e] + u * (dot_r + cap / 2)
            half = int(np.ceil(cap + 6))
            x0, x1 = max(0, int(mid[0]) - half), min(w, int(mid[0]) + half + 1)
            y0, y1 = max(0, int(mid[1]) - half), min(h, int(mid[1]) + half + 1)
            ds = np.arange(dot_r - cap, dot_r + cap + 2.01, 0.5)
            drawn = []
            for d in ds:
                img = base[y0:y1, x0:x1].copy()
                tip = ends[s, e] + u * d - np.array([x0, y0])
                draw.thick_line(img, tuple(tip), tuple(tip + u * 4 * half), lw, rgbs[k])
                drawn.append(img)
            tips[key] = ((x0, y0, x1, y1), np.stack(drawn).astype(np.int16), ds)
        return tips[key]

    def touch(frame: np.ndarray, k: int, s: int, e: int) -> float:
        """Distance (px from the dot's centre) of the tip of colour ``k``'s line on segment ``s`` that meets the
        dot at end ``e``: of the tips from a cap inside the dot's rim (the line's full width meets the dot) to a
        cap and 2 px outside it (1/2 px apart), the one whose drawing matches the frame best around the rim (the
        centre-line samples cannot tell a tip touching the rim from one a pixel short: codec tint fills the gap,
        and a video decoded at half size blurs the neck beside the rim into the line's colour). The first of
        equally good tips wins."""
        (x0, y0, x1, y1), drawn, ds = tip_drawings(k, s, e)
        if not len(ds):
            return dot_r + cap / 2
        obs = frame[y0:y1, x0:x1, :3].astype(np.int16)
        err = np.abs(drawn - obs).reshape(len(ds), -1).sum(axis=1, dtype=np.int64)
        return float(ds[int(np.argmin(err))])

    def render(cov: np.ndarray, frame: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        img = base.copy()
        free = np.zeros((h, w), bool)
        run, full = runs(cov)
        for k in range(len(colours)):
            both = full[k] | ((run[k, :, 0] + run[k, :, 1] >= grid.cell - step) & (run[k] > 0).all(axis=1))
            part = (run[k] > own[k]) & ~both[:, None]
            degree: dict[tuple[int, int], int] = {}
            for s in np.flatnonzero(both):
                for cell in segs[s]:
                    degree[cell] = degree.get(cell, 0) + 1
            for s, e in zip(*np.nonzero(part), strict=True):
                degree[segs[s][e]] = degree.get(segs[s][e], 0) + 1
            for s in np.flatnonzero(both):
                pts = [ends[s, 0].copy(), ends[s, 1].copy()]
                for e in (0, 1):
                    cell = segs[s][e]
                    if own[k, s, e] > cap + TIP_SLACK_PX:  # a dot of the line's colour
                        d = touch(frame, k, s, e)
                        if d > dot_r - cap + 0.25:  # the tip touches the dot's rim, its full width not yet
                            pts[e] = ends[s, e] + (ends[s, 1 - e] - ends[s, e]) / grid.cell * d
                            ring_at(free, pts[e])
                        continue
                    if degree[cell] != 1:
                        continue  # a joint the line goes on from
                    # the line's end near this joint: its cap reaches run - cap past the joint into the segment
                    # beyond (a full segment's tip may stop up to a cap short of the joint)
                    out = (ends[s, e] - ends[s, 1 - e]) / grid.cell
                    pts[e] = ends[s, e] + out * overshoot(k, s, e, run)
                    ring_at(free, pts[e])
                draw.thick_line(img, tuple(pts[0]), tuple(pts[1]), lw, rgbs[k])
            for s, e in zip(*np.nonzero(part), strict=True):
                a, b = ends[s, e], ends[s, 1 - e]
                tip = a + (b - a) * (min(float(run[k, s, e]) - cap, grid.cell) / grid.cell)
                draw.thick_line(img, tuple(a), tuple(tip), lw, rgbs[k])
                ring_at(free, tip)
        return img, free

    start = base
    final = fam.render(state, state["solution"], 2)[-1]
    memory: dict[str, Any] = {"i": -1, "cur": None, "seen": np.zeros((len(colours), len(segs), n_samp), bool)}

    def expect(i: int, frame: np.ndarray) -> tuple[np.ndarray, np.ndarray | None] | str:
        if frame.shape[:2] != (h, w):
            return f"frame {i} is not at the render size"
        if i < memory["i"]:  # a new pass over the video
            memory["seen"][:] = False
            memory["cur"] = None
        elif i > memory["i"] and memory["cur"] is not None:
            memory["seen"] |= memory["cur"]
        cov, deep, near = cover(frame)
        memory["i"], memory["cur"] = i, deep
        lost = (memory["seen"] & ~near).sum(axis=(1, 2)) * step / grid.cell
        if lost.max() > LOST_CELLS:
            k = int(np.argmax(lost))
            return f"the {colours[k]} line lost {lost[k]:.2f} cell of what it had drawn (a line never vanishes)"
        img, free = render(cov, frame)
        return img, free

    return Scene(start, expect, final=final)
