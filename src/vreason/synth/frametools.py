"""Frame helpers shared by the verifiers of the odd-one-out, sequence, gravity and sliding families.

Verifiers work in the coordinates of the :class:`RenderConfig` resolution: :func:`prepare` checks
the frames and resizes them to that resolution, so a half-size or re-encoded video is scored with
the same geometry as the rendered one.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from vreason.synth.base import RenderConfig, VerifyResult


def prepare(frames: list[np.ndarray], cfg: RenderConfig) -> tuple[list[np.ndarray], str | None]:
    """Frames as RGB uint8 at the config resolution, or ``([], reason)`` when unusable."""
    import cv2

    if frames is None or len(frames) == 0:
        return [], "the video has no frames"
    out: list[np.ndarray] = []
    for i, fr in enumerate(frames):
        arr = np.asarray(fr)
        if arr.ndim == 2:
            arr = np.repeat(arr[:, :, None], 3, axis=2)
        if arr.ndim != 3 or arr.shape[2] not in (3, 4) or arr.shape[0] < 2 or arr.shape[1] < 2:
            return [], f"frame {i} has an unusable shape {tuple(arr.shape)}"
        arr = arr[:, :, :3]
        if arr.dtype != np.uint8:
            arr = np.nan_to_num(arr.astype(np.float32), nan=0.0, posinf=255.0, neginf=0.0)
            if float(arr.max()) <= 1.0:  # floats in [0, 1]
                arr = arr * 255.0
            arr = np.clip(arr, 0, 255).astype(np.uint8)
        if arr.shape[0] != cfg.height or arr.shape[1] != cfg.width:
            arr = cv2.resize(np.ascontiguousarray(arr), (cfg.width, cfg.height), interpolation=cv2.INTER_LINEAR)
        out.append(np.ascontiguousarray(arr))
    return out, None


def blank_reason(frames: list[np.ndarray], min_frames: int = 2) -> str | None:
    """Why the video cannot show the task at all (too short, black, white, uniform), or None."""
    if len(frames) < min_frames:
        return f"the video has {len(frames)} frame(s); at least {min_frames} are needed"
    step = max(1, len(frames) // 8)
    sub = np.stack([f[::4, ::4] for f in frames[::step]]).astype(np.float32)
    mean, std = float(sub.mean()), float(sub.std())
    if std < 4.0:
        if mean < 20:
            return "the video is black"
        if mean > 235:
            return "the video is white"
        return "the video is a uniform colour"
    return None


def usable(frames: list[np.ndarray], cfg: RenderConfig) -> tuple[list[np.ndarray], VerifyResult | None]:
    """Frames brought to the suite's size, or a zero result saying why they cannot be verified
    (no frames, wrong shape, blank)."""
    frames, err = prepare(frames, cfg)
    if not err:
        err = blank_reason(frames)
    return frames, (zero(err) if err else None)


def zero(reason: str, **evidence: Any) -> VerifyResult:
    """A score of 0 with the reason in the evidence."""
    return VerifyResult(score=0.0, passed=False, evidence={"reason": reason, **evidence})


def finish(checks: dict[str, bool], evidence: dict[str, Any], debug: np.ndarray | None = None,
           goal: tuple[str, ...] = ()) -> VerifyResult:
    """Passed only when every check passes. Score (the suite's common scale, as maze/sorting/connect):
    1 when all pass; 0 when a ``goal`` (final-state) check fails; 0.5 when the goal is reached by a
    process that breaks a rule. Without ``goal`` the score is the fraction of checks passed."""
    checks = {k: bool(v) for k, v in checks.items()}
    failed = [k for k, v in checks.items() if not v]
    if goal:
        missing = [g for g in goal if g not in checks]
        if missing:
            raise KeyError(f"goal checks {missing} not among {sorted(checks)}")
        score = 0.0 if any(not checks[g] for g in goal) else (0.5 if failed else 1.0)
    else:
        score = sum(checks.values()) / max(1, len(checks))
    ev = {"checks": checks, **evidence}
    if failed:
        ev.setdefault("reason", "failed checks: " + ", ".join(failed))
    return VerifyResult(score=float(score), passed=not failed, evidence=ev, debug_image=debug)


def hsv(frame: np.ndarray) -> np.ndarray:
    import cv2

    return cv2.cvtColor(frame, cv2.COLOR_RGB2HSV)


def hue_mask(hsv_img: np.ndarray, hue: float, margin: float, s_min: int, v_min: int) -> np.ndarray:
    """Pixels whose OpenCV hue (0..180) is within ``margin`` of ``hue`` (wrapping), bool mask."""
    h = hsv_img[:, :, 0].astype(np.int16)
    d = np.abs(h - int(round(hue)) % 180)
    d = np.minimum(d, 180 - d)
    return (d <= margin) & (hsv_img[:, :, 1] >= s_min) & (hsv_img[:, :, 2] >= v_min)


def clean(mask: np.ndarray, open_px: int = 3, close_px: int = 3) -> np.ndarray:
    """Morphological opening then closing of a bool mask (uint8 0/1 out)."""
    import cv2

    m = mask.astype(np.uint8)
    if open_px > 1:
        m = cv2.morphologyEx(m, cv2.MORPH_OPEN, np.ones((open_px, open_px), np.uint8))
    if close_px > 1:
        m = cv2.morphologyEx(m, cv2.MORPH_CLOSE, np.ones((close_px, close_px), np.uint8))
    return m


def rgb_hue(rgb: tuple[int, int, int] | list[int]) -> float:
    """OpenCV hue (0..180) of an RGB colour."""
    import cv2

    px = np.array([[list(rgb)]], dtype=np.uint8)
    return float(cv2.cvtColor(px, cv2.COLOR_RGB2HSV)[0, 0, 0])


def small(img: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """Area-downsampled float32 copy (``size`` = (w, h)), a feature robust to codecs and resizing."""
    import cv2

    return cv2.resize(img, size, interpolation=cv2.INTER_AREA).astype(np.float32)


def mad(a: np.ndarray, b: np.ndarray) -> float:
    """Mean absolute difference of two equally shaped arrays."""
    return float(np.mean(np.abs(a.astype(np.float32) - b.astype(np.float32))))


def ramp(n: int, start: float, end: float) -> np.ndarray:
    """Per-frame progress in [0, 1]: 0 until ``start`` (fraction of the video), 1 after ``end``, smooth between."""
    t = np.arange(n) / max(1, n - 1)
    p = np.clip((t - start) / max(1e-6, end - start), 0.0, 1.0)
    return p * p * (3 - 2 * p)


def colour_fix(frame: np.ndarray, ref_small: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-channel gain and offset (frame ≈ gain * reference + offset) fitted on the static ``mask`` area.

    ``ref_small`` is the reference frame downsampled with :func:`small`; ``mask`` selects its static
    pixels. Observed pixels at the ends of the range (clipped by the jitter) are left out of the fit.
    Implausible fits (gain outside 0.7..1.4, offset beyond ±40) are replaced by identity.
    """
    obs = small(frame, (ref_small.shape[1], ref_small.shape[0]))
    gain, off = np.ones(3, np.float32), np.zeros(3, np.float32)
    for ch in range(3):
        x, y = ref_small[:, :, ch][mask], obs[:, :, ch][mask]
        keep = (y > 6) & (y < 249)
        x, y = x[keep], y[keep]
        if x.size < 20:
            continue
        vx = float(x.var())
        if vx < 25:
            continue
        a = float(((x - x.mean()) * (y - y.mean())).mean()) / vx
        b = float(y.mean() - a * x.mean())
        if 0.7 <= a <= 1.4 and -40 <= b <= 40:
            gain[ch], off[ch] = a, b
    return gain, off


def forward(img: np.ndarray, gain: np.ndarray, off: np.ndarray) -> np.ndarray:
    """Apply a per-channel gain/offset to a reference image (with clipping, as the jitter did)."""
    return np.clip(img.astype(np.float32) * gain + off, 0, 255).astype(np.uint8)


def apply_fix(img: np.ndarray, gain: np.ndarray, off: np.ndarray) -> np.ndarray:
    """Undo a per-channel gain/offset with a lookup table (uint8 in and out)."""
    import cv2

    levels = np.arange(256, dtype=np.float32)
    lut = np.clip((levels[:, None] - off[None]) / gain[None], 0, 255).astype(np.uint8)
    return cv2.LUT(np.ascontiguousarray(img), lut.reshape(256, 1, 3))
