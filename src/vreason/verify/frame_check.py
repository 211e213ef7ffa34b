"""Checking one frame against its expected picture (issue 24; used by :mod:`vreason.verify.explain`).

:func:`_check` has the family parse a frame already on the start image's grid and re-render it, undoes the
exposure (the last frame's gain first, then one fitted on this frame; clipped channels explained by
:func:`vreason.verify.clip.declip`), and measures the rendering residual and, where the expected picture has not
changed since the start, the tighter temporal residual against the video's own first frame (:func:`_residuals`;
on flat areas :mod:`vreason.verify.flat_rule`), inside the region of the picture that changed
(:func:`_changed_region`). Also the small public helpers the families use:
:func:`changed_box`, :func:`box_mask` (and :func:`vreason.verify.unchanged.unchanged`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from vreason.verify.align import flat_mask, gain_offset, undo_gain
from vreason.verify.clip import CLIP_NOISE, censored, colour_unsure, declip
from vreason.verify.flat_rule import MAX_FLAT_BLOB, flat_blob
from vreason.verify.residual import MAX_BLOB, chan_max, residual
from vreason.verify.settle import held_change

Expect = Callable[[int, np.ndarray], "tuple[np.ndarray, np.ndarray | None] | str"]

SAME_LEVEL = 3.0
"""A frame whose 4×4 block means all stay within this many levels of the last fully checked frame (after the
same warp) shows the same picture: codec noise moves block means by ≤ 1.5 levels (H.264, measured on the
suite's held end states)."""
TOL_TEMPORAL = 40
TOL_PATCH_TEMPORAL = 9.0
"""The residual against the video's own first frame, where the expected picture has not changed since the
start: an honest camera re-shows the same content with the same codec noise, so a faint mark (below the
rendering residual's codec floor) that appears later is still unexplained."""
BORDER_PX = 4
"""The picture's outermost pixels are never judged: a letterbox crop may leave a line or two of the bar, and a
scaled picture's edge blends with it (the suite's canvases keep a margin wider than this)."""
MARGIN = MAX_BLOB + 4
"""Pixels of context around the changed blocks a frame is re-checked in: the residual's 5×5 patches, the
chroma's 4×4 averaging, an edge's range, and enough of whatever touches the change that a blob growing a
little in every frame (a stroke drawn slowly) is measured longer than :data:`MAX_BLOB`."""
CONTEXT = 8
"""Pixels around a re-checked region that are measured but not judged: the residual's local range (1 px), the
chroma's 4×4 averaging and range (3 px) and the 5×5 patch need a pixel's true neighbours. Cut at the region's
edge, a blurred 1-px grid line just outside it left its lighter flank inside unexplained (29 px in a column;
sudoku in a 21:9 letterbox decoded at 640 px, seed 2931: every frame after the first failed)."""
GAIN_SAMPLES = 100_000
"""Pixels used to fit a frame's gain and offset (a regular subsample; two numbers per channel)."""
CODEC_RING = 8
"""Pixels around a changed object the temporal residual leaves to the rendering residual: a moved object's edge,
and the ringing an intra codec puts in the 8×8 blocks it shares with the object (MJPEG q=6: a coin's ringing
reached 9 px into the flat tray, 5×5 means 10–20 levels off the first frame; 3 px were grown before)."""

TRAIL_RING = CODEC_RING
"""A codec's motion trail (:func:`_trail`): the pixels the expected picture changed in over the last few frames,
grown by this many px (a motion-compensated block borrows from up to a block away)."""

CODEC_EDGE_PX = 3
CODEC_EDGE_LEVEL = 40
"""The temporal residual leaves the pixels within ``CODEC_EDGE_PX`` of an edge of ≥ ``CODEC_EDGE_LEVEL`` levels (luma)
to the rendering residual: a low-bitrate P-frame smears a strong edge a few rows past where the first frame (an
I-frame) had it — sliding, H.264 at 250 kbit/s, frame 5: a 63-level tile edge read 83/85/82 for 53 over 3 rows,
89 px long (5×5 means 12 against the temporal 9, the rendering's 18). A faint mark on a flat area is still held to the
temporal tolerance."""


@dataclass
class FrameCheck:
    index: int
    explained: bool
    largest_blob: int = 0
    blob_box: tuple[int, int, int, int] | None = None
    reason: str = ""
    realigned: bool = False
    temporal: bool = False
    """Unexplained by the temporal residual alone (the rendering residual explained the frame)."""
    kept: bool = False
    """Judged by the last frame's picture, the new parse having changed it only where it held still."""

    def as_json(self) -> dict:
        out: dict = {"frame": self.index, "largest_blob": self.largest_blob}
        if self.blob_box is not None:
            out["blob_box"] = list(self.blob_box)
        if self.reason:
            out["reason"] = self.reason
        return out


FIRST_EDGE_LEVEL = CODEC_EDGE_LEVEL // 2
"""The temporal residual also leaves to the rendering residual the pixels beside the first frame's own edges of
this contrast (luma, :func:`_edge_band`). A family decoded at half size sees a 1-px line of the render as a line
of half its contrast in one pixel, and a 1-px shake moves it a whole pixel or none, with no sub-pixel camera to
bring it home: connect's grid line (65 levels; 33 at half size, 25 in the first frame as warped onto the grid)
left a 28-px column "changed since the first frame" (honest shake2px, medium, suite seed 19065)."""


def _inner(shape: tuple[int, int], b: int) -> np.ndarray:
    valid = np.ones(shape, bool)
    valid[:b], valid[-b:], valid[:, :b], valid[:, -b:] = False, False, False, False
    return valid




_FLAT: dict[int, tuple[np.ndarray, np.ndarray]] = {}
"""The flat mask of the last expected rendering (families that expect one picture for many frames)."""


@dataclass
class _Ref0:
    """The first frame, aligned and corrected: the reference for the temporal residual."""

    start: np.ndarray
    frame: np.ndarray
    valid: np.ndarray
    clipped: np.ndarray | None = None
    """Per channel, where the first frame as decoded (aligned, uncorrected) is within :data:`CLIP_NOISE` of a clip
    (:func:`clipped_channels`) or a clipped observation pulled in (:func:`censored`); None: nowhere."""
    ring: int = CODEC_RING
    """:data:`CODEC_RING` in this video's pixels (:func:`codec_ring`)."""
    edges: np.ndarray | None = None
    """:func:`_edge_band` of ``frame`` at :data:`FIRST_EDGE_LEVEL`, computed once (None: on each check)."""
    seen: np.ndarray | None = None
    """The expected picture each pixel last showed (:mod:`vreason.verify.settle`; None: the reference stays the
    first frame)."""
    changed_at: np.ndarray | None = None
    """Per pixel, the frame its expected picture last changed at (:mod:`vreason.verify.settle`)."""
    changes: list | None = None
    """(frame, box) of each change of the expected picture not yet settled (:mod:`vreason.verify.settle`)."""
    recent: np.ndarray | None = None
    """Pixels changed within ``settle.SETTLE_FRAMES`` frames, grown by the codec ring: the temporal residual leaves
    them to the rendering residual."""


def codec_ring(coded: float) -> int:
    """:data:`CODEC_RING` for a video coded at ``coded`` of the render size and enlarged back to it: a codec's
    blocks and their ringing are that much larger on the render's grid (never smaller). Sliding's honest
    half-size video (H.264 at 320×180, enlarged 2×): a block beside a gliding tile carried 34 px of its colour
    (up to 25 levels) 11 px from the tile's edge, past the 8-px ring (VREASON_ADV_SEED=853426842, hard). The
    explainer passes the first frame's softness over the family's decode scale: at least the coded share (a
    frame decoded at half size is that soft whatever it was coded at), so the ring is never wider than the
    codec's."""
    return int(np.ceil(CODEC_RING / max(min(coded, 1.0), 0.25)))


def _trail(expected: np.ndarray, recent: Sequence[np.ndarray]) -> np.ndarray | None:
    """The pixels where one of the ``recent`` frames' expected pictures differs from ``expected``, grown by
    :data:`TRAIL_RING`: where a low-bitrate P-frame may still carry a moved object's colours, judged by the
    residuals' per-pixel tolerances alone (not their 5×5 means). Sliding, H.264 CRF 35 decoded at half size:
    two frames after a tile crossed a dark gap, a 6×5-px smear of the tile's and its neighbour's colours stood
    in the gap, up to 46 levels of luma (5×5 means up to 21 against 18: a 37-px blob; per pixel over 40: 8 px).
    None when nothing changed."""
    import cv2

    moved = np.zeros(expected.shape[:2], bool)
    for prev in recent:
        if prev is not expected and prev.shape == expected.shape:
            moved |= chan_max(cv2.absdiff(prev, expected)) > 0
    if not moved.any():
        return None
    k = np.ones((2 * TRAIL_RING + 1, 2 * TRAIL_RING + 1), np.uint8)
    return cv2.dilate(moved.astype(np.uint8), k) > 0


def _static(expected: np.ndarray, start: np.ndarray, free: np.ndarray | None, ring: int = CODEC_RING) -> np.ndarray:
    """Pixels anything may occupy for the temporal residual: free ones, those where the expected picture
    differs from the start, grown by ``ring`` (:func:`codec_ring`), and those beside a strong edge
    (:func:`_edge_band`) — there the rendering residual alone judges."""
    import cv2

    changed = chan_max(cv2.absdiff(expected, start)) > 0 if expected is not start else np.zeros(
        start.shape[:2], bool)
    if changed.any():
        k = np.ones((2 * ring + 1, 2 * ring + 1), np.uint8)
        changed = cv2.dilate(changed.astype(np.uint8), k) > 0
    changed |= _edge_band(expected)
    return changed if free is None else (changed | free)


def _edge_band(expected: np.ndarray, level: int = CODEC_EDGE_LEVEL) -> np.ndarray:
    """Pixels within :data:`CODEC_EDGE_PX` of an edge of the expected picture whose contrast is at least
    ``level`` (luma range over a 5×5 window, then grown by a pixel)."""
    import cv2

    y = cv2.cvtColor(np.ascontiguousarray(expected[..., :3]), cv2.COLOR_RGB2GRAY)
    k = np.ones((5, 5), np.uint8)
    strong = (cv2.subtract(cv2.dilate(y, k), cv2.erode(y, k)) >= level).astype(np.uint8)
    grow = 2 * (CODEC_EDGE_PX - 2) + 1
    return (cv2.dilate(strong, np.ones((grow, grow), np.uint8)) if grow > 1 else strong) > 0


Region = tuple[int, int, int, int]


def _crop(a: np.ndarray | None, r: Region) -> np.ndarray | None:
    return None if a is None else a[r[1]:r[3], r[0]:r[2]]


def _shift(box: tuple[int, int, int, int] | None, r: Region) -> tuple[int, int, int, int] | None:
    return None if box is None else (box[0] + r[0], box[1] + r[1], box[2] + r[0], box[3] + r[1])


def _check(i: int, geo: np.ndarray, valid: np.ndarray, expect: Expect, *, max_blob: int,
           photometric: bool, ref0: _Ref0 | None = None, region: Region | None = None,
           gains: list | None = None, corrected: list | None = None, recent: Sequence[np.ndarray] = (),
           shown: list | None = None, before: np.ndarray | None = None, grown: list | None = None) -> FrameCheck:
    """Frame ``i`` already warped onto the reference grid: the family parses it (camera geometry undone,
    exposure not: parsers read colours with tolerances), then the residuals inside ``region`` (x0, y0, x1, y1;
    default the whole picture — the rest of the frame is unchanged since a frame that was explained), with the
    exposure undone: first the last frame's gain (``gains``, updated in place), and when that leaves the frame
    unexplained, a gain fitted on this frame against its expected rendering. ``corrected``: set to the
    explained frame's corrected crop. ``recent``: the expected pictures of the last few frames (their changes are
    a codec's motion trail, :func:`_trail`); ``shown``: set to this frame's expected picture. ``before``: the
    expected picture of the last explained frame: where this frame's differs from it, the region grows to take
    it in (see :func:`_grow_by_parse`; ``grown``: set to the region checked); and a parse that changed it only
    where the picture had held still is judged as no change first (:func:`vreason.verify.settle.held_change`;
    the verdict's ``kept`` says it was)."""
    got = expect(i, geo)
    if isinstance(got, str):
        return FrameCheck(i, False, reason=got)
    expected, free = got
    region = _grow_by_parse(region, expected, before)
    if grown is not None:
        grown[:] = [region]
    r = region or (0, 0, geo.shape[1], geo.shape[0])
    whole = valid  # the exposure is the whole frame's (see _judged)
    if region is not None:  # judged inside the region, measured with its neighbours (see CONTEXT)
        hh, ww = geo.shape[:2]
        inside = np.zeros((hh, ww), bool)
        inside[r[1]:r[3], r[0]:r[2]] = True
        valid = valid & inside
        r = (max(0, r[0] - CONTEXT), max(0, r[1] - CONTEXT), min(ww, r[2] + CONTEXT), min(hh, r[3] + CONTEXT))
    # a parse that changed only where the picture had held still is first judged as no change: the last picture
    # is kept when the rendering residual explains the frame by it, unless what the temporal residual then finds
    # changed lies where the new parse changed the picture (a fade) (settle.held_change)
    pics = [before, expected] if before is not None and held_change(ref0, i, expected, before) else [expected]
    fc = FrameCheck(i, False)
    for pic in pics:
        tried = None if gains is None else list(gains)  # (a gain fitted against a picture not kept is dropped)
        kept = pic is before and pic is not expected  # judged as no change: the exposure is the whole frame's
        fc = _judged(i, geo, pic, free, valid, r, ref0, max_blob=max_blob, photometric=photometric, gains=tried,
                     corrected=corrected, recent=recent, whole=whole, region_fit=not kept)
        if fc.explained or pic is pics[-1] or (fc.temporal and not _touches(expected, before, fc.blob_box)):
            if shown is not None:
                shown[:] = [pic]
            if gains is not None and tried is not None:
                gains[:] = tried
            fc.kept = pic is before and pic is not expected
            return fc
    return fc


def _touches(expected: np.ndarray, before: np.ndarray | None, box: tuple[int, int, int, int] | None) -> bool:
    """Whether ``expected`` differs from ``before`` anywhere inside ``box`` (x0, y0, x1, y1)."""
    if before is None or box is None:
        return True
    x0, y0, x1, y1 = box
    return bool((expected[y0:y1, x0:x1] != before[y0:y1, x0:x1]).any())


def _judged(i: int, geo: np.ndarray, expected: np.ndarray, free: np.ndarray | None, valid: np.ndarray, r: Region,
            ref0: _Ref0 | None, *, max_blob: int, photometric: bool, gains: list | None,
            corrected: list | None, recent: Sequence[np.ndarray], whole: np.ndarray | None = None,
            region_fit: bool = True) -> FrameCheck:
    """:func:`_check`'s residuals of frame ``i`` inside ``r`` against ``expected``, with the exposure undone by the
    last frame's gain first, then by one fitted on this frame over ``whole`` (its valid pixels, the region's
    outside included; default ``valid``), then (``region_fit``) by one fitted on the region alone.

    The exposure is the camera's, one for the whole frame. Fitted on the changed region alone, it took what changed
    there for a change of exposure: sequence's blank card, its element fading in, was most of the region's light
    level, and the offset-only fit of two levels (the page, unchanged; the card, 9 levels darker) said −9, then
    −12 — the element explained away under the last picture kept (:func:`_check`), then the page 11 levels off
    the first frame, 1,305 px "changed since the first frame" (honest 1.97° rotation, P5 case 772017910, seed
    30013). A kept picture takes the whole frame's fit only. For a new picture the region's own fit stays the last
    try: under a 15% brightening that clips the page, the whole frame's few unclipped levels left a 1-px option
    outline 125 px off where the region's levels placed it (choice ``bright15``, bench seed 30003)."""
    trail = _trail(expected, recent) if recent else None
    g = _crop(geo, r)
    tries: list[tuple[np.ndarray, np.ndarray] | np.ndarray | None] = [None]
    if photometric:
        fits = [valid] if whole is None or whole is valid else ([whole, valid] if region_fit else [whole])
        tries = ([(gains[0], gains[1])] if gains and gains[0] is not None else []) + fits
    fc = FrameCheck(i, False)
    for gain in tries:
        if photometric and isinstance(gain, np.ndarray):  # a fit over that mask
            gain = fitted_gain(geo, expected, gain)
            if gains is not None:
                gains[:] = list(gain)
        fixed = g
        if gain is not None:
            fixed = declip(g, undo_gain(g, *gain), _crop(expected, r), *gain)
        fc = _residuals(i, fixed, expected, free, valid, r, ref0, max_blob, trail, raw=g, gain=gain,
                        lagged=recent[-1] if recent else None)
        if fc.explained:
            if corrected is not None:  # the corrected crop (the first frame: the temporal residual's reference)
                corrected[:] = [fixed]
            return fc
    return fc


def fitted_gain(geo: np.ndarray, expected: np.ndarray, valid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The exposure (gain, offset per channel) of a frame on the reference grid against its expected picture
    (:func:`vreason.verify.align.gain_offset` over the picture's flat pixels, their mask kept for the next frame
    that expects the same picture)."""
    flat = _FLAT.get(id(expected))
    if flat is None or flat[0] is not expected:
        flat = (expected, flat_mask(expected))
        _FLAT.clear()
        _FLAT[id(expected)] = flat
    return gain_offset(geo, expected, valid, max_samples=GAIN_SAMPLES, flat=flat[1])


def _grow_by_parse(region: Region | None, expected: np.ndarray, before: np.ndarray | None) -> Region | None:
    """The region to check (``None``: all): the frame's changed blocks, and wherever its expected picture
    differs from ``before`` (the last explained frame's), grown by :data:`MARGIN`. The pixels outside the
    changed blocks were explained by the expected picture of before; a parse that changes with them (a copy of a
    carried tool appearing at its home made the parse place the tool there, no longer in the slot) changes the
    expected picture there too, and that must be checked — tool QA, seed 604855: a full clone of the star at its
    home, 1,278 px unexplained in the slot, passed every frame."""
    if region is None or before is None or before is expected or before.shape != expected.shape:
        return region
    x0, y0, x1, y1 = changed_box(expected, before)
    if x1 <= x0:
        return region
    h, w = expected.shape[:2]
    return (min(region[0], max(0, x0 - MARGIN)), min(region[1], max(0, y0 - MARGIN)),
            max(region[2], min(w, x1 + MARGIN)), max(region[3], min(h, y1 + MARGIN)))


def _residuals(i: int, fixed: np.ndarray, expected: np.ndarray, free: np.ndarray | None, valid: np.ndarray,
               r: Region, ref0: _Ref0 | None, max_blob: int, trail: np.ndarray | None = None, *,
               raw: np.ndarray | None = None, gain: tuple[np.ndarray, np.ndarray] | None = None,
               lagged: np.ndarray | None = None) -> FrameCheck:
    """The rendering residual and (where the expected picture has not changed since the start) the temporal
    one of the corrected frame crop ``fixed`` (region ``r``); ``trail``: pixels both judge per pixel only;
    ``lagged``: the previous frame's expected picture (a codec's lag, :func:`vreason.verify.residual.residual`).
    ``raw``: the crop as decoded: a channel near the clip in it and in the first frame (:attr:`_Ref0.clipped`)
    is the same there for the temporal residual. Two clipped observations say nothing about a change, and the
    correction maps them apart: a page brightened by 15% with a 6° hue turn clips its green at 253–255 frame to
    frame, and with the green gain fitted at 1.07 (the turn leaves the per-channel fit short) a 253 reads 232
    but a 254 stays at the top — 44 px "changed since the first frame" (sliding, seed 143667987)."""
    unsure = None if raw is None or gain is None else colour_unsure(raw, *gain)
    res = residual(fixed, _crop(expected, r), _crop(free, r), valid=_crop(valid, r), per_pixel=_crop(trail, r),
                   flat_colour=True, lagged=_crop(lagged, r), colour_unsure=unsure)
    ok = res.explained(max_blob)
    if ok and ref0 is not None:
        static = _static(_crop(expected, r), _crop(ref0.start, r), _crop(free, r), ref0.ring)
        if ref0.recent is not None:
            static |= _crop(ref0.recent, r)
        ref = _crop(ref0.frame, r)
        # and beside the first frame's own edges of FIRST_EDGE_LEVEL: see there
        static |= _edge_band(ref, FIRST_EDGE_LEVEL) if ref0.edges is None else _crop(ref0.edges, r)
        if raw is not None and ref0.clipped is not None:
            near = (raw >= 254 - CLIP_NOISE) | (raw <= 1 + CLIP_NOISE)
            if gain is not None:
                near |= censored(raw, _crop(expected, r), *gain)
            both = _crop(ref0.clipped, r) & near
            if both.any():
                fixed = np.where(both, ref, fixed)
        tres = residual(fixed, ref, static, valid=_crop(valid & ref0.valid, r),
                        tol=TOL_TEMPORAL, tol_patch=TOL_PATCH_TEMPORAL, per_pixel=_crop(trail, r))
        if not tres.explained(max_blob):
            box = _shift(tres.blob_box, r)
            why = f"{tres.largest_blob} px changed since the first frame at {list(box or ())}"
            return FrameCheck(i, False, tres.largest_blob, box, why, temporal=True)
        ignore = static | ~_crop(valid & ref0.valid, r)
        blob, fbox = flat_blob(tres.excess, _crop(expected, r), _crop(trail, r), chroma=(fixed, ref, ignore),
                               ring=ref0.ring)
        if blob > MAX_FLAT_BLOB:
            box = _shift(fbox, r)
            return FrameCheck(i, False, blob, box, f"{blob} px of a flat area changed since the first frame at "
                                                   f"{list(box or ())}", temporal=True)
    blob, box, what = res.why(max_blob)
    box = _shift(box, r)
    why = "" if ok else f"{blob} {what} at {list(box or ())}"
    return FrameCheck(i, ok, blob, box, why)


def _changed_region(blocks: np.ndarray, ref: np.ndarray, size: tuple[int, int]) -> Region | None:
    """The box (px, grown by :data:`MARGIN`) of the 4×4 blocks whose mean moved more than :data:`SAME_LEVEL`
    in some channel since they were last explained; None when none did."""
    moved = (np.abs(blocks - ref) > SAME_LEVEL).any(axis=2)
    if not moved.any():
        return None
    ys, xs = np.nonzero(moved)
    w, h = size
    return (max(0, int(xs.min()) * 4 - MARGIN), max(0, int(ys.min()) * 4 - MARGIN),
            min(w, (int(xs.max()) + 1) * 4 + MARGIN), min(h, (int(ys.max()) + 1) * 4 + MARGIN))


def changed_box(a: np.ndarray, b: np.ndarray, level: int = 0) -> tuple[int, int, int, int]:
    """(x0, y0, x1, y1) of the pixels where two renderings differ by more than ``level`` (an empty box when
    they are the same). The difference's rows of channel bytes are bounded by OpenCV's bounding rectangle of
    the non-zero bytes (0.17 ms at 640×360, 66× the numpy ``max(axis=2)`` + ``nonzero`` it replaces, the same
    boxes on random draws): explain_video compares every checked frame's expected picture with the last one."""
    import cv2

    d = cv2.absdiff(np.ascontiguousarray(a), np.ascontiguousarray(b))
    c = d.shape[2] if d.ndim == 3 else 1
    d = d.reshape(d.shape[0], -1)
    if d.dtype != np.uint8:
        d = (d > level).astype(np.uint8)
    elif level:
        d = cv2.compare(d, level, cv2.CMP_GT)
    x, y, w, h = cv2.boundingRect(d)
    if w == 0:
        return 0, 0, 0, 0
    return x // c, y, (x + w - 1) // c + 1, y + h


def box_mask(shape: tuple[int, int], boxes: Sequence[Sequence[float]], pad: float = 0.0) -> np.ndarray:
    """A bool mask (``shape`` = (h, w)) True inside each (x0, y0, x1, y1) box grown by ``pad`` px."""
    h, w = shape
    m = np.zeros((h, w), bool)
    for b in boxes:
        x0, y0, x1, y1 = (int(round(v)) for v in (b[0] - pad, b[1] - pad, b[2] + pad, b[3] + pad))
        m[max(0, y0):max(0, min(h, y1)), max(0, x0):max(0, min(w, x1))] = True
    return m
