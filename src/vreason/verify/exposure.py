"""The photometric half of an alignment: a frame's per-channel exposure (gain and offset) against a reference,
fitted on the reference's flat areas with clipped levels accounted for (:func:`gain_offset`), and undone through
a lookup table (:func:`undo_gain`). Split from ``vreason.verify.align``, which re-exports every public name."""

from __future__ import annotations

import numpy as np

CLIP_MARGIN = 3
"""A reference level whose median in the frame lies within this many levels of 0 or 255 is clipped there: a codec
pulls a clipped flat area a little inside the range (H.264 at the suite's quality: a board brightened by 15% showed
its white at 252–253). Counted as a level, that white (255 → 253, most of connect's board) pulled the fit to a gain
of 0.94–0.96, and the dots' colours, brightened by 1.14, were 424–792 px unexplained: 14 of 18 honest bright15
videos failed their first frame (twelfth session; 2 levels until then). Narrower than the per-pixel
:data:`vreason.verify.clip.CLIP_NOISE` (6) on purpose: a level's median is far less noisy than one pixel,
and a page honestly a few percent darker (249–251) keeps its level in the fit."""

NEAR_CLIP = 6
"""A level whose median lies within this many levels of 0 or 255 (but not within :data:`CLIP_MARGIN`) may be
clipped and pulled in by a codec or a camera's hue turn: a gain is fitted without such levels when the others
still span :data:`GAIN_SPAN`. Sliding brightened by 15% with a 6° hue turn, H.264 (VREASON_ADV_SEED=261988366):
a light tile's green, clipped before the turn, read 251 and pulled the green gain to 1.07 against 1.13 from every
other level; the clipped page then mapped 11 levels short of the clip it shows and read 30 levels off."""

GAIN_SPAN = 40
"""Levels this far apart (or more) measure a gain: two unclipped ones, or a clipped one and the unclipped mean."""

CLIP_SLACK = 10
"""A fitted gain must bring every level whose median clipped to within this many levels of what the frame shows
there (:func:`_keeps_clips`). Fitted on two dark levels of a small region (maze's wall at 20 and the agent's blue,
decoded at half size, 2.39:1 green bars: P5 case 2043195823, bench seed 24101), a blue gain of 0.6 + 24 mapped
the page's white, clipped at 253, to 177 — undone, the wall's soft edge was stretched 30 levels and 534 px of it
were unexplained."""


def flat_mask(ref: np.ndarray, level: int = 8) -> np.ndarray:
    """Pixels of ``ref`` with no edge within 1 px (every channel's 3×3 range ≤ ``level``): where a frame aligned
    to within a pixel shows the reference's own level (edges carry the alignment's residual)."""
    import cv2

    k = np.ones((3, 3), np.uint8)
    rr = np.ascontiguousarray(ref[..., :3])
    from vreason.verify.residual import chan_max

    return chan_max(cv2.subtract(cv2.dilate(rr, k), cv2.erode(rr, k))) <= level


def gain_offset(frame: np.ndarray, ref: np.ndarray, valid: np.ndarray | None = None, *,
                max_samples: int = 200_000, flat: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per-channel (gain, offset) with frame ≈ gain · ref + offset over ``valid`` pixels (clipped ones out),
    robust per reference level (:func:`_fit`); a channel with too few levels takes the pooled fit. Fitted on a
    regular subsample of at most ``max_samples`` pixels; ``flat``: :func:`flat_mask` of ``ref`` when known.
    The fits read joint histograms (OpenCV's ``calcHist`` of the reference level's 4-level bin against the
    frame's level, under the mask) instead of the samples: the same medians, about twice as fast as gathering
    the masked samples and counting them in numpy (8.0 → 3.8 ms a 640×360 call)."""
    import cv2

    h, w = ref.shape[:2]
    step = max(1, int(np.ceil(np.sqrt(h * w / max_samples))))
    keep = flat_mask(ref) if flat is None else flat
    keep = keep[::step, ::step]
    if valid is not None:
        keep = keep & valid[::step, ::step]
    mask = np.ascontiguousarray(keep, dtype=np.uint8)
    f = cv2.split(_u8(frame[::step, ::step, :3]))
    r = cv2.split(_u8(ref[::step, ::step, :3]))
    hists = [_hists(r[ch], f[ch], mask) for ch in range(3)]
    fits = [_fit(*hy_hx) for hy_hx in hists]
    pooled = None if all(fits) else _fit(sum(hy for hy, _ in hists), sum(hx for _, hx in hists))
    gain, off = np.ones(3, np.float32), np.zeros(3, np.float32)
    for ch, fit in enumerate(fits):  # a channel with too few unclipped levels takes the pooled (exposure) fit
        use = fit if fit is not None else pooled
        if use is not None:
            gain[ch], off[ch] = use
    return gain, off


def _u8(img: np.ndarray) -> np.ndarray:
    """A contiguous uint8 copy or view (levels of another dtype clipped to 0..255 and truncated, as counted)."""
    return np.ascontiguousarray(img if img.dtype == np.uint8 else np.clip(img, 0, 255).astype(np.uint8))


def _hists(x: np.ndarray, y: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For the masked pixels of two uint8 images: the joint histogram of ``x``'s 4-level bin (64) against ``y``'s
    level (256), and ``x``'s own histogram (256 levels), as int64 counts."""
    import cv2

    hy = cv2.calcHist([x, y], [0, 1], mask, [64, 256], [0, 256, 0, 256])
    hx = cv2.calcHist([x], [0], mask, [256], [0, 256])
    return hy.astype(np.int64), hx.reshape(-1).astype(np.int64)


def _median_rows(hist: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The (lower) median value of each row of a histogram over ``values``."""
    c = np.cumsum(hist, axis=1)
    half = (c[:, -1] + 1) // 2
    idx = (c < half[:, None]).sum(axis=1)
    return values[np.minimum(idx, len(values) - 1)].astype(np.float64)


def _fit(hy: np.ndarray, hx: np.ndarray) -> tuple[float, float] | None:
    """y ≈ a·x + b (integer levels 0..255), fitted on the median observation of each reference level, from the
    histograms of :func:`_hists` (``hy``: reference bin × observed level; ``hx``: reference levels).

    Levels are binned by 4; a level counts when it holds ≥ 20 observations and ≥ 0.2% of them and its median
    is not clipped (within :data:`CLIP_MARGIN` of 0 or 255; weight √count): what a frame changed is a minority of
    its level and drops out. Two levels ≥ 40 apart give gain and offset (without the levels within
    :data:`NEAR_CLIP` of a clip when the others are enough); a scene of one usable level (a light page
    with thin text) gives the offset alone (gain 1); an implausible fit (gain outside 0.6..1.6, offset beyond ±60)
    falls back to the offset alone. None when no level is usable (or under 100 observations)."""
    hx4 = hx.reshape(64, 4)
    counts = hx4.sum(axis=1)
    n = int(counts.sum())
    if n < 100:
        return None
    big = np.flatnonzero(counts >= max(20, 0.002 * n))
    if len(big) == 0:
        return None
    py = _median_rows(hy[big], np.arange(256))
    px = big * 4 + _median_rows(hx4[big], np.arange(4))
    hi, lo = py >= 255 - CLIP_MARGIN, py <= CLIP_MARGIN  # a level whose median clips says only "at least"/"at most"
    unclipped = ~hi & ~lo
    if not unclipped.any():
        return None
    hi_x, lo_x, hi_y, lo_y = px[hi], px[lo], py[hi], py[lo]
    big, py, px = big[unclipped], py[unclipped], px[unclipped]
    wts = np.sqrt(counts[big].astype(np.float64))
    # levels near a clip (within NEAR_CLIP of it) may be clipped and pulled in: left out when the others still
    # span a gain
    safe = (py < 255 - NEAR_CLIP) & (py > NEAR_CLIP)
    if safe.sum() < 2 or float(px[safe].max() - px[safe].min()) < GAIN_SPAN:
        safe = np.ones(len(py), bool)
    if len(big) >= 2 and float(px[safe].max() - px[safe].min()) >= GAIN_SPAN:
        a, b = np.polyfit(px[safe], py[safe], 1, w=wts[safe])
        if 0.6 <= a <= 1.6 and -60 <= b <= 60 and _keeps_clips(a, b, hi_x, hi_y, lo_x, lo_y):
            return float(a), float(b)
    d = py - px  # the offset alone: the weighted median of the levels' shifts
    order = np.argsort(d)
    cw = np.cumsum(wts[order])
    b = float(d[order][np.searchsorted(cw, cw[-1] / 2)])
    if not -60 <= b <= 60:
        return None
    return _clip_consistent(b, px, py, wts, hi_x, lo_x, hi_y, lo_y)


def _keeps_clips(a: float, b: float, hi_x: np.ndarray, hi_y: np.ndarray, lo_x: np.ndarray,
                 lo_y: np.ndarray) -> bool:
    """Whether ``y = a·x + b`` maps each clipped-high level (reference ``hi_x``, shown at ``hi_y``) to at least
    its clip less :data:`CLIP_SLACK` and each clipped-low one to at most its clip plus that: a clipped level says
    "at least" (or "at most"), and a fit that contradicts it was measured on too narrow a part of the range."""
    top = np.minimum(hi_y, 255 - CLIP_MARGIN) - CLIP_SLACK
    bottom = np.maximum(lo_y, CLIP_MARGIN) + CLIP_SLACK
    return bool(np.all(a * hi_x + b >= top) and np.all(a * lo_x + b <= bottom))


def _clip_consistent(b: float, px: np.ndarray, py: np.ndarray, wts: np.ndarray, hi_x: np.ndarray,
                     lo_x: np.ndarray, hi_y: np.ndarray, lo_y: np.ndarray) -> tuple[float, float]:
    """The offset-only fit ``(1, b)`` made consistent with the levels whose median clipped: a level the frame
    shows at 254–255 (0–1) must map there. A brighter exposure clips a light page and its light greys, leaving
    one unclipped cluster (dark text, saturated colours) — too narrow to measure the gain, so the offset alone
    said +12 where the exposure was ×1.15 and the clipped greys were then unexplained. The gain is then the
    least (at most 1.6) that lifts every clipped-high level to the clip and sinks every clipped-low one to 0,
    about the unclipped levels' weighted mean.

    A clipped level lifts the gain only from :data:`GAIN_SPAN` levels away from that mean, as two unclipped
    levels give a gain only that far apart: nearer, a few levels of codec noise are a large gain. Two frames of
    numseq's held end (a slow zoom, H.264): a patch of the last frame's white cards at 248–251 showed 254 in the
    other, and lifting it to the clip 13 levels above the cards' 237 made a gain of 1.27 — the text 40 levels
    off, 'held' failed (case seed 933002595). A level whose median lies within :data:`CLIP_MARGIN` of the clip
    but not at it (252–253; 2–3: ``hi_y``, ``lo_y``) may be clipped and pulled in by a codec or be what it
    shows: it is held only to its observation less that margin."""
    x0 = float(np.average(px, weights=wts))
    y0 = float(np.average(py, weights=wts))
    top = [253.5 if y >= 254 else y - CLIP_MARGIN for y in hi_y]
    bottom = [1.5 if y <= 1 else y + CLIP_MARGIN for y in lo_y]
    need = [1.0]
    need += [(t - y0) / (x - x0) for x, t in zip(hi_x, top, strict=True) if x >= x0 + GAIN_SPAN and x + b < t]
    need += [(y0 - t) / (x0 - x) for x, t in zip(lo_x, bottom, strict=True) if x <= x0 - GAIN_SPAN and x + b > t]
    a = min(1.6, max(need))
    if a <= 1.0:
        return 1.0, b
    return a, y0 - a * x0


def undo_gain(img: np.ndarray, gain: np.ndarray, offset: np.ndarray) -> np.ndarray:
    """``(img − offset) / gain`` per channel through a lookup table (uint8 in and out). A saturated observation
    (254, 255) only says the true value was at least its inverse: it stays at the top, where the light
    backgrounds a brighter exposure clipped were."""
    import cv2

    levels = np.arange(256, dtype=np.float32)
    lut = np.clip((levels[:, None] - offset[None]) / gain[None], 0, 255)
    lut[254:] = np.maximum(lut[254:], levels[254:, None])
    return cv2.LUT(np.ascontiguousarray(img[..., :3]), lut.astype(np.uint8).reshape(256, 1, 3))
