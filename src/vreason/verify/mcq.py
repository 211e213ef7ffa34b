"""TiViBench's "visual multiple choice" (appendix C.1 ③): which option's box is highlighted in red.

Boxes of the highlight colour (``box_colour``, HSV segmentation through :mod:`vreason.verify.colour`) at
least ``MIN_SIDE`` of the frame on each side are candidates. Each is identified as an option by the
annotated option boxes it overlaps (IoU ≥ ``MIN_IOU`` each: one red box drawn around two options
highlights both) when ``option_boxes`` are given, else by the
letter OCR reads inside it (recognition on the box's interior crop; the first letter of the text that is
one of ``options``). The letter read is recorded in either case. **Passed iff exactly the correct option
is highlighted**: none, a wrong one or several fail. Red areas that are no option (a red figure in the
question) are listed in the evidence and do not count.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from vreason.verify import colour
from vreason.verify import ocr as ocrmod
from vreason.verify.annotations import McqParams
from vreason.verify.checks import CheckEnv, CheckResult, register_check

MIN_SIDE = 0.02
MIN_IOU = 0.3
CLOSE_PX = 5
"""The highlight mask is closed by this many px (no opening): gaps where a thin mark crosses another line."""
MIN_PIECE = 20
"""Before the closing, connected pieces of the highlight colour under this many px are dropped (noise's specks;
closed with them, a noisy frame's specks joined into blobs over an option)."""


def _iou(a, b) -> float:
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def _letter(text: str, options: list[str]) -> str | None:
    for ch in text.upper():
        if ch.isalnum():
            return ch if ch in options else None
    return None


@register_check("mcq", frames="last", needs=("ocr",))
def check_mcq(frames, times, gt_end, params: McqParams, env: CheckEnv) -> CheckResult:
    positional = bool(params.option_boxes)
    if env.ocr is None and not positional:
        return CheckResult(None, reason=ocrmod.NO_OCR, backend="none")
    frame, bad = ocrmod.last_frame(frames)
    if frame is None:
        return CheckResult(False, 0.0, bad, backend=env.ocr.backend if env.ocr is not None else "option boxes")
    h, w = frame.shape[:2]
    options = [o.upper() for o in params.options]
    found: list[dict[str, Any]] = []
    # a mark may be drawn by hand with a thin pen: no opening (a 3-px one broke a 2-px loop round the answer into
    # pieces each overlapping its box under MIN_IOU), specks dropped by size; a 5-px closing bridges where it
    # crosses the option's outline
    for b in colour.find(frame, params.box_colour, open_px=1, close_px=CLOSE_PX,
                              min_piece=MIN_PIECE):
        x0, y0, x1, y1 = b.box
        if x1 - x0 < MIN_SIDE or y1 - y0 < MIN_SIDE:
            continue
        item: dict[str, Any] = {"box": [round(v, 4) for v in b.box]}
        if positional:
            ious = {k.upper(): _iou(b.box, (ob.x0, ob.y0, ob.x1, ob.y1)) for k, ob in params.option_boxes.items()}
            item["by_position"] = sorted(k for k, v in ious.items() if v >= MIN_IOU)
            item["iou"] = round(max(ious.values()), 3)
        if env.ocr is not None:
            px0, py0, px1, py1 = int(x0 * w), int(y0 * h), int(np.ceil(x1 * w)), int(np.ceil(y1 * h))
            m = max(2, int(0.15 * min(px1 - px0, py1 - py0)))
            inner = frame[py0 + m:py1 - m, px0 + m:px1 - m]
            text = env.ocr.read(inner)[0] if inner.size and ocrmod.ink_box(inner) else ""
            item["ocr_text"] = text
            item["by_ocr"] = _letter(text, options)
        item["options"] = item["by_position"] if positional else ([item["by_ocr"]] if item["by_ocr"] else [])
        found.append(item)
    chosen = sorted({o for f in found for o in f["options"]})
    answer = params.answer.upper()
    ok = chosen == [answer]
    if ok:
        reason = ""
    elif not chosen:
        reason = "no option is highlighted"
    elif len(chosen) > 1:
        reason = f"{len(chosen)} options highlighted ({', '.join(chosen)})"
    else:
        reason = f"option {chosen[0]} highlighted, the answer is {answer}"
    backend = (env.ocr.backend if env.ocr is not None else "") + (" + option boxes" if positional else "")
    details = {"highlighted": chosen, "answer": answer, "boxes": found[:20], "identified_by":
               "annotated option box" if positional else "ocr"}
    return CheckResult(ok, 1.0 if ok else 0.0, reason, details, backend.strip(" +"), _overlay(frame, found))


def _overlay(frame: np.ndarray, found) -> np.ndarray:
    import cv2

    img = np.ascontiguousarray(frame).copy()
    h, w = img.shape[:2]
    for f in found:
        x0, y0, x1, y1 = f["box"]
        p0, p1 = (int(x0 * w), int(y0 * h)), (int(x1 * w) - 1, int(y1 * h) - 1)
        cv2.rectangle(img, p0, p1, (0, 120, 255), 1)
        cv2.putText(img, ",".join(f["options"]) or "?", (p0[0], max(10, p0[1] - 3)), cv2.FONT_HERSHEY_SIMPLEX, 0.45,
                    (0, 120, 255), 1, cv2.LINE_AA)
    return img
