"""The re-render residual with free regions (issue 24, principle 1: explain every pixel).

Given a frame already aligned to the expected rendering (:func:`vreason.verify.align.align`), the expected
rendering itself (RGB, same size) and a mask of *free* pixels (where the task lets anything appear, e.g. where an
answer may be written in any style), :func:`residual` says how much of the frame the rendering does not explain.

Per pixel, the residual is how far the frame leaves the rendering's local range — the lowest and highest value
within ``edge_px`` pixels (1 px: an edge one pixel off, scaling blur and codec ringing stay inside) — in luma (Y
of YCrCb) and in chroma (Cr, Cb averaged over 4×4 blocks, as 4:2:0 codecs and JPEG keep colour at half
resolution, range within ``edge_px`` + 2); the larger counts. (The largest RGB channel is the wrong measure:
chroma subsampling moves a saturated edge's channels by up to 95 levels two pixels away.) A pixel is
**unexplained** when its residual exceeds ``tol`` (thin or strong marks) or the mean residual of its 5×5 patch
exceeds ``tol_patch`` (a pale or translucent mark: faint per pixel, but all over an area). Free pixels never
count; specks (components under :data:`MIN_SPECK` px) are dropped before the largest unexplained blob
(8-connected) is measured.

Measured (``tests/test_verify_scene.py``, first frames of maze, symmetry, sorting, connect, odd-one-out and
sliding at 640×360): an honest H.264 re-encode (``veryfast``, default quality) leaves a per-pixel residual
≤ 18 and a 5×5 mean ≤ 4.1; MJPEG (JPEG q=50) ≤ 51 per pixel and ≤ 16.7 as a 5×5 mean, largest blob ≤ 22 px
with the 5×5 rule alone at 10 — hence ``tol`` 40, ``tol_patch`` 18 and :data:`MAX_BLOB` 24 px. Exceeding it on
random draws: a translucent mark (opacity 0.15–0.5, ≥ 40 px wide) whose colour differs from the background under
it by ≥ 150 levels of luma or ≥ 120 of chroma (fainter marks are below the MJPEG noise: the detection floor);
a 48-px part of the background moved 3–6 px; a second copy of an object.

The range rule is one-sided: each frame pixel need only lie within its expected neighbourhood's range, so a thin
stroke that is *missing* from the frame (a dropped glyph of a title: background where the stroke should be) is
explained — the stroke's 3×3 neighbourhood holds the background too. The **missing** term looks the other way, in
luma: an expected pixel is unexplained when it lies outside the *frame's* range within :data:`MISSING_EDGE_PX`
by more than ``tol`` and by more than :data:`MISSING_FRAC` of its own *depth* in the expected picture — how far
it lies below the brightest luma within :data:`MISSING_CONTRAST_PX` (when the frame lacks its darkness) or above
the darkest (lacking its brightness). A stroke that is there but resampled, blurred by a codec or a zoom keeps
part of its depth; a stroke that is gone keeps none. With an absolute tolerance of 40 instead (tried in the
eighth session), 5 of 96 honest cameras failed (zooms of −4.2% … +1.1%, a 1.59° rotation, a 21:9 letterbox);
0.7 of the local contrast (highest − lowest, the eighth to eleventh sessions' rule) failed none of 96 but let
the anti-aliased rim of a thin glyph go: a dropped glyph of 1-px strokes left a missing mask of 12–28 px in
split pieces (1 of 180 random glyph drops explained, twelfth session; 4 of 90 when one column of the glyph was
left). The rim's own depth is about half the contrast, so it counts now: 0 of 300 such drops explained, no
honest camera of those tests nor of the principles' honest kinds failing.

**Colour where the scene's colour is flat** (``flat_colour=True``, the suite's scene checks): where the expected
picture's Cr and Cb each span at most :data:`SCENE_FLAT` levels within :data:`FLAT_RING` px (a page, a tile's
face) — free pixels, a codec's trail and pixels outside the frame counted as not flat — the frame's chroma must lie
within that span ± :data:`FLAT_COLOUR_TOL`. A glyph recoloured with its darkness kept (a black "7" turned dark
green) lies inside the luma range beside a thin stroke, and a 1–2-px stroke's chroma is diluted by the 4×4 chroma
blocks above: on the suite's text families (random glyph, colour keeping the luma within 15 levels, chroma
30–75, opacity 0.8–1, H.264) the rules above caught 150 of 188 and with this one 187 of 188; the same frames
unchanged, through H.264 and MJPEG (q=50), 0 of 188 failed, nor any of 120 pages with a saturated box 2–12 px
from grey text (2026-12-07). The decoded chroma is taken per pixel: averaged over 2×2 px, 4 of 89 recolours of
1-px strokes stayed under the tolerance. Those numbers are for grey scenes only (chroma within 4 of 128), as first
written: sliding's warm page (Cb 4.3 off grey) then let a title glyph turned magenta at 0.69 pass (bench seed
21072). As a flat colour of any hue, on fresh draws: 57 of 58 such recolours caught (45 before), 0 of 58
unchanged frames and 0 of 120 boxed pages failed. Such colour has its own blob floor (:data:`MAX_COLOUR_BLOB`,
8 px, two of a 4:2:0 codec's chroma blocks, not the 24 px of the other evidence): a 1–2-px stroke recoloured
leaves 9–16 px off the flat colour after the codec halved its chroma (sudoku's "1" turned green, bench seed 28302:
14 px), and honest frames leave at most 4 (one chroma block; the principles' honest cameras, seeds 30012–30013).
A free region spreads colour onto its ring only where the frame shows colour there (before, the ring of every
free pixel was left unjudged whatever it showed: the givens beside a blank sudoku cell).

**A codec's lag** (``lagged``, the families whose scenes allow a codec's trail: sliding, tool QA): where a frame's
expected picture differs from the previous frame's — the leading and trailing bands of a moving object — the frame
may show anything between the two pictures' local ranges within :data:`LAG_PX` of the frame's expected edges, and
the expected object there may be missing: a P-frame decoded at half size left a carried tool's leading edge 2 rows
behind for one frame (Y 171 and 144 where the tool's 98–101 were expected, the tool entering at 4 px a frame; tool
QA ``half_size``, suite seed 5028). A lag is a few px behind an edge, not the whole band a fast object left (25 px
a frame): a mark in the band farther from the edge is still judged against the frame's own picture. The object's
unmoved part must still be shown, so an object that vanishes leaves all but its edges unexplained.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

TOL = 40
TOL_PATCH = 18.0
EDGE_PX = 1
MIN_SPECK = 4
"""Unexplained components smaller than this (px) are codec specks and dropped (a 1-px line is not a speck)."""
MAX_BLOB = 24
"""Largest unexplained blob (px, at the suite's 640×360) an honest frame leaves; more is unexplained content."""
LAG_PX = 3
"""How far (px) from an edge of the expected picture a codec's lag reaches (``residual(lagged=…)``): a P-frame
decoded at half size left a carried tool's leading edge 2 rows behind (tool QA, suite seed 5028)."""
FLAT_COLOUR_TOL = 16
"""Levels of chroma (Cr or Cb, per pixel as decoded) a frame may show beyond its scene's flat colour
(``flat_colour=True``)."""
FLAT_RING = 8
"""Px around the scene's coloured (free, trailing, outside) pixels where any chroma may show: 4:2:0 codecs keep
colour in 2×2 blocks and ring over a block or two of it."""
MAX_COLOUR_BLOB = 8
"""Largest component (px, at the suite's 640×360) of pixels off the scene's flat colour an honest frame leaves:
colour where the scene's colour is flat has a lower floor than the other evidence (a codec does not make colour
on a grey page), and a recoloured 1-px stroke shows 14–16 px of it after a 4:2:0 codec halved its chroma."""


def colour_limit(max_blob: int) -> int:
    """:data:`MAX_COLOUR_BLOB` scaled like ``max_blob`` from :data:`MAX_BLOB` (a family decoded smaller)."""
    return max(MIN_SPECK, int(round(MAX_COLOUR_BLOB * max_blob / MAX_BLOB)))


SHOWN_CHROMA = 4
"""Levels of Cr or Cb off the expected picture from which a free pixel shows a colour a codec may spread
(``off_flat_colour``)."""
SCENE_FLAT = 8
"""The expected picture's colour is flat where its Cr and Cb each span at most this many levels within
:data:`FLAT_RING` px."""
MISSING_FRAC = 0.7
"""An expected pixel is missing from the frame when the frame's local range misses it by more than this share of
its own depth in the expected picture (and by more than the tolerance)."""
MISSING_EDGE_PX = 1
"""The frame's local range for the missing term: within this many px (an edge one pixel off)."""
MISSING_CONTRAST_PX = 2
"""A pixel's depth is taken against the brightest (darkest) expected luma within this many px."""


@dataclass
class Residual:
    """How much of a frame its expected rendering does not explain."""

    excess: np.ndarray
    """Per pixel residual beyond the rendering's local range (uint8, largest channel; 0 on free pixels)."""
    unexplained: np.ndarray
    """Bool mask of unexplained pixels (specks removed)."""
    fraction: float
    """Share of the non-free pixels that are unexplained."""
    largest_blob: int
    """Area (px) of the largest 8-connected unexplained component."""
    blob_box: tuple[int, int, int, int] | None
    """(x0, y0, x1, y1) of that component."""
    colour_blob: int = 0
    """Area (px) of the largest component of pixels off the scene's flat colour (``flat_colour=True``)."""
    colour_box: tuple[int, int, int, int] | None = None

    def explained(self, max_blob: int = MAX_BLOB) -> bool:
        return self.largest_blob <= max_blob and self.colour_blob <= colour_limit(max_blob)

    def why(self, max_blob: int = MAX_BLOB) -> tuple[int, tuple[int, int, int, int] | None, str]:
        """(area, box, what) of the component that leaves the frame unexplained (the largest blob when none)."""
        if self.largest_blob <= max_blob and self.colour_blob > colour_limit(max_blob):
            return self.colour_blob, self.colour_box, "px off the scene's flat colour"
        return self.largest_blob, self.blob_box, "px unexplained"

    def as_json(self) -> dict:
        return {"fraction": round(self.fraction, 6), "largest_blob": self.largest_blob,
                "blob_box": list(self.blob_box) if self.blob_box else None}


def largest_component(mask: np.ndarray) -> tuple[int, tuple[int, int, int, int]]:
    """The area and (x, y, w, h) of the largest 8-connected blob of ``mask`` (0 and zeros when none)."""
    import cv2

    n, _, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8), connectivity=8)
    if n <= 1:
        return 0, (0, 0, 0, 0)
    j = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    x, y, w, h = (int(v) for v in stats[j, :4])
    return int(stats[j, cv2.CC_STAT_AREA]), (x, y, w, h)


def chan_max(img: np.ndarray) -> np.ndarray:
    """Per-pixel largest channel of an H×W×C uint8 image (OpenCV per channel: numpy's ``max(axis=2)`` on
    interleaved bytes is ~10× slower)."""
    import cv2

    ch = cv2.split(np.ascontiguousarray(img))
    out = ch[0]
    for c in ch[1:]:
        out = cv2.max(out, c)
    return out


def local_range(expected: np.ndarray, edge_px: int = EDGE_PX) -> tuple[np.ndarray, np.ndarray]:
    """Per-channel lowest and highest value of ``expected`` within ``edge_px`` of each pixel."""
    import cv2

    k = np.ones((2 * edge_px + 1, 2 * edge_px + 1), np.uint8)
    e = np.ascontiguousarray(expected[..., :3])
    return cv2.erode(e, k), cv2.dilate(e, k)


def excess_map(frame: np.ndarray, expected: np.ndarray, edge_px: int = EDGE_PX) -> np.ndarray:
    """Distance of ``frame`` outside ``expected``'s local range (uint8): the larger of the luma excess (range
    within ``edge_px``) and the chroma excess (both images' Cr/Cb averaged over 4×4 blocks first, as 4:2:0
    codecs and JPEG store colour at half resolution; range within ``edge_px`` + 2)."""
    return _excess(frame, expected, edge_px)[0]


def _excess(frame: np.ndarray, expected: np.ndarray, edge_px: int,
            also: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`excess_map`, and both images in YCrCb. ``also``: a second expected picture (YCrCb) whose local range
    joins the first's (a pixel anywhere between the two is explained)."""
    import cv2

    f = cv2.cvtColor(np.ascontiguousarray(frame[..., :3]), cv2.COLOR_RGB2YCrCb)
    e = cv2.cvtColor(np.ascontiguousarray(expected[..., :3]), cv2.COLOR_RGB2YCrCb)

    def out_of(x: np.ndarray, ref: np.ndarray, radius: int, ref2: np.ndarray | None) -> np.ndarray:
        k = np.ones((2 * radius + 1, 2 * radius + 1), np.uint8)
        hi, lo = cv2.dilate(ref, k), cv2.erode(ref, k)
        if ref2 is not None:
            hi, lo = cv2.max(hi, cv2.dilate(ref2, k)), cv2.min(lo, cv2.erode(ref2, k))
        return cv2.max(cv2.subtract(x, hi), cv2.subtract(lo, x))

    luma = out_of(cv2.extractChannel(f, 0), cv2.extractChannel(e, 0), edge_px,
                  None if also is None else cv2.extractChannel(also, 0))
    # the chroma on all three channels, Y's result unused: OpenCV filters each channel alone, and a contiguous
    # 3-channel image is filtered ~3.5× faster than the strided Cr/Cb view (which it copies first)
    _, cr, cb = cv2.split(out_of(cv2.blur(f, (4, 4)), cv2.blur(e, (4, 4)), edge_px + 2,
                                 None if also is None else cv2.blur(also, (4, 4))))
    return cv2.max(luma, cv2.max(cr, cb)), f, e


def off_flat_colour(f: np.ndarray, e: np.ndarray, coloured: np.ndarray | None = None,
                   tol: float = FLAT_COLOUR_TOL, free: np.ndarray | None = None) -> np.ndarray:
    """Bool mask of pixels where the frame shows another colour than the scene's flat one (see the module):
    ``f`` and ``e`` the frame and its expected picture in YCrCb; where the expected picture's Cr and Cb each
    span at most :data:`SCENE_FLAT` levels within :data:`FLAT_RING` px (a page, a tile's face), the frame's
    chroma (as decoded: a 4:2:0 codec has already averaged it over 2×2 px) must lie within that span ±
    ``tol``. ``coloured`` (bool: a codec's trail, pixels outside the frame) count as not flat; so do the pixels
    of ``free`` (bool) where the frame shows a colour — more than :data:`SHOWN_CHROMA` levels of Cr or Cb off the
    expected picture: a codec spreads the colour of what is written there over its neighbours, while a free
    region that shows none spreads none (a given digit beside a blank sudoku cell was not judged)."""
    import cv2

    # on all three channels, Y's results unused (a contiguous 3-channel image: see _excess)
    _, dcr, dcb = cv2.split(cv2.absdiff(f, e))
    off = cv2.max(dcr, dcb)
    if int(off.max()) <= tol:  # the span holds the expected value: nothing can lie beyond it
        return np.zeros(f.shape[:2], bool)
    if free is not None and free.any():
        shown = free.astype(bool) & (off > SHOWN_CHROMA)
        coloured = shown if coloured is None else (coloured | shown)
    k = np.ones((2 * FLAT_RING + 1, 2 * FLAT_RING + 1), np.uint8)
    lo, hi = cv2.erode(e, k), cv2.dilate(e, k)
    flat = flat_colour_mask(e, coloured, lo, hi)
    _, ocr, ocb = cv2.split(cv2.max(cv2.subtract(f, hi), cv2.subtract(lo, f)))
    return (cv2.max(ocr, ocb) > tol) & flat


def flat_colour_mask(e: np.ndarray, coloured: np.ndarray | None = None, lo: np.ndarray | None = None,
                     hi: np.ndarray | None = None) -> np.ndarray:
    """Where the picture ``e`` (YCrCb) has a flat colour: its Cr and Cb each span at most :data:`SCENE_FLAT`
    levels within :data:`FLAT_RING` px, and no ``coloured`` pixel (bool) lies that near. ``lo``/``hi``: ``e``'s
    erosion and dilation over that ring, when the caller has them."""
    import cv2

    k = np.ones((2 * FLAT_RING + 1, 2 * FLAT_RING + 1), np.uint8)
    if lo is None or hi is None:
        lo, hi = cv2.erode(e, k), cv2.dilate(e, k)
    _, scr, scb = cv2.split(cv2.subtract(hi, lo))
    flat = cv2.max(scr, scb) <= SCENE_FLAT
    if coloured is not None and coloured.any():
        flat &= ~(cv2.dilate(coloured.astype(np.uint8), k) > 0)
    return flat


def residual(frame: np.ndarray, expected: np.ndarray, free: np.ndarray | None = None, *, tol: float = TOL,
             tol_patch: float = TOL_PATCH, edge_px: int = EDGE_PX, valid: np.ndarray | None = None,
             per_pixel: np.ndarray | None = None, flat_colour: bool = False,
             lagged: np.ndarray | None = None, colour_unsure: np.ndarray | None = None) -> Residual:
    """The residual of an aligned RGB ``frame`` against its ``expected`` rendering, outside ``free`` (bool, True =
    anything may appear) and inside ``valid`` (e.g. :attr:`Alignment.valid`: pixels the frame covers).
    ``per_pixel``: pixels judged by ``tol`` alone, not by the 5×5 patch mean (a codec's motion trail,
    :data:`vreason.verify.frame_check.TRAIL_RING`). ``lagged``: the previous frame's expected picture (RGB) —
    where it differs from ``expected`` (within ``edge_px`` of that) and within :data:`LAG_PX` of an edge of
    ``expected``, the frame may show anything between the two (a codec's lag: see the module), and an expected
    pixel it does not show yet is not missing. ``colour_unsure``: pixels whose colour the flat-colour rule does not
    read (bool: a channel clipped as decoded, its chroma then made up by the exposure's correction)."""
    import cv2

    if frame.shape[:2] != expected.shape[:2]:
        raise ValueError(f"frame {frame.shape[:2]} and expected {expected.shape[:2]} differ in size")
    ex, f, e = _excess(frame, expected, edge_px)
    lag = None
    if lagged is not None and lagged.shape == expected.shape:
        moved = chan_max(cv2.absdiff(np.ascontiguousarray(lagged[..., :3]), np.ascontiguousarray(expected[..., :3])))
        if cv2.countNonZero(moved):
            k = np.ones((2 * edge_px + 1, 2 * edge_px + 1), np.uint8)
            edges = chan_max(cv2.morphologyEx(np.ascontiguousarray(expected[..., :3]), cv2.MORPH_GRADIENT,
                                              np.ones((3, 3), np.uint8)))
            near = cv2.dilate((edges > 0).astype(np.uint8), np.ones((2 * LAG_PX + 1, 2 * LAG_PX + 1), np.uint8))
            lag = (cv2.dilate((moved > 0).astype(np.uint8), k) > 0) & (near > 0)
            also = cv2.cvtColor(np.ascontiguousarray(lagged[..., :3]), cv2.COLOR_RGB2YCrCb)
            ex = np.where(lag, _excess(frame, expected, edge_px, also)[0], ex)
    ignore = np.zeros(ex.shape, bool) if free is None else free.astype(bool).copy()
    if valid is not None:
        ignore |= ~valid.astype(bool)
    ex[ignore] = 0
    patch = cv2.blur(ex, (5, 5))  # uint8 (rounded: 0.5 level against a tolerance of 18)
    pale = patch > tol_patch
    if per_pixel is not None:
        pale &= ~per_pixel.astype(bool)
    gone = missing(frame, expected, tol)
    if lag is not None:
        gone &= ~lag
    bad = (ex > tol) | pale | gone
    if flat_colour:
        outside = None if valid is None else ~valid.astype(bool)
        if per_pixel is not None:
            outside = per_pixel.astype(bool) if outside is None else (outside | per_pixel.astype(bool))
        colour = off_flat_colour(f, e, outside, free=free) & ~ignore
        if colour_unsure is not None:
            colour &= ~colour_unsure.astype(bool)
        bad |= colour
    bad &= ~ignore
    if not bad.any():  # an explained frame (most of them): no components to label
        return Residual(excess=ex, unexplained=bad, fraction=0.0, largest_blob=0, blob_box=None)
    n, lab, stats, _ = cv2.connectedComponentsWithStats(bad.astype(np.uint8), connectivity=8)
    specks = np.flatnonzero(stats[:, cv2.CC_STAT_AREA] < MIN_SPECK)
    specks = specks[specks > 0]
    if len(specks):
        bad[np.isin(lab, specks)] = False
        stats[specks, cv2.CC_STAT_AREA] = 0
    largest, box = 0, None
    if n > 1 and stats[1:, cv2.CC_STAT_AREA].max() > 0:
        i = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
        largest = int(stats[i, cv2.CC_STAT_AREA])
        x, y, w, h = (int(stats[i, k]) for k in (cv2.CC_STAT_LEFT, cv2.CC_STAT_TOP, cv2.CC_STAT_WIDTH,
                                                  cv2.CC_STAT_HEIGHT))
        box = (x, y, x + w, y + h)
    counted = max(1, int((~ignore).sum()))
    cblob, cbox = 0, None
    if flat_colour and colour.any():
        cblob, (x, y, w, h) = largest_component(colour & bad)
        cbox = (x, y, x + w, y + h) if cblob else None
    return Residual(excess=ex, unexplained=bad, fraction=float(bad.sum()) / counted, largest_blob=largest,
                    blob_box=box, colour_blob=cblob, colour_box=cbox)


def missing(frame: np.ndarray, expected: np.ndarray, tol: float = TOL) -> np.ndarray:
    """Bool mask of the expected picture's pixels the frame does not show (see the module): the expected luma
    lies outside the frame's luma range within :data:`MISSING_EDGE_PX` by more than ``tol`` and by more than
    :data:`MISSING_FRAC` of the pixel's own depth — how far it lies below the brightest (for a frame that lacks
    its darkness) or above the darkest (lacking its brightness) expected luma within :data:`MISSING_CONTRAST_PX`.
    ``tol`` is a number of levels, ≥ 0: a negative one is refused (the float rule would call every pixel missing,
    the lookup table none)."""
    import cv2

    if not tol >= 0:
        raise ValueError(f"residual.missing: the tolerance is a number of levels ≥ 0, not {tol}")

    fy = cv2.cvtColor(np.ascontiguousarray(frame[..., :3]), cv2.COLOR_RGB2GRAY)
    ey = cv2.cvtColor(np.ascontiguousarray(expected[..., :3]), cv2.COLOR_RGB2GRAY)
    k = np.ones((2 * MISSING_EDGE_PX + 1, 2 * MISSING_EDGE_PX + 1), np.uint8)
    kc = np.ones((2 * MISSING_CONTRAST_PX + 1, 2 * MISSING_CONTRAST_PX + 1), np.uint8)
    lacks_dark = cv2.subtract(cv2.erode(fy, k), ey)  # every frame pixel nearby is brighter
    lacks_bright = cv2.subtract(ey, cv2.dilate(fy, k))
    depth_dark = cv2.subtract(cv2.dilate(ey, kc), ey)  # how far below its brightest neighbour the pixel lies
    depth_bright = cv2.subtract(ey, cv2.erode(ey, kc))
    # a whole number of levels exceeds a bound exactly when it exceeds the bound's floor: the bound of each depth
    # (max(tol, MISSING_FRAC × depth), in float32) floored into a lookup table, compared in uint8
    bound = np.floor(np.maximum(np.float32(tol), np.float32(MISSING_FRAC) * np.arange(256, dtype=np.float32)))
    lut = np.clip(bound, 0, 255).astype(np.uint8)
    out = cv2.bitwise_or(cv2.compare(lacks_dark, cv2.LUT(depth_dark, lut), cv2.CMP_GT),
                         cv2.compare(lacks_bright, cv2.LUT(depth_bright, lut), cv2.CMP_GT))
    return out > 0
