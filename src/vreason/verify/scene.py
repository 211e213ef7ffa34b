"""The shared scene layer (issue 24): letterbox of any colour, HSV helpers, the "held" window.

Every verifier — the suite's families and the TiViBench checks — composes these instead of keeping a copy.
Alignment to a reference lives in :mod:`vreason.verify.align`, the re-render residual in
:mod:`vreason.verify.residual`.

**Letterbox**: :mod:`vreason.verify.letterbox` (re-exported here: :func:`content_box`, :func:`crop`, …).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from vreason.verify.letterbox import (  # noqa: F401  (re-exported: the shared layer's letterbox rule)
    BAR_TOL,
    DARK_LEVEL,
    MIN_KEEP,
    TIGHT_TOL,
    Band,
    aspect_box,
    bands,
    content_box,
    crop,
    sample_indices,
)

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
FADE_LUMA_CHROMA = (14, 2)
"""(level, step) of the same rule read in luma and chroma (YCrCb block means), which a shift-tolerant read also asks
of a block (:func:`fading_px`): 0.7 of the RGB ones, as a fade of green and blue (choice's red outline, G and B
falling 29, 17, 11 levels in the last 0.35 s) moves luma by 0.7 of it (Cr 20, 11, 7)."""
FADE_CHROMA_SIGMA = 1.0
"""The chroma of that read is blurred by this Gaussian (px) first: a 4:2:0 codec samples it on a 2×2 grid, and a
sub-pixel camera offset changes which colours share a sample — no shift of the frame undoes that, a blur over the
grid does (a blue outline's Cb block means 16, 13, 7 towards the last frame at the best shift, VREASON_ADV_SEED=5022;
0 after the blur, choice's fading outline still 31 blocks)."""


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
    its level where it is, which no shift explains. A shift-tolerant read also asks the fade of the block in luma and
    chroma (YCrCb, as the codec keeps them; :data:`FADE_LUMA_CHROMA`): beside a 4-px blue strip between a page and
    a red square, H.264's half-resolution chroma moved the red channel's block means 32, 21, 10 levels towards the
    last frame as a camera's 0.6-px offset closed in, no shift of the frame undoing it — its Y, Cr and Cb within 8
    at the best shift (VREASON_ADV_SEED=371788937; 3 of 120 such draws failed)."""
    import cv2

    from vreason.verify.exposure import gain_offset, undo_gain
    from vreason.verify.frame_check import GAIN_SAMPLES

    h, w = last.shape[:2]
    bw, bh = w // 4, h // 4
    if bw < 1 or bh < 1 or not frames:
        return 0

    def means(img: np.ndarray) -> np.ndarray:  # per 4×4 block
        return cv2.resize(np.ascontiguousarray(img[:bh * 4, :bw * 4, :3]), (bw, bh),
                          interpolation=cv2.INTER_AREA).astype(np.int16)

    def space(img: np.ndarray, ycc: bool) -> np.ndarray:  # RGB, or YCrCb with its chroma blurred (see the doc)
        if not ycc:
            return np.ascontiguousarray(img[..., :3])
        y = cv2.cvtColor(np.ascontiguousarray(img[..., :3]), cv2.COLOR_RGB2YCrCb)
        y[..., 1:] = cv2.GaussianBlur(y[..., 1:], (0, 0), FADE_CHROMA_SIGMA)
        return y

    def fades(diffs: list[np.ndarray], level: float, step: float) -> np.ndarray:
        towards = np.abs(diffs[0]) > level
        for a, b in zip(diffs, diffs[1:], strict=False):
            towards &= (np.abs(b) <= np.abs(a) - step) & (a * b >= 0)
        return towards.any(axis=2)

    spaces = (False, True) if shift_px else (False,)
    refs = [means(space(last, ycc)) for ycc in spaces]
    diffs: list[list[np.ndarray]] = [[] for _ in spaces]
    for f in frames:
        gain, off = gain_offset(f, last, max_samples=GAIN_SAMPLES)
        fixed = undo_gain(f, gain, off)
        for k, (ycc, ref) in enumerate(zip(spaces, refs, strict=True)):
            src = space(fixed, ycc)
            d = means(src) - ref
            if shift_px:  # per block and channel, the difference of least size among the frame's small shifts
                steps = np.arange(-4 * shift_px, 4 * shift_px + 1) / 4  # a quarter of a pixel apart
                for dy in steps:
                    for dx in steps:
                        if dx or dy:
                            nudged = cv2.warpAffine(src, np.float32([[1, 0, dx], [0, 1, dy]]), (w, h),
                                                    flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
                            e = means(nudged) - ref
                            d = np.where(np.abs(e) < np.abs(d), e, d)
            diffs[k].append(d)
    moved = fades(diffs[0], FADE_LEVEL, FADE_STEP)
    if shift_px:
        moved &= fades(diffs[1], *FADE_LUMA_CHROMA)
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
VANISH_SEEN_PX = 10
VANISH_GONE_PX = 2
"""A mark that had shown ``VANISH_SEEN_PX`` px or more in two frames in a row and then shows ``VANISH_GONE_PX`` or
fewer is gone however small it was: odd-one-out's red ring, 13 and 23 px in its first two frames of being drawn,
painted over for one frame (principle 2's ``drop_object``, VREASON_ADV_SEED=23418072) lost less than 40 px. A
codec thins a stroke of that size; it does not wipe it out."""


def vanishing(areas: Sequence[int] | np.ndarray, *, frac: float = VANISH_FRAC,
              min_px: int = VANISH_MIN_PX) -> list[int]:
    """Frames whose mark (``areas``: its pixels per frame, e.g. an answer's strokes) shows less than ``frac`` of
    the largest area it had shown in two consecutive earlier frames, by at least ``min_px`` — or, once it had shown
    :data:`VANISH_SEEN_PX` in two, :data:`VANISH_GONE_PX` or fewer."""
    a = np.asarray(areas, np.float64)
    if len(a) < 3:
        return []
    held = np.minimum(a[1:], a[:-1])  # held[k]: frames k and k + 1 both show this much
    before = np.maximum.accumulate(held)[:-1]  # the most held by frames up to t - 1, for t = 2 …
    now = a[2:]
    bad = ((now < frac * before) & (before - now >= min_px)) | ((before >= VANISH_SEEN_PX) & (now <= VANISH_GONE_PX))
    return [int(t) + 2 for t in np.flatnonzero(bad)]
