"""RISE-Video symmetry verifier: grid-cell agreement between the last frame and the GT image.

Same rules and constants as the released verifier (official-code.md §1.4):

* the last frame first goes through a JPEG file at quality 95 (the released pipeline saves it
  with ``cv2.imwrite`` and reads it back; ``jpeg=False`` skips this, e.g. for lossless input);
* the last frame is cropped of black borders (grey > 10), then both it and the GT image are
  resized to 800×500 (``INTER_AREA``) and split into a 10×16 grid (160 cells);
* a GT cell is coloured when the HSV of its mean colour falls in ``COLOR_RANGES[color_name]``;
* a predicted cell is judged on its central 80 %: white when S < 30 and V > 200, otherwise
  coloured (the colour itself is not checked, so Reasoning Alignment is decoupled from
  Temporal Consistency);
* accuracy = 1 − (FN + FP) / 160; score 0 below 0.85, 0.5 below 1, 1 when every cell agrees.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

SIZE = (800, 500)  # (width, height)
GRID = (10, 16)  # rows, cols
SHRINK = 0.8
WHITE_MAX_S = 30
WHITE_MIN_V = 200
BORDER_GREY = 10
PASS_THRESHOLD = 0.85

COLOR_RANGES: dict[str, tuple[tuple[tuple[int, int, int], tuple[int, int, int]], ...]] = {
    "red": (((0, 80, 80), (10, 255, 255)), ((160, 80, 80), (179, 255, 255))),
    "yellow": (((20, 80, 80), (35, 255, 255)),),
    "green": (((40, 80, 80), (85, 255, 255)),),
    "blue": (((90, 80, 80), (130, 255, 255)),),
    "purple": (((135, 80, 80), (160, 255, 255)),),
    "orange": (((5, 80, 80), (25, 255, 255)),),
}


@dataclass
class SymmetryResult:
    score: float
    accuracy: float
    fn: int
    fp: int
    gt_cells: np.ndarray = field(repr=False)
    pred_cells: np.ndarray = field(repr=False)
    color_name: str = ""
    jpeg: bool = True
    debug: np.ndarray | None = field(default=None, repr=False)
    """BGR image: the resized last frame with missing (red) and extra (blue) cells marked."""

    def details(self) -> dict[str, Any]:
        return {
            "verifier": "rise_symmetry",
            "accuracy": self.accuracy,
            "fn": self.fn,
            "fp": self.fp,
            "n_cells": int(self.gt_cells.size),
            "gt_colored": int(self.gt_cells.sum()),
            "pred_colored": int(self.pred_cells.sum()),
            "color_name": self.color_name,
            "jpeg_round_trip": self.jpeg,
            "cell_correct": (self.gt_cells == self.pred_cells).astype(int).tolist(),
        }


def _hsv_of(mean_rgb: np.ndarray) -> tuple[int, int, int]:
    import cv2

    px = np.clip(mean_rgb, 0, 255).astype(np.uint8).reshape(1, 1, 3)
    h, s, v = cv2.cvtColor(px, cv2.COLOR_RGB2HSV)[0, 0]
    return int(h), int(s), int(v)


def in_color(hsv: tuple[int, int, int], color_name: str) -> bool:
    ranges = COLOR_RANGES[color_name]
    return any(all(lo[k] <= hsv[k] <= hi[k] for k in range(3)) for lo, hi in ranges)


def crop_black_border(img_rgb: np.ndarray) -> np.ndarray:
    """Crop rows/columns whose pixels are all dark (grey ≤ 10); whole image if all dark."""
    import cv2

    grey = cv2.cvtColor(img_rgb, cv2.COLOR_RGB2GRAY)
    ys, xs = np.nonzero(grey > BORDER_GREY)
    if ys.size == 0:
        return img_rgb
    return img_rgb[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]


def _cells(img: np.ndarray, shrink: float) -> list[tuple[int, int, np.ndarray]]:
    rows, cols = GRID
    h, w = img.shape[:2]
    ch, cw = h / rows, w / cols
    out = []
    for r in range(rows):
        for c in range(cols):
            y0, y1, x0, x1 = r * ch, (r + 1) * ch, c * cw, (c + 1) * cw
            my, mx = (1 - shrink) / 2 * ch, (1 - shrink) / 2 * cw
            ys, ye = int(round(y0 + my)), int(round(y1 - my))
            xs, xe = int(round(x0 + mx)), int(round(x1 - mx))
            out.append((r, c, img[ys:max(ye, ys + 1), xs:max(xe, xs + 1)]))
    return out


def gt_grid(gt_rgb: np.ndarray, color_name: str) -> np.ndarray:
    import cv2

    img = cv2.resize(gt_rgb, SIZE, interpolation=cv2.INTER_AREA)
    grid = np.zeros(GRID, dtype=bool)
    for r, c, cell in _cells(img, 1.0):
        grid[r, c] = in_color(_hsv_of(cell.reshape(-1, 3).mean(axis=0)), color_name)
    return grid


def pred_grid(last_rgb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(coloured-cell grid, the cropped+resized frame) for the video's last frame."""
    import cv2

    img = cv2.resize(crop_black_border(last_rgb), SIZE, interpolation=cv2.INTER_AREA)
    grid = np.zeros(GRID, dtype=bool)
    for r, c, cell in _cells(img, SHRINK):
        _, s, v = _hsv_of(cell.reshape(-1, 3).mean(axis=0))
        grid[r, c] = not (s < WHITE_MAX_S and v > WHITE_MIN_V)
    return grid, img


def score_from_accuracy(acc: float) -> float:
    if acc < PASS_THRESHOLD:
        return 0.0
    if acc < 1.0 - 1e-12:
        return 0.5
    return 1.0


def jpeg_round_trip_rgb(image_rgb: np.ndarray, quality: int = 95) -> np.ndarray:
    """An RGB image as it reads back from a JPEG written by OpenCV at ``quality`` (its default, 95)."""
    import cv2

    from vreason.protocols.rise.maze import jpeg_round_trip

    bgr = cv2.cvtColor(np.ascontiguousarray(image_rgb[..., :3]), cv2.COLOR_RGB2BGR)
    return cv2.cvtColor(jpeg_round_trip(bgr, quality), cv2.COLOR_BGR2RGB)


def verify_symmetry(last_rgb: np.ndarray, gt_rgb: np.ndarray, color_name: str, *, jpeg: bool = True) -> SymmetryResult:
    """Score a last frame (RGB) against the GT image (RGB) for the task's colour.

    ``jpeg`` (default True, the released behaviour): pass the last frame through a JPEG round
    trip at quality 95 first, which moves cells whose mean sits at the white threshold.
    """
    import cv2

    color = color_name.lower().strip()
    if color not in COLOR_RANGES:
        raise ValueError(f"unknown symmetry colour {color_name!r} (known: {', '.join(COLOR_RANGES)})")
    gt = gt_grid(gt_rgb, color)
    pred, img = pred_grid(jpeg_round_trip_rgb(last_rgb) if jpeg else last_rgb)
    fn = int(np.count_nonzero(gt & ~pred))
    fp = int(np.count_nonzero(~gt & pred))
    acc = 1.0 - (fn + fp) / gt.size
    debug = cv2.cvtColor(img, cv2.COLOR_RGB2BGR)
    rows, cols = GRID
    ch, cw = SIZE[1] / rows, SIZE[0] / cols
    for r in range(rows):
        for c in range(cols):
            p0 = (int(c * cw), int(r * ch))
            p1 = (int((c + 1) * cw) - 1, int((r + 1) * ch) - 1)
            if gt[r, c] and not pred[r, c]:
                cv2.rectangle(debug, p0, p1, (0, 0, 255), 3)  # missing: red
            elif pred[r, c] and not gt[r, c]:
                cv2.rectangle(debug, p0, p1, (255, 0, 0), 3)  # extra: blue
    return SymmetryResult(score_from_accuracy(acc), acc, fn, fp, gt, pred, color, jpeg, debug)


def read_image_rgb(path: str) -> np.ndarray:
    """Read an image file as RGB uint8; ValueError naming the file when it cannot be read."""
    from PIL import Image

    try:
        with Image.open(path) as im:
            return np.asarray(im.convert("RGB"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: cannot read image ({type(exc).__name__}: {exc})") from exc
