"""Gravity's camera (issue 24, principle 5): a constant rotation or a slow zoom undone before the ball is tracked.

The scene has one structure besides the ball, the floor line, and the ball is what the checks measure, so the
shared estimate against a whole picture (:func:`vreason.synth.camera.camera_undone`, which aligns the last
frame to the final picture) would move the ball onto its final place and absorb a wrong end. Here:

* frame 0 is aligned to the start picture (:func:`vreason.verify.align.align`: the hanging ball and the floor
  fix a similarity; the ball must be at its start there anyway, so the picture's centre may move sideways by at
  most :data:`MAX_SHAKE_PX`: a start moved sideways, as by a mirror, is not a camera's pan);
* in the last frame the camera is read from what the ball's place does not decide: the floor edge's slope and
  height (sub-pixel per column, a robust line fit, columns near the ball left out) give the rotation and the
  vertical place, the ball's area against frame 0's gives the zoom (the same mask rule in both frames, so the
  codec's and the threshold's bias cancel; read in the last frames where the ball is clear of the floor, whose
  blend with it would add to its area), and the horizontal place is frame 0's (the zoom and rotation turn
  about the picture's centre column: a pan along a featureless floor cannot be told from a moved ball);
* the warp is interpolated over the frame times between the two (as the shared estimate does);
* a hand-held shake on top (``shake=True``): each frame is moved vertically so that its floor edge, at the
  centre column, lies where the start picture's does (at most :data:`MAX_SHAKE_PX`; sub-pixel, one resampling).
  Horizontally the sky and the floor are the same in every column and the ball is parsed wherever it is: a
  horizontal shake changes nothing the scene compares, and nothing here could measure it.

The zoom is clipped to :data:`MAX_ZOOM` and the rotation to :data:`MAX_ROT_DEG` (the honest camera's bounds).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from vreason.synth import frametools as ft

MAX_ZOOM = 0.06
MAX_ROT_DEG = 2.5
MAX_SHAKE_PX = 4.5
"""Largest vertical shake undone per frame: an honest 2-px shake of every frame, the first and last included,
leaves a frame up to 4 px from the warp interpolated between them."""
BAND = 40
"""Rows searched for the floor edge on each side of the rendered floor line, px."""


def floor_line(frame: np.ndarray, state: dict[str, Any], skip_x: float | None,
               top: int = 0, height: int | None = None) -> tuple[float, float] | None:
    """The floor edge (sky above, dark line below) as ``y = a·x + b`` in ``frame``'s pixels, or None. ``top``:
    ``frame`` is the band of rows from ``top`` of a picture ``height`` rows high (the answer is in the picture's
    rows)."""
    import cv2

    h, w = frame.shape[:2]
    h = h if height is None else height
    fy = int(state["floor_y"])
    y0, y1 = max(1, fy - BAND), min(h - 1, fy + BAND)
    if y1 - y0 < 20:
        return None
    if y0 < top or y1 > top + frame.shape[0]:
        raise ValueError(f"rows {top}..{top + frame.shape[0]} do not hold the floor's band {y0}..{y1}")
    g = cv2.cvtColor(np.ascontiguousarray(frame[y0 - top:y1 - top, :, :3]), cv2.COLOR_RGB2GRAY).astype(np.float32)
    half = (state["r"] + 8) * 1.2
    x = np.arange(4, w - 4, 4)
    if skip_x is not None:
        x = x[np.abs(x - skip_x) > half]
    # every 4th column's 3-column mean, all at once (the same float32 sums as one column at a time)
    cols = (g[:, x - 1] + g[:, x] + g[:, x + 1]) / np.float32(3)
    hi = np.median(cols[:8], axis=0).astype(np.float64)
    lo = cols.min(axis=0).astype(np.float64)
    m = ((hi + lo) / 2).astype(np.float32)
    below = cols < m
    k = below.argmax(axis=0)
    ok = (hi - lo >= 40) & below.any(axis=0) & (k > 0)
    idx = np.flatnonzero(ok)
    x, k, m = x[idx], k[idx], m[idx]
    before, at = cols[k - 1, idx], cols[k, idx]
    frac = (before - m) / np.maximum(before - at, np.float32(1e-6))
    xs = x.astype(np.float64)
    ys = (y0 + k - 1).astype(np.float64) + frac.astype(np.float64)
    if len(xs) < 12:
        return None
    x_a, y_a = xs, ys
    keep = np.ones(len(x_a), bool)
    for _ in range(3):
        a, b = np.polyfit(x_a[keep], y_a[keep], 1)
        res = np.abs(y_a - (a * x_a + b))
        keep = res <= max(1.0, 3 * 1.4826 * float(np.median(res[keep])))
        if keep.sum() < 12:
            return None
    a, b = np.polyfit(x_a[keep], y_a[keep], 1)
    return float(a), float(b)


def ball_area(frame: np.ndarray, state: dict[str, Any]) -> tuple[float, float, float] | None:
    """(x, y, area) of the ball-sized blob of the ball's hue in ``frame`` (full size), or None."""
    import cv2

    from vreason.synth.families.gravity.check import HUE_MARGIN, S_MIN, V_MIN

    mask = ft.hue_mask(ft.hsv(frame), state["hue"], HUE_MARGIN, S_MIN, V_MIN).astype(np.uint8)
    n, _, stats, cents = cv2.connectedComponentsWithStats(mask, connectivity=8)
    if n < 2:
        return None
    ratio = stats[1:, cv2.CC_STAT_AREA] / (np.pi * state["r"] ** 2)
    err = np.where((ratio >= 0.5) & (ratio <= 2.0), np.abs(np.log(ratio)), np.inf)
    i = int(np.argmin(err))  # the first of the nearest (a noise frame has thousands of blobs: no loop over them)
    if not np.isfinite(err[i]):
        return None
    return float(cents[i + 1][0]), float(cents[i + 1][1]), float(stats[i + 1, cv2.CC_STAT_AREA])


AREA_FRAMES = 5
"""The ball's area for the zoom is the median over this many frames at each end: one frame's area moves by ±4%
through a codec (H.264, a 2-px shake of every frame: 388–419 px for a ball of 366), and the ratio of two single
frames read a 2.8% zoom where there was none — 11 px of error at the picture's edge, an honest video failing
`restitution` (shake2px, hard, suite seed 19066). Over 5 frames (0.3 s at 16 fps) the ball hangs or barely starts
to fall at the start and rests at the end."""


CLEAR_PX = 3.0
"""An end frame's ball counts for the zoom only when its lowest point lies this far above the floor edge: touching
the floor, the codec blends the two and the ball's mask grows at its foot (441–446 px against 411 in the sky: a
3.6% zoom read where there was none, 9 px of error, an honest half-size, darker, hue-turned video failing
`restitution`; hard, VREASON_ADV_SEED=26301)."""
END_SEARCH = 16
"""The last frames searched for frames with the ball clear of the floor."""
CLEAR_FRAMES = 9
"""At most this many of them (the latest) give the zoom: each frame's ratio moves ±2% through a codec, and carrying
it to the end enlarges that, so more frames than :data:`AREA_FRAMES` are pooled."""


def _area(frames: list[np.ndarray], state: dict[str, Any]) -> float | None:
    """The median area of the ball over ``frames`` (those it is found in), or None."""
    got = [b[2] for b in (ball_area(f, state) for f in frames) if b is not None]
    return float(np.median(got)) if got else None


def _end_ratio(frames: list[np.ndarray], times: np.ndarray, state: dict[str, Any], a0: float,
               line: tuple[float, float]) -> float | None:
    """The ball's size at the end over its size at the start (√ of the areas): the median over the last
    :data:`CLEAR_FRAMES` of the last :data:`END_SEARCH` frames whose ball is :data:`CLEAR_PX` clear of the floor
    ``line``, each frame's ratio carried to the end along the interpolated zoom (× the time span over its own
    time). None — the last :data:`AREA_FRAMES` frames' median area is used as it is — when the ball touches the
    floor in none of those, or when fewer than 3 frames are clear (a ball that has come to rest on the floor)."""
    t = np.asarray(times, np.float64)
    span = float(t[-1] - t[0])
    n = len(frames)
    got: list[float] = []
    touching = 0
    for i in range(n - 1, max(0, n - END_SEARCH) - 1, -1):
        b = ball_area(frames[i], state)
        if b is None:
            continue
        if b[1] + np.sqrt(b[2] / np.pi) > line[0] * b[0] + line[1] - CLEAR_PX:
            touching += i >= n - AREA_FRAMES
            continue
        u = float(t[i] - t[0]) / span if span > 0 else 1.0
        if u <= 0.5:
            break
        got.append(1.0 + (float(np.sqrt(b[2] / a0)) - 1.0) / u)
        if len(got) == CLEAR_FRAMES:
            break
    return float(np.median(got)) if touching and len(got) >= 3 else None


def _similarity(scale: float, theta: float, src: tuple[float, float], dst: tuple[float, float]) -> np.ndarray:
    """2×3 map turning by ``theta`` and scaling by ``scale`` about ``src``, which lands on ``dst``."""
    c, s = scale * np.cos(theta), scale * np.sin(theta)
    rot = np.array([[c, -s], [s, c]])
    return np.hstack([rot, (np.array(dst) - rot @ np.array(src))[:, None]])


def undo_camera(frames: list[np.ndarray], times: np.ndarray, state: dict[str, Any],
                start: np.ndarray, *, shake: bool = False) -> tuple[list[np.ndarray], dict[str, Any]]:
    """The frames brought onto the start picture's grid (see the module; ``shake``: a vertical shake undone per
    frame too) and the camera's evidence."""
    import cv2

    from vreason.verify.align import align

    if len(frames) < 2:
        return frames, {"camera": "one frame"}
    h, w = start.shape[:2]
    ident = np.array([[1, 0, 0], [0, 1, 0]], np.float64)
    a0 = align(frames[0], start, quick=True, photometric=False)
    w0 = a0.warp if a0.ok else ident  # frame 0 → reference
    m0 = cv2.invertAffineTransform(w0)  # reference → frame 0
    ev: dict[str, Any] = {"frame0": a0.as_json()}
    # frame 0's horizontal place: the sky and the floor are the same in every column, so only the ball fixes it,
    # and the ball must be at its start there: a pan of frame 0 is held to a shake's. A left-right mirror moved the
    # ball 58 px and the alignment took that for the camera (P3 mirror, easy, VREASON_ADV_SEED=101)
    pan = float(m0[0, 0] * w / 2 + m0[0, 1] * h / 2 + m0[0, 2]) - w / 2
    if abs(pan) > MAX_SHAKE_PX:
        m0 = m0.copy()
        m0[0, 2] -= pan - np.sign(pan) * MAX_SHAKE_PX
        ev["frame0_pan_px"] = round(pan, 2)
    ref_line = floor_line(start, state, float(state["start"][0]))
    bn = ball_area(frames[-1], state)
    a0, an = _area(frames[:AREA_FRAMES], state), _area(frames[-AREA_FRAMES:], state)
    line = floor_line(frames[-1], state, None if bn is None else bn[0])
    mn = m0
    if ref_line is not None and line is not None:
        z0 = float(np.hypot(m0[0, 0], m0[1, 0]))
        clear = None if a0 is None else _end_ratio(frames, times, state, a0, line)
        ratio = clear if clear is not None else 1.0 if a0 is None or an is None else float(np.sqrt(an / a0))
        scale = z0 * float(np.clip(ratio, 1 - MAX_ZOOM, 1 + MAX_ZOOM))
        theta = float(np.clip(np.arctan(line[0]) - np.arctan(ref_line[0]), -np.radians(MAX_ROT_DEG),
                              np.radians(MAX_ROT_DEG)))
        src = (w / 2, ref_line[0] * w / 2 + ref_line[1])  # the floor edge at the centre column
        x_n = float(m0[0, 0] * src[0] + m0[0, 1] * src[1] + m0[0, 2])  # frame 0's horizontal place
        mn = _similarity(scale, theta, src, (x_n, line[0] * x_n + line[1]))
        ev["last"] = {"zoom": round(scale, 4), "rotation_deg": round(float(np.degrees(theta)), 3),
                      "floor_y": round(line[0] * x_n + line[1], 2), "ball_area_ratio": round(ratio ** 2, 4)}
    t = np.asarray(times, np.float64)
    span = float(t[-1] - t[0]) or 1.0
    corners = np.array([[0, 0, 1], [w, 0, 1], [0, h, 1], [w, h, 1]], np.float64)
    out = []
    ev["moved_px"] = 0.0  # how far the warp moved the picture's corners at most
    ev["shake_px"] = 0.0  # the largest vertical shake undone
    for f, ti in zip(frames, t, strict=True):
        u = float(ti - t[0]) / span
        m = (1 - u) * m0 + u * mn  # reference → frame
        if shake and ref_line is not None:
            dy = _floor_offset(f, m, (w, h), state, ref_line)
            if dy is not None and abs(dy) <= MAX_SHAKE_PX:
                m = m.copy()
                m[:, 2] += m[:, 1] * dy  # the output row y shows the frame's row of y + dy
                ev["shake_px"] = max(ev["shake_px"], round(abs(dy), 2))
        moved = float(np.abs(corners @ (m - ident).T).max())
        ev["moved_px"] = max(ev["moved_px"], round(moved, 2))
        if moved <= 0.05:
            out.append(f)
            continue
        out.append(cv2.warpAffine(np.ascontiguousarray(f[..., :3]), m, (w, h),
                                  flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP, borderMode=cv2.BORDER_REPLICATE))
    return out, ev


def _floor_offset(frame: np.ndarray, m: np.ndarray, size: tuple[int, int], state: dict[str, Any],
                  ref_line: tuple[float, float]) -> float | None:
    """How far (px, down positive) the floor edge of ``frame`` warped by ``m`` (reference → frame) lies below the
    start picture's ``ref_line`` at the centre column, or None when the edge is not found."""
    import cv2

    w, h = size
    # only the rows the floor's search reads, and as many again above and below as the ball is wide: a ball
    # that reaches into those rows lies wholly inside (one farther off hides no floor column)
    fy, pad = int(state["floor_y"]), BAND + int(np.ceil(2 * state["r"])) + 4
    top, bottom = max(0, fy - pad), min(h, fy + pad)
    band = m.copy()
    band[:, 2] += m[:, 1] * top  # the band's row 0 is the picture's row ``top``
    g = cv2.warpAffine(np.ascontiguousarray(frame[..., :3]), band, (w, bottom - top),
                       flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP, borderMode=cv2.BORDER_REPLICATE)
    ball = ball_area(g, state)
    line = floor_line(g, state, None if ball is None else ball[0], top=top, height=h)
    if line is None:
        return None
    return (line[0] - ref_line[0]) * w / 2 + line[1] - ref_line[1]
