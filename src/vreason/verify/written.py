"""A written answer stays (issue 24, principle 2): the scene of a family whose only change is an answer written
into free regions (an arithmetic result, a sudoku's blank cells, a number sequence's "?" cards).

Anything may be written there, in any honest style (:func:`vreason.verify.explain.explain_video`'s free pixels),
but what was written does not come and go: a pixel of a free region that left the range of the start image around
it (within :data:`SHIFT_PX`) by more than :data:`CHANGED` levels — ink written where the start image is plain — is
*written* once it did so in two frames in a row or as part of a connected change of over
:data:`~vreason.verify.residual.MAX_BLOB` px (a digit that appears for one frame; a codec's speck is smaller); a
later frame where a connected patch of over that many
written pixels is back within :data:`RETURNED` levels of the start image lost part of the answer — a digit
dropped for a frame, an answer shown and taken back — unless some changed pixel lies within :data:`SHIFT_PX` of
it (a shaking camera moves the strokes). The two levels are apart (hysteresis), so a fade or a codec's flicker
around one level does not count. Not tracked: the start image's own ink and its 3-px surround (a printed "?"
wiped and drawn back). The suite's honest videos write and never pass anything over the answer; a hand or a pen
crossing it (real footage) would read as written and then gone.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from vreason.verify.residual import MAX_BLOB

CHANGED = 80
"""A pixel that differs from the start image by more than this on some channel (after the frame's exposure was
undone) is changed: written ink is ≥ 150 levels from the page."""
RETURNED = 35
"""A written pixel this close to the start image again (every channel) was unwritten: the residual's own
per-pixel tolerance is 20–40 levels after a codec."""

SHIFT_PX = 3
"""How far the camera may move the picture against the start image's grid (a 2-px shake, a slow zoom): a pixel is
compared with the range of the start image within this many px of it (so the edges of printed lines next to a
free region never read as written), and a written pixel with a changed pixel this close is not lost."""


class WrittenKept:
    """Tracks the written pixels of ``free`` frame by frame (:meth:`check`)."""

    def __init__(self, start: np.ndarray, free: np.ndarray, *, max_blob: int = MAX_BLOB) -> None:
        import cv2

        ys, xs = np.nonzero(free)
        if len(xs):
            self.box = (int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1)
        else:
            self.box = (0, 0, 1, 1)
        x0, y0, x1, y1 = self.box
        pad = SHIFT_PX
        big = np.ascontiguousarray(start[max(0, y0 - pad):y1 + pad, max(0, x0 - pad):x1 + pad, :3])
        k = np.ones((2 * SHIFT_PX + 1,) * 2, np.uint8)
        oy, ox = y0 - max(0, y0 - pad), x0 - max(0, x0 - pad)
        cut = (slice(oy, oy + y1 - y0), slice(ox, ox + x1 - x0))
        self.lo = cv2.erode(big, k)[cut].astype(np.int16)  # the start image's range around each pixel
        self.hi = cv2.dilate(big, k)[cut].astype(np.int16)
        self.start = start[y0:y1, x0:x1, :3].astype(np.int16)
        self.free = free[y0:y1, x0:x1].astype(bool)
        self.max_blob = max_blob
        self.written = np.zeros(self.free.shape, bool)
        self._seen: tuple[int, np.ndarray] | None = None  # the last frame committed and its changed pixels
        self._pending: tuple[int, np.ndarray] | None = None  # this frame's last check, committed at the next

    def check(self, i: int, frame: np.ndarray) -> str | None:
        """Why frame ``i`` (on the start image's grid, exposure undone) lost written pixels (None: it did not).
        Frames come in order. A frame may be checked more than once (the explainer re-aligns a frame the first
        warp did not explain): its last check is the one committed, when the next frame comes."""
        import cv2

        if self._pending is not None and self._pending[0] != i:
            self._commit(*self._pending)
        x0, y0, x1, y1 = self.box
        f = frame[y0:y1, x0:x1, :3].astype(np.int16)
        out = np.maximum(self.lo - f, f - self.hi).max(axis=2)
        changed = (out > CHANGED) & self.free
        self._pending = (i, changed)
        near = cv2.dilate(changed.astype(np.uint8), np.ones((2 * SHIFT_PX + 1,) * 2, np.uint8)) > 0
        back = (np.abs(f - self.start).max(axis=2) <= RETURNED) & self.written & ~near
        area, (x, y, w, h) = _largest(back)
        if area > self.max_blob:
            return (f"{area} px of what was written at {[x0 + x, y0 + y, x0 + x + w, y0 + y + h]} are gone (a "
                    "written answer stays)")
        return None

    def _commit(self, i: int, changed: np.ndarray) -> None:
        import cv2

        steady = changed & self._seen[1] if self._seen is not None and self._seen[0] < i else np.zeros_like(changed)
        n, lab, stats, _ = cv2.connectedComponentsWithStats(changed.astype(np.uint8), connectivity=8)
        big = np.nonzero(stats[1:, cv2.CC_STAT_AREA] > self.max_blob)[0] + 1
        self.written |= steady | np.isin(lab, big)
        self._seen = (i, changed)


def _largest(mask: np.ndarray) -> tuple[int, tuple[int, int, int, int]]:
    """The area and (x, y, w, h) of the largest 8-connected blob of ``mask`` (0 when none)."""
    import cv2

    n, _, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8), connectivity=8)
    if n <= 1:
        return 0, (0, 0, 0, 0)
    j = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    return int(stats[j, cv2.CC_STAT_AREA]), tuple(int(v) for v in stats[j, :4])


def written_scene(start: np.ndarray, free: np.ndarray, final: np.ndarray | None = None) -> Any:
    """The :class:`~vreason.verify.explain.Scene` of a still picture whose ``free`` regions take an answer that,
    once written, stays (:class:`WrittenKept`)."""
    from vreason.verify.explain import Scene

    kept = WrittenKept(start, free)

    def expect(i: int, frame: np.ndarray) -> tuple[np.ndarray, np.ndarray] | str:
        lost = kept.check(i, frame)
        return lost if lost else (start, free)

    return Scene(start, expect, final=final)
