"""``classical:hog-hsv``: a weight-free image descriptor, the documented substitute for a learned
feature backbone (DINO / DINOv2) when no checkpoint is given and the caller opts in.

Recipe (deterministic, no randomness, no learned parameters):

1. the RGB uint8 crop is resized to 64×64 (OpenCV ``INTER_AREA``; a 1-pixel crop is upsampled);
2. **shape** — HOG of the grey image (scikit-image ``hog``: 9 orientations, 8×8-pixel cells, 2×2-cell
   blocks, ``L2-Hys`` block normalisation) → 1764 values, L2-normalised;
3. **colour** — a joint HSV histogram (OpenCV 8-bit HSV: 8 hue × 4 saturation × 4 value bins = 128),
   square-rooted (Hellinger), L2-normalised;
4. both halves are weighted 1/√2 and concatenated, so the descriptor has unit norm and the cosine of two
   descriptors is the mean of the shape cosine and the colour cosine.

A uniform crop has an all-zero HOG, so its descriptor is its colour histogram alone (renormalised).
It is *not* DINO: scores computed with it carry the name
``classical:hog-hsv`` in their evidence.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np
from skimage.feature import hog

from vreason.measure.base import ImageEmbedder

SIZE = 64
HOG_ORIENTATIONS = 9
HOG_CELL = 8
HOG_BLOCK = 2
HSV_BINS = (8, 4, 4)


def _as_rgb(image: np.ndarray) -> np.ndarray:
    a = np.asarray(image)
    if a.ndim == 2:
        a = np.repeat(a[:, :, None], 3, axis=2)
    if a.ndim != 3 or a.shape[2] not in (3, 4) or a.shape[0] == 0 or a.shape[1] == 0:
        raise ValueError(f"expected an H×W×3 RGB image, got shape {a.shape}")
    a = a[:, :, :3]
    if a.dtype != np.uint8:
        a = np.clip(a, 0, 255).astype(np.uint8)
    return np.ascontiguousarray(a)


def _unit(v: np.ndarray) -> np.ndarray:
    n = float(np.linalg.norm(v))
    return v / n if n > 0 else v


def hog_hsv(image: np.ndarray) -> np.ndarray:
    """The descriptor of one RGB image (see the module docstring)."""
    rgb = _as_rgb(image)
    interp = cv2.INTER_AREA if min(rgb.shape[:2]) >= SIZE else cv2.INTER_LINEAR
    small = cv2.resize(rgb, (SIZE, SIZE), interpolation=interp)
    grey = cv2.cvtColor(small, cv2.COLOR_RGB2GRAY).astype(np.float32) / 255.0
    shape = hog(grey, orientations=HOG_ORIENTATIONS, pixels_per_cell=(HOG_CELL, HOG_CELL),
                cells_per_block=(HOG_BLOCK, HOG_BLOCK), block_norm="L2-Hys", feature_vector=True)
    hsv = cv2.cvtColor(small, cv2.COLOR_RGB2HSV)
    hist = cv2.calcHist([hsv], [0, 1, 2], None, list(HSV_BINS), [0, 180, 0, 256, 0, 256]).ravel()
    colour = np.sqrt(hist / max(float(hist.sum()), 1.0))
    out = np.concatenate([_unit(shape.astype(np.float64)), _unit(colour.astype(np.float64))]) / np.sqrt(2.0)
    return _unit(out).astype(np.float32)


class HogHsvEmbedder(ImageEmbedder):
    """The ``classical:hog-hsv`` :class:`ImageEmbedder` (1892-d, unit norm)."""

    name = "classical:hog-hsv"
    dim = 1764 + int(np.prod(HSV_BINS))

    def __init__(self, batch_size: int = 16):
        self.batch_size = batch_size

    def embed(self, images: Sequence[np.ndarray]) -> np.ndarray:
        if len(images) == 0:
            return np.zeros((0, self.dim), np.float32)
        return np.stack([hog_hsv(im) for im in images])
