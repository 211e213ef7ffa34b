"""PAI-Bench-C formulas, as the released ``conditional_generation`` code computes them (notes §5.3).

Pure numpy / OpenCV / scikit-image / scipy; no model. Frames stream through accumulators, so memory is
bounded by one frame pair (and the depth batch), not by the video.

* **Alignment** — the prediction is trimmed to the ground truth's frame count (at most 121 frames read
  from either) and resized to its size: ``INTER_LINEAR`` when the ground truth is taller (upsampling),
  ``INTER_AREA`` otherwise. A shorter prediction compares its frames only (the released ``min_frames``).
* **Blur SSIM** — ``cv2.bilateralFilter(d=30, sigmaColor=150, sigmaSpace=100)`` on both frames;
  ``skimage.metrics.structural_similarity(gt, pred, data_range=gt.max()-gt.min(), full=True,
  channel_axis=2)``; the mean of the *full* map (borders included, as the released code averages the
  map, not skimage's cropped mean); the mean over frames. ``blur_mse``: mean squared difference of the
  blurred frames in float (the released code subtracts uint8 arrays, which wraps around; it is not in
  the released ``global`` metrics).
* **Canny** — ``cv2.Canny`` with a preset's thresholds on the RGB frame as the released code passes it
  (``canny_gray`` converts RGB→GRAY first, the fork's fix); TP / FP / FN pooled over every pixel of
  every frame; precision, recall, F1 (0 when a denominator is 0). The released code raises — so the
  video gets no Canny numbers — when either edge video is all 0 or all 1; :class:`CannyCounts` reports
  that as ``degenerate``.
* **Depth si-RMSE** — per frame, valid = gt > 0 and pred > 0; pred scaled by median(gt)/median(pred);
  RMSE of the residual, each residual clipped to ±``cap`` (10, the newer code; ``None`` = the older
  uncapped code); frames without a valid pixel count as 0 in the mean over frames (released).
* **Segmentation** — phrase masks (instances unioned per phrase), IoU matrix over the whole T×H×W
  volume, Hungarian matching on 1 − IoU (``scipy.optimize.linear_sum_assignment``); ``seg_m_iou`` = mean
  of matched IoUs > 0.1, ``seg_recall`` = their share of the matches.
* **Diversity** — LPIPS of ordered pairs i ≠ j of the K caption variants, mean over frames then pairs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

MAX_FRAMES = 121
BILATERAL = {"d": 30, "sigma_color": 150.0, "sigma_space": 100.0}
CANNY_PRESETS: dict[str, tuple[int, int]] = {
    "very_low": (20, 50), "low": (50, 100), "medium": (100, 200), "high": (200, 300), "very_high": (300, 400),
}
SEG_IOU_THRESHOLD = 0.1


# ------------------------------------------------------------------ frames
def iter_rgb(path: str, limit: int | None = MAX_FRAMES) -> Iterator[np.ndarray]:
    """RGB uint8 frames of a video, decoded one at a time (damage raises ``VideoError``)."""
    from vreason.frames.video import iter_frames

    return iter_frames(path, limit=limit)


def fit_frame(pred: np.ndarray, height: int, width: int) -> np.ndarray:
    """``pred`` at the ground truth's size: INTER_LINEAR when the ground truth is taller, else INTER_AREA."""
    import cv2

    if pred.shape[:2] == (height, width):
        return pred
    interp = cv2.INTER_LINEAR if height > pred.shape[0] else cv2.INTER_AREA
    return cv2.resize(pred, (width, height), interpolation=interp)


@dataclass
class PairInfo:
    gt_frames: int = 0
    pred_frames: int = 0
    compared: int = 0
    gt_size: tuple[int, int] = (0, 0)
    pred_size: tuple[int, int] = (0, 0)


def paired_frames(gt: Iterator[np.ndarray], pred: Iterator[np.ndarray],
                  info: PairInfo | None = None) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(gt, pred fitted to gt) per frame, as long as both last; counts go into ``info``."""
    info = info if info is not None else PairInfo()
    for g, p in zip(gt, pred, strict=False):
        if not info.compared:
            info.gt_size, info.pred_size = g.shape[:2], p.shape[:2]
        info.compared += 1
        yield g, fit_frame(p, g.shape[0], g.shape[1])
    info.gt_frames = info.compared + sum(1 for _ in gt)
    info.pred_frames = info.compared + sum(1 for _ in pred)


# ------------------------------------------------------------------ blur SSIM
def bilateral(frame: np.ndarray) -> np.ndarray:
    import cv2

    return cv2.bilateralFilter(frame, BILATERAL["d"], BILATERAL["sigma_color"], BILATERAL["sigma_space"])


def ssim_full_mean(gt: np.ndarray, pred: np.ndarray) -> float:
    """Mean of skimage's full SSIM map (data_range of the ground-truth frame; NaN when it is uniform)."""
    from skimage.metrics import structural_similarity

    rng = float(gt.max()) - float(gt.min())
    if rng <= 0:
        return float("nan")
    _, smap = structural_similarity(gt, pred, data_range=rng, full=True,
                                    channel_axis=2 if gt.ndim == 3 else None)
    return float(np.mean(smap))


@dataclass
class BlurAcc:
    ssim: list[float] = field(default_factory=list)
    mse: list[float] = field(default_factory=list)

    def add(self, gt: np.ndarray, pred: np.ndarray, *, blurred: bool = False) -> None:
        gb, pb = (gt, pred) if blurred else (bilateral(gt), bilateral(pred))
        self.ssim.append(ssim_full_mean(gb, pb))
        self.mse.append(float(np.mean((gb.astype(np.float64) - pb.astype(np.float64)) ** 2)))

    def result(self) -> dict[str, float]:
        return {"blur_ssim": float(np.mean(self.ssim)), "blur_mse": float(np.mean(self.mse))}

    @property
    def uniform_frames(self) -> list[int]:
        return [i for i, v in enumerate(self.ssim) if not np.isfinite(v)]


# ------------------------------------------------------------------ Canny
def canny(frame: np.ndarray, preset: str = "medium", *, gray: bool = False) -> np.ndarray:
    """Boolean edge map of one RGB frame with a preset's thresholds."""
    import cv2

    lo, hi = CANNY_PRESETS[preset]
    img = cv2.cvtColor(frame, cv2.COLOR_RGB2GRAY) if gray and frame.ndim == 3 else frame
    return cv2.Canny(np.ascontiguousarray(img), lo, hi) > 0


@dataclass
class CannyCounts:
    tp: int = 0
    fp: int = 0
    fn: int = 0
    pred_on: int = 0
    gt_on: int = 0
    pixels: int = 0

    def add_edges(self, gt: np.ndarray, pred: np.ndarray) -> None:
        self.tp += int(np.count_nonzero(gt & pred))
        self.fp += int(np.count_nonzero(pred & ~gt))
        self.fn += int(np.count_nonzero(gt & ~pred))
        self.pred_on += int(np.count_nonzero(pred))
        self.gt_on += int(np.count_nonzero(gt))
        self.pixels += int(gt.size)

    @property
    def degenerate(self) -> str | None:
        """Why the released code would raise (an edge video that is all 0 or all 1), else None."""
        for name, on in (("prediction", self.pred_on), ("ground truth", self.gt_on)):
            if on == 0:
                return f"the {name} has no Canny edge in any frame"
            if on == self.pixels:
                return f"every pixel of the {name} is a Canny edge"
        return None

    def result(self) -> dict[str, float]:
        p = self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0
        r = self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0
        f1 = 2 * p * r / (p + r) if p + r else 0.0
        return {"canny_f1_score": float(f1), "canny_precision": float(p), "canny_recall": float(r)}


# ------------------------------------------------------------------ depth
def si_rmse_frame(pred: np.ndarray, gt: np.ndarray, cap: float | None = 10.0) -> float | None:
    """Median-scaled RMSE of one frame; ``None`` when no pixel is valid in both."""
    pred = np.asarray(pred, dtype=np.float64)
    gt = np.asarray(gt, dtype=np.float64)
    valid = (gt > 0) & (pred > 0)
    if not valid.any():
        return None
    p, g = pred[valid], gt[valid]
    res = g - p * (np.median(g) / np.median(p))
    if cap is not None:
        res = np.clip(res, -cap, cap)
    return float(np.sqrt(np.mean(res ** 2)))


def resize_nearest(depth: np.ndarray, height: int, width: int) -> np.ndarray:
    """Nearest-neighbour resize of a 2-D map: output pixel (y, x) takes input (floor(y·h/H), floor(x·w/W)),
    the index rule of torch's ``interpolate(mode="nearest")`` and OpenCV's ``INTER_NEAREST`` (the released
    depth comparison resizes a predicted map of another size this way); values are copied, never blended."""
    h, w = depth.shape[:2]
    ys = np.minimum((np.arange(height) * h) // height, h - 1)
    xs = np.minimum((np.arange(width) * w) // width, w - 1)
    return np.asarray(depth)[ys[:, None], xs[None, :]]


@dataclass
class DepthAcc:
    cap: float | None = 10.0
    resize: str = "nearest"
    """How a predicted map of another size is brought to the ground truth's: ``nearest`` (released) or
    ``linear`` (bilinear when enlarging, area when shrinking)."""
    frames: list[float | None] = field(default_factory=list)
    resized: int = 0

    def add(self, pred: np.ndarray, gt: np.ndarray) -> None:
        if pred.shape != gt.shape:
            self.resized += 1
            if self.resize == "nearest":
                pred = resize_nearest(pred, gt.shape[0], gt.shape[1])
            else:
                import cv2

                interp = cv2.INTER_LINEAR if gt.shape[0] > pred.shape[0] else cv2.INTER_AREA
                pred = cv2.resize(pred.astype(np.float32), (gt.shape[1], gt.shape[0]), interpolation=interp)
        self.frames.append(si_rmse_frame(pred, gt, self.cap))

    @property
    def empty_frames(self) -> int:
        return sum(v is None for v in self.frames)

    @property
    def all_empty(self) -> bool:
        """No frame had a pixel valid in both maps (the released mean is then 0.0, a 'perfect' score)."""
        return bool(self.frames) and self.empty_frames == len(self.frames)

    def result(self, *, empty: str = "zero") -> float | None:
        """Mean over frames, a frame without a valid pixel counting 0 (released ``depth_metrics``: the frame's
        error starts at 0 and is only set when valid pixels exist). With every frame empty the released mean
        is 0.0 (``empty="zero"``); ``empty="unscored"`` returns None instead. None when no frame was compared."""
        if not self.frames or (self.all_empty and empty != "zero"):
            return None
        return float(np.mean([0.0 if v is None else v for v in self.frames]))


# ------------------------------------------------------------------ segmentation
def iou_matrix(gt: Sequence[np.ndarray], pred: Sequence[np.ndarray]) -> np.ndarray:
    """IoU of every (gt, pred) mask pair over the whole volume (0 where the union is empty)."""
    out = np.zeros((len(gt), len(pred)), dtype=np.float64)
    for i, g in enumerate(gt):
        for j, p in enumerate(pred):
            n = min(len(g), len(p))
            inter = np.count_nonzero(g[:n] & p[:n])
            union = np.count_nonzero(g[:n] | p[:n])
            out[i, j] = inter / union if union else 0.0
    return out


def hungarian_miou(gt: Sequence[np.ndarray], pred: Sequence[np.ndarray],
                   threshold: float = SEG_IOU_THRESHOLD) -> tuple[float, float, np.ndarray]:
    """(seg_m_iou, seg_recall, matched IoUs): Hungarian matching on 1 − IoU; matches above
    ``threshold`` are kept; m_iou = their mean (0 if none), recall = their share of the matches."""
    from scipy.optimize import linear_sum_assignment

    m = iou_matrix(gt, pred)
    if m.size == 0:
        return 0.0, 0.0, np.zeros(0)
    rows, cols = linear_sum_assignment(1.0 - m)
    matched = m[rows, cols]
    kept = matched[matched > threshold]
    return (float(kept.mean()) if kept.size else 0.0, float(kept.size / matched.size), matched)


# ------------------------------------------------------------------ diversity
def diversity_row(i: int, videos: Sequence[Sequence[np.ndarray]],
                  distance: Callable[[Sequence[np.ndarray], Sequence[np.ndarray]], Sequence[float]]) -> list[float]:
    """Variant ``i``'s ordered pairs (i, j), j ≠ i: per pair, the mean over frames of ``distance``."""
    out = []
    for j, other in enumerate(videos):
        if j == i:
            continue
        n = min(len(videos[i]), len(other))
        out.append(float(np.mean(distance(videos[i][:n], other[:n]))))
    return out


def diversity(videos: Sequence[Sequence[np.ndarray]],
              distance: Callable[[Sequence[np.ndarray], Sequence[np.ndarray]], Sequence[float]]) -> float:
    """Mean over ordered pairs i ≠ j of the per-pair frame-mean distance (the released diversity)."""
    rows = [d for i in range(len(videos)) for d in diversity_row(i, videos, distance)]
    return float(np.mean(rows))


__all__ = ["BILATERAL", "CANNY_PRESETS", "MAX_FRAMES", "SEG_IOU_THRESHOLD", "BlurAcc", "CannyCounts", "DepthAcc",
           "PairInfo", "bilateral", "canny", "diversity", "diversity_row", "fit_frame", "hungarian_miou",
           "iou_matrix", "iter_rgb", "paired_frames", "si_rmse_frame", "ssim_full_mean"]
