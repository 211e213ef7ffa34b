"""TiViBench's "graphic sorting" (appendix C.1 ⑤): bars by colour segmentation, their count and order.

Bars are the components of ``bar_colour`` (HSV, :mod:`vreason.verify.colour`) inside ``region`` (or the frame)
taller than ``MIN_HEIGHT`` of it, found with the value judged against the paper's local light (a photo's dim
corner) and print under the ink bridged (a ruled line across a bar does not cut it; paper between two bars parts
them). Their heights (box heights, normalised to the frame height) are read left to right. Passed when there are
exactly ``n_bars`` bars, their heights follow ``order`` (a neighbour may be lower by at most half of ``height_tol``,
for equal bars and codec edges) and, when ``expected_heights`` are given, each bar is within ``height_tol`` of its
expected height (no bar was stretched to fake the order). Score = fraction of neighbour pairs in order (0 with the
wrong count). No OCR: the backend is the colour segmenter. The picture is cut out of letterbox bars knowing its
aspect (the reference image's, or the ``aspect`` option): bars on a black ground keep the empty rows above them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from vreason.verify import colour
from vreason.verify import ocr as ocrmod
from vreason.verify.annotations import BarsParams
from vreason.verify.checks import CheckEnv, CheckResult, register_check
from vreason.verify.letterbox import picture_aspect

MIN_HEIGHT = 0.02


@register_check("bars", frames="last")
def check_bars(frames, times, gt_end, params: BarsParams, env: CheckEnv) -> CheckResult:
    frame, bad = ocrmod.last_frame(frames, picture_aspect(gt_end, env.options))
    if frame is None:
        return CheckResult(False, 0.0, bad, backend=colour.BACKEND)
    h, w = frame.shape[:2]
    area = ocrmod.crop(frame, params.region)
    ox, oy = (params.region.pixels(w, h)[:2] if params.region is not None else (0, 0))
    ah, aw = area.shape[:2]
    found = colour.find(area, params.bar_colour, local_light=True, print_through=True)
    bars = [b for b in found if b.box[3] - b.box[1] >= MIN_HEIGHT]
    bars.sort(key=lambda b: b.cx)
    heights = [(b.box[3] - b.box[1]) * ah / h for b in bars]
    boxes = [[(b.box[0] * aw + ox) / w, (b.box[1] * ah + oy) / h, (b.box[2] * aw + ox) / w, (b.box[3] * ah + oy) / h]
             for b in bars]
    sign = 1 if params.order == "ascending" else -1
    pairs = [sign * (b - a) >= -params.height_tol / 2 for a, b in zip(heights, heights[1:], strict=False)]
    checks: dict[str, bool] = {"count": len(bars) == params.n_bars, "order": bool(pairs) and all(pairs)}
    if params.expected_heights:
        exp = list(params.expected_heights)
        checks["heights"] = len(exp) == len(heights) and all(
            abs(a - b) <= params.height_tol for a, b in zip(heights, exp, strict=True))
    ok = all(checks.values())
    score = (sum(pairs) / len(pairs)) if checks["count"] and pairs else 0.0
    failed = [k for k, v in checks.items() if not v]
    reason = "" if ok else (f"found {len(bars)} bars, expected {params.n_bars}" if not checks["count"]
                            else "failed: " + ", ".join(failed))
    details: dict[str, Any] = {"n_found": len(bars), "heights": [round(x, 4) for x in heights],
                               "boxes": [[round(v, 4) for v in b] for b in boxes], "checks": checks,
                               "order": params.order}
    return CheckResult(ok, float(score), reason, details, colour.BACKEND, _overlay(frame, boxes, ok))


def _overlay(frame: np.ndarray, boxes, ok: bool) -> np.ndarray:
    import cv2

    img = np.ascontiguousarray(frame).copy()
    h, w = img.shape[:2]
    for i, (x0, y0, x1, y1) in enumerate(boxes):
        cv2.rectangle(img, (int(x0 * w), int(y0 * h)), (int(x1 * w) - 1, int(y1 * h) - 1),
                      (0, 170, 0) if ok else (230, 0, 0), 1)
        cv2.putText(img, str(i + 1), (int(x0 * w), max(10, int(y0 * h) - 3)), cv2.FONT_HERSHEY_SIMPLEX, 0.4,
                    (0, 0, 0), 1, cv2.LINE_AA)
    return img
