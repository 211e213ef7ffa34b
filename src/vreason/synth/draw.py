"""Shared drawing and colour-detection helpers for the built-in task families.

Drawing is in RGB uint8 (OpenCV primitives on RGB arrays). Detection is in HSV (OpenCV's
H in [0, 180), S and V in [0, 255]) with ranges wide enough to survive H.264 re-encoding,
downscaling and a mild colour shift (about ±8 per channel or a few degrees of hue), yet
narrow enough that a colour blended half-way with white (as in a cross-fade) drops out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from vreason.verify.scene import PALETTE, crop, to_hsv
from vreason.verify.scene import content_box as _content_box

WHITE = (255, 255, 255)
BLACK = (20, 20, 20)
GRID_GREY = (190, 190, 190)

COLOURS: dict[str, tuple[int, int, int]] = PALETTE
"""The saturated colours the suite draws (the shared layer's :data:`vreason.verify.scene.PALETTE`)."""

# HSV hue bands (OpenCV units). Red wraps around 0.
_HUE_BANDS: dict[str, list[tuple[int, int]]] = {
    "red": [(0, 8), (166, 179)],
    "orange": [(9, 22)],
    "yellow": [(23, 37)],
    "green": [(40, 85)],
    "cyan": [(86, 102)],
    "blue": [(103, 128)],
    "purple": [(129, 165)],
}
MIN_SAT = 100
MIN_VAL = 70
BLACK_MAX_VAL = 70
WHITE_MAX_SAT = 40
WHITE_MIN_VAL = 190


def rgb(name: str) -> tuple[int, int, int]:
    return COLOURS[name]


def canvas(width: int, height: int, colour: tuple[int, int, int] = WHITE) -> np.ndarray:
    """A ``height``×``width`` RGB image of one colour: one row filled, then repeated (numpy's broadcast of a
    colour over the whole image took 2.4 ms at 640×360, 60× this; every re-rendered frame starts here)."""
    row = np.empty((1, width, 3), dtype=np.uint8)
    row[:] = colour
    return np.repeat(row, height, axis=0)


@dataclass(frozen=True)
class GridLayout:
    """A rows×cols grid of square cells centred in a width×height canvas."""

    rows: int
    cols: int
    x0: float
    y0: float
    cell: float

    @classmethod
    def fit(cls, rows: int, cols: int, width: int, height: int, margin: float = 0.06) -> GridLayout:
        avail_w, avail_h = width * (1 - 2 * margin), height * (1 - 2 * margin)
        cell = min(avail_w / cols, avail_h / rows)
        return cls(rows, cols, (width - cell * cols) / 2, (height - cell * rows) / 2, cell)

    def centre(self, r: float, c: float) -> tuple[float, float]:
        """(x, y) of cell (r, c)'s centre; fractional r, c interpolate."""
        return self.x0 + (c + 0.5) * self.cell, self.y0 + (r + 0.5) * self.cell

    def rect(self, r: int, c: int) -> tuple[int, int, int, int]:
        """Integer (x0, y0, x1, y1) of a cell, x1/y1 exclusive."""
        return (int(round(self.x0 + c * self.cell)), int(round(self.y0 + r * self.cell)),
                int(round(self.x0 + (c + 1) * self.cell)), int(round(self.y0 + (r + 1) * self.cell)))

    def cell_of(self, x: float, y: float) -> tuple[int, int]:
        return int(np.floor((y - self.y0) / self.cell)), int(np.floor((x - self.x0) / self.cell))

    def scaled(self, s: float) -> GridLayout:
        return GridLayout(self.rows, self.cols, self.x0 * s, self.y0 * s, self.cell * s)

    def to_json(self) -> dict:
        return {"rows": self.rows, "cols": self.cols, "x0": self.x0, "y0": self.y0, "cell": self.cell}

    @classmethod
    def from_json(cls, d: dict) -> GridLayout:
        return cls(int(d["rows"]), int(d["cols"]), float(d["x0"]), float(d["y0"]), float(d["cell"]))


def fill_cell(img: np.ndarray, grid: GridLayout, r: int, c: int, colour, inset: int = 0) -> None:
    x0, y0, x1, y1 = grid.rect(r, c)
    img[y0 + inset:y1 - inset, x0 + inset:x1 - inset] = colour


def grid_lines(img: np.ndarray, grid: GridLayout, colour=GRID_GREY, thickness: int = 1) -> None:
    import cv2

    x_end = int(round(grid.x0 + grid.cols * grid.cell))
    y_end = int(round(grid.y0 + grid.rows * grid.cell))
    for r in range(grid.rows + 1):
        y = int(round(grid.y0 + r * grid.cell))
        cv2.line(img, (int(round(grid.x0)), y), (x_end, y), colour, thickness)
    for c in range(grid.cols + 1):
        x = int(round(grid.x0 + c * grid.cell))
        cv2.line(img, (x, int(round(grid.y0))), (x, y_end), colour, thickness)


def disc(img: np.ndarray, xy: tuple[float, float], radius: float, colour) -> None:
    import cv2

    cv2.circle(img, (int(round(xy[0] * 16)), int(round(xy[1] * 16))), int(round(radius * 16)),
               colour, -1, lineType=cv2.LINE_AA, shift=4)


def thick_line(img: np.ndarray, a: tuple[float, float], b: tuple[float, float], width: float, colour) -> None:
    import cv2

    w = max(1, int(round(width)))
    cv2.line(img, (int(round(a[0])), int(round(a[1]))), (int(round(b[0])), int(round(b[1]))), colour, w)
    r = w / 2
    disc(img, a, r, colour)
    disc(img, b, r, colour)


def rect(img: np.ndarray, x0: float, y0: float, x1: float, y1: float, colour) -> None:
    h, w = img.shape[:2]
    xa, xb = max(0, int(round(x0))), min(w, int(round(x1)))
    ya, yb = max(0, int(round(y0))), min(h, int(round(y1)))
    if xb > xa and yb > ya:
        img[ya:yb, xa:xb] = colour


# ------------------------------------------------------------------ detection
def stack(frames: Sequence[np.ndarray], width: int, height: int) -> np.ndarray:
    """Resize every frame to width×height (INTER_AREA) and stack to (T, H, W, 3) uint8."""
    import cv2

    out = np.empty((len(frames), height, width, 3), dtype=np.uint8)
    for i, f in enumerate(frames):
        f = np.asarray(f)
        if f.ndim == 2:
            f = np.repeat(f[..., None], 3, axis=2)
        f = f[..., :3]
        if f.dtype != np.uint8:
            f = np.clip(f, 0, 255).astype(np.uint8)
        if f.shape[0] != height or f.shape[1] != width:
            f = cv2.resize(f, (width, height), interpolation=cv2.INTER_AREA)
        out[i] = f
    return out


def hsv_mask(hsv: np.ndarray, colour: str) -> np.ndarray:
    """Boolean mask of ``colour`` ('black', 'white' or a COLOURS name) on HSV arrays."""
    h, s, v = hsv[..., 0], hsv[..., 1], hsv[..., 2]
    if colour == "black":
        return v < BLACK_MAX_VAL
    if colour == "white":
        return (s < WHITE_MAX_SAT) & (v > WHITE_MIN_VAL)
    if colour not in _HUE_BANDS:
        raise KeyError(f"unknown colour {colour!r} (known: black, white, {', '.join(_HUE_BANDS)})")
    hue = np.zeros(h.shape, dtype=bool)
    for lo, hi in _HUE_BANDS[colour]:
        hue |= (h >= lo) & (h <= hi)
    return hue & (s >= MIN_SAT) & (v >= MIN_VAL)


COLOUR_INDEX = {name: i + 1 for i, name in enumerate(_HUE_BANDS)}
"""Label of each colour in :func:`hue_labels` (0 = none)."""


def hue_labels(hsv: np.ndarray) -> np.ndarray:
    """Per-pixel colour label (uint8, :data:`COLOUR_INDEX`; 0 = unsaturated, dark or no band)."""
    lut = np.zeros(256, np.uint8)
    for name, bands in _HUE_BANDS.items():
        for lo, hi in bands:
            lut[lo:hi + 1] = COLOUR_INDEX[name]
    lab = lut[hsv[..., 0]]
    lab[(hsv[..., 1] < MIN_SAT) | (hsv[..., 2] < MIN_VAL)] = 0
    return lab


def mask_for(rgb_frames: np.ndarray | Sequence[np.ndarray], colour: str) -> np.ndarray:
    """Boolean mask(s) of ``colour`` for one RGB frame (H, W, 3) or a stack (T, H, W, 3)."""
    arr = np.asarray(rgb_frames) if not isinstance(rgb_frames, np.ndarray) else rgb_frames
    return hsv_mask(to_hsv(arr.astype(np.uint8, copy=False)), colour)


def classify_hue(hsv_pixel_mean: np.ndarray) -> str | None:
    """Name of the colour band an HSV triple falls in (None when unsaturated/dark)."""
    h, s, v = (float(x) for x in hsv_pixel_mean)
    if s < MIN_SAT * 0.6 or v < MIN_VAL:
        return None
    for name, bands in _HUE_BANDS.items():
        if any(lo <= h <= hi for lo, hi in bands):
            return name
    return None


def open_mask(mask: np.ndarray, k: int = 3) -> np.ndarray:
    """Morphological opening of one 2-D mask (removes specks such as noise)."""
    import cv2

    if k <= 1:
        return mask
    kernel = np.ones((k, k), np.uint8)
    return cv2.morphologyEx(mask.astype(np.uint8), cv2.MORPH_OPEN, kernel).astype(bool)


def largest_blob(mask: np.ndarray, min_area: float = 1) -> tuple[float, float, float] | None:
    """(cx, cy, area) of the largest 8-connected component, or None if below ``min_area``."""
    import cv2

    m = mask.astype(np.uint8)
    if not m.any():
        return None
    n, _, stats, cents = cv2.connectedComponentsWithStats(m, connectivity=8)
    if n <= 1:
        return None
    i = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    area = float(stats[i, cv2.CC_STAT_AREA])
    if area < min_area:
        return None
    return float(cents[i][0]), float(cents[i][1]), area


def blobs(mask: np.ndarray, min_area: float = 1) -> list[dict]:
    """Every 8-connected component with area ≥ ``min_area``: centre, bbox and area."""
    import cv2

    m = mask.astype(np.uint8)
    if not m.any():
        return []
    n, _, stats, cents = cv2.connectedComponentsWithStats(m, connectivity=8)
    out = []
    for i in range(1, n):
        a = float(stats[i, cv2.CC_STAT_AREA])
        if a >= min_area:
            x, y, w, h = (int(stats[i, k]) for k in (cv2.CC_STAT_LEFT, cv2.CC_STAT_TOP,
                                                    cv2.CC_STAT_WIDTH, cv2.CC_STAT_HEIGHT))
            out.append({"cx": float(cents[i][0]), "cy": float(cents[i][1]), "area": a,
                        "x0": x, "y0": y, "x1": x + w, "y1": y + h})
    return out


def frame_components(masks: np.ndarray, connectivity: int = 8) -> list[np.ndarray]:
    """Connected components of every frame of a (T, H, W) mask stack, labelled in one call.

    Returns per frame an int array (k, 5) of ``x0, y0, w, h, area`` (y relative to the frame),
    largest first.
    """
    import cv2

    T, h, w = masks.shape
    if T == 0:
        return []
    padded = np.zeros((T, h + 1, w), np.uint8)  # a blank row between frames keeps them apart
    padded[:, :h] = masks
    n, _, stats, _ = cv2.connectedComponentsWithStats(padded.reshape(T * (h + 1), w), connectivity=connectivity)
    out: list[list[np.ndarray]] = [[] for _ in range(T)]
    st = stats[1:n]
    frame_of = st[:, cv2.CC_STAT_TOP] // (h + 1)
    order = np.argsort(-st[:, cv2.CC_STAT_AREA], kind="stable")
    for i in order:
        row = st[i, :5].copy()
        row[1] -= frame_of[i] * (h + 1)
        out[int(frame_of[i])].append(row)
    return [np.array(o, dtype=np.int64).reshape(-1, 5) for o in out]


def polyline(img: np.ndarray, pts: Sequence[tuple[float, float]], colour, thickness: int = 2) -> None:
    import cv2

    if len(pts) >= 2:
        arr = np.round(np.asarray(pts, dtype=np.float64)).astype(np.int32).reshape(-1, 1, 2)
        cv2.polylines(img, [arr], False, colour, thickness)
    elif len(pts) == 1:
        disc(img, pts[0], thickness + 1, colour)


def hold(frame: np.ndarray, n: int) -> list[np.ndarray]:
    return [frame] * max(0, n)


def ease(t: float) -> float:
    """Smooth-step easing on [0, 1]."""
    t = min(1.0, max(0.0, t))
    return t * t * (3 - 2 * t)


# ------------------------------------------------------------------ framing and time
def content_box(frames: Sequence[np.ndarray], samples: int = 6,
                aspect: float | None = None) -> tuple[int, int, int, int] | None:
    """(x0, y0, x1, y1) of the picture inside letterbox/pillarbox bars, or None when there are none: the shared
    layer's one rule (:func:`vreason.verify.scene.content_box`: dark bars, or paired bars of any colour with a
    visible edge; the picture keeps ≥ 25% of each side)."""
    return _content_box(frames, samples=samples, aspect=aspect)


def crop_letterbox(frames: Sequence[np.ndarray],
                   aspect: float | None = None) -> tuple[list[np.ndarray], list[int] | None]:
    """Frames with letterbox bars cut away (see :func:`content_box`; ``aspect``: the picture's, when known) and
    the box used."""
    box = content_box(frames, aspect=aspect)
    if box is None:
        return list(frames), None
    return crop(frames, box), list(box)


END_HOLD_S = 0.15
"""The end state must hold over the final END_HOLD_S seconds of a video (always at least its last frame)."""


def end_window(t: np.ndarray, seconds: float = END_HOLD_S) -> np.ndarray:
    """Indices of the frames in the last ``seconds`` of a video with frame times ``t`` (at least the last)."""
    if len(t) == 0:
        return np.zeros(0, dtype=int)
    return np.flatnonzero(t >= t[-1] - seconds - 1e-9)
