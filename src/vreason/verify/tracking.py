"""TiViBench's process-and-goal checks ("DINO-X-based tracking", appendix C.2): tracking and elimination.

Both read ``n_samples`` frames spread uniformly over the video (first and last included, see
:func:`uniform_indices`) and find objects in each with the env's detector or the colour detector (as
:mod:`vreason.verify.grounding` does; the backend is recorded). Distances are in pixels over the frame's
diagonal; letterbox bars are cut first.

**tracking** — the object's position per sampled frame (the largest colour blob / the best detection) is
projected on the ground-truth path (the polyline through ``waypoints``). Checks: *tracked* (found in the
first and last samples and in ≥ 85% of them); *start* (first sample within ``path_tol`` of the first
waypoint); *on_path* (every position within ``path_tol`` of the path); *ordered* (progress along the path
never falls back by more than ``path_tol``); *continuous* (no advance between consecutive samples larger
than ``max_step`` × the path's length: a cut to the goal fails); *reached_goal* and *holds_goal* (the last
sample, and the one before, within ``path_tol`` of the goal); *no_walls* (no position inside a wall box).
Score: progress along the path reached at the end (0..1), halved when a process check fails.

**elimination** — an object (a :class:`GroundingParams`) is present in a sample when one of its expected
points has a found object within its ``point_tol`` (no points: when any is found, in its region). Checks:
*all_present_at_start*; *order* (the sample after each object's last sighting strictly increases along
``order``: objects that vanish together, or in another order, fail); *eliminated* (every ordered object
absent in the last two samples); *kept* (objects not in ``order`` present in the last two samples).
Score: the fraction of checks passed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from vreason.verify import colour
from vreason.verify.annotations import EliminationParams, GroundingParams, TrackingParams
from vreason.verify.checks import CheckEnv, CheckResult, register_check
from vreason.verify.grounding import in_region, locate

MIN_TRACKED = 0.85
HOLD_SAMPLES = 2


def uniform_indices(n_frames: int, n: int) -> list[int]:
    """``n`` frame indices spread evenly over ``n_frames`` (first and last included; fewer when short)."""
    if n_frames <= 0:
        return []
    return sorted({int(round(v)) for v in np.linspace(0, n_frames - 1, max(1, min(n, n_frames)))})


def _project(p: np.ndarray, pts: np.ndarray) -> tuple[float, float]:
    """(distance to the polyline, arc length of the nearest point) for a point and a polyline (same units)."""
    best_d, best_s, s0 = np.inf, 0.0, 0.0
    for a, b in zip(pts[:-1], pts[1:], strict=True):
        ab = b - a
        L = float(np.hypot(*ab))
        u = float(np.clip(((p - a) @ ab) / (L * L), 0.0, 1.0)) if L > 0 else 0.0
        d = float(np.hypot(*(a + u * ab - p)))
        if d < best_d - 1e-12:
            best_d, best_s = d, s0 + u * L
        s0 += L
    if len(pts) == 1:
        best_d = float(np.hypot(*(pts[0] - p)))
    return best_d, best_s


def _prepare(frames: Sequence[np.ndarray]) -> tuple[list[np.ndarray] | None, str]:
    if not len(frames):
        return None, "the video has no frames"
    for f in frames:
        bad = colour.valid_frame(f)
        if bad:
            return None, bad
    return colour.content(frames), ""


def _overlay(frame: np.ndarray, path: np.ndarray, pos: list[np.ndarray | None], walls: list[Any],
             ok: bool) -> np.ndarray:
    import cv2

    img = frame.copy()
    h, w = img.shape[:2]
    for b in walls:
        x0, y0, x1, y1 = b.pixels(w, h)
        cv2.rectangle(img, (x0, y0), (x1 - 1, y1 - 1), (120, 120, 120), 1)
    cv2.polylines(img, [np.round(path).astype(np.int32).reshape(-1, 1, 2)], False, (0, 170, 0), 2)
    seen = [p for p in pos if p is not None]
    if len(seen) >= 2:
        cv2.polylines(img, [np.round(np.array(seen)).astype(np.int32).reshape(-1, 1, 2)], False,
                      (0, 90, 255) if ok else (220, 0, 0), 2)
    for p in seen:
        cv2.circle(img, (int(p[0]), int(p[1])), 3, (0, 90, 255) if ok else (220, 0, 0), -1)
    return img


@register_check("tracking", frames="uniform:N", needs=("detector",))
def tracking_check(frames: Sequence[np.ndarray], times: Any, gt_end: np.ndarray | None, params: TrackingParams,
                   env: CheckEnv) -> CheckResult:
    fr, why = _prepare(frames)
    if fr is None:
        return CheckResult(False, 0.0, reason=why)
    h, w = fr[0].shape[:2]
    diag = float(np.hypot(w, h))
    target = GroundingParams(label=params.label, colour=params.colour)
    pos: list[np.ndarray | None] = []
    backend = ""
    for f in fr:
        blobs, backend, why = locate(f, target, env)
        if blobs is None:
            return CheckResult(None, reason=why)
        pos.append(np.array([blobs[0].cx * w, blobs[0].cy * h]) if blobs else None)
    path = np.array([[x * w, y * h] for x, y in params.waypoints], dtype=np.float64)
    length = float(np.sum(np.hypot(*np.diff(path, axis=0).T))) if len(path) > 1 else 0.0
    tol = params.path_tol * diag
    idx = [i for i, p in enumerate(pos) if p is not None]
    proj = {i: _project(pos[i], path) for i in idx}
    n = len(pos)
    checks: dict[str, bool] = {}
    checks["tracked"] = bool(idx) and idx[0] == 0 and idx[-1] == n - 1 and len(idx) >= MIN_TRACKED * n
    checks["start"] = 0 in proj and float(np.hypot(*(pos[0] - path[0]))) <= tol
    off = [i for i in idx if proj[i][0] > tol]
    checks["on_path"] = bool(idx) and not off
    s = [proj[i][1] for i in idx]
    back = [idx[k + 1] for k in range(len(s) - 1) if s[k + 1] < max(s[:k + 1]) - tol]
    checks["ordered"] = bool(idx) and not back
    steps = [(s[k + 1] - s[k]) / max(1, idx[k + 1] - idx[k]) for k in range(len(s) - 1)]
    big = max(steps, default=0.0)
    checks["continuous"] = length > 0 and big <= params.max_step * length + 1e-9
    at_goal = [i for i in idx if float(np.hypot(*(pos[i] - path[-1]))) <= tol]
    checks["reached_goal"] = (n - 1) in at_goal
    checks["holds_goal"] = all(i in at_goal for i in range(max(0, n - HOLD_SAMPLES), n))
    in_wall = [i for i in idx for b in params.walls
               if b.x0 <= pos[i][0] / w <= b.x1 and b.y0 <= pos[i][1] / h <= b.y1]
    checks["no_walls"] = not in_wall
    progress = 0.0
    if idx and length > 0 and checks["start"]:
        progress = float(np.clip(proj[idx[-1]][1] / length, 0.0, 1.0)) if proj[idx[-1]][0] <= tol else 0.0
        if progress * length <= tol:  # within the tolerance of the start: no progress (a static video is 0)
            progress = 0.0
    process = ("tracked", "on_path", "ordered", "continuous", "holds_goal", "no_walls")
    score = progress if all(checks[k] for k in process) else 0.5 * progress
    ok = all(checks.values())
    failed = [k for k, v in checks.items() if not v]
    details = {
        "checks": checks, "n_samples": n, "path_tol": params.path_tol, "max_step": params.max_step,
        "trajectory": [None if p is None else [round(p[0] / w, 4), round(p[1] / h, 4)] for p in pos],
        "distance_to_path": [None if i not in proj else round(proj[i][0] / diag, 4) for i in range(n)],
        "progress": [None if i not in proj else round(proj[i][1] / max(length, 1e-9), 4) for i in range(n)],
        "largest_step": round(big / max(length, 1e-9), 4), "off_path_samples": off, "backtrack_samples": back,
        "wall_samples": sorted(set(in_wall)),
    }
    reason = "" if ok else "failed: " + ", ".join(failed)
    return CheckResult(bool(ok), float(score), reason, details, backend,
                       _overlay(fr[-1], path, pos, params.walls, ok))


def presence(frame: np.ndarray, obj: GroundingParams, env: CheckEnv) -> tuple[bool | None, str, str]:
    """Whether ``obj`` is in one frame (at one of its expected points when it has some)."""
    blobs, backend, why = locate(frame, obj, env)
    if blobs is None:
        return None, backend, why
    h, w = frame.shape[:2]
    if obj.expected_points:
        return any(colour.distance(p, (b.cx, b.cy), w, h) <= obj.point_tol
                   for p in obj.expected_points for b in blobs), backend, ""
    return bool(in_region(blobs, obj.region)), backend, ""


@register_check("elimination", frames="uniform:N", needs=("detector",))
def elimination_check(frames: Sequence[np.ndarray], times: Any, gt_end: np.ndarray | None,
                      params: EliminationParams, env: CheckEnv) -> CheckResult:
    fr, why = _prepare(frames)
    if fr is None:
        return CheckResult(False, 0.0, reason=why)
    bad = [j for j in params.order if not 0 <= j < len(params.objects)]
    if bad or len(set(params.order)) != len(params.order):
        return CheckResult(None, reason=f"annotation error: order {params.order} must name distinct objects "
                                        f"0..{len(params.objects) - 1}")
    P = np.zeros((len(params.objects), len(fr)), dtype=bool)
    backend = ""
    for j, obj in enumerate(params.objects):
        for i, f in enumerate(fr):
            got, backend, why = presence(f, obj, env)
            if got is None:
                return CheckResult(None, reason=why)
            P[j, i] = got
    n = len(fr)
    gone = [int(np.flatnonzero(P[j])[-1]) + 1 if P[j].any() else 0 for j in range(len(params.objects))]
    seq = [gone[j] for j in params.order]
    tail = slice(max(0, n - HOLD_SAMPLES), n)
    keep = [j for j in range(len(params.objects)) if j not in params.order]
    checks = {
        "all_present_at_start": bool(P[:, 0].all()),
        "order": n >= 2 and all(a < b for a, b in zip(seq, seq[1:], strict=False)),
        "eliminated": not P[list(params.order), tail].any() if params.order else True,
        "kept": bool(P[keep, tail].all()) if keep else True,
    }
    ok = all(checks.values())
    observed = sorted(params.order, key=lambda j: (gone[j], j))
    details = {"checks": checks, "n_samples": n, "presence": P.astype(int).tolist(),
               "gone_after_sample": gone, "expected_order": list(params.order), "observed_order": observed,
               "labels": [o.label for o in params.objects]}
    failed = [k for k, v in checks.items() if not v]
    reason = "" if ok else "failed: " + ", ".join(failed)
    # graded like the suite's scale: the share of the listed objects gone at the end (0 when the scene did
    # not start complete), halved when the order or the unlisted objects break the rule
    done = float(np.mean([not P[j, tail].any() for j in params.order])) if params.order else 1.0
    score = 0.0 if not checks["all_present_at_start"] else done * (1.0 if checks["order"] and checks["kept"] else 0.5)
    return CheckResult(bool(ok), score, reason, details, backend, _presence_overlay(fr[-1], params, P))


def _presence_overlay(frame: np.ndarray, params: EliminationParams, P: np.ndarray) -> np.ndarray:
    """The last frame with each object's expected points circled (green: gone at the end, red: still there)
    and a presence strip per object (dark = present) along the bottom."""
    import cv2

    img = frame.copy()
    h, w = img.shape[:2]
    for j, obj in enumerate(params.objects):
        c = (220, 0, 0) if P[j, -1] else (0, 170, 0)
        for x, y in obj.expected_points:
            cv2.circle(img, (int(x * w), int(y * h)), 6, c, 2)
    rows, n = P.shape
    cell = max(2, w // max(1, n))
    strip = np.full((rows * 8, w, 3), 255, np.uint8)
    for j in range(rows):
        for i in range(n):
            if P[j, i]:
                strip[j * 8:j * 8 + 6, i * cell:(i + 1) * cell - 1] = 40
    return np.concatenate([img, strip], axis=0)
