"""Global colour correction of a frame against a reference: undo a hue turn, then fit a per-channel
gain/offset or an affine colour map on the static area of the downsampled reference (:func:`correct`). The
reference's fit data is computed once per (reference, mask) pair and reused for every frame of a video.
Moved here from ``vreason.synth.frametools`` (which re-exports every name) to keep that module small."""

from __future__ import annotations

import numpy as np

from vreason.verify.align import undo_gain
from vreason.verify.hue import rotate_hue


def small(img: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """Area-downsampled float32 copy (``size`` = (w, h)), a feature robust to codecs and resizing."""
    import cv2

    return cv2.resize(img, size, interpolation=cv2.INTER_AREA).astype(np.float32)


def correct(frame: np.ndarray, ref_small: np.ndarray, mask: np.ndarray, affine: bool = False) -> np.ndarray:
    """The frame with its colours brought back to the reference's, fitted on the static ``mask`` area of the
    downsampled reference: a global hue rotation is undone, then a per-channel gain/offset (or, with
    ``affine``, a 3×4 colour map, for scenes whose static area holds many colours)."""
    obs = small(frame, (ref_small.shape[1], ref_small.shape[0]))
    units = _hue_offset_obs(obs, ref_small, mask)
    if int(round(-units)) != 0:  # the frame turned: its downsample changes (rotate_hue returns it otherwise)
        frame = rotate_hue(frame, -units)
        obs = small(frame, (ref_small.shape[1], ref_small.shape[0]))
    if affine:
        return apply_affine(frame, _colour_affine_obs(obs, ref_small, mask))
    gain, off = _colour_fix_obs(obs, ref_small, mask)
    return apply_fix(frame, gain, off)


class _RefFit:
    """What the colour fits read of a reference (its static pixels per channel, their hue and saturation):
    the same for every frame of a video, computed once (:func:`_ref_fit`)."""

    def __init__(self, ref_small: np.ndarray, mask: np.ndarray) -> None:
        import cv2

        self.ref_small, self.mask = ref_small, mask
        self.channels = [ref_small[:, :, ch][mask] for ch in range(3)]
        self.hsv = cv2.cvtColor(ref_small.astype(np.uint8), cv2.COLOR_RGB2HSV_FULL)[mask].astype(np.float64)
        self.pixels = ref_small[mask].reshape(-1, 3)


_FITS: list[_RefFit] = []


def _ref_fit(ref_small: np.ndarray, mask: np.ndarray) -> _RefFit:
    """The reference's fit data, kept for the last few (reference, mask) pairs by identity (a verifier passes
    the same arrays for every frame; the entries hold them, so an identity is never reused)."""
    for f in _FITS:
        if f.ref_small is ref_small and f.mask is mask:
            return f
    f = _RefFit(ref_small, mask)
    _FITS.insert(0, f)
    del _FITS[4:]
    return f


def colour_fix(frame: np.ndarray, ref_small: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-channel gain and offset (frame ≈ gain * reference + offset) fitted on the static ``mask`` area.

    ``ref_small`` is the reference frame downsampled with :func:`small`; ``mask`` selects its static
    pixels. Observed pixels at the ends of the range (clipped by the jitter) are left out of the fit; a
    channel with a single level in the reference gets a gain only (the ratio of the means).
    Implausible fits (gain outside 0.7..1.4, offset beyond ±40) are replaced by identity.
    """
    return _colour_fix_obs(small(frame, (ref_small.shape[1], ref_small.shape[0])), ref_small, mask)


def _colour_fix_obs(obs: np.ndarray, ref_small: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`colour_fix` of an already downsampled frame."""
    fit = _ref_fit(ref_small, mask)
    gain, off = np.ones(3, np.float32), np.zeros(3, np.float32)
    for ch in range(3):
        x, y = fit.channels[ch], obs[:, :, ch][mask]
        keep = (y > 6) & (y < 249)
        x, y = x[keep], y[keep]
        if x.size < 20:
            continue
        vx = float(x.var())
        if vx < 25:  # one level in this channel: only a gain (exposure) can be told apart
            a, b = (float(y.mean() / x.mean()), 0.0) if x.mean() > 20 else (1.0, 0.0)
        else:
            a = float(((x - x.mean()) * (y - y.mean())).mean()) / vx
            b = float(y.mean() - a * x.mean())
        if 0.7 <= a <= 1.4 and -40 <= b <= 40:
            gain[ch], off[ch] = a, b
    return gain, off


def apply_fix(img: np.ndarray, gain: np.ndarray, off: np.ndarray) -> np.ndarray:
    """Undo a per-channel gain/offset (uint8 RGB in and out): :func:`vreason.verify.align.undo_gain`, whose
    saturated-top rule it shares."""
    return undo_gain(img, gain, off)


def colour_affine(frame: np.ndarray, ref_small: np.ndarray, mask: np.ndarray, ridge: float = 50.0) -> np.ndarray:
    """A 3×4 colour map (reference ≈ M · [observed, 1]) fitted on the static ``mask`` area: undoes
    exposure, white balance and a small hue rotation (which mixes channels, unlike a per-channel gain).

    Least squares with a ridge pull toward the identity (weight ``ridge`` per sample-equivalent), so an
    area of few colours cannot produce a wild map; clipped observations are left out; a map far from
    the identity (any coefficient off by more than 0.6, offset beyond ±60) falls back to the identity."""
    return _colour_affine_obs(small(frame, (ref_small.shape[1], ref_small.shape[0])), ref_small, mask, ridge)


def _colour_affine_obs(obs: np.ndarray, ref_small: np.ndarray, mask: np.ndarray, ridge: float = 50.0) -> np.ndarray:
    """:func:`colour_affine` of an already downsampled frame."""
    x, y = obs[mask].reshape(-1, 3), _ref_fit(ref_small, mask).pixels
    keep = ((x > 4) & (x < 251)).all(axis=1)
    x, y = x[keep].astype(np.float64), y[keep].astype(np.float64)
    ident = np.hstack([np.eye(3), np.zeros((3, 1))])
    if len(x) < 30:
        return ident.astype(np.float32)
    a = np.hstack([x, np.ones((len(x), 1))])
    reg = ridge * np.diag([1.0, 1.0, 1.0, 1e-4])
    w = np.linalg.solve(a.T @ a + reg, a.T @ y + reg @ ident.T)  # (4, 3)
    m = w.T
    if np.abs(m[:, :3] - np.eye(3)).max() > 0.6 or np.abs(m[:, 3]).max() > 60:
        return ident.astype(np.float32)
    return m.astype(np.float32)


def apply_affine(img: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Apply a 3×4 colour map to an RGB uint8 image (saturating)."""
    import cv2

    return cv2.transform(np.ascontiguousarray(img), m)


def hue_offset(frame: np.ndarray, ref_small: np.ndarray, mask: np.ndarray) -> float:
    """The frame's global hue rotation against the reference (OpenCV full-range hue units, 256 per turn),
    the circular mean over saturated pixels of the static ``mask`` area (0 when there are too few)."""
    return _hue_offset_obs(small(frame, (ref_small.shape[1], ref_small.shape[0])), ref_small, mask)


def _hue_offset_obs(obs: np.ndarray, ref_small: np.ndarray, mask: np.ndarray) -> float:
    """:func:`hue_offset` of an already downsampled (float32) frame."""
    import cv2

    from vreason.verify.hue import hue_turn

    return hue_turn(cv2.cvtColor(obs.astype(np.uint8), cv2.COLOR_RGB2HSV_FULL)[mask], _ref_fit(ref_small, mask).hsv)
