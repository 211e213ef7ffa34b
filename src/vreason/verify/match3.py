"""TiViBench's "match-3-like games" (appendix C.1 ⑥): the last frame against the ground-truth end state.

The ``region`` (or the whole picture) of the last frame and of the ground truth are brought to one working
size (the ground truth's region, area-downsampled to at most ``WORK_SIDE`` px on its long side so codec noise
and resizing average out), converted to grey, then
compared by **SSIM** (scikit-image, Gaussian-weighted as Wang et al.) and by **edge overlap**: the F1 of
Canny edges, an edge pixel counting as matched when the other image has an edge within ``EDGE_TOL`` px.
Passed when SSIM ≥ ``ssim_threshold`` and edge F1 ≥ ``edge_threshold``; score = the smaller of the two.
Without a ground-truth end state the sample cannot be scored (``passed=None``).
"""

from __future__ import annotations

import numpy as np

from vreason.verify import colour
from vreason.verify import ocr as ocrmod
from vreason.verify.annotations import Match3Params
from vreason.verify.checks import CheckEnv, CheckResult, register_check

WORK_SIDE = 160
EDGE_TOL = 2
BACKEND = "opencv:canny+skimage:ssim"


def _prep(img: np.ndarray, region, size: tuple[int, int] | None) -> np.ndarray:
    import cv2

    g = ocrmod.grey(ocrmod.crop(colour.to_rgb(img), region))
    if size is None:
        s = min(1.0, WORK_SIDE / max(g.shape))
        size = (max(8, int(round(g.shape[1] * s))), max(8, int(round(g.shape[0] * s))))
    return cv2.resize(np.ascontiguousarray(g), size, interpolation=cv2.INTER_AREA)


def edge_f1(a: np.ndarray, b: np.ndarray) -> tuple[float, dict[str, float]]:
    import cv2

    ea, eb = cv2.Canny(a, 50, 150) > 0, cv2.Canny(b, 50, 150) > 0
    if not ea.any() and not eb.any():
        return 1.0, {"edges_frame": 0, "edges_gt": 0}
    k = np.ones((2 * EDGE_TOL + 1, 2 * EDGE_TOL + 1), np.uint8)
    da, db = cv2.dilate(ea.astype(np.uint8), k) > 0, cv2.dilate(eb.astype(np.uint8), k) > 0
    prec = float((ea & db).sum() / max(1, ea.sum()))
    rec = float((eb & da).sum() / max(1, eb.sum()))
    f1 = 0.0 if prec + rec == 0 else 2 * prec * rec / (prec + rec)
    return f1, {"edge_precision": round(prec, 4), "edge_recall": round(rec, 4), "edges_frame": int(ea.sum()),
                "edges_gt": int(eb.sum())}


@register_check("match3", frames="last")
def check_match3(frames, times, gt_end, params: Match3Params, env: CheckEnv) -> CheckResult:
    from skimage.metrics import structural_similarity

    if gt_end is None:
        return CheckResult(None, reason="no ground-truth end state to compare with", backend=BACKEND)
    frame, bad = ocrmod.last_frame(frames)
    if frame is None:
        return CheckResult(False, 0.0, bad, backend=BACKEND)
    if colour.valid_frame(gt_end):
        return CheckResult(None, reason=f"ground-truth end state unusable: {colour.valid_frame(gt_end)}",
                           backend=BACKEND)
    gt = colour.content([gt_end])[0]
    b = _prep(gt, params.region, None)
    a = _prep(frame, params.region, (b.shape[1], b.shape[0]))
    ssim = float(structural_similarity(a, b, data_range=255, gaussian_weights=True, sigma=1.5,
                                       use_sample_covariance=False))
    f1, edge = edge_f1(a, b)
    ok = ssim >= params.ssim_threshold and f1 >= params.edge_threshold
    reason = "" if ok else (f"SSIM {ssim:.3f} (≥ {params.ssim_threshold}), edge F1 {f1:.3f} "
                            f"(≥ {params.edge_threshold})")
    details = {"ssim": round(ssim, 4), "edge_f1": round(f1, 4), **edge, "work_size": [a.shape[1], a.shape[0]]}
    overlay = np.concatenate([a, b, np.abs(a.astype(np.int16) - b).astype(np.uint8)], axis=1)
    return CheckResult(ok, float(max(0.0, min(ssim, f1))), reason, details, BACKEND,
                       np.repeat(overlay[:, :, None], 3, axis=2))
