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
from vreason.verify.colour_fix import (  # noqa: F401  (re-exported: the verifiers call ft.correct, ft.colour_fix, …)
    apply_affine,
    apply_fix,
    colour_affine,
    colour_fix,
    correct,
    hue_offset,
    small,
)
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
    y0, y1, x0, x1 = letterbox_crop(out, cfg.width / cfg.height)
    for i, arr in enumerate(out):
        arr = arr[y0:y1, x0:x1]
        if arr.shape[0] != cfg.height or arr.shape[1] != cfg.width:
            arr = cv2.resize(np.ascontiguousarray(arr), (cfg.width, cfg.height), interpolation=cv2.INTER_LINEAR)
        out[i] = np.ascontiguousarray(arr)
    return out, None


def letterbox_crop(frames: list[np.ndarray], aspect: float | None = None) -> tuple[int, int, int, int]:
    """(y0, y1, x0, x1) of the picture inside letterbox/pillarbox bars (the whole frame if none): the shared
    layer's one rule (:func:`vreason.verify.scene.content_box`; ``aspect``: the picture's, when known)."""
    h, w = frames[0].shape[:2]
    box = content_box(frames, aspect=aspect)
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
                  checks: dict[str, bool], evidence: dict[str, Any], reasons: list[str]) -> list[np.ndarray] | None:
    """:func:`explain_check` on a verifier's raw ``frames`` (``times``: their seconds or None): the frames are
    prepared (:func:`usable`) and timed here; frames that cannot be prepared or timed fail the ``scene`` check
    with the reason; a failed scene adds ``"scene: <reason>"`` to ``reasons``. Nothing when the family's
    ``scene_check`` is off. Returns the prepared frames (for the verifier's later checks), None when the scene
    was not checked or the frames could not be prepared."""
    from vreason.synth.base import frame_times

    if not getattr(family, "scene_check", True):
        return None
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
    return prepared if bad is None else None


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


def mad(a: np.ndarray, b: np.ndarray) -> float:
    """Mean absolute difference of two equally shaped arrays."""
    return float(np.mean(np.abs(a.astype(np.float32) - b.astype(np.float32))))


def ramp(n: int, start: float, end: float) -> np.ndarray:
    """Per-frame progress in [0, 1]: 0 until ``start`` (fraction of the video), 1 after ``end``, smooth between."""
    t = np.arange(n) / max(1, n - 1)
    p = np.clip((t - start) / max(1e-6, end - start), 0.0, 1.0)
    return p * p * (3 - 2 * p)


def open_stack(masks: np.ndarray) -> np.ndarray:
    """3×3 morphological opening of a (T, H, W) uint8 mask stack in one OpenCV call (a blank row between
    frames keeps them apart)."""
    import cv2

    T, h, w = masks.shape
    padded = np.zeros((T, h + 2, w), np.uint8)
    padded[:, 1:h + 1] = masks
    out = cv2.morphologyEx(padded.reshape(T * (h + 2), w), cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    return np.ascontiguousarray(out.reshape(T, h + 2, w)[:, 1:h + 1])
