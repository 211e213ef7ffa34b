"""The temporal residual's reference, kept up with what the video settled on (issue 24, principles 1 and 2).

The temporal residual (:mod:`vreason.verify.frame_check`) holds every pixel whose expected picture has not changed
since the start to the video's own first frame: an honest camera re-shows the same content with the same codec
noise, so a faint mark under the rendering residual's codec floor is still unexplained. Where the expected picture
*has* changed — a tile slid into place, a bar set down, a tool carried home — only the rendering residual judged,
for the rest of the video: a dot 33 levels darker on the white "4" of a sliding tile that had come to rest passed
every frame (a thick glyph's interior lies under the rendering residual's per-pixel tolerance of 40 and its 5×5
mean of 18; bench seed 22002, case 1677021026).

So the reference follows the video: while a pixel's expected picture changes, and for :data:`SETTLE_FRAMES` frames
after its last change, the pixel (grown by the codec ring) is left to the rendering residual and its reference
takes each explained frame's corrected value; once it has held still that long, its settled expected picture is
the new one, and the frames after are held to the reference as the first frame's pixels are. Frames skipped as
unchanged (their 4×4 block means within ``SAME_LEVEL`` of the last explained) need no update: they showed what the
reference holds.
"""

from __future__ import annotations

import numpy as np

SETTLE_FRAMES = 3
"""Frames after its expected picture last changed that a pixel (and its codec ring) is still left to the rendering
residual and its reference still follows the video: a low-bitrate P-frame keeps refining a block a frame or two
after the object in it stopped (the codec trail, ``frame_check.TRAIL_RING``)."""

NEVER = -(10**6)


def start_following(ref0, start: np.ndarray) -> None:  # noqa: ANN001  (frame_check._Ref0)
    """Make ``ref0``'s pictures its own (they are written into) and start the per-pixel change record."""
    h, w = start.shape[:2]
    ref0.start = np.array(start, copy=True)
    ref0.frame = np.array(ref0.frame, copy=True)
    ref0.seen = np.array(start, copy=True)
    ref0.changed_at = np.full((h, w), NEVER, np.int32)
    ref0.changes = []
    ref0.recent = None


def settle(ref0, i: int) -> None:  # noqa: ANN001
    """Before frame ``i`` is checked: pixels whose expected picture last changed more than :data:`SETTLE_FRAMES`
    frames ago take it as their settled picture; the pixels changed since (grown by the codec ring) are
    ``ref0.recent``, left to the rendering residual. Measured inside the boxes of the changes not yet settled."""
    import cv2

    from vreason.verify.residual import chan_max

    if ref0.changed_at is None or not ref0.changes:
        ref0.recent = None
        return
    h, w = ref0.changed_at.shape
    grow = ref0.ring
    x0 = max(0, min(b[0] for _, b in ref0.changes) - grow)
    y0 = max(0, min(b[1] for _, b in ref0.changes) - grow)
    x1 = min(w, max(b[2] for _, b in ref0.changes) + grow)
    y1 = min(h, max(b[3] for _, b in ref0.changes) + grow)
    young = (i - ref0.changed_at[y0:y1, x0:x1]) <= SETTLE_FRAMES
    start, seen = ref0.start[y0:y1, x0:x1], ref0.seen[y0:y1, x0:x1]
    due = (chan_max(cv2.absdiff(seen, start)) > 0) & ~young
    if due.any():
        start[due] = seen[due]
    ref0.changes = [(j, b) for j, b in ref0.changes if i - j <= SETTLE_FRAMES]
    if young.any():
        k = np.ones((2 * grow + 1, 2 * grow + 1), np.uint8)
        ref0.recent = np.zeros((h, w), bool)
        ref0.recent[y0:y1, x0:x1] = cv2.dilate(young.astype(np.uint8), k) > 0
    else:
        ref0.recent = None


def follow(ref0, i: int, expected: np.ndarray, raw: np.ndarray, judged: tuple[int, int, int, int],  # noqa: ANN001
           valid: np.ndarray, photometric: bool = True) -> None:
    """After frame ``i`` (``raw``: as decoded, on the reference grid) is explained: record where its ``expected``
    picture changed, and where it changed within :data:`SETTLE_FRAMES` frames or differs from the settled picture
    (grown by the codec ring), let the reference take the frame's pixels (only the ``judged`` region's ``valid``
    ones), corrected by an exposure fitted on this frame — as the first frame's are: the check itself may have
    kept the last frame's exposure while it explained the frame, and under a 2.7% flicker that left a bar 10
    levels brighter in the reference than in every later frame (403 px "changed" once it had come to rest;
    sorting, case seed 392374465). Clipped observations are kept as the first frame's are."""
    import cv2

    from vreason.verify.align import undo_gain
    from vreason.verify.clip import CLIP_NOISE, censored, declip
    from vreason.verify.frame_check import FIRST_EDGE_LEVEL, _edge_band, fitted_gain
    from vreason.verify.residual import chan_max

    if ref0.changed_at is None:
        return
    x0, y0, x1, y1 = judged
    e = expected[y0:y1, x0:x1]
    seen = ref0.seen[y0:y1, x0:x1]
    moved = chan_max(cv2.absdiff(e, seen)) > 0
    if moved.any():
        ref0.changed_at[y0:y1, x0:x1][moved] = i
        seen[...] = e
        bx, by, bw, bh = cv2.boundingRect(moved.astype(np.uint8))
        ref0.changes.append((i, (x0 + bx, y0 + by, x0 + bx + bw, y0 + by + bh)))
    young = (i - ref0.changed_at[y0:y1, x0:x1]) <= SETTLE_FRAMES
    live = young | (chan_max(cv2.absdiff(e, ref0.start[y0:y1, x0:x1])) > 0)
    if not live.any():
        return
    k = np.ones((2 * ref0.ring + 1, 2 * ref0.ring + 1), np.uint8)
    zone = (cv2.dilate(live.astype(np.uint8), k) > 0) & valid[y0:y1, x0:x1]
    if not zone.any():
        return
    rc = raw[y0:y1, x0:x1]
    near = (rc >= 254 - CLIP_NOISE) | (rc <= 1 + CLIP_NOISE)
    fresh = rc
    if photometric:
        gain, off = fitted_gain(raw, expected, valid)
        fresh = declip(rc, undo_gain(rc, gain, off), e, gain, off)
        near |= censored(rc, e, gain, off)
    ref0.frame[y0:y1, x0:x1][zone] = fresh[zone]
    if ref0.clipped is None and near[zone].any():
        ref0.clipped = np.zeros(ref0.frame.shape[:2] + (3,), bool)
    if ref0.clipped is not None:
        ref0.clipped[y0:y1, x0:x1][zone] = near[zone]
    if ref0.edges is not None:  # the reference's own edges, measured with a margin of context
        h, w = ref0.frame.shape[:2]
        cx0, cy0, cx1, cy1 = max(0, x0 - 8), max(0, y0 - 8), min(w, x1 + 8), min(h, y1 + 8)
        band = _edge_band(ref0.frame[cy0:cy1, cx0:cx1], FIRST_EDGE_LEVEL)
        ref0.edges[y0:y1, x0:x1] = band[y0 - cy0:y1 - cy0, x0 - cx0:x1 - cx0]


def held_change(ref0, i: int, expected: np.ndarray, before: np.ndarray | None) -> bool:  # noqa: ANN001
    """Whether frame ``i``'s parse changed the expected picture from ``before`` (the last explained frame's) only
    where the picture had held still: every pixel it changes last changed more than :data:`SETTLE_FRAMES` frames
    ago. Such a change is first judged as no change (``frame_check._check``): a parse that moves by a quarter
    pixel where nothing moved (codec noise, or a mark that shifted a tool's centroid) re-opened the settled
    reference along the object's edges, grown by the codec ring, and the reference took whatever the frame
    showed there — a dot 39 levels darker on a tool that had come to rest, 6 frames after it stopped, became part
    of the reference (tool QA, hard, suite seed 47920, ``VREASON_ADV_SEED=800006555`` with one encoder thread)."""
    import cv2

    from vreason.verify.frame_check import changed_box
    from vreason.verify.residual import chan_max

    if ref0 is None or ref0.changed_at is None or before is None or before is expected \
            or before.shape != expected.shape:
        return False
    x0, y0, x1, y1 = changed_box(expected, before)  # (measured inside the box of the change: 0.2 ms)
    if x1 <= x0:
        return False
    moved = chan_max(cv2.absdiff(expected[y0:y1, x0:x1], before[y0:y1, x0:x1])) > 0
    return bool(((i - ref0.changed_at[y0:y1, x0:x1][moved]) > SETTLE_FRAMES).all())
