"""The end of a suite video is held (issue 24, principle 3: the end state is reached and **held** for the stated
time): nothing changes over the end window (:func:`end_changes`), nothing still fades towards the last picture
(:func:`end_fade`), and the answer's ink has stopped growing (:func:`end_ink_growth`). Shared by the text families'
``held`` check (:mod:`vreason.synth.tivi_text`), graph and tool QA."""

from __future__ import annotations

from typing import Any

import numpy as np


def end_changes(frames: list[np.ndarray], times: Any) -> list[tuple[int, int]]:
    """(frame, largest unexplained blob) of each frame of the suite's end window (:func:`draw.end_window`) that is
    not the last picture (:func:`vreason.verify.explain.unchanged`, a hand-held camera absorbed): the end state
    must be held, not cut to while something is still on its way."""
    from vreason.synth import draw
    from vreason.verify.explain import unchanged

    window = draw.end_window(np.asarray(times, dtype=np.float64))
    return [(int(j), blob) for j in window[:-1] for same, blob in [unchanged(frames[j], frames[-1], camera=True)]
            if not same]


ALIGNED_SHIFT_PX = 1
"""Frames aligned onto the last by an estimated camera are compared shift-tolerant by this many px
(:func:`vreason.verify.scene.fading_px`)."""


def end_fade(frames: list[np.ndarray], times: Any, seconds: float,
             region: np.ndarray | None = None) -> tuple[int, int]:
    """(frame, px) of the largest group of 4×4 blocks still fading towards the last picture over the last
    ``seconds`` (:func:`vreason.verify.scene.fading_px` over the window's first frame, the frames a third and
    two thirds of the way — one halfway in a window of three — and the last); (-1, 0) when the window has fewer
    than three frames. ``region``: where the task's answer is drawn (the blocks judged; default all). Where the
    frames as they are show a fade, they are measured again aligned onto the last (a hand-held camera: a 2-px shake
    moves every edge's blocks)."""
    from vreason.verify.scene import fading_px

    picked = _window_samples(times, seconds)
    if picked is None:
        return -1, 0
    early = picked[0]
    seen = [frames[j] for j in picked]
    px = fading_px(seen, frames[-1], region)
    if px > 0:
        got = _onto_last(seen, frames[-1])
        if got is not None:
            px = min(px, fading_px(got[0], frames[-1], got[1] if region is None else got[1] & region,
                                   shift_px=ALIGNED_SHIFT_PX))
    return early, px


def _window_samples(times: Any, seconds: float) -> list[int] | None:
    """The frames measured over the last ``seconds`` (:func:`end_fade`, :func:`end_ink_growth`): the window's first,
    those a third and two thirds of the way (one halfway in a window of three), not the last; None with fewer than
    three frames in the window."""
    from vreason.synth import draw

    t = np.asarray(times, dtype=np.float64)
    window = draw.end_window(t, seconds)
    if len(window) < 3:
        return None
    early = int(window[0])
    inner = window[1:-1]
    picks = sorted({int(inner[int(np.argmin(np.abs(t[inner] - (t[early] + k * (t[-1] - t[early]) / 3))))])
                    for k in ((1, 2) if len(inner) > 1 else (1.5,))})
    return [early, *picks]


def end_ink_growth(frames: list[np.ndarray], times: Any, seconds: float, region: np.ndarray) -> float:
    """How much the ink of ``region`` (bool: where the answer is written) grew over the last ``seconds``, as a share
    of the last frame's: its ink is the sum over the region of each pixel's depth below the brightest luma within
    :data:`INK_PAGE_PX` (the local page), each frame's exposure undone against the last. The window's first frame,
    the frames a third and two thirds of the way and the last are measured; the growth counts only when the ink grew
    at each step (0.0 otherwise, or with fewer than three frames in the window). A shake or a slow zoom moves ink
    about without adding to it; a codec keeps the mean of a still picture."""
    picked = _window_samples(times, seconds)
    if picked is None or not region.any():
        return 0.0
    seen = [frames[j] for j in picked]
    growth = _ink_growth(seen, frames[-1], region)
    if growth > MAX_INK_GROWTH:  # a camera that moved ink across the region's edge (a slow zoom): undo it and see
        got = _onto_last(seen, frames[-1])
        if got is not None:
            growth = min(growth, _ink_growth(got[0], frames[-1], region & got[1]))
    return growth


def _ink_growth(seen: list[np.ndarray], last: np.ndarray, region: np.ndarray) -> float:
    import cv2

    from vreason.verify.exposure import gain_offset, undo_gain
    from vreason.verify.frame_check import GAIN_SAMPLES

    if not region.any():
        return 0.0
    k = np.ones((INK_PAGE_PX, INK_PAGE_PX), np.uint8)
    ink = []
    for f in [*(undo_gain(f, *gain_offset(f, last, max_samples=GAIN_SAMPLES)) for f in seen), last]:
        y = cv2.cvtColor(np.ascontiguousarray(f[..., :3]), cv2.COLOR_RGB2GRAY)
        page = cv2.dilate(y, k)[region].astype(np.float64)
        ink.append(float((page - y[region]).sum() / max(page.sum(), 1.0)))  # a share of the page: gain cancels
    if ink[-1] <= 0 or (np.diff(ink) <= 0).any():
        return 0.0
    return (ink[-1] - ink[0]) / ink[-1]


INK_PAGE_PX = 9
"""The local page of :func:`end_ink_growth`: the brightest luma within this square (px) — wider than a stroke."""
MAX_INK_GROWTH = 0.03
"""Largest share by which a held answer's ink may grow over its window, measured as the frames are; above it the
frames are aligned onto the last and measured again (a slow zoom moves a sudoku's grid lines across the region)."""


def _onto_last(frames: list[np.ndarray], last: np.ndarray) -> tuple[list[np.ndarray], np.ndarray] | None:
    """``frames`` each aligned onto ``last`` (a similarity, :func:`vreason.verify.relative.relative`) and the pixels
    every warp covers (less the residual's border); None when a frame has no plausible camera."""
    import cv2

    from vreason.verify.align import align
    from vreason.verify.frame_check import BORDER_PX
    from vreason.verify.relative import relative

    h, w = last.shape[:2]
    g_last = cv2.cvtColor(np.ascontiguousarray(last[..., :3]), cv2.COLOR_RGB2GRAY).astype(np.float32)
    valid = np.zeros((h, w), bool)
    valid[BORDER_PX:h - BORDER_PX, BORDER_PX:w - BORDER_PX] = True
    out = []
    for f in frames:
        g = cv2.cvtColor(np.ascontiguousarray(f[..., :3]), cv2.COLOR_RGB2GRAY).astype(np.float32)
        found = align(f, last)  # the full search: on a white page the quick candidates can miss a slow zoom
        rel = relative(g, g_last, extra=(found.warp,) if found.ok else ())
        if rel is None:
            return None
        out.append(cv2.warpAffine(np.ascontiguousarray(f[..., :3]), rel, (w, h), flags=cv2.INTER_LINEAR,
                                  borderMode=cv2.BORDER_REPLICATE))
        cover = cv2.warpAffine(np.full((h, w), 255, np.uint8), rel, (w, h), flags=cv2.INTER_NEAREST,
                               borderMode=cv2.BORDER_CONSTANT, borderValue=0) == 255
        valid &= cv2.erode(cover.astype(np.uint8), np.ones((5, 5), np.uint8)) > 0
    return out, valid
