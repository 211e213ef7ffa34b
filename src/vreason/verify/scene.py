"""The shared scene layer (issue 24): letterbox of any colour, HSV helpers, the "held" window.

Every verifier — the suite's families and the TiViBench checks — composes these instead of keeping a copy.
Alignment to a reference lives in :mod:`vreason.verify.align`, the re-render residual in
:mod:`vreason.verify.residual`.

**Letterbox (one rule, :func:`content_box`).** A side's *band* is the run of border lines (rows for top and
bottom, columns for left and right) that are uniform in one colour: in every sampled frame (6, evenly spread,
first and last included) ≥ 98% of the line's pixels lie within :data:`BAR_TOL` (largest channel difference)
of the colour of that side's outermost line, and that colour is the same (within ``BAR_TOL``) in every sampled
frame. A band is a bar when it is ≥ 2 px and

* it is **dark** (largest channel < :data:`DARK_LEVEL`): no rendered scene has a dark border margin (encoded
  black decodes to 0..20; the darkest scene colour seen at an edge, the sliding board at −15% exposure, is
  about 44 and never at the edge) — a dark bar stands alone, on one side or several; or
* it is **paired and edged** (any other colour: grey, white, coloured): the opposite side has a band of the
  same colour whose width agrees within 2 px + 2% of the side, and on both sides the first line inside the
  band (or the next: H.264 blends the boundary line of a bar of odd width) differs from the bar colour by more
  than ``BAR_TOL`` on ≥ :data:`EDGE_FRAC` of its length in at least half of the sampled frames (a letterbox's picture
  starts along its whole edge; a canvas's own margin ends at a grid or a shape narrower than the frame).

The picture must keep ≥ :data:`MIN_KEEP` of each side (a 9:16 portrait picture pillarboxed in a 16:9 frame
keeps 31.6%; a uniform video has no picture to crop to). One box serves every frame. The rule replaces the
suite's two (``draw.content_box``: ≥ 98% of a line below 40 in every sampled frame; ``frametools.
letterbox_crop``: the 95th percentile below 40, bars ≥ 2 px). Limit, by design: a bar of the canvas's own
colour (white bars around a white canvas) cannot be told from the margin and is not cropped — the picture
then keeps its margin, which is what the scene looks like.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

# ------------------------------------------------------------------ named colours and HSV
PALETTE: dict[str, tuple[int, int, int]] = {
    "red": (220, 30, 30),
    "orange": (245, 140, 20),
    "yellow": (230, 225, 20),
    "green": (40, 190, 60),
    "cyan": (30, 190, 210),
    "blue": (40, 90, 230),
    "purple": (150, 50, 210),
}
"""The saturated colours the suite renders and the checks name (far apart in hue; names as prompts use them).
``vreason.synth.draw.COLOURS`` is this dict."""


def to_hsv(frames: np.ndarray) -> np.ndarray:
    """RGB (…, H, W, 3) uint8 → HSV in OpenCV units (H 0..179, S and V 0..255), converted in one call.

    The project's one HSV helper (``synth.draw.to_hsv`` and ``synth.frametools.hsv`` are this function)."""
    import cv2

    arr = np.ascontiguousarray(frames)
    shape = arr.shape
    flat = arr.reshape(-1, shape[-2], 3)
    return cv2.cvtColor(flat, cv2.COLOR_RGB2HSV).reshape(shape)


def hue_mask(hsv_img: np.ndarray, hue: float, margin: float, s_min: int, v_min: int) -> np.ndarray:
    """Pixels whose OpenCV hue (0..180) is within ``margin`` of ``hue`` (wrapping), bool mask."""
    h = hsv_img[..., 0].astype(np.int16)
    d = np.abs(h - int(round(hue)) % 180)
    d = np.minimum(d, 180 - d)
    return (d <= margin) & (hsv_img[..., 1] >= s_min) & (hsv_img[..., 2] >= v_min)


def clean(mask: np.ndarray, open_px: int = 3, close_px: int = 3) -> np.ndarray:
    """Morphological opening then closing of a bool mask (uint8 0/1 out)."""
    import cv2

    m = mask.astype(np.uint8)
    if open_px > 1:
        m = cv2.morphologyEx(m, cv2.MORPH_OPEN, np.ones((open_px, open_px), np.uint8))
    if close_px > 1:
        m = cv2.morphologyEx(m, cv2.MORPH_CLOSE, np.ones((close_px, close_px), np.uint8))
    return m


# ------------------------------------------------------------------ letterbox
BAR_TOL = 30
"""A bar pixel lies within this many levels (largest channel difference) of its bar's colour: H.264 and
MJPEG ringing next to a bar's edge stays within it (measured ≤ 22 on the tests' bars)."""
TIGHT_TOL = 10
"""A second search with this tolerance when none is found with :data:`BAR_TOL`: a bar of a colour within 30
levels of the picture's own border (a lilac bar around a light page) merges with it at 30 and is then never
paired; the inside of an H.264 bar stays within ±4 of its colour (ringing only reaches the line or two next to
the picture, which stay in the crop; :data:`vreason.verify.explain.BORDER_PX` ignores them)."""
DARK_LEVEL = 40
"""A bar whose colour's largest channel is below this is dark: cropped on its own (see the module doc)."""
LINE_FRAC = 0.98
"""Share of a border line that must match the bar colour in every sampled frame."""
EDGE_FRAC = 0.95
"""Share of the first line inside a non-dark bar that must differ from the bar colour (in one sampled frame)."""
MIN_BAR = 2
MIN_KEEP = 0.25
SAMPLES = 6


@dataclass(frozen=True)
class Band:
    """A uniform border band of one side: its width in px and its colour (RGB, median of the outermost line)."""

    width: int
    colour: tuple[int, int, int]


def sample_indices(n: int, samples: int = SAMPLES) -> np.ndarray:
    """Up to ``samples`` frame indices evenly spread over ``n`` frames, first and last included."""
    if n <= 0:
        return np.zeros(0, dtype=int)
    return np.unique(np.linspace(0, n - 1, min(samples, n)).round().astype(int))


def _sides(f: np.ndarray) -> dict[str, np.ndarray]:
    """Each side's lines, outermost first, as (n_lines, line_length, 3) uint8 views (no copy)."""
    return {"top": f, "bottom": f[::-1], "left": f.transpose(1, 0, 2), "right": f.transpose(1, 0, 2)[::-1]}


CHUNK = 16
"""Lines compared per step: a band is searched from the edge inwards and the search stops two lines past the
first line that is not uniform (what :func:`_edged` reads), not at the frame's middle."""


def _matching(lines: np.ndarray, lo: tuple, hi: tuple) -> np.ndarray:
    """Per line of ``lines`` (a view of a frame's rows or columns, outermost first), how many of its pixels lie
    within ``lo``..``hi`` in every channel. Columns are copied as the frame's row blocks they are (a transposed
    copy is 2-3x slower) and counted down the block."""
    import cv2

    if abs(lines.strides[0]) < abs(lines.strides[1]):  # the frame's columns
        block = lines.transpose(1, 0, 2)
        flip = block.strides[1] < 0
        mask = cv2.inRange(np.ascontiguousarray(block[:, ::-1] if flip else block), lo, hi)
        counts = cv2.reduce(mask, 0, cv2.REDUCE_SUM, dtype=cv2.CV_32S).ravel() // 255
        return counts[::-1] if flip else counts
    mask = cv2.inRange(np.ascontiguousarray(lines), lo, hi)
    return cv2.reduce(mask, 1, cv2.REDUCE_SUM, dtype=cv2.CV_32S).ravel() // 255


def _shares(lines: np.ndarray, c: np.ndarray, tol: int, limit: int) -> np.ndarray:
    """The match share of the first lines (at most ``limit``), outermost first, up to two past the first line
    below :data:`LINE_FRAC`."""
    out: list[np.ndarray] = []
    # |x − c| ≤ tol for integer x, every channel (cv2.inRange; bounds saturate to 0..255, which keeps the
    # test exact: c is a median of uint8 values, so lo ≤ 225 and hi ≥ 10)
    lo = tuple(float(v) for v in np.ceil(c - tol))
    hi = tuple(float(v) for v in np.floor(c + tol))
    n = min(limit, lines.shape[0])
    length = lines.shape[1]
    i = 0
    stop = n
    while i < min(n, stop):
        inside = _matching(lines[i:min(n, i + CHUNK)], lo, hi) / length
        out.append(inside)
        bad = np.flatnonzero(inside < LINE_FRAC)
        if len(bad) and stop == n:
            stop = i + int(bad[0]) + 3
        i += CHUNK
    return np.concatenate(out)[:min(n, stop)] if out else np.zeros(0)


def _band(lines_per_frame: list[np.ndarray], tol: int) -> tuple[Band, list[np.ndarray]]:
    """The side's uniform band over all sampled frames, and per frame the match share of its lines (up to two
    past the band)."""
    colours = [np.median(lines[0], axis=0) for lines in lines_per_frame]
    ref = colours[0]
    if any(np.abs(c - ref).max() > tol for c in colours):
        return Band(0, tuple(int(v) for v in ref)), []
    width = lines_per_frame[0].shape[0]
    shares = []
    for lines, c in zip(lines_per_frame, colours, strict=True):
        share = _shares(lines, c, tol, width + 2)
        shares.append(share)
        ok = share >= LINE_FRAC
        width = min(width, int(np.argmin(ok)) if not ok.all() else len(ok))
    return Band(width, tuple(int(round(v)) for v in ref)), shares


def _edged(shares: list[np.ndarray], width: int) -> bool:
    """One of the first two lines inside the band (a codec blends the boundary line) differs from the bar colour
    on ≥ EDGE_FRAC of it in at least half of the sampled frames (a canvas's margin that a camera's slow zoom-in
    narrows ends at a shape spanning the frame only in the last frames: maze easy zoomed 5% decoded at 320 px,
    edged in 1 of 6 frames)."""
    edged = [any(1.0 - float(s[k]) >= EDGE_FRAC for k in (width, width + 1) if k < len(s)) for s in shares]
    return 2 * sum(edged) >= len(edged) > 0


def _found(frames: Sequence[np.ndarray], samples: int, tol: int
           ) -> tuple[int, int, dict[str, tuple[Band, list[np.ndarray]]]] | None:
    picked = [np.asarray(frames[i]) for i in sample_indices(len(frames), samples)]
    if not picked or any(f.ndim != 3 or f.shape[2] < 3 or f.shape[:2] != picked[0].shape[:2] for f in picked):
        return None
    h, w = picked[0].shape[:2]
    if min(h, w) < 4:
        return None
    per_side: dict[str, list[np.ndarray]] = {k: [] for k in ("top", "bottom", "left", "right")}
    for f in picked:
        for k, v in _sides(f[..., :3]).items():
            per_side[k].append(v)
    return h, w, {k: _band(v, tol) for k, v in per_side.items()}


def bands(frames: Sequence[np.ndarray], *, samples: int = SAMPLES, tol: int = BAR_TOL) -> dict[str, Band] | None:
    """The uniform border band of each side (``top``, ``bottom``, ``left``, ``right``) over the sampled
    frames, or None when the frames are not same-sized RGB images."""
    got = _found(frames, samples, tol)
    return None if got is None else {k: v[0] for k, v in got[2].items()}


def content_box(frames: Sequence[np.ndarray], *, samples: int = SAMPLES,
                tol: int = BAR_TOL) -> tuple[int, int, int, int] | None:
    """(x0, y0, x1, y1) of the picture inside letterbox/pillarbox bars of any colour (the module's rule),
    or None when there are none (or the frames cannot be read)."""
    got = _found(frames, samples, tol)
    if got is None:
        return None
    box = _box(*got, tol)
    if box is None and tol == BAR_TOL:
        got = _found(frames, samples, TIGHT_TOL)
        box = None if got is None else _box(*got, TIGHT_TOL)
    return box


def _box(h: int, w: int, found: dict, tol: int) -> tuple[int, int, int, int] | None:
    bars = {k: 0 for k in found}
    for a, b, n in (("top", "bottom", h), ("left", "right", w)):
        for side, other in ((a, b), (b, a)):
            band, shares = found[side]
            if band.width < MIN_BAR:
                continue
            if max(band.colour) < DARK_LEVEL:
                bars[side] = band.width
                continue
            ob, oshares = found[other]
            paired = (ob.width >= MIN_BAR and abs(ob.width - band.width) <= 2 + 0.02 * n
                      and max(abs(x - y) for x, y in zip(band.colour, ob.colour, strict=True)) <= tol)
            if paired and _edged(shares, band.width) and _edged(oshares, ob.width):
                bars[side] = band.width
    x0, y0, x1, y1 = bars["left"], bars["top"], w - bars["right"], h - bars["bottom"]
    if y1 - y0 < MIN_KEEP * h or x1 - x0 < MIN_KEEP * w:
        return None
    if (x0, y0, x1, y1) == (0, 0, w, h):
        return None
    return x0, y0, x1, y1


def crop(frames: Sequence[np.ndarray], box: tuple[int, int, int, int] | None) -> list[np.ndarray]:
    """Every frame cut to ``box`` = (x0, y0, x1, y1) (unchanged when None)."""
    if box is None:
        return [np.asarray(f) for f in frames]
    x0, y0, x1, y1 = box
    return [np.asarray(f)[y0:y1, x0:x1] for f in frames]


# ------------------------------------------------------------------ the held window
@dataclass(frozen=True)
class Held:
    """Whether the final state is held at the end of a video."""

    held: bool
    held_s: float
    """Seconds from the first frame of the final unbroken run of passing frames to the last frame (0 when the
    last frame fails)."""
    window: list[int]
    """Indices of the frames in the required window (the last ``seconds``; at least the last frame)."""
    failing: list[int]
    """Indices of the frames in the window that fail."""

    def as_json(self) -> dict:
        return {"held": self.held, "held_s": round(self.held_s, 4), "window": [self.window[0], self.window[-1]]
                if self.window else [], "failing": self.failing[:20]}


def held_window(times: Sequence[float] | np.ndarray, passes: Sequence[bool] | np.ndarray,
                seconds: float, *, min_frames: int = 1) -> Held:
    """Is the final state reached and held for ``seconds`` at the end? ``passes[i]`` says whether frame ``i``
    (presentation time ``times[i]`` in seconds) shows the final state. Held when every frame with
    ``t ≥ t_last − seconds`` passes (the last frame always counts), there are ≥ ``min_frames`` of them, and
    the video is at least ``seconds`` long (a 0.1 s clip cannot show a 0.3 s hold)."""
    t = np.asarray(times, dtype=np.float64)
    ok = np.asarray(passes, dtype=bool)
    if t.shape != ok.shape or t.ndim != 1:
        raise ValueError(f"times {t.shape} and passes {ok.shape} must be two 1-D sequences of one length")
    if len(t) == 0:
        return Held(False, 0.0, [], [])
    win = np.flatnonzero(t >= t[-1] - seconds - 1e-9)
    failing = [int(i) for i in win if not ok[i]]
    bad = np.flatnonzero(~ok)
    start = int(bad[-1]) + 1 if len(bad) else 0
    held_s = float(t[-1] - t[start]) if start < len(t) else 0.0
    long_enough = float(t[-1] - t[0]) >= seconds - 1e-9
    return Held(not failing and len(win) >= min_frames and long_enough, held_s, [int(i) for i in win], failing)


def held_state(times: Sequence[float] | np.ndarray, states: Sequence[object], final: object, seconds: float,
               *, min_frames: int = 1) -> Held:
    """:func:`held_window` for per-frame parsed states compared with the expected ``final`` state (``==``)."""
    return held_window(times, [s == final for s in states], seconds, min_frames=min_frames)


FADE_LEVEL = 20
"""A 4×4 block mean that differs from the last frame's by more than this (levels, some channel, the exposure
undone) at the start of a held window, and by at least :data:`FADE_STEP` less at each later frame measured, on the
same side, is still on its way to the end picture."""
FADE_STEP = 3


def fading_px(frames: Sequence[np.ndarray], last: np.ndarray, valid: np.ndarray | None = None, *,
              shift_px: int = 0) -> int:
    """Pixels (16 per 4×4 block) in the largest group of touching blocks that fade towards ``last`` over
    ``frames`` (two or more, in time order, from the same video at its size): their mean differs from the last
    frame's by more than :data:`FADE_LEVEL` in the first and by at least :data:`FADE_STEP` less, on the same side,
    at each next one (``valid``: the pixels judged). A held end shows one picture; the residual's neighbourhood
    range explains any value between a thin line and the page beside it, so a 4-px outline fading from grey to
    red in the last 0.35 s left no blob (block means 27–31 levels off, 100–170 blocks over 16). A codec's noise
    or a camera's shake does not move a picture towards its last frame frame after frame: H.264 at 24 fps left one
    4-block column 17 levels off in every other frame; a 2-px shake realigned left edges' blocks off at random.
    ``shift_px``: frames aligned onto ``last`` by an estimated camera compare each block by the least difference
    among their shifts of up to this many px: a slow zoom undone by the nearest similarity leaves its edges a
    fraction of a pixel off, less in each later frame — a thin red outline's blocks 21, 15, 7 levels off towards
    the last frame, read as a fade (choice, an honest 4.4% zoom, hard, case seed 1736827138). A fading mark changes
    its level where it is, which no shift explains."""
    import cv2

    from vreason.verify.exposure import gain_offset, undo_gain
    from vreason.verify.frame_check import GAIN_SAMPLES

    h, w = last.shape[:2]
    bw, bh = w // 4, h // 4
    if bw < 1 or bh < 1 or not frames:
        return 0

    def means(img: np.ndarray) -> np.ndarray:
        return cv2.resize(np.ascontiguousarray(img[:bh * 4, :bw * 4, :3]), (bw, bh),
                          interpolation=cv2.INTER_AREA).astype(np.int16)

    ref = means(last)
    diffs = []
    for f in frames:
        gain, off = gain_offset(f, last, max_samples=GAIN_SAMPLES)
        fixed = undo_gain(f, gain, off)
        d = means(fixed) - ref
        if shift_px:  # per block and channel, the difference of least size among the frame's small shifts
            steps = np.arange(-4 * shift_px, 4 * shift_px + 1) / 4  # a quarter of a pixel apart
            src = np.ascontiguousarray(fixed[..., :3])
            for dy in steps:
                for dx in steps:
                    if dx or dy:
                        moved = cv2.warpAffine(src, np.float32([[1, 0, dx], [0, 1, dy]]), (w, h),
                                               flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
                        e = means(moved) - ref
                        d = np.where(np.abs(e) < np.abs(d), e, d)
        diffs.append(d)
    towards = np.abs(diffs[0]) > FADE_LEVEL
    for a, b in zip(diffs, diffs[1:], strict=False):
        towards &= (np.abs(b) <= np.abs(a) - FADE_STEP) & (a * b >= 0)
    moved = towards.any(axis=2)
    if valid is not None:
        moved &= cv2.resize(valid[:bh * 4, :bw * 4].astype(np.uint8), (bw, bh), interpolation=cv2.INTER_AREA) == 1
    if not moved.any():
        return 0
    _, _, stats, _ = cv2.connectedComponentsWithStats(moved.astype(np.uint8), connectivity=8)
    return int(stats[1:, cv2.CC_STAT_AREA].max()) * 16


VANISH_FRAC = 0.5
VANISH_MIN_PX = 40
"""A mark gives back what it showed when a frame shows less than half of the most it had shown in two frames
in a row before (and at least 40 px less): an object that disappears is missing, for one frame or many
(principle 2). A codec or an exposure flicker moves a stroke's edge by a pixel, not half of it."""


def vanishing(areas: Sequence[int] | np.ndarray, *, frac: float = VANISH_FRAC,
              min_px: int = VANISH_MIN_PX) -> list[int]:
    """Frames whose mark (``areas``: its pixels per frame, e.g. an answer's strokes) shows less than ``frac`` of
    the largest area it had shown in two consecutive earlier frames, by at least ``min_px``."""
    a = np.asarray(areas, np.float64)
    if len(a) < 3:
        return []
    held = np.minimum(a[1:], a[:-1])  # held[k]: frames k and k + 1 both show this much
    before = np.maximum.accumulate(held)[:-1]  # the most held by frames up to t - 1, for t = 2 …
    now = a[2:]
    bad = (now < frac * before) & (before - now >= min_px)
    return [int(t) + 2 for t in np.flatnonzero(bad)]
