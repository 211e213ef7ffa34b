"""Filled polygon shapes drawn with OpenCV (used by the odd-one-out and sequence families)."""

from __future__ import annotations

import math

import numpy as np

SHAPES = ("circle", "square", "triangle", "diamond", "pentagon", "hexagon", "star", "arrow", "cross")
"""Shape names. ``arrow`` and ``triangle`` show rotation clearly."""

PALETTE: dict[str, tuple[int, int, int]] = {
    "blue": (40, 90, 220),
    "green": (30, 150, 60),
    "purple": (130, 60, 190),
    "teal": (0, 140, 150),
    "yellow": (215, 175, 0),
    "grey": (90, 90, 90),
    "navy": (20, 40, 120),
    "lime": (120, 200, 40),
}
"""Shape colours; none is near red (red is reserved for answer marks)."""


def _regular(n: int, r: float, phase: float) -> list[tuple[float, float]]:
    return [(r * math.cos(phase + 2 * math.pi * k / n), r * math.sin(phase + 2 * math.pi * k / n)) for k in range(n)]


def outline(shape: str, r: float) -> list[tuple[float, float]]:
    """Polygon vertices (centred at 0, unrotated) of ``shape`` with circumradius about ``r``."""
    up = -math.pi / 2
    if shape == "circle":
        return _regular(40, r, 0.0)
    if shape == "square":
        return _regular(4, r, math.pi / 4)
    if shape == "triangle":
        return _regular(3, r, up)
    if shape == "diamond":
        return [(0, -r), (0.65 * r, 0), (0, r), (-0.65 * r, 0)]
    if shape == "pentagon":
        return _regular(5, r, up)
    if shape == "hexagon":
        return _regular(6, r, 0.0)
    if shape == "star":
        pts = []
        for k in range(10):
            rr = r if k % 2 == 0 else 0.45 * r
            a = up + math.pi * k / 5
            pts.append((rr * math.cos(a), rr * math.sin(a)))
        return pts
    if shape == "arrow":  # points up
        return [(0, -r), (0.75 * r, -0.1 * r), (0.3 * r, -0.1 * r), (0.3 * r, r),
                (-0.3 * r, r), (-0.3 * r, -0.1 * r), (-0.75 * r, -0.1 * r)]
    if shape == "cross":
        a, b = 0.3 * r, r
        return [(-a, -b), (a, -b), (a, -a), (b, -a), (b, a), (a, a), (a, b), (-a, b), (-a, a), (-b, a),
                (-b, -a), (-a, -a)]
    raise ValueError(f"unknown shape {shape!r}")


def draw_shape(img: np.ndarray, shape: str, cx: float, cy: float, r: float, color: tuple[int, int, int],
               rotation_deg: float = 0.0) -> None:
    """Draw a filled, anti-aliased shape in place (``rotation_deg`` clockwise on screen)."""
    import cv2

    a = math.radians(rotation_deg)
    ca, sa = math.cos(a), math.sin(a)
    pts = [(cx + x * ca - y * sa, cy + x * sa + y * ca) for x, y in outline(shape, r)]
    poly = np.round(np.array(pts) * 16).astype(np.int32).reshape(-1, 1, 2)
    cv2.fillPoly(img, [poly], tuple(int(c) for c in color), lineType=cv2.LINE_AA, shift=4)


def dashed_rect(img: np.ndarray, x0: int, y0: int, x1: int, y1: int, color: tuple[int, int, int],
                dash: int = 8, thickness: int = 2) -> None:
    """A dashed rectangle outline, in place."""
    import cv2

    col = tuple(int(c) for c in color)
    for xa, ya, xb, yb in ((x0, y0, x1, y0), (x1, y0, x1, y1), (x1, y1, x0, y1), (x0, y1, x0, y0)):
        length = max(abs(xb - xa), abs(yb - ya))
        for s in range(0, length, 2 * dash):
            e = min(length, s + dash)
            p = (xa + (xb - xa) * s // max(1, length), ya + (yb - ya) * s // max(1, length))
            q = (xa + (xb - xa) * e // max(1, length), ya + (yb - ya) * e // max(1, length))
            cv2.line(img, p, q, col, thickness)


def partial_rect(img: np.ndarray, x0: int, y0: int, x1: int, y1: int, frac: float,
                 color: tuple[int, int, int], thickness: int) -> None:
    """The first ``frac`` of a rectangle's perimeter (clockwise from the top-left), in place."""
    import cv2

    if frac <= 0:
        return
    corners = [(x0, y0), (x1, y0), (x1, y1), (x0, y1), (x0, y0)]
    total = 2 * ((x1 - x0) + (y1 - y0))
    left = frac * total
    col = tuple(int(c) for c in color)
    for (xa, ya), (xb, yb) in zip(corners[:-1], corners[1:], strict=True):
        seg = abs(xb - xa) + abs(yb - ya)
        if left <= 0 or seg == 0:
            break
        f = min(1.0, left / seg)
        cv2.line(img, (xa, ya), (int(round(xa + (xb - xa) * f)), int(round(ya + (yb - ya) * f))), col, thickness)
        left -= seg
