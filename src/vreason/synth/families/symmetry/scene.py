"""Symmetry's scene (issue 24): every frame re-rendered from the cells it shows, and the camera undone for the
verifier's own cell reading.

The given half is the task's and never changes: it is rendered as the start image has it. Each cell of the open
half is read from the mean colour of its central 80% (one integral image per frame): the nearest point on the
line from white to one of the task's colours gives the colour and how far the cell is painted (a fade in; below
20% white, above 80% fully painted), and the cell is re-rendered so (filled inside its grid lines, as the
oracle paints). Free pixels: a 2-px ring along the outline of each painted cell (an honest painter may cover the
grid line or leave a thinner margin); nothing else. A cell partly painted, a dot, a mark, another colour or an
erased grid line leaves a residual.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from vreason.synth import draw

WHITE = np.array(draw.WHITE, np.float64)
FADE_LO, FADE_HI = 0.2, 0.8
"""A cell painted less than this far (along white → colour) is white, more is fully painted; between, a fade."""
ALPHA_STEP = 0.05
"""Fades are rendered at this resolution (equal states share one rendering)."""
RING_PX = 2


def open_cells(state: dict[str, Any], rows: int, cols: int) -> list[tuple[int, int]]:
    """The cells of the half the video paints (the half opposite the given one)."""
    half = range(cols // 2, cols) if state["side"] == "left" else range(cols // 2)
    return [(r, c) for r in range(rows) for c in half]


def inner_boxes(grid: draw.GridLayout, cells: Sequence[tuple[int, int]], shape: tuple[int, int],
                inset: float = 0.1) -> np.ndarray:
    """(K, 4) int boxes (x0, y0, x1, y1) of each cell's central part (``inset`` of the cell cut on each side)."""
    h, w = shape
    out = []
    for r, c in cells:
        x0, y0, x1, y1 = grid.rect(r, c)
        dx, dy = (x1 - x0) * inset, (y1 - y0) * inset
        xa, xb = int(round(x0 + dx)), max(int(round(x1 - dx)), int(round(x0 + dx)) + 1)
        ya, yb = int(round(y0 + dy)), max(int(round(y1 - dy)), int(round(y0 + dy)) + 1)
        out.append((min(xa, w - 1), min(ya, h - 1), min(xb, w), min(yb, h)))
    return np.array(out, np.int64).reshape(-1, 4)


def box_means(img: np.ndarray, box: np.ndarray) -> np.ndarray:
    """(K, 3) mean RGB of an image inside each box."""
    import cv2

    ii = cv2.integral(np.ascontiguousarray(img[..., :3])).astype(np.float64)
    x0, y0, x1, y1 = box.T
    s = ii[y1, x1] - ii[y0, x1] - ii[y1, x0] + ii[y0, x0]
    return s / np.maximum((x1 - x0) * (y1 - y0), 1)[:, None]


def given_cells(state: dict[str, Any], rows: int, cols: int) -> list[tuple[int, int]]:
    """The cells of the given half (never changed by an honest video)."""
    half = range(cols // 2) if state["side"] == "left" else range(cols // 2, cols)
    return [(r, c) for r in range(rows) for c in half]


def exposure_undone(means: np.ndarray, seen: np.ndarray, known: np.ndarray) -> np.ndarray:
    """``means`` (K, 3) brought back through the camera's exposure, per channel ``seen ≈ gain · known + offset``
    fitted on the given half's cells (``seen``: their means in the frame, ``known``: in the start image; white
    and the given colours). A channel whose known levels span < 40 or whose fit is implausible (gain outside
    0.6–1.6, offset beyond ±60) takes the offset alone. The frame is parsed before the explanation undoes the
    exposure: at −15% the white open half (216) read as a 25% fade of purple towards white."""
    out = np.empty_like(means, dtype=np.float64)
    for ch in range(3):
        x, y = known[:, ch].astype(np.float64), seen[:, ch].astype(np.float64)
        gain, off = 1.0, float(np.median(y - x))
        if float(x.max() - x.min()) >= 40:
            a, b = np.polyfit(x, y, 1)
            if 0.6 <= a <= 1.6 and -60 <= b <= 60:
                gain, off = float(a), float(b)
        out[:, ch] = (means[:, ch] - off) / gain
    return out


def read_cells(means: np.ndarray, colours: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per cell (rows of ``means``), the nearest task colour (index into ``colours``) and how far the cell is
    painted with it (0 white … 1 painted, snapped to 0 / 1 outside the fade band, quantised)."""
    d = colours - WHITE  # (C, 3)
    v = means - WHITE  # (K, 3)
    a = np.clip((v @ d.T) / (d * d).sum(axis=1)[None], 0.0, 1.0)  # (K, C)
    err = np.linalg.norm(v[:, None, :] - a[..., None] * d[None], axis=2)
    best = np.argmin(err, axis=1)
    alpha = a[np.arange(len(a)), best]
    alpha = np.where(alpha < FADE_LO, 0.0, np.where(alpha > FADE_HI, 1.0, np.round(alpha / ALPHA_STEP) * ALPHA_STEP))
    return best, alpha


def fading_cells(state: dict[str, Any], start: np.ndarray, frames: Sequence[np.ndarray], rows: int,
                 cols: int) -> list[tuple[int, int, float]]:
    """The open cells some of ``frames`` (render size, camera undone) show part-way painted, read as the scene reads
    them against the ``start`` image: (row, col, how far), the reading nearest half-way over the frames. The scene
    explains a fade as a passing state; held to the end it is no state of the task (a cell left at 27% lilac read
    white by the final check's HSV thresholds, bench seed 30005, case 1103668417)."""
    w, h = state["canvas"]
    grid = draw.GridLayout.from_json(state["grid"])
    cells = open_cells(state, rows, cols)
    box = inner_boxes(grid, cells, (h, w))
    colours = np.array([draw.rgb(c) for c in state["colours"]], np.float64)
    given_box = inner_boxes(grid, given_cells(state, rows, cols), (h, w))
    given_ref = box_means(start, given_box)
    worst: dict[int, float] = {}
    for f in frames:
        _, alpha = read_cells(exposure_undone(box_means(f, box), box_means(f, given_box), given_ref), colours)
        for k in np.flatnonzero((alpha > 0) & (alpha < 1)):
            a = float(alpha[k])
            if int(k) not in worst or abs(a - 0.5) < abs(worst[int(k)] - 0.5):
                worst[int(k)] = a
    return [(cells[k][0], cells[k][1], round(a, 2)) for k, a in sorted(worst.items())]


def make_scene(fam: Any, state: dict[str, Any], rows: int, cols: int) -> Any:
    """The family's :class:`vreason.verify.explain.Scene` (see the module)."""
    from vreason.verify.explain import Scene, box_mask

    w, h = state["canvas"]
    grid = draw.GridLayout.from_json(state["grid"])
    cells = open_cells(state, rows, cols)
    box = inner_boxes(grid, cells, (h, w))
    names = list(state["colours"])
    colours = np.array([draw.rgb(c) for c in names], np.float64)
    start = fam._base(state)
    cache: dict[tuple, tuple[np.ndarray, np.ndarray | None]] = {}

    def render(painted: tuple[tuple[int, int, int], ...]) -> tuple[np.ndarray, np.ndarray | None]:
        got = cache.get(painted)
        if got is None:
            img, rects = start.copy(), []
            for k, ci, a in painted:
                r, c = cells[k]
                col = np.round(WHITE + (a * ALPHA_STEP) * (colours[ci] - WHITE)).astype(np.uint8)
                draw.fill_cell(img, grid, r, c, col, inset=1)
                rects.append(grid.rect(r, c))
            free = None
            if rects:
                free = box_mask((h, w), [], 0)
                for x0, y0, x1, y1 in rects:
                    free |= box_mask((h, w), [(x0, y0, x1, y1)], RING_PX) & ~box_mask((h, w), [(x0, y0, x1, y1)],
                                                                                     -RING_PX - 1)
            if len(cache) > 256:
                cache.clear()
            got = cache[painted] = (img, free)
        return got

    given_box = inner_boxes(grid, given_cells(state, rows, cols), (h, w))
    given_ref = box_means(start, given_box)

    def expect(i: int, frame: np.ndarray):
        best, alpha = read_cells(exposure_undone(box_means(frame, box), box_means(frame, given_box), given_ref),
                                 colours)
        steps = np.round(alpha / ALPHA_STEP).astype(int)
        return render(tuple((int(k), int(best[k]), int(steps[k])) for k in np.flatnonzero(steps)))

    idx = {cell: k for k, cell in enumerate(cells)}
    final = render(tuple(sorted((idx[(r, c)], names.index(col), int(round(1 / ALPHA_STEP)))
                                for r, c, col in state["targets"])))[0]
    return Scene(start, expect, final=final)

