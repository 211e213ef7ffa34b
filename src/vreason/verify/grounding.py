"""TiViBench's grounding check ("DINO-X-based", appendix C.1): count and place objects in the last frame.

Objects come from the env's open-vocabulary ``detector`` when one is given (prompted with the
annotation's ``label``; Grounding DINO / OWLv2 from a local folder), else from the colour detector
(:mod:`vreason.verify.colour`) when the annotation gives a ``colour``; the backend that found them is
recorded. Neither → ``passed=None`` (unscored), never 0.

Rules (distances in pixels over the frame's diagonal, so a non-square frame is not distorted):

* only objects whose centre lies in ``region`` count (when given);
* count — the number found equals ``expected_count``; when the annotation gives points but no count, the
  count must equal the number of points (an extra object or mark is a wrong answer);
* placement — the expected points and the found objects are matched one to one (minimum total distance,
  Hungarian); every point needs its object within ``point_tol``;
* ``marker="highlighted"``: the objects are the marks (e.g. red boxes around the answer), so the same
  rules say "exactly these cells are marked".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from vreason.verify import colour
from vreason.verify.annotations import GroundingParams
from vreason.verify.checks import CheckEnv, CheckResult, register_check


def locate(frame: np.ndarray, obj: GroundingParams, env: CheckEnv) -> tuple[list[colour.Blob] | None, str, str]:
    """Objects matching ``obj`` in one RGB frame (letterbox already cut) → (blobs or None, backend, reason)."""
    if env.detector is not None:
        h, w = frame.shape[:2]
        dets = sorted(env.detector.detect(frame, [obj.label]), key=lambda d: -d.score)
        blobs = [colour.Blob((d.box[0] + d.box[2]) / 2 / w, (d.box[1] + d.box[3]) / 2 / h,
                             max(0.0, (d.box[2] - d.box[0]) * (d.box[3] - d.box[1])) / (w * h),
                             (d.box[0] / w, d.box[1] / h, d.box[2] / w, d.box[3] / h)) for d in dets]
        return blobs, getattr(env.detector, "name", "") or "detector", ""
    if obj.colour is not None:
        return colour.find(frame, obj.colour), colour.BACKEND, ""
    return None, "", (f"no open-vocabulary detector given (--detector) and the annotation of {obj.label!r} "
                      "gives no colour for the colour detector")


def in_region(blobs: list[colour.Blob], region: Any) -> list[colour.Blob]:
    if region is None:
        return blobs
    return [b for b in blobs if region.x0 <= b.cx <= region.x1 and region.y0 <= b.cy <= region.y1]


def match(points: Sequence[tuple[float, float]], blobs: list[colour.Blob], width: int, height: int
          ) -> list[tuple[int, int | None, float | None]]:
    """One-to-one assignment of points to blobs minimising the total distance: (point, blob or None, distance)."""
    from scipy.optimize import linear_sum_assignment

    if not points:
        return []
    if not blobs:
        return [(i, None, None) for i in range(len(points))]
    cost = np.array([[colour.distance(p, (b.cx, b.cy), width, height) for b in blobs] for p in points])
    rows, cols = linear_sum_assignment(cost)
    got = {int(r): int(c) for r, c in zip(rows, cols, strict=True)}
    return [(i, got.get(i), float(cost[i, got[i]]) if i in got else None) for i in range(len(points))]


def _overlay(frame: np.ndarray, params: GroundingParams, blobs: list[colour.Blob], ok: bool) -> np.ndarray:
    import cv2

    img = frame.copy()
    h, w = img.shape[:2]
    tol = params.point_tol * float(np.hypot(w, h))
    for p in params.expected_points:
        cv2.circle(img, (int(p[0] * w), int(p[1] * h)), max(2, int(tol)), (0, 170, 0), 2)
    for b in blobs:
        x0, y0, x1, y1 = b.box
        cv2.rectangle(img, (int(x0 * w), int(y0 * h)), (int(x1 * w), int(y1 * h)), (0, 120, 255), 1)
    if params.region is not None:
        x0, y0, x1, y1 = params.region.pixels(w, h)
        cv2.rectangle(img, (x0, y0), (x1 - 1, y1 - 1), (0, 170, 0) if ok else (220, 0, 0), 1)
    return img


def evaluate(frame: np.ndarray, params: GroundingParams, env: CheckEnv) -> CheckResult:
    """The grounding rules on one RGB frame (letterbox already cut)."""
    found, backend, why = locate(frame, params, env)
    if found is None:
        return CheckResult(None, reason=why)
    blobs = in_region(found, params.region)
    h, w = frame.shape[:2]
    want = params.expected_count if params.expected_count is not None else (
        len(params.expected_points) if params.expected_points else None)
    checks: dict[str, bool] = {}
    if want is not None:
        checks["count"] = len(blobs) == want
    pairs = match(list(params.expected_points), blobs, w, h)
    if pairs:
        checks["placement"] = all(d is not None and d <= params.point_tol for _, _, d in pairs)
    if not checks:
        checks["found"] = bool(blobs)
    ok = all(checks.values())
    placed = sum(d is not None and d <= params.point_tol for _, _, d in pairs)
    parts = []
    if "count" in checks:
        parts.append(min(len(blobs), want) / max(len(blobs), want, 1))
    if pairs:
        parts.append(placed / len(pairs))
    score = float(np.mean(parts)) if parts else float(ok)
    details = {"checks": checks, "found": [b.as_json() for b in blobs], "n_found": len(blobs),
               "expected_count": want, "marker": params.marker, "label": params.label,
               "matches": [{"point": list(params.expected_points[i]), "object": j,
                            "distance": None if d is None else round(d, 4)} for i, j, d in pairs],
               "point_tol": params.point_tol}
    reasons = []
    if not checks.get("count", True):
        reasons.append(f"found {len(blobs)} {params.label!r}, expected {want}")
    if not checks.get("placement", True):
        reasons.append(f"{len(pairs) - placed} of {len(pairs)} expected position(s) without an object within "
                       f"{params.point_tol:g}")
    if not checks.get("found", True):
        reasons.append(f"no {params.label!r} found")
    return CheckResult(bool(ok), score, "; ".join(reasons), details, backend, _overlay(frame, params, blobs, ok))


@register_check("grounding", frames="last", needs=("detector",))
def grounding_check(frames: Sequence[np.ndarray], times: Any, gt_end: np.ndarray | None, params: GroundingParams,
                    env: CheckEnv) -> CheckResult:
    if not len(frames):
        return CheckResult(False, 0.0, reason="the video has no frames")
    bad = colour.valid_frame(frames[-1])
    if bad:
        return CheckResult(False, 0.0, reason=bad)
    return evaluate(colour.content(frames[-1:])[0], params, env)
