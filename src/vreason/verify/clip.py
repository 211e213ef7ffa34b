"""Clipped observations (issue 24, principle 5: an honest exposure): a decoded channel at the top or bottom of its
range only bounds the true value. Used by :mod:`vreason.verify.frame_check` and :mod:`vreason.verify.settle`.

:func:`declip` explains a clipped channel where the exposure drives the expected value to or past the clip;
:func:`censored` marks the clipped observations a codec pulled in from the clip; :func:`clipped_channels` where a
decoded frame is near a clip at all.
"""

from __future__ import annotations

import numpy as np

CLIP_NOISE = 6
"""Levels of codec noise a clipped flat area shows below (above) the clip (H.264 at the suite's quality: 253s
in a page brightened to 255)."""
CLIP_DRIFT = 2 * CLIP_NOISE
"""How far under (over) a clip a decoded channel may lie and still be a clipped observation, where the exposure
drives the expected value past that clip by at least as much (:func:`censored`): the codec lets such an area
drift further from the clip frame to frame than within one frame. Sliding brightened by 15% with a 6° hue turn
(H.264): a cyan tile's green, driven 13 levels past the clip, read 245 in one frame and 254 in another; the
correction maps the clip to the rendering (:func:`declip`) and 245 to 19 levels under it — 28–30 px "changed
since the first frame" either way round (VREASON_ADV_SEED 143667987 easy, 24 medium). A white page the exposure
leaves at the clip (a gain of 1) is driven past it by nothing: a faint mark on it is still judged."""


def declip(raw: np.ndarray, fixed: np.ndarray, expected: np.ndarray, gain: np.ndarray,
            off: np.ndarray) -> np.ndarray:
    """A clipped observation only bounds the true value: a channel at 254–255 (0–1) in the frame as decoded is
    explained wherever the expected value is at least (at most) what the exposure maps to the clip, within 6
    levels — a page brightened by 15% clips to white and is still the page. Where the exposure maps the
    expected value :data:`CLIP_NOISE` levels or more past the clip, an observation within :data:`CLIP_NOISE`
    of it is that clip plus codec noise (H.264 leaves 253s in a clipped page; corrected as unclipped they read
    25 levels darker than the 255s next to them, frame to frame)."""
    # the clip bounds with the exposure's largest (smallest) channel gain: a white balance turned with the exposure
    # leaves the per-channel fit short in a channel whose only unclipped level is a dark one (gravity's blue ball
    # brightened 15% with a 6° hue turn clipped its blue at 255; the page clipped too, the blue gain read 1.03
    # against 1.14 in red, and 225 mapped to 240, under the clip: 99 px unexplained, 4 of 5 blue balls at hard)
    g = np.asarray(gain, np.float32)
    lo = (253.5 - off) / g.max() - 6
    hi = (1.5 - off) / g.min() + 6
    far_hi = (254 + CLIP_NOISE - off) / gain
    far_lo = (1 - CLIP_NOISE - off) / gain
    if all(a.dtype == np.uint8 and a.ndim == 3 and a.shape[2] == 3 for a in (raw, fixed, expected)):
        # the same four tests as bits of two per-channel lookup tables (one per image): 1 clipped high and
        # expected past it, 2 clipped low, 4 near the high clip and expected far past it, 8 near the low clip
        lv = np.arange(256, dtype=np.float32)[:, None]
        bits_raw = ((lv >= 254) * 1 | (lv <= 1) * 2 | (lv >= 254 - CLIP_NOISE) * 4 | (lv <= 1 + CLIP_NOISE) * 8)
        bits_exp = ((lv >= lo) * 1 | (lv <= hi) * 2 | (lv >= far_hi) * 4 | (lv <= far_lo) * 8)
        import cv2

        m = cv2.bitwise_and(lut3(raw, np.broadcast_to(bits_raw, (256, 3))), lut3(expected, bits_exp))
        if not cv2.countNonZero(m.reshape(m.shape[0], -1)):
            return fixed
        out = np.array(fixed, copy=True, order="C")
        cv2.copyTo(np.ascontiguousarray(expected), m, out)  # where any bit is set (numpy's copyto(where=): 40× slower)
        return out
    e = expected.astype(np.float32)
    m = ((raw >= 254) & (e >= lo)) | ((raw <= 1) & (e <= hi))
    m |= ((raw >= 254 - CLIP_NOISE) & (e >= far_hi)) | ((raw <= 1 + CLIP_NOISE) & (e <= far_lo))
    return np.where(m, expected, fixed) if m.any() else fixed


def lut3(img: np.ndarray, table: np.ndarray) -> np.ndarray:
    """A per-channel 256-entry lookup (``table`` 256 × 3, values < 256) of a uint8 RGB image."""
    import cv2

    lut = np.ascontiguousarray(table.astype(np.uint8)).reshape(256, 1, 3)
    return cv2.LUT(np.ascontiguousarray(img), lut)


def clipped_channels(raw: np.ndarray) -> np.ndarray | None:
    """Per channel of a decoded frame, where it is within :data:`CLIP_NOISE` of the top or bottom clip; None when
    no channel is anywhere."""
    m = (raw >= 254 - CLIP_NOISE) | (raw <= 1 + CLIP_NOISE)
    return m if m.any() else None


def colour_unsure(raw: np.ndarray, gain: np.ndarray, off: np.ndarray) -> np.ndarray | None:
    """Pixels of a decoded frame whose colour, once :func:`declip` and the exposure's correction made it, is not
    the camera's (``residual(colour_unsure=…)``): a channel near the top clip as decoded (:func:`clipped_channels`'
    level) where the exposure ``gain · x + off`` drives the top past the clip by more than :data:`CLIP_NOISE` (the
    bottom likewise). Such a channel is replaced by the expected value and the others are corrected: the mix is a
    colour the camera never showed. Tool QA brightened by 15% (×1.14): a light edge with its blue clipped read 6
    levels of Cb as decoded and 12 px "off the scene's flat colour" once corrected (``bright15``, bench seed
    30003). None when the exposure drives neither clip (a page at the clip under a gain near 1 is still read)."""
    import cv2

    from vreason.verify.residual import chan_max

    g, o = np.asarray(gain, np.float32), np.asarray(off, np.float32)
    high = bool(np.any(255 * g + o > 255 + CLIP_NOISE))
    low = bool(np.any(o < -CLIP_NOISE))
    if not (high or low):
        return None
    r = np.ascontiguousarray(raw[..., :3])
    out = np.zeros(raw.shape[:2], np.uint8)
    if high:
        out = cv2.max(out, chan_max(cv2.compare(r, 254 - CLIP_NOISE, cv2.CMP_GE)))
    if low:
        out = cv2.max(out, chan_max(cv2.compare(r, 1 + CLIP_NOISE, cv2.CMP_LE)))
    return out > 0


def censored(raw: np.ndarray, expected: np.ndarray, gain: np.ndarray, off: np.ndarray) -> np.ndarray:
    """Per channel of a decoded frame (uint8 RGB, on ``expected``'s grid), where it lies within :data:`CLIP_DRIFT`
    of the top (bottom) clip and the exposure ``gain · expected + off`` lies past that clip by at least as far as
    the frame lies from it: a clipped observation the codec pulled in."""
    import cv2

    lv = np.arange(256, dtype=np.float32)[:, None]
    mapped = lv * np.asarray(gain, np.float32)[None] + np.asarray(off, np.float32)[None]
    over = lut3(expected, np.clip(np.rint(mapped - 254), 0, 255))  # how far past the top clip
    under = lut3(expected, np.clip(np.rint(1 - mapped), 0, 255))
    shape = raw.shape[:2] + (3,)
    flat = (shape[0], shape[1] * 3)  # one channel: OpenCV takes a scalar for the first channel of three only
    raw, over, under = (np.ascontiguousarray(a[..., :3]).reshape(flat) for a in (raw, over, under))
    hi = cv2.bitwise_and(cv2.compare(raw, 254 - CLIP_DRIFT, cv2.CMP_GE),
                         cv2.compare(cv2.subtract(np.full_like(raw, 254), raw), over, cv2.CMP_LE))
    lo = cv2.bitwise_and(cv2.compare(raw, 1 + CLIP_DRIFT, cv2.CMP_LE),
                         cv2.compare(cv2.subtract(raw, np.full_like(raw, 1)), under, cv2.CMP_LE))
    return (cv2.bitwise_or(hi, lo) > 0).reshape(shape)
