"""The camera between two frames of one video (issue 24, principles 2 and 5): :func:`relative` (the similarity
bringing a frame onto another frame of the same video, quick candidates first, ECC only when none is settled) and
:func:`phase_shift` (the plain shift). :func:`vreason.verify.align.align` is the search against a rendering."""

from __future__ import annotations

import numpy as np

from vreason.verify.align import MAX_SHIFT, _ecc, _invert, _plausible, _similar


def relative(frame_g: np.ndarray, ref_g: np.ndarray, init: np.ndarray | None = None,
             mask: np.ndarray | None = None, extra: tuple[np.ndarray, ...] = ()) -> np.ndarray | None:
    """The similarity mapping the grey ``frame_g``'s pixels onto ``ref_g`` (another frame of the same video,
    same size). Candidates: ECC coarse to fine from ``init`` (frame → reference; default the identity), the
    phase-correlation shift, and ECC from that shift at half and full size only; the one whose warped frame
    differs least from the reference over ``mask`` (mean absolute difference) wins. A frame shaken by 2 px
    against one line of 40-px text made the quarter-size level diverge (a line a few px high there: ECC turned
    it upside down, from the identity and from the true shift alike; measured on arithmetic, seed 11); the
    half-size level finds the shift exactly. While an object moves across pixels the mask keeps (toolqa: a
    tool mid-carry, outside its start and final places), ECC converged to a plausible but wrong zoom of
    1.004–1.02, 1–3 px off; the plain shift was right (mean difference 0.2–0.6 against 1.1–1.3 levels).
    ``mask``: the reference's pixels the task never changes. ``extra``: more candidates (frame → reference) a
    caller found otherwise, scored alike (a plausible one only). Without ``init`` the identity is scored with them:
    a fit pulled off by what changed does not win over no move. None when no estimate is a plausible camera's.

    The quick candidates (``init`` or the identity, the two shifts, ``extra``) are scored first, and the best is
    returned at once when it is settled (:func:`_settled`): the ECC fits end where it is anyway. On 205 calls
    of six families' by-principle cases and zoom/shake variants: 134 s → 24 s of CPU; every camera within 0.05 px
    of the full search's, except on cuts to other content (≤ 0.54 px; those frames are unexplained either way)."""

    h, w = ref_g.shape
    ident = np.array([[1, 0, 0], [0, 1, 0]], np.float64)
    keep = still_pixels((h, w), mask)
    ref_v = ref_g[keep]

    def cost(rel: np.ndarray) -> float:
        return still_cost(frame_g, rel, keep, ref_v)

    shift = phase_shift(frame_g, ref_g)
    # the shift of the still pixels alone: large moving objects lead the plain correlation
    still = _masked_shift(frame_g, ref_g, mask) if mask is not None else None
    extra = tuple(m for m in extra if _plausible(m, (w, h)))
    if keep.any():
        start = ident if init is None else init.astype(np.float64)
        quick = [m for m in (start, shift, still, *extra) if m is not None and _plausible(m, (w, h))]
        if quick:
            best = min(quick, key=cost)
            if _settled(best, cost, (w, h)):
                return best
    # no move stays in the running: ECC pulled by an object that appeared (a copy on a blank page) converged to a
    # 0.7% zoom costing 1.33 levels against the identity's 1.18 (test_verify_explain, seed 21863604). A given
    # ``init`` is not: the caller tried it (explain re-aligns a frame its interpolated camera left unexplained)
    cands: list[np.ndarray] = [ident] if keep.any() and init is None else []

    def ecc_from(start: np.ndarray, levels: tuple[int, ...]) -> None:
        got = _ecc(frame_g, ref_g.copy(), _invert(start), mask, levels)  # ref → frame
        if got is not None:
            rel = _invert(_similar(got[0]))
            if _plausible(rel, (w, h)):
                cands.append(rel)

    ecc_from(ident if init is None else init, (4, 2, 1))
    if shift is not None:
        cands.append(shift)
        ecc_from(shift, (2, 1))
    if still is not None:
        cands.append(still)
        ecc_from(still, (2, 1))
    cands += extra
    found = cands[1:] if cands and cands[0] is ident else cands
    if not found:  # no estimate at all: no camera (the start alone is not one)
        return None
    if not keep.any():
        return found[0]
    return min(cands, key=cost)


def still_pixels(shape: tuple[int, int], mask: np.ndarray | None = None) -> np.ndarray:
    """The pixels a camera candidate is scored on: all but an 8-px border, within ``mask`` (the still ones)."""
    keep = np.zeros(shape, bool)
    keep[8:-8, 8:-8] = True
    if mask is not None:
        keep &= mask.astype(bool)
    return keep


def still_cost(frame_g: np.ndarray, rel: np.ndarray, keep: np.ndarray, ref_v: np.ndarray) -> float:
    """Mean absolute difference between the grey ``frame_g`` warped by ``rel`` (frame → reference) and the
    reference's values ``ref_v`` over ``keep`` (:func:`still_pixels`): how well a candidate camera brings the
    still pixels home."""
    import cv2

    h, w = keep.shape
    warped = cv2.warpAffine(frame_g, rel, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return float(np.abs(warped[keep] - ref_v).mean())


SETTLE_PX = (0.5, 1.0)
""":func:`relative`'s nudges: each moves the picture's corners this far (px)."""
SETTLE_GAIN = 1.02
"""A quick candidate is settled when every nudge raises its cost by at least this factor."""


def _nudges(size: tuple[int, int], px: float) -> list[np.ndarray]:
    """Small similarity moves (3×3) that shift the picture's corners by ``px``: ±x, ±y, a zoom in and out and a
    turn either way about the centre."""
    w, h = size
    cx, cy = w / 2, h / 2
    a = px / float(np.hypot(cx, cy))
    out = [np.array([[1, 0, dx], [0, 1, dy], [0, 0, 1]], np.float64)
           for dx, dy in ((px, 0), (-px, 0), (0, px), (0, -px))]
    for s, t in ((1 + a, 0.0), (1 - a, 0.0), (np.cos(a), np.sin(a)), (np.cos(a), -np.sin(a))):
        out.append(np.array([[s, -t, cx - s * cx + t * cy], [t, s, cy - t * cx - s * cy], [0, 0, 1]], np.float64))
    return out


def _settled(rel: np.ndarray, cost, size: tuple[int, int]) -> bool:  # noqa: ANN001
    """True when every nudge of ``rel`` (:data:`SETTLE_PX`, :func:`_nudges`) raises ``cost`` by
    :data:`SETTLE_GAIN`: ``rel`` sits at the bottom of a well no wider than a pixel, where ECC from it or from a
    candidate as good ends too (a slow zoom's nearest shift was never settled in the measurement of
    :func:`relative`: a zoom nudge lowered its cost, 0.79–0.99×). A plateau — a camera far from every quick
    candidate, where no nudge reaches the picture's edges — is not settled."""
    c0 = cost(rel)
    m = np.vstack([rel, [0, 0, 1]])
    return all(cost((n @ m)[:2]) >= SETTLE_GAIN * c0 for px in SETTLE_PX for n in _nudges(size, px))


def _masked_shift(frame_g: np.ndarray, ref_g: np.ndarray, mask: np.ndarray) -> np.ndarray | None:
    """The frame → reference shift of the phase correlation weighted by ``mask`` (softened: a hard mask edge that
    stays put pulls the peak towards no shift), or None when the correlation is weak or the shift implausible.
    Sorting under a 2-px shake: a lifted bar led the plain correlation to its own move (dy −77 … −107 px) and
    ECC from the identity diverged; the still pixels' shift was the shake (issue 24)."""
    import cv2

    wt = cv2.GaussianBlur(mask.astype(np.float32), (0, 0), 3)
    total = float(wt.sum())
    if total < 1:
        return None
    r, f = ref_g.astype(np.float32), frame_g.astype(np.float32)
    r = (r - float((r * wt).sum()) / total) * wt
    f = (f - float((f * wt).sum()) / total) * wt
    return phase_shift(f, r)


def phase_shift(frame_g: np.ndarray, ref_g: np.ndarray) -> np.ndarray | None:
    """The frame → reference translation (2×3) by phase correlation of two grey images of one size, or None when
    the correlation is weak (response ≤ 0.1) or the shift beyond :data:`MAX_SHIFT` (not a camera's)."""
    import cv2

    h, w = ref_g.shape
    (dx, dy), resp = cv2.phaseCorrelate(np.array(ref_g, np.float32), np.array(frame_g, np.float32))
    if resp <= 0.1 or np.hypot(dx, dy) > MAX_SHIFT * max(w, h):
        return None
    return np.array([[1, 0, -dx], [0, 1, -dy]], np.float64)
