"""TiViBench's region feature similarity ("DINO-based", appendix C.1).

The annotated box is cropped from the video's last frame and from the ground-truth end state (each at
its own resolution: the box is normalised), both crops are embedded by the feature backbone and the
sample passes when their cosine similarity is at or above the annotation's ``threshold``.

The backbone is the env's ``features`` (e.g. ``transformers:/folder`` holding DINO/DINOv2); when none
is given the classical descriptor ``classical:hog-hsv`` is used and its name recorded as the backend,
so no number claims to be DINO when it is not. The score is the cosine clipped to [0, 1]. Letterbox
bars are cut from the last frame and it is scaled to the ground truth's size before cropping (the box
refers to the picture; both crops then have one resolution). No ground-truth end state, or a backbone
that cannot be loaded → ``passed=None`` (unscored) with the reason.

Measured with the classical descriptor on a rendered disc (tests/test_verify_region_grounding.py): the
same crop after H.264 at crf 35 scores 0.92, at double size 0.94, at half size only 0.86 (its HOG part
is blur-sensitive), a disc of another colour 0.82: thresholds for it need care; DINO is the paper's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from vreason.verify import colour
from vreason.verify.annotations import RegionParams
from vreason.verify.checks import CheckEnv, CheckResult, register_check

DEFAULT_FEATURES = "classical:hog-hsv"


def embedder(env: CheckEnv) -> Any:
    """The env's feature backbone, else the classical default (raises ``ModelMissing`` when unusable)."""
    if env.features is not None:
        return env.features
    from vreason.measure.spec import make_embedder

    return make_embedder(DEFAULT_FEATURES)


def crop(img: np.ndarray, box: Any) -> np.ndarray:
    h, w = img.shape[:2]
    x0, y0, x1, y1 = box.pixels(w, h)
    return np.ascontiguousarray(img[y0:y1, x0:x1])


def _overlay(last: np.ndarray, gt: np.ndarray, box: Any, ok: bool) -> np.ndarray:
    """The last frame and the ground truth side by side (ground truth resized to the frame's height),
    the box drawn on both (green: passed, red: failed)."""
    import cv2

    h = last.shape[0]
    g = cv2.resize(gt, (max(1, int(round(gt.shape[1] * h / gt.shape[0]))), h), interpolation=cv2.INTER_AREA)
    out = np.concatenate([last.copy(), np.full((h, 6, 3), 255, np.uint8), g], axis=1)
    c = (0, 170, 0) if ok else (220, 0, 0)
    for img, dx in ((last, 0), (g, last.shape[1] + 6)):
        x0, y0, x1, y1 = box.pixels(img.shape[1], img.shape[0])
        cv2.rectangle(out, (x0 + dx, y0), (x1 + dx - 1, y1 - 1), c, 2)
    return out


@register_check("region", frames="last", needs=("features",))
def region_check(frames: Sequence[np.ndarray], times: Any, gt_end: np.ndarray | None, params: RegionParams,
                 env: CheckEnv) -> CheckResult:
    from vreason.measure.base import ModelMissing

    if gt_end is None:
        return CheckResult(None, reason="no ground-truth end state to compare the region with")
    if not len(frames):
        return CheckResult(False, 0.0, reason="the video has no frames")
    bad = colour.valid_frame(frames[-1]) or colour.valid_frame(gt_end)
    if bad:
        return CheckResult(False, 0.0, reason=bad)
    try:
        emb = embedder(env)
    except (ModelMissing, ImportError) as exc:
        return CheckResult(None, reason=f"feature backbone unavailable: {exc}")
    import cv2

    gt = colour.to_rgb(gt_end)
    last = colour.content(frames[-1:])[0]
    if last.shape[:2] != gt.shape[:2]:  # compare at one resolution: the last frame scaled to the ground truth's
        interp = cv2.INTER_AREA if last.shape[0] > gt.shape[0] else cv2.INTER_LINEAR
        last = cv2.resize(last, (gt.shape[1], gt.shape[0]), interpolation=interp)
    a, b = crop(last, params.box), crop(gt, params.box)
    feats = np.asarray(emb.embed([a, b]), dtype=np.float64)
    na, nb = np.linalg.norm(feats[0]), np.linalg.norm(feats[1])
    cos = float(feats[0] @ feats[1] / (na * nb)) if na > 0 and nb > 0 else 0.0
    ok = cos >= params.threshold
    details = {"cosine": round(cos, 4), "threshold": params.threshold, "box": params.box.model_dump(),
               "crop_px": [list(a.shape[:2]), list(b.shape[:2])]}
    reason = "" if ok else f"region similarity {cos:.3f} below the threshold {params.threshold:g}"
    return CheckResult(bool(ok), float(np.clip(cos, 0.0, 1.0)), reason, details, getattr(emb, "name", "") or "?",
                       _overlay(last, gt, params.box, ok))
