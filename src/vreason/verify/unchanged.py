"""Whether two frames of one video show the same picture (issue 24): the exposure undone, then the temporal
residual — a held end state is unchanged frame to frame (:func:`unchanged`)."""

from __future__ import annotations

import numpy as np

from vreason.verify.align import gain_offset, undo_gain
from vreason.verify.clip import declip
from vreason.verify.frame_check import BORDER_PX, GAIN_SAMPLES, TOL_PATCH_TEMPORAL, TOL_TEMPORAL, _inner
from vreason.verify.residual import MAX_BLOB, residual


def unchanged(frame: np.ndarray, ref: np.ndarray, free: np.ndarray | None = None, *,
              max_blob: int = MAX_BLOB, camera: bool = False) -> tuple[bool, int]:
    """Whether ``frame`` shows the same picture as ``ref`` (another frame of the same video, same size): the
    exposure fitted and undone, then the temporal residual (:data:`TOL_TEMPORAL`, :data:`TOL_PATCH_TEMPORAL`).
    Returns (unchanged, largest changed blob in px). A held end state is unchanged frame to frame.
    ``camera``: a frame the residual finds changed is aligned onto ``ref`` first (a similarity,
    :func:`vreason.verify.relative.relative`: a hand-held camera shakes a held picture) and measured again inside
    the border the move leaves covered."""
    ok, blob = _unchanged(frame, ref, free, max_blob, _inner(ref.shape[:2], BORDER_PX))
    if ok or not camera:
        return ok, blob
    import cv2

    from vreason.verify.relative import relative

    grey = [cv2.cvtColor(np.ascontiguousarray(a[..., :3]), cv2.COLOR_RGB2GRAY).astype(np.float32)
            for a in (frame, ref)]
    rel = relative(grey[0], grey[1])
    if rel is None:
        return ok, blob
    h, w = ref.shape[:2]
    corners = np.array([[0, 0, 1], [w, 0, 1], [0, h, 1], [w, h, 1]], np.float64)
    moved = float(np.abs(corners @ rel.T - corners[:, :2]).max())
    if moved <= 0.05:
        return ok, blob
    geo = cv2.warpAffine(np.ascontiguousarray(frame[..., :3]), rel, (w, h), flags=cv2.INTER_LINEAR,
                         borderMode=cv2.BORDER_REPLICATE)
    return _unchanged(geo, ref, free, max_blob, _inner((h, w), max(BORDER_PX, int(np.ceil(moved)) + 1)))


def _unchanged(frame: np.ndarray, ref: np.ndarray, free: np.ndarray | None, max_blob: int,
               valid: np.ndarray) -> tuple[bool, int]:
    gain, off = gain_offset(frame, ref, max_samples=GAIN_SAMPLES)
    # a clipped observation only bounds the true value (declip): numseq's honest flicker (±2.4%) clipped the page
    # to 255 in one frame of the held end and not in the last (245), and 255 undone stayed 255 — a 78-px blob
    # 10 levels off, over the temporal patch tolerance (case seed 913504710, twelfth session)
    fixed = declip(frame, undo_gain(frame, gain, off), ref, gain, off)
    res = residual(fixed, ref, free, valid=valid, tol=TOL_TEMPORAL, tol_patch=TOL_PATCH_TEMPORAL)
    return res.explained(max_blob), res.largest_blob
