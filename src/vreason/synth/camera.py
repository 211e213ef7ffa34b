"""The camera of an honest video undone for a verifier's own reading (issue 24): what
:func:`vreason.verify.explain.explain_video` absorbs (a constant rotation, a slow zoom, a camera's hue turn),
applied to the frames a family's checks read, so that its cell / mark readings see the task's grid."""

from __future__ import annotations

import numpy as np

from vreason.verify.hue import hue_undone  # noqa: F401  (re-exported: the families' callers)


def camera_undone(frames: list[np.ndarray], times: np.ndarray, start: np.ndarray,
                  final: np.ndarray, *, turn_px: float | None = None) -> list[np.ndarray]:
    """The frames (at ``start``'s size) brought onto the start image's grid: the first frame aligned to the
    start, the last to the final picture, the warp interpolated over the frame times in between (a constant
    rotation, a slow zoom), as :func:`vreason.verify.explain.explain_video` does; an unaligned end keeps the
    first frame's warp. ``turn_px``: when neither end's rotation and zoom move a corner (about the picture's
    centre) by more than this, the frames are returned as they are (a shake is left to the caller's own
    stabilisation, which resamples once)."""
    import cv2

    from vreason.verify.align import align

    if not frames:
        return frames
    h, w = start.shape[:2]
    a0 = align(frames[0], start, quick=True, photometric=False)
    w0 = a0.warp if a0.ok else np.array([[1, 0, 0], [0, 1, 0]], np.float64)
    aN = align(frames[-1], final, quick=True, photometric=False) if len(frames) > 1 else a0
    wN = aN.warp if aN.ok else w0
    if turn_px is not None:
        off = np.array([[-w / 2, -h / 2], [w / 2, -h / 2], [-w / 2, h / 2], [w / 2, h / 2]])
        if all(float(np.abs(off @ (m[:, :2] - np.eye(2)).T).max()) <= turn_px for m in (w0, wN)):
            return frames
    t = np.asarray(times, np.float64)
    span = float(t[-1] - t[0]) or 1.0
    corners = np.array([[0, 0, 1], [w, 0, 1], [0, h, 1], [w, h, 1]], np.float64)
    ident = np.array([[1, 0, 0], [0, 1, 0]], np.float64)
    out = []
    for f, ti in zip(frames, t, strict=True):
        u = float(ti - t[0]) / span
        m = (1 - u) * w0 + u * wN
        if float(np.abs(corners @ (m - ident).T).max()) <= 0.05:
            out.append(f)
            continue
        out.append(cv2.warpAffine(np.ascontiguousarray(f[..., :3]), cv2.invertAffineTransform(m), (w, h),
                                  flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP, borderMode=cv2.BORDER_REPLICATE))
    return out
