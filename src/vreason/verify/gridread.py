"""Reading a printed grid of cells (a Sudoku) in a frame: our renderings and real photos alike.

1. **Grid.** The largest convex quadrilateral contour (adaptive threshold → external contours →
   ``approxPolyDP``) inside the searched area, warped to a square of ``cell`` px per cell.
2. **Ink.** Each pixel's darkness relative to its local paper (grey / a morphological closing of the grey
   image), so shading, vignetting and exposure changes cancel; a pixel is ink below :data:`INK_RATIO`.
   Show-through from the back of newspaper paper stays above it (OpenCV's sudoku photo: the darkest
   show-through in a blank cell 0.89, the palest printed digit's median 0.45).
3. **Grid lines.** Ink that forms a straight run at least one cell long (a morphological opening with a
   one-cell horizontal / vertical kernel after a small dilation across the line, so a line bent by paper
   curvature or a residual perspective error still fits) is a grid line; it is removed with a margin. A
   warped line that reaches into a cell is therefore never read as the cell's content.
4. **Cells.** What is left of the ink inside a cell is kept as the cell's glyph when a piece's centre lies
   in the cell's interior (line remnants at the border are dropped); the cell is blank when the glyph's
   ink is less than :data:`BLANK_INK` of the cell. The glyph is handed to OCR as a clean crop: black ink
   (by its darkness) on white.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vreason.verify import ocr as ocrmod

MIN_GRID_AREA = 0.04
"""The grid quadrilateral covers at least this fraction of the searched area."""
INK_RATIO = 0.72
"""A pixel darker than this fraction of its local paper brightness is ink (OpenCV's newspaper sudoku photo:
printed digits' median ≤ 0.45, show-through ≥ 0.89)."""
LINE_RATIO = 0.85
"""Grid lines are searched among pixels darker than this (thin printed lines are fainter than digits; a
line found at the looser level is removed whole instead of leaving dashes)."""
LINE_SLACK = 0.25
"""How far (in cells) a grid line may lie from its nominal position in the warped grid (a bent page, a
grid corner off by a few px)."""
BLANK_INK = 0.012
"""A cell whose glyph covers less than this fraction of the cell is blank (measured: printed digits in the
photo ≥ 7.2%, also rotated ±3°, zoomed 0.8, ±15% exposure, JPEG q=25; the suite's rendered digits ≥ 2.6%;
blank cells after line removal 0 in both)."""
MAX_GLYPH_PARTS = 6
"""A cell whose interior ink splits into more pieces than this is speckle (noise, a smear), not a digit."""
MAX_GLYPH_FRAC = 0.45
"""A cell whose interior is more than this fraction ink is a filled blot, not a digit."""


def order_corners(pts: np.ndarray) -> np.ndarray:
    """Four points as top-left, top-right, bottom-right, bottom-left."""
    pts = np.asarray(pts, np.float32).reshape(4, 2)
    s, d = pts.sum(axis=1), np.diff(pts, axis=1).ravel()
    return np.array([pts[np.argmin(s)], pts[np.argmin(d)], pts[np.argmax(s)], pts[np.argmax(d)]], np.float32)


def find_grid(frame: np.ndarray, region=None) -> tuple[np.ndarray | None, str]:
    """The grid's corners in frame pixels (tl, tr, br, bl) and how they were found, or ``(None, why)``.

    Searched inside ``region`` (a normalised box) when given; its corners are the answer when no
    quadrilateral is found there."""
    import cv2

    h, w = frame.shape[:2]
    ox = oy = 0
    area = frame
    if region is not None:
        ox, oy, x1, y1 = region.pixels(w, h)
        area = frame[oy:y1, ox:x1]
    g = ocrmod.grey(area)
    blk = max(11, (min(g.shape) // 20) | 1)
    th = cv2.adaptiveThreshold(np.ascontiguousarray(g), 255, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY_INV,
                               blk, 10)
    contours, _ = cv2.findContours(th, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    best, best_area = None, MIN_GRID_AREA * g.shape[0] * g.shape[1]
    for c in sorted(contours, key=cv2.contourArea, reverse=True)[:10]:
        a = cv2.contourArea(c)
        if a < best_area:
            break
        approx = cv2.approxPolyDP(c, 0.02 * cv2.arcLength(c, True), True)
        if len(approx) == 4 and cv2.isContourConvex(approx):
            _, _, bw, bh = cv2.boundingRect(approx)
            if 0.5 <= bw / max(bh, 1) <= 2.0:
                best, best_area = approx, a
                break
    if best is not None:
        return order_corners(best.reshape(4, 2) + [ox, oy]), "contour"
    if region is not None:
        x0, y0, x1, y1 = region.pixels(w, h)
        return np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], np.float32), "region"
    return None, "no quadrilateral grid found"


def warp(frame: np.ndarray, corners: np.ndarray, n: int, cell: int) -> np.ndarray:
    """The quadrilateral ``corners`` of ``frame`` as an upright square of ``n × cell`` px."""
    import cv2

    size = n * cell
    dst = np.array([[0, 0], [size, 0], [size, size], [0, size]], np.float32)
    m = cv2.getPerspectiveTransform(corners.astype(np.float32), dst)
    return cv2.warpPerspective(np.ascontiguousarray(frame[:, :, :3]), m, (size, size), flags=cv2.INTER_LINEAR,
                               borderMode=cv2.BORDER_REPLICATE)


def darkness(img: np.ndarray, cell: int) -> np.ndarray:
    """Each pixel's grey level relative to its local paper (1 = paper, 0 = black), float32. Light ink on a
    dark ground (the grey levels' long tail on the light side) is inverted first."""
    import cv2

    g = ocrmod.grey(img).astype(np.float32)
    lo, mid, hi = np.percentile(g, [2, 50, 98])
    if hi - mid > mid - lo:
        g = 255 - g
    k = max(5, (cell // 2) | 1)
    paper = cv2.morphologyEx(g, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_RECT, (k, k)))
    paper = cv2.GaussianBlur(paper, (0, 0), k / 3)
    return np.clip(g / np.maximum(paper, 1.0), 0.0, 1.0)


def line_mask(ink: np.ndarray, cell: int, core_only: bool = False) -> np.ndarray:
    """The grid lines among ``ink`` (bool): straight horizontal / vertical runs at least one cell long lying
    on the grid's line positions (within :data:`LINE_SLACK` of a multiple of ``cell``: a digit's stroke
    joined to a line is no line), widened by a margin of ``cell // 16 + 1`` px on each side (the bare runs,
    ``cell // 24`` px either side of the line's ink, with ``core_only``)."""
    import cv2

    m = ink.astype(np.uint8)
    t = max(1, cell // 24)
    rect = cv2.getStructuringElement
    horiz = cv2.morphologyEx(cv2.dilate(m, rect(cv2.MORPH_RECT, (1, 2 * t + 1))), cv2.MORPH_OPEN,
                             rect(cv2.MORPH_RECT, (cell, 1)))
    vert = cv2.morphologyEx(cv2.dilate(m, rect(cv2.MORPH_RECT, (2 * t + 1, 1))), cv2.MORPH_OPEN,
                            rect(cv2.MORPH_RECT, (1, cell)))
    lines = _on_grid(horiz, cell, axis=1) | _on_grid(vert, cell, axis=0)
    return lines if core_only else widen(lines, cell)


def widen(lines: np.ndarray, cell: int) -> np.ndarray:
    """Line runs widened by the margin of ``cell // 16 + 1`` px on each side."""
    import cv2

    pad = cell // 16 + 1
    return cv2.dilate(lines.astype(np.uint8), cv2.getStructuringElement(cv2.MORPH_RECT, (2 * pad + 1, 2 * pad + 1))) > 0


def _on_grid(runs: np.ndarray, cell: int, axis: int) -> np.ndarray:
    """The pieces of ``runs`` whose centre across the run (y for ``axis=1`` horizontal runs, x for vertical)
    is near a grid line position."""
    import cv2

    n, lab, _, cent = cv2.connectedComponentsWithStats(runs, connectivity=8)
    pos = cent[:, 1] if axis == 1 else cent[:, 0]
    off = np.abs(pos - np.round(pos / cell) * cell)
    keep = np.flatnonzero(off <= LINE_SLACK * cell)
    keep = keep[keep > 0]
    return np.isin(lab, keep) if len(keep) else np.zeros(runs.shape, bool)


@dataclass
class Cell:
    """One cell after line removal: ``state`` is ``"blank"``, ``"glyph"`` or ``"speckle"``; ``crop`` the
    clean glyph (black on white, one cell in size) when it is a glyph; ``ink`` the glyph's fraction."""

    state: str
    ink: float
    parts: int
    crop: np.ndarray | None = None


class GridCells:
    """A warped grid (``n × cell`` px square) split into cleaned cells."""

    def __init__(self, grid: np.ndarray, n: int, cell: int):
        self.n, self.cell = n, cell
        self.dark = darkness(grid, cell)
        self.ink = self.dark < INK_RATIO
        line_ink = self.dark < LINE_RATIO
        self.core = line_mask(line_ink, cell, core_only=True)
        self.lines = widen(self.core, cell)
        self.clean = self.ink & ~self.lines

    def read(self, r: int, c: int) -> Cell:
        import cv2

        s = self.cell
        y0, x0 = r * s, c * s
        m = self.clean[y0:y0 + s, x0:x0 + s].astype(np.uint8)
        n, lab, stats, cent = cv2.connectedComponentsWithStats(m, connectivity=8)
        lo, hi = 0.15 * s, 0.85 * s
        min_px = max(3, int(0.002 * s * s))
        keep = [i for i in range(1, n) if stats[i, cv2.CC_STAT_AREA] >= min_px
                and lo <= cent[i][0] <= hi and lo <= cent[i][1] <= hi]
        glyph = np.isin(lab, keep) if keep else np.zeros(m.shape, bool)
        if keep:
            glyph = self._regrow(glyph, y0, x0)
        frac = float(glyph.mean())
        if frac < BLANK_INK:
            return Cell("blank", frac, len(keep))
        if len(keep) > MAX_GLYPH_PARTS or frac > MAX_GLYPH_FRAC:
            return Cell("speckle", frac, len(keep))
        around = cv2.dilate(glyph.astype(np.uint8), np.ones((3, 3), np.uint8)) > 0
        d = self.dark[y0:y0 + s, x0:x0 + s]
        tone = np.where(around, np.clip((d - 0.1) / (INK_RATIO + 0.2), 0, 1), 1.0)
        crop = np.repeat((tone * 255).astype(np.uint8)[:, :, None], 3, axis=2)
        return Cell("glyph", frac, len(keep), crop)

    def _regrow(self, glyph: np.ndarray, y0: int, x0: int) -> np.ndarray:
        """The glyph given back the strokes the line margin cut off: ink connected to it, grown step by
        step up to a quarter cell, never onto a line itself (its bare runs). A handwritten 7's bar written
        close under a grid line is the 7's, not the line's (OpenCV's sudoku photo with handwritten digits:
        130/150 read before, 143/150 after)."""
        import cv2

        s = self.cell
        allowed = (self.ink & ~self.core)[y0:y0 + s, x0:x0 + s].astype(np.uint8)
        g = glyph.astype(np.uint8)
        k = np.ones((3, 3), np.uint8)
        for _ in range(s // 4):
            nxt = cv2.dilate(g, k) & allowed | g
            if np.array_equal(nxt, g):
                break
            g = nxt
        return g > 0
