"""TiViBench's "Sudoku recognition" (appendix C.1 ①): the grid's digits compared cell by cell.

1. The grid: the largest convex quadrilateral contour (adaptive threshold → external contours →
   ``approxPolyDP``), searched inside the annotated ``region`` when there is one (its corners when no
   quadrilateral is found there), then a perspective warp to a square of ``CELL_PX`` px per cell
   (:mod:`vreason.verify.gridread`).
2. Cells (:class:`~vreason.verify.gridread.GridCells`): ink relative to the local paper; the grid lines
   found by morphological line detection and removed, so a warped or bent line reaching into a cell is not
   its content; a cell is **blank** when its remaining glyph covers less than ``gridread.BLANK_INK``,
   unreadable when its ink is no glyph (speckle in many pieces, a blot); otherwise its digit is recognised
   by OCR on the clean glyph crop (the non-blank cells of a row read as one strip of single characters,
   falling back to one call per cell when the strip does not split into one digit per cell). OpenCV's
   newspaper sudoku photo reads 81 of 81 cells (tests/test_sudoku_real_photo.py).
3. Score = fraction of cells equal to the solution (blank or unreadable counts as wrong); passed = all equal.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from vreason.verify import gridread
from vreason.verify import ocr as ocrmod
from vreason.verify.annotations import SudokuParams
from vreason.verify.checks import CheckEnv, CheckResult, register_check

CELL_PX = 48
"""Pixels per cell of the warped grid."""


def read_grid(grid: np.ndarray, n: int, engine) -> tuple[list[list[int | None]], dict[str, int]]:
    """Digits per cell of a warped grid (0 = blank, None = unreadable) and how many OCR calls it took."""
    cells = gridread.GridCells(grid, n, grid.shape[0] // n)
    out: list[list[int | None]] = [[0] * n for _ in range(n)]
    calls = {"strip": 0, "cell": 0}
    for r in range(n):
        filled = []
        for c in range(n):
            cell = cells.read(r, c)
            if cell.state == "blank":
                continue
            if cell.crop is not None:
                filled.append((c, cell.crop))
            else:
                out[r][c] = None  # speckle, a blot: not a digit (no OCR call)
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


def _digit(text: str, n: int) -> int | None:
    ds = [ch for ch in text if ch.isdigit()]
    return int(ds[0]) if len(ds) == 1 and 1 <= int(ds[0]) <= n else None


@register_check("sudoku", frames="last", needs=("ocr",))
def check_sudoku(frames, times, gt_end, params: SudokuParams, env: CheckEnv) -> CheckResult:
    if env.ocr is None:
        return CheckResult(None, reason=ocrmod.NO_OCR, backend="none")
    frame, bad = ocrmod.last_frame(frames)
    if frame is None:
        return CheckResult(False, 0.0, bad, backend=env.ocr.backend)
    sol = params.solution
    n = len(sol)
    corners, how = gridread.find_grid(frame, params.region)
    if corners is None:
        return CheckResult(False, 0.0, how, {"grid": None}, env.ocr.backend, frame.copy())
    grid = gridread.warp(frame, corners, n, CELL_PX)
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
