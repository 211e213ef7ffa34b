"""Frame helpers shared by the verifiers of the odd-one-out, sequence, gravity and sliding families.

Verifiers work in the coordinates of the :class:`RenderConfig` resolution: :func:`prepare` checks
the frames, crops letterbox/pillarbox bars (:func:`letterbox_crop`, the shared layer's rule in
:mod:`vreason.verify.scene`) and resizes them to that
resolution, so a half-size, letterboxed or re-encoded video is scored with the same geometry as the
rendered one. What an honest video may differ by is then undone before any comparison: a camera
shake (:func:`stabilise`, ≤ 4 px, on parts of the scene that never change), the exposure and a hue
drift (:func:`correct`: global hue rotation, then per-channel gain/offset or an affine colour map,
fitted on the static area). "Unchanged" is judged per pixel against the render's 2-px neighbourhood
range (:func:`ref_range`, :func:`changed`), which absorbs sub-pixel residuals, scaling blur and
codec ringing without ignoring the inside of small shapes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from vreason.synth.base import RenderConfig, VerifyResult
from vreason.verify.hue import rotate_hue  # noqa: F401  (re-exported: the suite's callers use ft.rotate_hue)
from vreason.verify.scene import clean, content_box, hue_mask  # noqa: F401  (the shared layer; verifiers call ft.*)
from vreason.verify.scene import to_hsv as hsv  # noqa: F401  (the project's one HSV helper; verifiers call ft.hsv)


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
        out.append(arr)
    y0, y1, x0, x1 = letterbox_crop(out)
    for i, arr in enumerate(out):
        arr = arr[y0:y1, x0:x1]
        if arr.shape[0] != cfg.height or arr.shape[1] != cfg.width:
            arr = cv2.resize(np.ascontiguousarray(arr), (cfg.width, cfg.height), interpolation=cv2.INTER_LINEAR)
        out[i] = np.ascontiguousarray(arr)
    return out, None


def letterbox_crop(frames: list[np.ndarray]) -> tuple[int, int, int, int]:
    """(y0, y1, x0, x1) of the picture inside letterbox/pillarbox bars (the whole frame if none): the shared
    layer's one rule (:func:`vreason.verify.scene.content_box`)."""
    h, w = frames[0].shape[:2]
    box = content_box(frames)
    if box is None:
        return 0, h, 0, w
    x0, y0, x1, y1 = box
    return y0, y1, x0, x1


def stabilise(frames: list[np.ndarray], ref: np.ndarray, max_shift: float = 4.0, axes: str = "xy",
              box: tuple[int, int, int, int] | None = None) -> tuple[list[np.ndarray], list[list[float]]]:
    """Undo a small camera shake: each frame is shifted back by its translation against ``ref`` when that
    is at most ``max_shift`` px. The translation comes from phase correlation of the whole frame at half
    size, or, with ``box`` = (x0, y0, x1, y1), from matching that static part of ``ref`` (sub-pixel peak),
    for scenes where much of the picture moves. ``axes`` limits which components are trusted ("y" where
    the scene has no vertical edges to register on). Returns frames and shifts."""
    import cv2

    def gray(img: np.ndarray, scale: int) -> np.ndarray:
        g = cv2.cvtColor(img, cv2.COLOR_RGB2GRAY)
        if scale > 1:
            g = cv2.resize(g, (g.shape[1] // scale, g.shape[0] // scale), interpolation=cv2.INTER_AREA)
        return g.astype(np.float32)

    h, w = ref.shape[:2]
    if box is not None:
        s = int(np.ceil(max_shift)) + 1
        x0, y0, x1, y1 = max(s, box[0]), max(s, box[1]), min(w - s, box[2]), min(h - s, box[3])
        tpl = gray(ref, 1)[y0:y1, x0:x1]
    else:
        r = gray(ref, 2)
        win = cv2.createHanningWindow((r.shape[1], r.shape[0]), cv2.CV_32F)

    def peak(v: np.ndarray, k: int) -> float:
        a, b, c = v[k - 1], v[k], v[k + 1]
        den = a - 2 * b + c
        return k + (0.5 * (a - c) / den if abs(den) > 1e-9 else 0.0)

    out: list[np.ndarray] = []
    shifts: list[list[float]] = []
    prev: np.ndarray | None = None
    found = (0.0, 0.0)
    for fr in frames:
        if prev is not None and np.array_equal(fr, prev):  # a repeated frame (a held picture): same shift
            dx, dy = found
        elif box is not None:
            res = cv2.matchTemplate(gray(fr, 1)[y0 - s:y1 + s, x0 - s:x1 + s], tpl, cv2.TM_CCOEFF_NORMED)
            ky, kx = np.unravel_index(int(np.argmax(res)), res.shape)
            dx = (peak(res[ky], kx) if 0 < kx < res.shape[1] - 1 else kx) - s
            dy = (peak(res[:, kx], ky) if 0 < ky < res.shape[0] - 1 else ky) - s
        else:
            (dx, dy), _ = cv2.phaseCorrelate(r.copy(), gray(fr, 2), win)  # OpenCV 5.0 windows src1 in place
            dx, dy = 2 * dx, 2 * dy
        prev, found = fr, (dx, dy)
        dx, dy = (float(dx) if "x" in axes else 0.0), (float(dy) if "y" in axes else 0.0)
        if max(abs(dx), abs(dy)) > max_shift or (abs(dx) < 0.25 and abs(dy) < 0.25):
            out.append(fr)
            shifts.append([0.0, 0.0])
            continue
        m = np.float32([[1, 0, -dx], [0, 1, -dy]])
        out.append(cv2.warpAffine(fr, m, (fr.shape[1], fr.shape[0]), flags=cv2.INTER_LINEAR,
                                  borderMode=cv2.BORDER_REPLICATE))
        shifts.append([round(dx, 2), round(dy, 2)])
    return out, shifts


def ref_range(ref: np.ndarray, radius: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Per-channel lowest and highest value of ``ref`` within ``radius`` px of each pixel: an honest
    frame (shifted by a residual shake, blurred by scaling or a codec) stays inside this range."""
    import cv2

    k = np.ones((2 * radius + 1, 2 * radius + 1), np.uint8)
    return cv2.erode(ref, k), cv2.dilate(ref, k)


def excess(fixed: np.ndarray, rng: tuple[np.ndarray, np.ndarray], ignore: np.ndarray) -> np.ndarray:
    """Per pixel, how far (largest channel, uint8) a colour-corrected frame (:func:`correct`) leaves the
    reference's local range (:func:`ref_range`); 0 inside ``ignore``."""
    import cv2

    lo, hi = rng
    d = cv2.max(cv2.subtract(fixed, hi), cv2.subtract(lo, fixed))
    a, b, c = cv2.split(d)
    m = cv2.max(cv2.max(a, b), c)
    m[ignore] = 0
    return m


def change_measures(fixed: np.ndarray, rng: tuple[np.ndarray, np.ndarray], level: float, ignore: np.ndarray,
                    block: int = 5) -> tuple[int, int]:
    """(pixels beyond ``level`` once isolated specks are removed — thin marks; the largest excess held over
    a whole ``block``×``block`` patch — a solid area recoloured by less than ``level``)."""
    import cv2

    m = excess(fixed, rng, ignore)
    thin = cv2.morphologyEx((m > level).astype(np.uint8), cv2.MORPH_OPEN, np.ones((2, 2), np.uint8))
    return int(thin.sum()), int(cv2.erode(m, np.ones((block, block), np.uint8)).max())


def changed(fixed: np.ndarray, rng: tuple[np.ndarray, np.ndarray], level: float, ignore: np.ndarray) -> np.ndarray:
    """Bool mask of the pixels of a colour-corrected frame that leave the reference's local range by more
    than ``level`` in some channel, outside ``ignore``, with isolated specks removed."""
    import cv2

    m = (excess(fixed, rng, ignore) > level).astype(np.uint8)
    return cv2.morphologyEx(m, cv2.MORPH_OPEN, np.ones((2, 2), np.uint8)) > 0


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


def explain_check(family: Any, frames: list[np.ndarray], times: Any, state: dict[str, Any], cfg: RenderConfig,
                  checks: dict[str, bool], evidence: dict[str, Any]) -> None:
    """Add the family's every-frame explanation (:meth:`TaskFamily.explain`, issue 24) as the ``scene`` check
    (``evidence["scene"]``: the camera, frames checked, the first unexplained frames). ``frames`` are prepared
    (:func:`usable`); ``times`` their seconds. A family without a scene, or whose ``scene_check`` is off, adds
    nothing."""
    if not getattr(family, "scene_check", True):
        return
    ex = family.explain(frames, times, state, cfg)
    if ex is None:
        return
    checks["scene"] = bool(ex.ok)
    evidence["scene"] = ex.as_json()


def scene_verdict(family: Any, frames: list[np.ndarray], times: Any, state: dict[str, Any], cfg: RenderConfig,
                  checks: dict[str, bool], evidence: dict[str, Any], reasons: list[str]) -> None:
    """:func:`explain_check` on a verifier's raw ``frames`` (``times``: their seconds or None): the frames are
    prepared (:func:`usable`) and timed here; frames that cannot be prepared or timed fail the ``scene`` check
    with the reason; a failed scene adds ``"scene: <reason>"`` to ``reasons``. Nothing when the family's
    ``scene_check`` is off."""
    from vreason.synth.base import frame_times

    if not getattr(family, "scene_check", True):
        return
    prepared, bad = usable(frames, cfg)
    t = None
    if bad is None:
        try:
            t = frame_times(len(prepared), cfg, times)
        except ValueError as exc:
            bad = zero(str(exc))
    if bad is not None or t is None:
        checks["scene"] = False
        evidence["scene"] = {"reason": (bad.evidence if bad else {}).get("reason", "")}
    else:
        explain_check(family, prepared, t, state, cfg, checks, evidence)
    if not checks.get("scene", True):
        reasons.append(f"scene: {evidence['scene'].get('reason', '')}")


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
    """Undo a per-channel gain/offset with a lookup table (uint8 in and out). A saturated observation
    (254, 255) only says the true value was at least its inverse: it stays at the top, where the light
    backgrounds a brighter exposure clips were."""
    import cv2

    levels = np.arange(256, dtype=np.float32)
    lut = np.clip((levels[:, None] - off[None]) / gain[None], 0, 255)
    lut[254:] = np.maximum(lut[254:], levels[254:, None])
    return cv2.LUT(np.ascontiguousarray(img), lut.astype(np.uint8).reshape(256, 1, 3))


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


def open_stack(masks: np.ndarray) -> np.ndarray:
    """3×3 morphological opening of a (T, H, W) uint8 mask stack in one OpenCV call (a blank row between
    frames keeps them apart)."""
    import cv2

    T, h, w = masks.shape
    padded = np.zeros((T, h + 2, w), np.uint8)
    padded[:, 1:h + 1] = masks
    out = cv2.morphologyEx(padded.reshape(T * (h + 2), w), cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    return np.ascontiguousarray(out.reshape(T, h + 2, w)[:, 1:h + 1])
