"""The camera of a video, frame against frame (issue 24, principle 5): the pieces :mod:`vreason.verify.explain`
uses to follow an honest camera through a video — the first frame's warp interpolated to the last frame's over
the presentation times, a frame re-aligned on its own when that does not explain it, and the still pixels that
may pull a camera estimate (what the task changes must not).

Warps are 2×3 float matrices mapping a frame's pixel coordinates to the reference's (the first frame's or the
start image's)."""

from __future__ import annotations

import numpy as np

from vreason.verify.frame_check import BORDER_PX, _inner
from vreason.verify.residual import chan_max

IDENT = np.array([[1, 0, 0], [0, 1, 0]], np.float64)


def lerp(a: np.ndarray, b: np.ndarray, u: float) -> np.ndarray:
    """The warp a fraction ``u`` of the way from ``a`` to ``b`` (entry by entry)."""
    return (1 - u) * a + u * b


def warp_onto(frame: np.ndarray, frame_to_ref: np.ndarray, size: tuple[int, int],
              border: int = BORDER_PX) -> tuple[np.ndarray, np.ndarray]:
    """The frame on the reference's grid and the pixels it covers: a border band as wide as the warp moves the
    picture's corners (+1 px) is not covered (conservative, and no second warp), nor the outer ``border`` px."""
    import cv2

    w, h = size
    moved = moved_px(frame_to_ref, IDENT, size)
    valid = _inner((h, w), border)
    if moved <= 0.05:
        return np.ascontiguousarray(frame[..., :3]), valid
    ref_to_frame = cv2.invertAffineTransform(frame_to_ref.astype(np.float64))
    out = cv2.warpAffine(np.ascontiguousarray(frame[..., :3]), ref_to_frame, (w, h),
                         flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP, borderMode=cv2.BORDER_REPLICATE)
    return out, _inner((h, w), max(border, int(np.ceil(moved)) + 1))


def grey(frame: np.ndarray) -> np.ndarray:
    """The frame's luma as float32 (ECC's and the phase correlation's input)."""
    import cv2

    return cv2.cvtColor(np.ascontiguousarray(frame[..., :3]), cv2.COLOR_RGB2GRAY).astype(np.float32)


def against_first(frame: np.ndarray, first_grey: np.ndarray, init: np.ndarray | None = None,
                  mask: np.ndarray | None = None, extra: tuple[np.ndarray, ...] = ()) -> np.ndarray | None:
    """The similarity mapping ``frame``'s pixels onto the video's first frame (ECC, coarse to fine, from
    ``init`` or the identity): two frames of one camera and one codec align far more precisely than a frame and
    a rendering. ``mask``: the first frame's pixels the task never changes (what moved must not pull the camera).
    None when ECC does not converge or the move is not a plausible camera's."""
    from vreason.verify.relative import relative

    return relative(frame if frame.ndim == 2 else grey(frame), first_grey, init, mask, extra)


def shifted(frame_g: np.ndarray, first_grey: np.ndarray, init: np.ndarray,
            mask: np.ndarray | None = None) -> np.ndarray | None:
    """``init`` (frame → first frame) corrected by the phase-correlation shift left between the frame warped by
    it and the first frame: a hand-held camera's shake on top of the interpolated camera. One warp and one FFT,
    ≈ 1/100 of the ECC search of :func:`against_first` (match3 hard, 2-px shake: 5 ECC fits of ≈ 0.35 s per frame).
    None when the correlation is weak, the shift beyond a plausible camera's, or the corrected camera does not
    bring the frame nearer the first frame over ``mask`` (the still pixels; default all but an 8-px border) than
    ``init`` does (mean absolute difference): a shake moves the whole picture, and undoing it brings the still
    pixels home. One part of the scene moved by 2 px pulls the correlation's sub-pixel peak half way (match3, a
    cell moved by (−2, −2), P1 shift_background, case seed 563374762): the camera shifted by 1 px put that cell
    and the rest of the picture each 1 px off, inside the residual's 1-px edge range — a whole scene explained
    by a camera that never moved, while the still pixels differed more at the shift than at ``init``."""
    import cv2

    from vreason.verify.relative import phase_shift, still_cost, still_pixels

    h, w = first_grey.shape
    warped = cv2.warpAffine(frame_g, init, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    shift = phase_shift(warped, first_grey)
    if shift is None:
        return None
    out = init.astype(np.float64).copy()
    out[:, 2] += shift[:, 2]
    keep = still_pixels((h, w), mask)
    if keep.any():
        ref = first_grey[keep]
        if still_cost(frame_g, out, keep, ref) >= float(np.abs(warped[keep] - ref).mean()):
            return None
    return out


GRID_PX = 3
""":func:`grid_shift` searches whole-pixel shifts up to this far (px) around the interpolated camera: a shake."""
GRID_TRUNC = 24
"""Levels at which a pixel's difference stops counting in :func:`grid_shift`'s cost: content that moved weighs as
much as the pixels it covers, not as much as its contrast."""


def grid_shift(frame_g: np.ndarray, first_grey: np.ndarray, init: np.ndarray,
               mask: np.ndarray | None = None, px: int = GRID_PX) -> np.ndarray | None:
    """``init`` (frame → first frame) corrected by the whole-pixel shift within ``px`` that brings the most still
    pixels home: the least truncated mean absolute difference (:data:`GRID_TRUNC`) over ``mask``'s pixels (default
    all but an 8-px border); None when no shift beats ``init`` itself. The phase correlation of :func:`shifted`
    and the search of :func:`against_first` let the edges of content that moved choose the shift along a
    direction in which the still part has no texture: sorting's shelf is a horizontal line, and a bar lifted and
    moving sideways pulled both to an 11-px sideways shake that a 2-px shake had not made (the still pixels,
    blank there, cost the same; honest ``shake2px``, easy, suite seed 19065: 4,011 px unexplained along the
    shelf). Content that moved covers few pixels and weighs that little here."""
    import cv2

    from vreason.verify.relative import still_pixels

    h, w = first_grey.shape
    warped = cv2.warpAffine(frame_g, init, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    keep = still_pixels((h, w), mask)
    keep[:px + 8, :] = keep[h - px - 8:, :] = False
    keep[:, :px + 8] = keep[:, w - px - 8:] = False
    if not keep.any():
        return None
    m8 = keep.astype(np.uint8)[px:h - px, px:w - px]
    ref = np.ascontiguousarray(first_grey[px:h - px, px:w - px]).astype(np.uint8)
    cap = np.full(ref.shape, GRID_TRUNC, np.uint8)
    costs = {}
    for dy in range(-px, px + 1):
        for dx in range(-px, px + 1):
            moved = np.ascontiguousarray(warped[px + dy:h - px + dy, px + dx:w - px + dx]).astype(np.uint8)
            costs[dx, dy] = cv2.mean(cv2.min(cv2.absdiff(moved, ref), cap), mask=m8)[0]
    best = min(costs, key=lambda k: (costs[k], abs(k[0]) + abs(k[1])))
    if best == (0, 0) or costs[best] >= costs[0, 0]:
        return None
    out = init.astype(np.float64).copy()
    out[:, 2] -= best
    return out


def still_mask(start: np.ndarray, final: np.ndarray | None, a0: np.ndarray) -> np.ndarray | None:
    """The first frame's pixels where the start and the final picture agree (8 px from any change), in the first
    frame's coordinates (``a0``: first frame → start); None without a final picture or when under 5% of it."""
    import cv2

    if final is None:
        return None
    same = (chan_max(cv2.absdiff(start, final)) == 0).astype(np.uint8)
    same = cv2.erode(same, np.ones((17, 17), np.uint8))
    h, w = start.shape[:2]
    mask = cv2.warpAffine(same, a0.astype(np.float64), (w, h), flags=cv2.INTER_NEAREST | cv2.WARP_INVERSE_MAP)
    return mask if mask.mean() >= 0.05 else None


def relative_of(m: np.ndarray, a0: np.ndarray) -> np.ndarray:
    """The frame → first-frame warp that, composed with the first frame's ``a0``, gives ``m``."""
    return compose(invert(a0), m)


def compose(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The 2×3 warp of ``a`` after ``b`` (x ↦ a(b(x)))."""
    return (np.vstack([a, [0, 0, 1]]) @ np.vstack([b, [0, 0, 1]]))[:2]


def invert(m: np.ndarray) -> np.ndarray:
    import cv2

    return cv2.invertAffineTransform(m.astype(np.float64))



def moved_px(a: np.ndarray, b: np.ndarray, size: tuple[int, int]) -> float:
    """Largest displacement (px) between two frame→reference warps at the picture's corners."""
    w, h = size
    pts = np.array([[0, 0, 1], [w, 0, 1], [0, h, 1], [w, h, 1]], np.float64)
    return float(np.abs(pts @ (a - b).T).max())
