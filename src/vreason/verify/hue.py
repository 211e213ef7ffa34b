"""A camera's global hue turn (white balance), read and undone: shared by the every-frame explanation
(:mod:`vreason.verify.explain`) and the suite's colour correction (:mod:`vreason.synth.frametools`).

Hue is OpenCV's full-range hue (256 units per turn). A per-channel gain cannot model a hue turn: left in, a
gain fitted against a rendering drifts on coloured areas, and unchanged coloured objects seem to change."""

from __future__ import annotations

import numpy as np


def hue_turn(obs_hsv: np.ndarray, ref_hsv: np.ndarray) -> float:
    """The circular mean hue difference (units) of corresponding pixels (N×3 HSV-full rows, same order) where
    both are saturated (> 90) and bright (> 60); 0 when fewer than 20 such pixels."""
    ho, hr = obs_hsv.astype(np.float64), ref_hsv.astype(np.float64)
    sat = (ho[:, 1] > 90) & (hr[:, 1] > 90) & (ho[:, 2] > 60) & (hr[:, 2] > 60)
    if sat.sum() < 20:
        return 0.0
    ang = (ho[sat, 0] - hr[sat, 0]) * 2 * np.pi / 256
    return float(np.arctan2(np.sin(ang).mean(), np.cos(ang).mean()) * 256 / (2 * np.pi))


def rotate_hue(img: np.ndarray, units: float) -> np.ndarray:
    """``img`` (RGB uint8) with its hue turned by ``units`` (rounded; ``img`` itself when that is 0)."""
    import cv2

    k = int(round(units))
    if k == 0:
        return img
    full = cv2.cvtColor(img, cv2.COLOR_RGB2HSV_FULL)
    lut = ((np.arange(256) + k) % 256).astype(np.uint8)
    full[..., 0] = cv2.LUT(full[..., 0], lut)
    return cv2.cvtColor(full, cv2.COLOR_HSV2RGB_FULL)


def hue_undone(frames: list[np.ndarray], start: np.ndarray) -> list[np.ndarray]:
    """The frames with the first frame's global hue turn against the start image undone, read on the start
    image's saturated areas at a quarter of the size (the frames as given when the turn is under 1 unit)."""
    import cv2

    if not frames:
        return frames
    h, w = start.shape[:2]
    size = (max(1, w // 4), max(1, h // 4))
    ref = cv2.resize(np.ascontiguousarray(start[..., :3]), size, interpolation=cv2.INTER_AREA)
    mask = cv2.erode((cv2.cvtColor(ref, cv2.COLOR_RGB2HSV)[..., 1] > 90).astype(np.uint8),
                     np.ones((3, 3), np.uint8)) > 0
    obs = cv2.resize(np.ascontiguousarray(frames[0][..., :3]), size, interpolation=cv2.INTER_AREA)
    turn = hue_turn(cv2.cvtColor(obs, cv2.COLOR_RGB2HSV_FULL)[mask], cv2.cvtColor(ref, cv2.COLOR_RGB2HSV_FULL)[mask])
    if abs(turn) < 1.0:
        return frames
    return [rotate_hue(np.ascontiguousarray(f[..., :3]), -turn) for f in frames]
