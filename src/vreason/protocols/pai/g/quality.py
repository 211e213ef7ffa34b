"""PAI-Bench-G quality dimensions: the formulas, computed while the video streams by.

The released code runs VBench / VBench++ implementations vendored in ``predict/pbench`` (every frame of
the video); the seed's appendix A.2 writes the same dimensions as formulas. Features are unit-normalised.

* **subject consistency** (DINO) and **background consistency** (CLIP): for frames t = 1..T−1 (0-based),
  ½(⟨f₀, f_t⟩ + ⟨f_{t−1}, f_t⟩), averaged. The released code clamps each cosine at 0
  (``max(0.0, cos)``); the paper's formula does not (``formula="paper"``).
* **motion smoothness**: odd frames f₁, f₃, … reconstructed from their even neighbours by an
  interpolator; MAE (absolute difference of uint8 pixels, mean over pixels and channels) averaged over
  the reconstructed frames; score = 1 − MAE/255. A trailing odd frame without a right neighbour is not
  used (VBench interpolates the even frames only).
* **aesthetic quality**: LAION aesthetic score of each frame (0–10) / 10, mean over frames.
* **imaging quality**: MUSIQ score of each frame (0–100) / 100, mean over frames.
* **overall consistency**: video–text cosine (ViCLIP in the release; ``clip-mean`` substitute: CLIP
  text feature against the re-normalised mean of the frames' CLIP features).
* **i2v subject** (DINO) / **i2v background** (DreamSim in the release): released code (VBench++):
  0.4·max_t c(img, f_t) + 0.3·mean_t c(f_{t−1}, f_t) + 0.3·min_t c(f_{t−1}, f_t) with c = max(0, cos);
  the paper's formula (5)/(6) (``formula="paper"``): mean over t ≥ 1 of ½(⟨img, f_t⟩ + ⟨f_{t−1}, f_t⟩).

Each accumulator takes features batch by batch, so memory is bounded by the batch, never the video.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import numpy as np

Formula = Literal["released", "paper"]
Interpolator = Callable[[np.ndarray, np.ndarray], np.ndarray]
"""(previous even frame, next even frame) → the reconstructed middle frame (RGB uint8, same shape)."""


def _cos(a: np.ndarray, b: np.ndarray, clamp: bool) -> np.ndarray:
    c = np.sum(np.asarray(a, np.float64) * np.asarray(b, np.float64), axis=-1)
    return np.maximum(c, 0.0) if clamp else c


def unit(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, np.float64)
    n = np.linalg.norm(x, axis=-1, keepdims=True)
    return x / np.where(n > 0, n, 1.0)


class ConsistencyAcc:
    """Subject / background consistency over a feature stream."""

    def __init__(self, formula: Formula = "released"):
        self.clamp = formula == "released"
        self.first: np.ndarray | None = None
        self.prev: np.ndarray | None = None
        self.total = 0.0
        self.n = 0

    def add(self, feats: np.ndarray) -> None:
        feats = unit(feats)
        if not len(feats):
            return
        if self.first is None:
            self.first, self.prev, feats = feats[0], feats[0], feats[1:]
        if len(feats):
            prevs = np.vstack([self.prev[None], feats[:-1]])
            sims = 0.5 * (_cos(self.first[None], feats, self.clamp) + _cos(prevs, feats, self.clamp))
            self.total += float(sims.sum())
            self.n += len(feats)
            self.prev = feats[-1]

    def result(self) -> float | None:
        return self.total / self.n if self.n else None


class I2VAcc:
    """i2v subject / background against the input image's feature ``ref``."""

    def __init__(self, ref: np.ndarray, formula: Formula = "released"):
        self.ref = unit(np.asarray(ref).reshape(-1))
        self.formula = formula
        self.prev: np.ndarray | None = None
        self.conf_max = -np.inf
        self.consec: list[float] = []
        self.paper_total = 0.0
        self.count = 0

    def add(self, feats: np.ndarray) -> None:
        feats = unit(feats)
        clamp = self.formula == "released"
        for f in feats:
            conf = float(_cos(self.ref, f, clamp))
            self.conf_max = max(self.conf_max, conf)
            if self.prev is not None:
                cons = float(_cos(self.prev, f, clamp))
                self.consec.append(cons)
                self.paper_total += 0.5 * (conf + cons)
            self.prev = f
            self.count += 1

    def result(self) -> float | None:
        if not self.consec:
            return None
        if self.formula == "paper":
            return self.paper_total / len(self.consec)
        c = np.asarray(self.consec)
        return 0.4 * self.conf_max + 0.3 * float(c.mean()) + 0.3 * float(c.min())


def linear_interpolator(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The classical substitute for AMT: the per-pixel mean of the two neighbours, rounded (named
    ``linear`` in evidence). Exact for motion that is linear in intensity, blind to moving edges."""
    return np.rint((a.astype(np.float32) + b.astype(np.float32)) / 2.0).astype(np.uint8)


class SmoothnessAcc:
    """Motion smoothness over a frame stream (a window of three frames)."""

    def __init__(self, interpolate: Interpolator):
        self.interpolate = interpolate
        self.i = 0
        self.last_even: np.ndarray | None = None
        self.odd: np.ndarray | None = None
        self.maes: list[float] = []

    def add_frame(self, f: np.ndarray) -> None:
        if self.i % 2 == 0:
            if self.last_even is not None and self.odd is not None:
                mid = np.asarray(self.interpolate(self.last_even, f))
                if mid.shape != self.odd.shape:
                    raise ValueError(f"interpolator returned shape {mid.shape}, expected {self.odd.shape}")
                diff = np.abs(self.odd.astype(np.int16) - mid.astype(np.int16))
                self.maes.append(float(diff.mean()))
            self.last_even, self.odd = f, None
        else:
            self.odd = f
        self.i += 1

    def result(self) -> float | None:
        return 1.0 - float(np.mean(self.maes)) / 255.0 if self.maes else None


class MeanAcc:
    """Mean of per-frame values (aesthetic, imaging quality)."""

    def __init__(self) -> None:
        self.total = 0.0
        self.n = 0

    def add(self, values: np.ndarray) -> None:
        v = np.asarray(values, np.float64).reshape(-1)
        self.total += float(v.sum())
        self.n += v.size

    def result(self) -> float | None:
        return self.total / self.n if self.n else None


class MeanFeatureAcc:
    """Sum of unit features, for the ``clip-mean`` overall-consistency substitute."""

    def __init__(self) -> None:
        self.sum: np.ndarray | None = None

    def add(self, feats: np.ndarray) -> None:
        s = unit(feats).sum(axis=0)
        self.sum = s if self.sum is None else self.sum + s

    def cosine(self, text_feat: np.ndarray) -> float | None:
        if self.sum is None:
            return None
        return float(_cos(unit(self.sum), unit(np.asarray(text_feat).reshape(-1)), False))


def consistency(feats: np.ndarray, formula: Formula = "released") -> float | None:
    """Subject / background consistency of a (T, D) feature array (one-shot form of :class:`ConsistencyAcc`)."""
    acc = ConsistencyAcc(formula)
    acc.add(np.asarray(feats))
    return acc.result()


def i2v_consistency(ref: np.ndarray, feats: np.ndarray, formula: Formula = "released") -> float | None:
    acc = I2VAcc(ref, formula)
    acc.add(np.asarray(feats))
    return acc.result()


def motion_smoothness(frames, interpolate: Interpolator = linear_interpolator) -> float | None:
    acc = SmoothnessAcc(interpolate)
    for f in frames:
        acc.add_frame(np.asarray(f))
    return acc.result()


def longer_side_512(frame: np.ndarray) -> np.ndarray:
    """VBench's imaging-quality preprocessing ``'longer'``: the longer side resized to 512 when above it."""
    h, w = frame.shape[:2]
    if max(h, w) <= 512:
        return frame
    from PIL import Image

    s = 512.0 / max(h, w)
    return np.asarray(Image.fromarray(frame).resize((int(w * s), int(h * s)), Image.BILINEAR))


DIMENSIONS: tuple[str, ...] = ("subject_consistency", "background_consistency", "motion_smoothness",
                               "aesthetic_quality", "imaging_quality", "overall_consistency", "i2v_subject",
                               "i2v_background")

__all__ = ["DIMENSIONS", "ConsistencyAcc", "I2VAcc", "MeanAcc", "MeanFeatureAcc", "SmoothnessAcc", "consistency",
           "i2v_consistency", "linear_interpolator", "longer_side_512", "motion_smoothness", "unit"]
