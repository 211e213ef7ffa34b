"""TiViBench's "mathematical evaluation" (appendix C.1 ②): the answer written after "=" read by OCR.

The equation line is read by recognition on the annotated line crop (``region``; tightened to its ink), or —
without a region — by detection + recognition over the frame, taking the line that holds "=". The text
after the last "=" is the answer; it is **correct** when it matches the expected text (after
normalisation) or when both parse to the same value (:func:`parse_value`, within ``rel_tol``). Parsing is
an ``ast`` walk over numbers and + − × ÷ / * ^ and parentheses — never ``eval``. An answer that does not parse
is read once more as a handwritten whole number (:func:`vreason.verify.ocr.digit_reading`: a slanted 1 the
recogniser gave as "/", a 5 as "S") and compared with an expected whole number.
"""

from __future__ import annotations

import ast
import math
import re
import warnings
from fractions import Fraction
from typing import Any

import numpy as np

from vreason.verify import ocr as ocrmod
from vreason.verify.annotations import MathParams
from vreason.verify.checks import CheckEnv, CheckResult, register_check

_SUBST = (("×", "*"), ("⋅", "*"), ("·", "*"), ("÷", "/"), (":", "/"), ("^", "**"), ("[", "("), ("]", ")"),
          ("{", "("), ("}", ")"), ("x", "*"), ("X", "*"))
MAX_EXPONENT = 64
MAX_MAGNITUDE = 10 ** 30
MAX_LENGTH = 200


def _canon(text: str) -> str:
    t = ocrmod.normalise(text)
    for a, b in _SUBST:
        t = t.replace(a, b)
    return re.sub(r"\s+", "", t)


def parse_value(text: str) -> Fraction | float:
    """The value of an arithmetic expression (numbers, + − × ÷ / * ^ ** and brackets, unicode operators),
    as an exact ``Fraction`` when every number is exact. Raises ``ValueError`` for anything else (names,
    calls, huge powers, division by zero, empty text)."""
    src = _canon(text)
    if not src or len(src) > MAX_LENGTH:
        raise ValueError(f"not an arithmetic expression: {text!r}")
    if re.search(r"\d\(|\)\d|\)\(", src):
        raise ValueError(f"implicit multiplication is ambiguous: {text!r}")
    try:
        with warnings.catch_warnings():  # "1if1else2" warns before it fails: the text is untrusted
            warnings.simplefilter("ignore", SyntaxWarning)
            tree = ast.parse(src, mode="eval")
    except SyntaxError as exc:
        raise ValueError(f"not an arithmetic expression: {text!r}") from exc
    return _walk(tree.body)


def _walk(node: ast.AST) -> Fraction | float:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        v = node.value
        return Fraction(v) if isinstance(v, int) or float(v).is_integer() else Fraction(str(v))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _walk(node.operand)
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.BinOp):
        a, b = _walk(node.left), _walk(node.right)
        op = node.op
        if isinstance(op, ast.Add):
            r = a + b
        elif isinstance(op, ast.Sub):
            r = a - b
        elif isinstance(op, ast.Mult):
            r = a * b
        elif isinstance(op, ast.Div):
            if b == 0:
                raise ValueError("division by zero")
            r = a / b
        elif isinstance(op, ast.Pow):
            if abs(b) > MAX_EXPONENT:
                raise ValueError(f"exponent {b} too large")
            if isinstance(b, Fraction) and b.denominator == 1:
                if a == 0 and b < 0:
                    raise ValueError("division by zero")
                r = a ** int(b)
            else:
                if a < 0:
                    raise ValueError("fractional power of a negative number")
                r = float(a) ** float(b)
        else:
            raise ValueError(f"operator {type(op).__name__} not allowed")
        if abs(r) > MAX_MAGNITUDE:
            raise ValueError("value too large")
        return r
    raise ValueError(f"{type(node).__name__} not allowed in an arithmetic expression")


def same_text(a: str, b: str) -> bool:
    """Equal after normalisation (NFKC, unicode operators, x/×/* and ÷// alike, whitespace removed)."""
    return _canon(a) == _canon(b)


def answers_equal(read: str, expected: str, rel_tol: float = 1e-6) -> tuple[bool, str]:
    """(equal, how): ``text`` when the normalised texts match, ``value`` when the values do."""
    if read and same_text(read, expected):
        return True, "text"
    try:
        a, b = parse_value(read), parse_value(expected)
    except ValueError:
        # a handwritten number the recogniser gave with a look-alike character ("2/", "S0"): read as digits when
        # nothing else is left, and only against an expected whole number written in digits
        # (compared as text, leading zeros dropped: the reply is untrusted and int() refuses 4,300+ digits)
        digits, want = ocrmod.digit_reading(read), _canon(expected)
        if digits is not None and want.isascii() and want.isdigit() and digits.lstrip("0") == want.lstrip("0"):
            return True, "digits"
        return False, "unparsed"
    if a == b or math.isclose(float(a), float(b), rel_tol=rel_tol, abs_tol=rel_tol):
        return True, "value"
    return False, "value"


def split_equation(text: str) -> tuple[str, str] | None:
    """(left of the last "=", right of it), or ``None`` without "="."""
    t = ocrmod.normalise(text).replace("＝", "=")
    if "=" not in t:
        return None
    left, _, right = t.rpartition("=")
    return left.strip(), right.strip()


def read_equation(frame: np.ndarray, region, engine) -> tuple[str, dict[str, Any]]:
    """The equation line's text and where it came from (recognition on the region's ink, or the line with "=")."""
    if region is not None:
        area = ocrmod.crop(frame, region)
        box = ocrmod.ink_box(area)
        if box is None:
            return "", {"mode": "region", "ink": False}
        x0, y0, x1, y1 = box
        pad = max(3, (y1 - y0) // 3)
        y0, y1 = max(0, y0 - pad), min(area.shape[0], y1 + pad)
        x0, x1 = max(0, x0 - pad), min(area.shape[1], x1 + pad)
        text, conf = engine.read(area[y0:y1, x0:x1])
        return text, {"mode": "region", "confidence": round(conf, 4)}
    lines = engine.lines(frame)
    for i, (box, text, _) in enumerate(lines):
        if "=" in text:  # join the boxes on the same line (an answer far from "=" is a box of its own)
            cy, h = (box[1] + box[3]) / 2, box[3] - box[1]
            same = [ln for ln in lines[i:] if abs((ln[0][1] + ln[0][3]) / 2 - cy) <= 0.5 * h]
            same.sort(key=lambda ln: ln[0][0])
            return " ".join(ln[1] for ln in same), {"mode": "detect", "lines": [ln[1] for ln in lines][:20]}
    return "", {"mode": "detect", "lines": [ln[1] for ln in lines][:20]}


@register_check("math", frames="last", needs=("ocr",))
def check_math(frames, times, gt_end, params: MathParams, env: CheckEnv) -> CheckResult:
    if env.ocr is None:
        return CheckResult(None, reason=ocrmod.NO_OCR, backend="none")
    frame, bad = ocrmod.last_frame(frames)
    if frame is None:
        return CheckResult(False, 0.0, bad, backend=env.ocr.backend)
    text, how = read_equation(frame, params.region, env.ocr)
    details: dict[str, Any] = {"read": text, "expected": params.expected, **how}
    overlay = _overlay(frame, params.region)
    parts = split_equation(text)
    if parts is None:
        return CheckResult(False, 0.0, 'no "=" read on the equation line', details, env.ocr.backend, overlay)
    left, right = parts
    details.update({"left": left, "answer": right})
    if not right:
        return CheckResult(False, 0.0, 'nothing written after "="', details, env.ocr.backend, overlay)
    ok, mode = answers_equal(right, params.expected, params.rel_tol)
    details["match"] = mode
    reason = "" if ok else f"answer {right!r} ≠ expected {params.expected!r}"
    return CheckResult(ok, 1.0 if ok else 0.0, reason, details, env.ocr.backend, overlay)


def _overlay(frame: np.ndarray, region) -> np.ndarray:
    import cv2

    img = np.ascontiguousarray(frame[:, :, :3]).copy()
    if region is not None:
        x0, y0, x1, y1 = region.pixels(img.shape[1], img.shape[0])
        cv2.rectangle(img, (x0, y0), (x1 - 1, y1 - 1), (0, 160, 255), 2)
    return img
