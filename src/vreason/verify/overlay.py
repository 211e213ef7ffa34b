"""Verifier overlays that explain themselves: the verifier's debug image with a verdict banner
(score, PASS / FAIL, failed checks, the reason) on top and a colour legend below, scaled to at
least ``MIN_WIDTH`` pixels wide so the text stays readable.

:func:`annotate` is generic (any verifier, any image); :data:`SYNTH_LEGENDS` names what each built-in
family's debug drawing shows.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

MIN_WIDTH = 480
PASS_RGB = (30, 140, 70)
FAIL_RGB = (190, 40, 40)
LegendItem = tuple[str, tuple[int, int, int]]

SYNTH_LEGENDS: dict[str, list[LegendItem]] = {
    "maze": [("tracked agent path (first frame underneath)", (0, 0, 255))],
    "gravity": [("expected trajectory", (0, 180, 0)), ("tracked ball", (255, 0, 255))],
    "symmetry": [("cell that should be painted but is not held (last frame)", (255, 0, 255))],
    "oddoneout": [("the odd shape's cell", (0, 200, 0)), ("box found in the video", (0, 200, 230))],
    "sequence": [("missing cell, right element", (0, 200, 0)), ("missing cell, wrong element", (230, 0, 0))],
    "connect": [("dot of a pair left unjoined", (255, 0, 255)), ("dot of a joined pair", (0, 0, 0))],
    "sorting": [("tracked bar paths (last frame underneath)", (0, 0, 0))],
    "sliding": [("tile read as in the target", (0, 200, 0)), ("tile read wrong", (230, 0, 0))],
}


def failed_checks(checks: Mapping[str, Any] | Sequence[Any] | None) -> list[str]:
    """Names of the checks that failed: a dict of bools / dicts with ``ok``/``passed``, or a list of dicts."""
    if not checks:
        return []
    items = checks.items() if isinstance(checks, Mapping) else \
        ((str(c.get("name", i)) if isinstance(c, Mapping) else str(i), c) for i, c in enumerate(checks))
    out = []
    for name, val in items:
        ok = val.get("ok", val.get("passed")) if isinstance(val, Mapping) else val
        if ok is not None and not bool(ok):
            out.append(str(name))
    return out


def _font(size: int) -> Any:
    from PIL import ImageFont

    try:
        return ImageFont.truetype("DejaVuSans.ttf", size)
    except OSError:
        return ImageFont.load_default(size=size)


def _wrap(lines: list[str], width_px: int, size: int) -> list[str]:
    chars = max(20, int(width_px / (size * 0.55)))
    out: list[str] = []
    for line in lines:
        out += textwrap.wrap(line, chars) or [""]
    return out


def annotate(
    image: np.ndarray,
    score: float | None,
    passed: bool | None,
    checks: Mapping[str, Any] | Sequence[Any] | None = None,
    reason: str | None = None,
    legend: Sequence[LegendItem] | None = None,
    *,
    min_width: int = MIN_WIDTH,
) -> np.ndarray:
    """The image (RGB uint8) upscaled to ``min_width`` if narrower, with a banner above (score, pass
    flag, failed checks, reason) and a legend below (colour swatch + label per item). Returns RGB."""
    from PIL import Image, ImageDraw

    img = np.ascontiguousarray(np.asarray(image)[..., :3]).astype(np.uint8)
    if img.ndim == 2:
        img = np.stack([img] * 3, axis=-1)
    h, w = img.shape[:2]
    if w < min_width:
        new_h = max(1, round(h * min_width / w))
        img = np.asarray(Image.fromarray(img).resize((min_width, new_h), Image.Resampling.NEAREST))
        h, w = img.shape[:2]
    size = max(14, min(22, w // 40))
    font, bold = _font(size), _font(size + 4)
    line_h = size + 6
    verdict = "PASS" if passed else ("FAIL" if passed is not None else "NO VERDICT")
    title = f"{verdict}   score {score:.3f}" if score is not None else verdict
    failed = failed_checks(checks)
    n_checks = len(checks) if checks else 0
    body = [f"failed checks ({len(failed)} of {n_checks}): " + ", ".join(failed)] if failed else \
        ([f"all {n_checks} checks passed"] if n_checks else [])
    if reason:
        body.append(f"reason: {reason}")
    body = _wrap(body, w - 16, size)[:8]
    banner_h = 10 + (size + 10) + len(body) * line_h + 6
    items = list(legend or [])
    legend_h = (8 + len(items) * line_h + 4) if items else 0
    canvas = Image.new("RGB", (w, banner_h + h + legend_h), (255, 255, 255))
    draw = ImageDraw.Draw(canvas)
    colour = PASS_RGB if passed else (FAIL_RGB if passed is not None else (110, 110, 110))
    draw.rectangle([0, 0, w, banner_h - 1], fill=colour)
    draw.text((8, 8), title, fill=(255, 255, 255), font=bold)
    y = 10 + size + 10
    for line in body:
        draw.text((8, y), line, fill=(255, 255, 255), font=font)
        y += line_h
    canvas.paste(Image.fromarray(img), (0, banner_h))
    y = banner_h + h + 8
    for label, rgb in items:
        draw.rectangle([8, y + 2, 8 + size, y + 2 + size], fill=tuple(int(c) for c in rgb), outline=(0, 0, 0))
        draw.text((16 + size, y), label, fill=(0, 0, 0), font=font)
        y += line_h
    return np.asarray(canvas)
