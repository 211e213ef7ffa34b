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
around one level does not count. An answer is also not shown and taken back while it fades in, under those two
levels: each free pixel's *ink level* (how far it lies outside the start image's range) is held at the highest it
showed in two frames in a row (or, above :data:`SHOWN` levels, in one frame as part of a connected patch of over
``MAX_BLOB`` px), and a frame where a connected patch of over ``MAX_BLOB`` px fell more than :data:`FADED` levels
below its held level — or, held above ``SHOWN``, back within :data:`GONE` levels of the start image — with no pixel
within :data:`SHIFT_PX` still that dark, lost part of what it showed.

The start image's own ink and its 3-px surround are not tracked so; there, and
everywhere in the free regions, nothing comes and goes: a connected patch of over that many px of a frame whose
values lie more than :data:`CHANGED` levels outside the 1-px range of each of the next 1–:data:`FLICKER_FRAMES`
frames (nothing like them within 1 px there: a shake that moved a stroke keeps it) and within :data:`RETURNED`
levels of the frame after them was taken away and drawn back — a
printed "?" wiped for a frame together with the answer fading in over it (numseq, ``VREASON_ADV_SEED=246666651``)
— unless some pixel within :data:`SHIFT_PX` of it changed for good (the camera). The suite's honest videos write
and never pass anything over the answer; a hand or a pen crossing it (real footage) would read as written and
then gone.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from vreason.verify.residual import MAX_BLOB, largest_component

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
FADED = CHANGED - RETURNED
"""A free pixel whose ink (its distance outside the start image's range) fell this far below the level it once
held — in two frames in a row, or in one frame as part of a patch over ``max_blob`` px above :data:`SHOWN` — with
no pixel within :data:`SHIFT_PX` still that dark, lost part of the answer: the same hysteresis as :data:`CHANGED` /
:data:`RETURNED`, at every level, so an answer fading in cannot be shown whole (or taken away) for a few frames
and go back to its fade (the written families' P2 ``jump``, suite seed 5, case seeds 187208523,
33090419, 865640924, 761904750)."""
SHOWN = 30
"""Ink this far outside the start image's range, in one frame as part of a connected patch of over ``max_blob`` px,
is shown: its level is held (a digit's first fade steps, at 43–60 levels, painted over for 1–2 frames and back at
72–214 were explained, sudoku and arithmetic, suite seed 5). The codec's specks are smaller; the suite's honest
fades only add ink."""
GONE = 10
"""Shown ink (over :data:`SHOWN`) back within this many levels of the start image's range, with no pixel within
:data:`SHIFT_PX` darker, is gone even where its fall is under :data:`FADED`."""
FLICKER_FRAMES = 5
"""The longest run of frames a patch may be seen gone (or changed) before it comes back and still count as taken
away and drawn back: the principle tests' drops and blank frames last 1–3 frames, their jumps (to the first frame:
a wiped "?" shown again) 2–5; a longer absence is a rewrite."""


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
        self.level = np.zeros(self.free.shape, np.int16)  # the ink level each free pixel once held
        self._seen: tuple[int, np.ndarray, np.ndarray] | None = None  # the last frame committed, its changed
        # pixels and its ink levels
        self._pending: tuple[int, np.ndarray, np.ndarray, np.ndarray] | None = None  # this frame's last check
        # (changed pixels, crop, ink levels), committed at the next
        self._crops: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # the crops of the last FLICKER_FRAMES
        # + 1 frames committed, in order, each with its 1-px range (least, greatest)

    def check(self, i: int, frame: np.ndarray) -> str | None:
        """Why frame ``i`` (on the start image's grid, exposure undone) lost written pixels (None: it did not).
        Frames come in order. A frame may be checked more than once (the explainer re-aligns a frame the first
        warp did not explain): its last check is the one committed, when the next frame comes."""
        import cv2

        if self._pending is not None and self._pending[0] != i:
            self._commit(*self._pending, skipped=i - self._pending[0] - 1)
        x0, y0, x1, y1 = self.box
        f = frame[y0:y1, x0:x1, :3].astype(np.int16)
        out = np.maximum(self.lo - f, f - self.hi).max(axis=2).clip(0) * self.free
        changed = out > CHANGED
        self._pending = (i, changed, f, out)
        k = np.ones((2 * SHIFT_PX + 1,) * 2, np.uint8)
        near = cv2.dilate(changed.astype(np.uint8), k) > 0
        back = (np.abs(f - self.start).max(axis=2) <= RETURNED) & self.written & ~near
        area, (x, y, w, h) = largest_component(back)
        if area > self.max_blob:
            return (f"{area} px of what was written at {[x0 + x, y0 + y, x0 + x + w, y0 + y + h]} are gone (a "
                    "written answer stays)")
        near = cv2.dilate(out, k)  # the darkest ink within SHIFT_PX
        faded = (self.level - near > FADED) | ((self.level > SHOWN) & (near <= GONE))
        area, (x, y, w, h) = largest_component(faded)
        if area > self.max_blob:
            drop = int(np.median((self.level - out)[faded]))
            return (f"{area} px of what was written at {[x0 + x, y0 + y, x0 + x + w, y0 + y + h]} faded by "
                    f"{drop} levels from what they showed (a written answer stays)")
        return self._flicker(i, f)

    def _flicker(self, i: int, f: np.ndarray) -> str | None:
        """Why frame ``i``'s crop ``f`` shows again what 1–:data:`FLICKER_FRAMES` frames before it took away
        (None: nothing came back)."""
        import cv2

        crops = self._crops
        if len(crops) < 2:
            return None
        # what came back lies outside the last frame's 1-px range by over CHANGED - RETURNED: only there is searched
        _, lo, hi = crops[-1]
        cand = (np.maximum(lo - f, f - hi).max(axis=2) > CHANGED - RETURNED) & self.free
        if np.count_nonzero(cand) <= self.max_blob:
            return None
        ys, xs = np.nonzero(cand)
        pad = SHIFT_PX + 2
        h, w = cand.shape
        bx0, by0 = max(0, int(xs.min()) - pad), max(0, int(ys.min()) - pad)
        bx1, by1 = min(w, int(xs.max()) + 1 + pad), min(h, int(ys.max()) + 1 + pad)
        cut = (slice(by0, by1), slice(bx0, bx1))
        f, free = f[cut], cand[cut]
        kernel = np.ones((3, 3), np.uint8)
        f_lo, f_hi = cv2.erode(f, kernel), cv2.dilate(f, kernel)
        for gap in range(1, min(FLICKER_FRAMES, len(crops) - 1) + 1):
            p = crops[-gap - 1][0][cut]
            back = (np.abs(f - p).max(axis=2) <= RETURNED) & free
            for _, q_lo, q_hi in crops[-gap:]:  # what p showed there is nowhere within 1 px in q (a shake keeps it)
                if not back.any():
                    break
                back &= np.maximum(q_lo[cut] - p, p - q_hi[cut]).max(axis=2) > CHANGED
            if np.count_nonzero(back) <= self.max_blob:
                continue
            kept = np.maximum(f_lo - p, p - f_hi).max(axis=2) > CHANGED  # changed for good (the camera moved)
            back &= ~(cv2.dilate(kept.astype(np.uint8), np.ones((2 * SHIFT_PX + 1,) * 2, np.uint8)) > 0)
            area, (x, y, bw, bh) = largest_component(back)
            if area > self.max_blob:
                x0, y0 = self.box[0] + bx0, self.box[1] + by0
                return (f"{area} px at {[x0 + x, y0 + y, x0 + x + bw, y0 + y + bh]} were taken away in frames "
                        f"{i - gap}–{i - 1} and are back in frame {i} (what a free region shows does not come and "
                        "go)")
        return None

    def _commit(self, i: int, changed: np.ndarray, crop: np.ndarray, out: np.ndarray, *, skipped: int = 0) -> None:
        """Frame ``i``'s last check becomes the record; ``skipped`` frames after it were not checked (they showed
        what it showed: :func:`vreason.verify.explain.explain_video` skips a frame whose blocks did not change)."""
        import cv2

        kernel = np.ones((3, 3), np.uint8)
        rec = (crop, cv2.erode(crop, kernel), cv2.dilate(crop, kernel))  # the crop and its 1-px range
        self._crops = (self._crops + [rec] * (1 + max(0, skipped)))[-(FLICKER_FRAMES + 1):]

        before = self._seen is not None and self._seen[0] < i
        steady = changed & self._seen[1] if before else np.zeros_like(changed)
        self.written |= steady | self._patches(changed)
        held = np.minimum(out, self._seen[2]) if before else np.zeros_like(out)
        np.maximum(self.level, np.where(self._patches(out > SHOWN), out, held), out=self.level)
        self._seen = (i, changed, out)

    def _patches(self, mask: np.ndarray) -> np.ndarray:
        """The pixels of ``mask``'s connected patches of over ``max_blob`` px."""
        import cv2

        n, lab, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8), connectivity=8)
        return np.isin(lab, np.nonzero(stats[1:, cv2.CC_STAT_AREA] > self.max_blob)[0] + 1)


def written_scene(start: np.ndarray, free: np.ndarray, final: np.ndarray | None = None) -> Any:
    """The :class:`~vreason.verify.explain.Scene` of a still picture whose ``free`` regions take an answer that,
    once written, stays (:class:`WrittenKept`)."""
    from vreason.verify.explain import Scene

    kept = WrittenKept(start, free)

    def expect(i: int, frame: np.ndarray) -> tuple[np.ndarray, np.ndarray] | str:
        lost = kept.check(i, frame)
        return lost if lost else (start, free)

    return Scene(start, expect, final=final, end_search=True)
