"""A colour/shape detector for rendered tasks (the classical substitute of an open-vocabulary detector).

Objects are found by HSV segmentation around a :class:`~vreason.verify.annotations.ColourSpec`
(hue within ``hue_tol`` of the reference's hue, saturation ≥ ``min_sat``, value ≥ ``min_val``; an
achromatic reference — saturation below 60 — matches unsaturated pixels within 45 levels of its value),
cleaned by a morphological opening and closing, then split into 8-connected components. Each object's
centre is the centre of its bounding box (the centre of a ring or a drawn box too, where a centroid of a
thin outline would drift with its gaps).

Frames are first cut out of letterbox/pillarbox bars (:func:`content`, the shared layer's rule in
:mod:`vreason.verify.scene`: dark bars, or paired bars of any colour with a visible edge), so normalised
coordinates refer to the picture a model drew, at any size. The HSV helpers are :mod:`vreason.verify.scene`'s;
the backend name recorded in evidence is :data:`BACKEND`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from vreason.verify import scene
from vreason.verify.annotations import ColourSpec

BACKEND = "classical:colour"
MIN_AREA = 0.0002
"""Smallest object, as a fraction of the frame's area (≈ 46 px at 640×360): codec specks drop out."""
ACHROMATIC_SAT = 60


@dataclass
class Blob:
    cx: float
    cy: float
    """Centre (of the bounding box), normalised to the frame: x from the left, y from the top."""
    area: float
    """Fraction of the frame's area."""
    box: tuple[float, float, float, float]
    """(x0, y0, x1, y1), normalised."""

    def as_json(self) -> dict:
        return {"x": round(self.cx, 4), "y": round(self.cy, 4), "area": round(self.area, 5),
                "box": [round(v, 4) for v in self.box]}


def to_rgb(frame: np.ndarray) -> np.ndarray:
    """An RGB uint8 H×W×3 array from a grey, RGBA or float frame."""
    arr = np.asarray(frame)
    if arr.ndim == 2:
        arr = np.repeat(arr[:, :, None], 3, axis=2)
    arr = arr[:, :, :3]
    if arr.dtype != np.uint8:
        arr = np.nan_to_num(arr.astype(np.float32), nan=0.0, posinf=255.0, neginf=0.0)
        if arr.size and float(arr.max()) <= 1.0:
            arr = arr * 255.0
        arr = np.clip(arr, 0, 255).astype(np.uint8)
    return np.ascontiguousarray(arr)


def valid_frame(frame: np.ndarray) -> str | None:
    """Why ``frame`` is not an image a check can read, or None."""
    arr = np.asarray(frame)
    if arr.ndim not in (2, 3) or (arr.ndim == 3 and arr.shape[2] not in (1, 3, 4)):
        return f"frame has an unusable shape {tuple(arr.shape)}"
    if arr.shape[0] < 8 or arr.shape[1] < 8:
        return f"frame is too small ({arr.shape[1]}×{arr.shape[0]})"
    return None


EDGE_PX = 2
"""Lines of the picture next to a bar that are cut with it: a blend of both where the frame was scaled (a bar
ending at x = 81.9 after a 860 → 640 decode) and the codec halved the chroma. Counting, 2026-11-28: a blue bar's
two blended columns, (56, 112, 210) and (76, 132, 230), made a 2×268 blob counted as a ninth coin."""


def content(frames: Sequence[np.ndarray], aspect: float | None = None) -> list[np.ndarray]:
    """RGB frames cut out of letterbox/pillarbox bars found over all of them (one crop for all), with the
    :data:`EDGE_PX` lines next to each bar. ``aspect``: the picture's (width / height), when known — bars of the
    margin's own colour are found from it (:func:`vreason.verify.letterbox.aspect_box`)."""
    rgb = [to_rgb(f) for f in frames]
    if not rgb:
        return rgb
    box = scene.content_box(rgb, aspect=aspect)
    if box is not None:
        h, w = rgb[0].shape[:2]
        x0, y0, x1, y1 = box
        e = EDGE_PX
        box = (x0 + e if x0 else 0, y0 + e if y0 else 0, x1 - e if x1 < w else w, y1 - e if y1 < h else h)
    return scene.crop(rgb, box)


LOCAL_WHITE_WINDOW = 0.125
"""The window of :func:`local_white`, as a fraction of the frame's shorter side."""
LOCAL_WHITE_FLOOR = 48
"""Where the local white (V) is below this, no paper is lit enough to judge by: the absolute ``min_val`` holds (a dark
scene's noise is not lifted to a colour)."""
MIN_CHROMA = 12
"""A coloured pixel's least chroma (max − min of its RGB levels) when the value is judged against the local light:
the saturation of a dim pixel is a ratio of small numbers."""


def local_white(value: np.ndarray, paper: np.ndarray | None = None) -> np.ndarray:
    """The picture's white level at each pixel (float32, ≥ 1): the brightest value of the ``paper`` pixels (all, when
    None) over a window of :data:`LOCAL_WHITE_WINDOW` of the shorter side, smoothed — a photo's light (a dim corner,
    a vignette, a lamp's fall-off) read off its own paper. Computed at a quarter of the size."""
    import cv2

    h, w = value.shape[:2]
    f = 4 if min(h, w) >= 64 else 1
    v = value if paper is None else np.where(paper, value, 0).astype(value.dtype)
    small = cv2.resize(v, (max(1, w // f), max(1, h // f)), interpolation=cv2.INTER_AREA)
    k = max(3, int(round(LOCAL_WHITE_WINDOW * min(h, w) / f)) | 1)
    white = cv2.blur(cv2.dilate(small, np.ones((k, k), np.uint8)), (k, k))
    return np.maximum(cv2.resize(white, (w, h), interpolation=cv2.INTER_LINEAR).astype(np.float32), 1.0)


def colour_mask(frame: np.ndarray, spec: ColourSpec, *, local_light: bool = False) -> np.ndarray:
    """Bool mask of the pixels of ``spec``'s colour in an RGB frame. ``local_light``: the least value
    ``spec.min_val`` is judged against the :func:`local_white` of the pixels not of the colour's hue (the paper
    round it), as the marker's own reflectance, and a chromatic pixel needs :data:`MIN_CHROMA` — for photos and
    rendered scenes whose light falls off (hue and saturation do not change with the light). Where that white is
    below :data:`LOCAL_WHITE_FLOOR` (no lit paper: a dark scene, a background of the colour's own hue), the absolute
    ``min_val`` holds."""
    import cv2

    rgb = to_rgb(frame)
    hsv = scene.to_hsv(rgb)
    ref = cv2.cvtColor(np.array([[list(spec.rgb)]], np.uint8), cv2.COLOR_RGB2HSV)[0, 0]
    if int(ref[1]) < ACHROMATIC_SAT:
        return (hsv[:, :, 1] < ACHROMATIC_SAT) & (np.abs(hsv[:, :, 2].astype(np.int16) - int(ref[2])) <= 45)
    if not local_light:
        return scene.hue_mask(hsv, float(ref[0]), spec.hue_tol, spec.min_sat, spec.min_val)
    hued = scene.hue_mask(hsv, float(ref[0]), 2 * spec.hue_tol, ACHROMATIC_SAT, 0)
    white = local_white(hsv[:, :, 2], ~hued)
    light = np.where(white >= LOCAL_WHITE_FLOOR, white, 255.0) / 255.0
    chroma = rgb.max(axis=2).astype(np.int16) - rgb.min(axis=2)
    return (scene.hue_mask(hsv, float(ref[0]), spec.hue_tol, spec.min_sat, 0)
            & (hsv[:, :, 2] >= spec.min_val * light) & (chroma >= MIN_CHROMA))


PRINT_GAP = 0.015
"""The widest print (a ruled line, a letter's stroke) bridged by :func:`through_print`, as a fraction of the frame's
size (the geometric mean of its sides), at least :data:`PRINT_GAP_MIN_PX`: 8 px at 563×558 (the newspaper sudoku's
thick lines are 4–5 px, its digits' strokes 5–6)."""
PRINT_GAP_MIN_PX = 5
"""A ruled line turned and compressed is 3–4 px wide at any frame size (sheet music 1024×134, 2026-12-07)."""
PRINT_DARKER = 0.8
"""Print seen through a colour is darker than the colour alone, relative to the local light (ink multiplies)."""


def through_print(frame: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """``mask`` (a colour's pixels) with the pixels where print under the colour shows through: darker than the
    colour's own median value (both relative to the :func:`local_white`, by :data:`PRINT_DARKER`), in the gaps a
    closing of the mask by :data:`PRINT_GAP` bridges. A line ruled across a bar drawn over a page does not cut it in
    two; paper showing between two bars (brighter than them) still separates them."""
    import cv2

    m = np.asarray(mask, bool)
    if not m.any():
        return m
    h, w = m.shape
    k = max(PRINT_GAP_MIN_PX, int(round(PRINT_GAP * np.sqrt(h * w))))
    value = to_rgb(frame).max(axis=2)
    rel = value.astype(np.float32) / np.maximum(local_white(value), LOCAL_WHITE_FLOOR)
    closed = cv2.morphologyEx(m.astype(np.uint8), cv2.MORPH_CLOSE, np.ones((k, k), np.uint8)) > 0
    return m | (closed & (rel < PRINT_DARKER * float(np.median(rel[m]))))


def near_rgb_on_page(frame: np.ndarray, rgb: Sequence[int], tol: int) -> np.ndarray:
    """Bool mask of the pixels of an RGB uint8 frame within ``tol`` levels, on every channel, of ``rgb`` as the
    page's exposure shows it: ``rgb`` scaled by the page's colour (the median of every 8th pixel, a mostly white
    canvas) over white. One OpenCV range test (a numpy int16 difference and ``max(axis=2)`` took ~8 ms a frame)."""
    import cv2

    page = np.median(frame[::8, ::8, :3].reshape(-1, 3).astype(np.int16), axis=0).astype(np.float32)
    col = (np.asarray(rgb, np.float32) * (page / 255.0)).astype(np.int16)
    lo, hi = (tuple(float(v) for v in col - tol), tuple(float(v) for v in col + tol))
    return cv2.inRange(np.ascontiguousarray(frame[..., :3]), lo, hi) > 0


def find(frame: np.ndarray, spec: ColourSpec, *, min_area: float = MIN_AREA, open_px: int | None = None,
         close_px: int | None = None, min_piece: int = 0, local_light: bool = False,
         print_through: bool = False) -> list[Blob]:
    """Objects of ``spec``'s colour in one RGB frame, largest first. The mask is opened, then closed, by
    ``open_px`` and ``close_px`` (default 3 each from 120 px up, else none): an opening of 3 also removes strokes
    thinner than 3 px, so a caller that reads thin marks passes ``open_px=1`` and drops specks instead by size:
    ``min_piece``, the pixels a connected piece of the colour needs before the closing (a stroke's pieces are
    long, noise's are a few pixels; closed without it, noise joins into blobs). ``local_light``: see
    :func:`colour_mask`; ``print_through``: the mask is :func:`through_print`'s (a colour drawn over print)."""
    import cv2

    rgb = to_rgb(frame)
    h, w = rgb.shape[:2]
    k = 3 if min(h, w) >= 120 else 1
    raw = colour_mask(rgb, spec, local_light=local_light)
    if print_through:
        raw = through_print(rgb, raw)
    if min_piece > 1:
        n, lab, stats, _ = cv2.connectedComponentsWithStats(raw.astype(np.uint8), connectivity=8)
        raw = (stats[:, cv2.CC_STAT_AREA] >= min_piece)[lab] & (lab > 0)
    mask = scene.clean(raw, open_px=k if open_px is None else open_px, close_px=k if close_px is None else close_px)
    n, _, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
    out = []
    for i in range(1, n):
        x, y, bw, bh, area = (int(v) for v in stats[i, :5])
        if area < min_area * h * w:
            continue
        out.append(Blob((x + bw / 2) / w, (y + bh / 2) / h, area / (h * w), (x / w, y / h, (x + bw) / w, (y + bh) / h)))
    out.sort(key=lambda b: -b.area)
    return out


def distance(a: tuple[float, float], b: tuple[float, float], width: int, height: int) -> float:
    """Distance of two normalised points in pixels of a ``width``×``height`` frame, over its diagonal."""
    return float(np.hypot((a[0] - b[0]) * width, (a[1] - b[1]) * height) / np.hypot(width, height))


def named_spec(name: str) -> ColourSpec:
    """The :class:`ColourSpec` of a named colour (:data:`vreason.verify.scene.PALETTE`, the suite's
    ``draw.COLOURS``)."""
    return ColourSpec(rgb=scene.PALETTE[name], name=name, hue_tol=6.0, min_sat=90, min_val=60)
