"""TiViBench's "numeric sequence completion" (appendix C.1 ④): the sequence's items read by OCR.

With annotated ``cells`` each item is recognised on its own crop (tightened to its ink); without them the
``region`` (or the frame) is read by detection + recognition and split into items at spaces and commas, in
reading order. An item matches when its normalised text equals the expected one or both are numbers of
equal value. Score = fraction of expected items matched in place; passed = every item matches and no
extra item was read.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from vreason.verify import ocr as ocrmod
from vreason.verify.annotations import SequenceParams
from vreason.verify.checks import CheckEnv, CheckResult, register_check


def same_item(read: str, expected: str) -> bool:
    a, b = ocrmod.normalise(read).replace(" ", ""), ocrmod.normalise(expected).replace(" ", "")
    if a == b:
        return bool(a)
    try:
        return float(a) == float(b)
    except ValueError:
        return False


def read_cell(area: np.ndarray, engine) -> str:
    box = ocrmod.ink_box(area)
    if box is None:
        return ""
    if not ocrmod.glyph_like(area, 0.002):
        return "?"  # speckle or a smear: no text to read
    x0, y0, x1, y1 = box
    pad = max(3, (y1 - y0) // 3)
    sub = area[max(0, y0 - pad):y1 + pad, max(0, x0 - pad):x1 + pad]
    return engine.read(sub)[0].replace(" ", "")


@register_check("sequence", frames="last", needs=("ocr",))
def check_sequence(frames, times, gt_end, params: SequenceParams, env: CheckEnv) -> CheckResult:
    if env.ocr is None:
        return CheckResult(None, reason=ocrmod.NO_OCR, backend="none")
    frame, bad = ocrmod.last_frame(frames)
    if frame is None:
        return CheckResult(False, 0.0, bad, backend=env.ocr.backend)
    if params.cells:
        items = [read_cell(ocrmod.crop(frame, b), env.ocr) for b in params.cells]
        mode = "cells"
    else:
        lines = env.ocr.lines(ocrmod.crop(frame, params.region))
        items = [t for _, text, _ in lines for t in re.split(r"[\s,;]+", text) if t]
        mode = "region"
    exp = params.expected
    matches = [i < len(items) and same_item(items[i], e) for i, e in enumerate(exp)]
    ok = all(matches) and len(items) == len(exp)
    wrong = [i for i, m in enumerate(matches) if not m]
    if ok:
        reason = ""
    elif len(items) != len(exp) and not params.cells:
        reason = f"read {len(items)} items, expected {len(exp)}"
    else:
        reason = f"items {', '.join(str(i + 1) for i in wrong)} differ from the expected sequence"
    details: dict[str, Any] = {"read": items[:50], "expected": exp, "mode": mode, "wrong_items": wrong}
    return CheckResult(ok, sum(matches) / len(exp), reason, details, env.ocr.backend, _overlay(frame, params, matches))


def _overlay(frame: np.ndarray, params: SequenceParams, matches: list[bool]) -> np.ndarray:
    import cv2

    img = np.ascontiguousarray(frame).copy()
    h, w = img.shape[:2]
    for b, m in zip(params.cells, matches, strict=False):
        x0, y0, x1, y1 = b.pixels(w, h)
        cv2.rectangle(img, (x0, y0), (x1 - 1, y1 - 1), (0, 170, 0) if m else (230, 0, 0), 2)
    if params.region is not None:
        x0, y0, x1, y1 = params.region.pixels(w, h)
        cv2.rectangle(img, (x0, y0), (x1 - 1, y1 - 1), (0, 120, 255), 1)
    return img
