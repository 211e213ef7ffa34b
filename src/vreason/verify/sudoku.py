"""TiViBench's "Sudoku recognition" (appendix C.1 ①): the grid's digits compared cell by cell.

1. The grid: the largest convex quadrilateral contour (adaptive threshold → external contours →
   ``approxPolyDP``), searched inside the annotated ``region`` when there is one (its corners when no
   quadrilateral is found there), then a perspective warp to a square of ``CELL_PX`` px per cell.
2. Each cell's centre (``INSET`` of the cell trimmed on every side, away from the grid lines) is **blank**
   when it has no contrast or less than ``BLANK_INK`` ink, unreadable when its ink is no glyph (speckle in
more than a dozen pieces, or more than half the crop); otherwise its digit is recognised by OCR on the
   cell crop (the non-blank cells of a row read as one strip of single characters, falling back to one call
   per cell when the strip does not split into one digit per cell).
3. Score = fraction of cells equal to the solution (blank or unreadable counts as wrong); passed = all equal.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from vreason.data.tivibench_schema import SudokuParams
from vreason.verify import ocr as ocrmod
from vreason.verify.checks import CheckEnv, CheckResult, register_check

CELL_PX = 40
INSET = 0.18
BLANK_INK = 0.02
"""A cell centre with less than this fraction of ink is blank (honest digits measured ≥ 5.5%, blanks 0)."""
MIN_GRID_AREA = 0.04
"""The grid quadrilateral covers at least this fraction of the searched area."""


def order_corners(pts: np.ndarray) -> np.ndarray:
    """Four points as top-left, top-right, bottom-right, bottom-left."""
    pts = np.asarray(pts, np.float32).reshape(4, 2)
    s, d = pts.sum(axis=1), np.diff(pts, axis=1).ravel()
    return np.array([pts[np.argmin(s)], pts[np.argmin(d)], pts[np.argmax(s)], pts[np.argmax(d)]], np.float32)


def find_grid(frame: np.ndarray, region=None) -> tuple[np.ndarray | None, str]:
    """The grid's corners in frame pixels (tl, tr, br, bl) and how they were found, or ``(None, why)``."""
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


def warp(frame: np.ndarray, corners: np.ndarray, n: int) -> np.ndarray:
    import cv2

    size = n * CELL_PX
    dst = np.array([[0, 0], [size, 0], [size, size], [0, size]], np.float32)
    m = cv2.getPerspectiveTransform(corners.astype(np.float32), dst)
    return cv2.warpPerspective(np.ascontiguousarray(frame[:, :, :3]), m, (size, size), flags=cv2.INTER_LINEAR,
                               borderMode=cv2.BORDER_REPLICATE)


def cell_crop(grid: np.ndarray, r: int, c: int) -> np.ndarray:
    k = int(round(CELL_PX * INSET))
    return grid[r * CELL_PX + k:(r + 1) * CELL_PX - k, c * CELL_PX + k:(c + 1) * CELL_PX - k]


def _digit(text: str, n: int) -> int | None:
    ds = [ch for ch in text if ch.isdigit()]
    return int(ds[0]) if len(ds) == 1 and 1 <= int(ds[0]) <= n else None


def read_grid(grid: np.ndarray, n: int, engine) -> tuple[list[list[int | None]], dict[str, int]]:
    """Digits per cell (0 = blank, None = unreadable) and how many OCR calls it took."""
    out: list[list[int | None]] = [[0] * n for _ in range(n)]
    calls = {"strip": 0, "cell": 0}
    for r in range(n):
        filled = []
        for c in range(n):
            cc = cell_crop(grid, r, c)
            if ocrmod.ink_mask(cc).mean() < BLANK_INK:
                continue
            if ocrmod.glyph_like(cc, BLANK_INK):
                filled.append((c, cc))
            else:
                out[r][c] = None  # speckle, a smear: not a digit (no OCR call)
        if not filled:
            continue
        chars = engine.read_strip([cc for _, cc in filled])
        calls["strip"] += 1
        if chars is not None and all(_digit(ch, n) is not None for ch in chars):
            for (c, _), ch in zip(filled, chars, strict=True):
                out[r][c] = _digit(ch, n)
            continue
        for c, cc in filled:
            text, _ = engine.read(cc)
            calls["cell"] += 1
            out[r][c] = _digit(text, n)
    return out, calls


@register_check("sudoku", frames="last", needs=("ocr",))
def check_sudoku(frames, times, gt_end, params: SudokuParams, env: CheckEnv) -> CheckResult:
    if env.ocr is None:
        return CheckResult(None, reason=ocrmod.NO_OCR, backend="none")
    frame, bad = ocrmod.last_frame(frames)
    if frame is None:
        return CheckResult(False, 0.0, bad, backend=env.ocr.backend)
    sol = params.solution
    n = len(sol)
    corners, how = find_grid(frame, params.region)
    if corners is None:
        return CheckResult(False, 0.0, how, {"grid": None}, env.ocr.backend, frame.copy())
    grid = warp(frame, corners, n)
    read, calls = read_grid(grid, n, env.ocr)
    wrong = [[r, c, read[r][c], sol[r][c]] for r in range(n) for c in range(n) if read[r][c] != sol[r][c]]
    score = 1 - len(wrong) / (n * n)
    details: dict[str, Any] = {
        "grid_found_by": how, "corners": [[round(float(x), 1), round(float(y), 1)] for x, y in corners],
        "read": [" ".join("." if v == 0 else "?" if v is None else str(v) for v in row) for row in read],
        "wrong_cells": wrong[:81], "cells": n * n, "matching": n * n - len(wrong), "ocr_calls": calls,
    }
    reason = "" if not wrong else f"{len(wrong)} of {n * n} cells differ from the solution"
    return CheckResult(not wrong, float(score), reason, details, env.ocr.backend, _overlay(grid, read, sol))


def _overlay(grid: np.ndarray, read, sol) -> np.ndarray:
    import cv2

    img = grid.copy()
    n = len(sol)
    for r in range(n):
        for c in range(n):
            ok = read[r][c] == sol[r][c]
            x0, y0 = c * CELL_PX + 2, r * CELL_PX + 2
            cv2.rectangle(img, (x0, y0), (x0 + CELL_PX - 5, y0 + CELL_PX - 5), (0, 170, 0) if ok else (230, 0, 0),
                          1)
            if not ok:
                v = read[r][c]
                cv2.putText(img, "." if v == 0 else "?" if v is None else str(v), (x0 + 2, y0 + 11),
                            cv2.FONT_HERSHEY_SIMPLEX, 0.35, (230, 0, 0), 1, cv2.LINE_AA)
    return img
