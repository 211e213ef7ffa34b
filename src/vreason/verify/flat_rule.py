"""The temporal residual's rule for flat areas (issue 24, principle 1): a small faint mark on a page or a tile's face.

Where the expected picture is flat and has not changed since the start (or since it came to rest:
:mod:`vreason.verify.settle`), a camera's resampling and a codec change nothing and what an exposure flicker leaves
is fitted away, so the frame is held to its reference more tightly than the 5×5 means and the 24-px blob of the
residuals allow (:func:`flat_blob`, called by :mod:`vreason.verify.frame_check`):

* **luma**: the temporal residual's excess over :data:`TOL_FLAT` levels per pixel, where the expected luma spans
  ≤ :data:`FLAT_LEVELS` over 5×5 px;
* **chroma**, where the expected colour is flat too (:func:`vreason.verify.residual.flat_colour_mask`): a 4:2:0
  codec stores colour once per 2×2 px and quantises it harder than luma, so a small dot's colour decodes spread
  over the chroma samples its pixels fall in, and how much any one pixel keeps depends on where that grid cuts it.
  A 13-px dot 26 levels off the page in Cb alone decoded as 2×2 blocks of 7–21 levels (oddoneout, suite seed
  788422) — 4 px over :data:`TOL_FLAT`, under the blob. The rule therefore measures the dot's colour as a
  quantity, not per pixel: the difference of the decoded Cr and Cb from the reference's, averaged over 4×4 px,
  less its average over the flat colour within :data:`CHROMA_WIDE` px (what a white balance or an exposure fit
  leaves is smooth over that width; a mark is not). A component of that band over :data:`CHROMA_LOW` levels
  counts when it reaches :data:`CHROMA_HIGH` somewhere (a hysteresis: noise that wanders over the low level never
  reaches the high one), and as many pixels as it covers over the low one.

Measured (2026-12-07, twenty-third session; the band's largest component over each level, per video, H.264
unless the variant says otherwise): the 313 honest variants of the adversarial set (16 families: letterbox,
rotation, zoom, flicker, shake, hue turns, half-size decoding, MJPEG, frame rates) and 192 honest principle-5
cases peak at 5 levels (match-3 decoded at half size: 23 px over 4, none over 5); 30 random 13-px dots 26–45
levels off in Cr or Cb (``tests/test_synth_small_marks.py``) cover 13–33 px over 4 and all reach 10. The
per-pixel rule over :data:`TOL_FLAT` passed 6 of those 30 dots.
"""

from __future__ import annotations

import numpy as np

from vreason.verify.residual import FLAT_RING, flat_colour_mask, largest_component

TOL_FLAT = 16
MAX_FLAT_BLOB = 8
FLAT_LEVELS = 4
"""Where the expected picture is flat (its luma spans ≤ ``FLAT_LEVELS`` over 5×5 px) and has not changed since the
start, the temporal residual allows ``TOL_FLAT`` levels per pixel and a blob of ``MAX_FLAT_BLOB`` px: away from
edges a camera's resampling and a codec change nothing, and what an exposure flicker leaves is fitted away. A mark
of 11×4 px outlined at 0.28 opacity (22 px over 16 levels) was under the 5×5 and blob rules."""
CHROMA_LOW = 4.0
CHROMA_HIGH = 8.0
"""The chroma band's hysteresis levels (see the module): honest videos peak at 5, a 13-px dot 26 levels off at 10
or more."""
CHROMA_WIDE = 17
"""Width (px) of the flat colour the chroma band's local level is taken against."""


def flat_blob(excess: np.ndarray, expected: np.ndarray, trail: np.ndarray | None = None,
              chroma: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None, ring: int = FLAT_RING,
              ) -> tuple[int, tuple[int, int, int, int] | None]:
    """Largest component (px, box) of the temporal residual's ``excess`` over :data:`TOL_FLAT` where the
    expected picture is flat (:data:`FLAT_LEVELS`), outside a codec's ``trail`` (judged per pixel alone).
    ``chroma``: (corrected frame, reference, pixels not judged): where the expected picture's colour is flat too,
    the pixels of a chroma mark (:func:`chroma_hot`; ``ring``: its codec ring) count as well."""
    import cv2

    hot = excess > TOL_FLAT
    if chroma is not None:
        hot |= chroma_hot(*chroma, expected, ring=ring)
    if trail is not None:
        hot &= ~trail.astype(bool)
    if not hot.any():
        return 0, None
    ey = cv2.cvtColor(np.ascontiguousarray(expected[..., :3]), cv2.COLOR_RGB2GRAY)
    k = np.ones((5, 5), np.uint8)
    area, (x, y, w, h) = largest_component(hot & (cv2.subtract(cv2.dilate(ey, k), cv2.erode(ey, k)) <= FLAT_LEVELS))
    return (area, (x, y, x + w, y + h)) if area else (0, None)


def chroma_band(fixed: np.ndarray, ref: np.ndarray, flat: np.ndarray) -> np.ndarray:
    """Per pixel, the larger of |Cr| and |Cb| of the band of ``fixed`` − ``ref`` (RGB, same size) described in the
    module: the 4×4 mean of the difference less its mean over the ``flat`` pixels (bool) within
    :data:`CHROMA_WIDE` px (float32; meaningful where a flat pixel is near)."""
    import cv2

    f, rf = (cv2.cvtColor(np.ascontiguousarray(a[..., :3]), cv2.COLOR_RGB2YCrCb) for a in (fixed, ref))
    return _band(f, rf, flat)


def _band(f: np.ndarray, rf: np.ndarray, flat: np.ndarray) -> np.ndarray:
    import cv2

    w = flat.astype(np.float32)
    share = cv2.max(cv2.blur(w, (CHROMA_WIDE, CHROMA_WIDE)), 1e-3)
    out = None
    for c in (1, 2):  # one channel at a time: OpenCV on contiguous planes (numpy on strided views: 20× slower)
        d = cv2.subtract(cv2.extractChannel(f, c), cv2.extractChannel(rf, c), dtype=cv2.CV_32F)
        near = cv2.blur(d, (4, 4))
        wide = cv2.divide(cv2.blur(cv2.multiply(d, w), (CHROMA_WIDE, CHROMA_WIDE)), share)
        band = cv2.absdiff(near, wide)
        out = band if out is None else cv2.max(out, band)
    return out


def chroma_hot(fixed: np.ndarray, ref: np.ndarray, ignore: np.ndarray, expected: np.ndarray,
               ring: int = FLAT_RING) -> np.ndarray:
    """Pixels of a chroma mark on a flat colour outside ``ignore`` (bool): the components of the chroma band
    (:func:`chroma_band`) over :data:`CHROMA_LOW` that reach :data:`CHROMA_HIGH`. The colour is flat at least
    ``ring`` px from any other colour (:data:`vreason.verify.residual.FLAT_RING` at the render's size; a video
    decoded smaller has its chroma blocks, and their ringing, that much larger: the frame check passes its codec
    ring). Odd-one-out decoded at half size: the red answer ring's colour reached past the 8 px into the page, Cr
    9–12 levels off 8–10 px from it (honest ``half_size_darker15_hue_minus6``, easy, bench seed 24001)."""
    import cv2

    f, rf = (cv2.cvtColor(np.ascontiguousarray(a[..., :3]), cv2.COLOR_RGB2YCrCb) for a in (fixed, ref))
    _, dcr, dcb = cv2.split(cv2.absdiff(f, rf))
    none = np.zeros(f.shape[:2], bool)
    if max(int(dcr.max()), int(dcb.max())) * 2 <= CHROMA_HIGH:  # both means are within the largest difference
        return none
    e = cv2.cvtColor(np.ascontiguousarray(expected[..., :3]), cv2.COLOR_RGB2YCrCb)
    flat = flat_colour_mask(e, ignore) & ~ignore
    if ring > FLAT_RING and flat.any():
        flat = cv2.erode(flat.astype(np.uint8), np.ones((2 * (ring - FLAT_RING) + 1,) * 2, np.uint8)) > 0
    if not flat.any():
        return none
    # the band within 17 px of a flat pixel draws on pixels that are not flat: only a change somewhere near one
    # can raise it (a change confined to edges, the codec's usual noise, never does)
    near = cv2.dilate(flat.astype(np.uint8), np.ones((CHROMA_WIDE, CHROMA_WIDE), np.uint8))
    if cv2.minMaxLoc(cv2.max(dcr, dcb), mask=near)[1] * 2 <= CHROMA_HIGH:
        return none
    band = _band(f, rf, flat)
    low = (band > CHROMA_LOW) & flat
    if not low.any() or not (high := low & (band > CHROMA_HIGH)).any():
        return none
    _, labels = cv2.connectedComponents(low.astype(np.uint8), connectivity=8)
    keep = np.zeros(int(labels.max()) + 1, bool)
    keep[np.unique(labels[high])] = True
    keep[0] = False
    return keep[labels]
