"""The camera of an honest video undone for a verifier's own reading (issue 24): what
:func:`vreason.verify.explain.explain_video` absorbs (a constant rotation, a slow zoom, a camera's hue turn),
applied to the frames a family's checks read, so that its cell / mark readings see the task's grid."""

from __future__ import annotations

import numpy as np


def camera_undone(frames: list[np.ndarray], times: np.ndarray, start: np.ndarray,
                  final: np.ndarray) -> list[np.ndarray]:
    """The frames (at ``start``'s size) brought onto the start image's grid: the first frame aligned to the
    start, the last to the final picture, the warp interpolated over the frame times in between (a constant
    rotation, a slow zoom), as :func:`vreason.verify.explain.explain_video` does; an unaligned end keeps the
    first frame's warp."""
    import cv2

    from vreason.verify.align import align

    if not frames:
        return frames
    h, w = start.shape[:2]
    a0 = align(frames[0], start, quick=True, photometric=False)
    w0 = a0.warp if a0.ok else np.array([[1, 0, 0], [0, 1, 0]], np.float64)
    aN = align(frames[-1], final, quick=True, photometric=False) if len(frames) > 1 else a0
    wN = aN.warp if aN.ok else w0
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



def hue_undone(frames: list[np.ndarray], start: np.ndarray) -> list[np.ndarray]:
    """The frames with the first frame's global hue rotation against the start image undone (a camera's white
    balance: read on the start image's saturated areas at a quarter of the size). A per-channel gain cannot model
    a hue turn: left in, the gain fitted per frame against a rendering that gains coloured areas drifts, and
    unchanged coloured objects seem to change (symmetry, 6°: 20 levels of red)."""
    import cv2

    from vreason.synth import frametools as ft

    h, w = start.shape[:2]
    ref = ft.small(start, (max(1, w // 4), max(1, h // 4)))
    sat = cv2.cvtColor(ref.astype(np.uint8), cv2.COLOR_RGB2HSV)[..., 1] > 90
    mask = cv2.erode(sat.astype(np.uint8), np.ones((3, 3), np.uint8)) > 0
    turn = ft.hue_offset(frames[0], ref, mask) if frames else 0.0
    if abs(turn) < 1.0:
        return frames
    return [ft.rotate_hue(np.ascontiguousarray(f[..., :3]), -turn) for f in frames]
