"""Trajectory checks of the gravity family: ball tracking by colour and the physics checks."""

from __future__ import annotations

from typing import Any

import numpy as np

from vreason.synth import frametools as ft
from vreason.synth.base import RenderConfig

HUE_MARGIN, S_MIN, V_MIN = 12, 100, 70


def track_ball(frames: list[np.ndarray], state: dict[str, Any]) -> list[tuple[float, float] | None]:
    """The ball's centre per frame (config pixels), None where no ball-sized blob of its colour is seen."""
    import cv2

    r = state["r"]
    want = np.pi * (r / 2) ** 2  # area at half resolution
    out: list[tuple[float, float] | None] = []
    for fr in frames:
        half = cv2.resize(fr, (fr.shape[1] // 2, fr.shape[0] // 2), interpolation=cv2.INTER_AREA)
        mask = ft.clean(ft.hue_mask(ft.hsv(half), state["hue"], HUE_MARGIN, S_MIN, V_MIN), 3, 3)
        n, _, stats, cents = cv2.connectedComponentsWithStats(mask, connectivity=8)
        best, best_err = None, 1e9
        for i in range(1, n):
            ratio = stats[i, cv2.CC_STAT_AREA] / want
            if 0.35 <= ratio <= 2.2:
                err = abs(np.log(ratio))
                if err < best_err:
                    best, best_err = (float(cents[i][0]) * 2 + 0.5, float(cents[i][1]) * 2 + 0.5), err
        out.append(best)
    return out


def _bounces(y: np.ndarray, eps: float) -> list[int]:
    """Frames where the ball turns from falling to rising (y grows downward)."""
    d = np.diff(y)
    out: list[int] = []
    i = 1
    while i < len(y) - 1:
        if d[i - 1] > eps:
            if d[i] < -eps:
                out.append(i)
                i += 2
                continue
            if i + 1 < len(y) - 1 and abs(d[i]) <= eps and d[i + 1] < -eps:
                out.append(i if y[i] >= y[i + 1] else i + 1)
                i += 3
                continue
        i += 1
    return out


def _fit(t: np.ndarray, v: np.ndarray, deg: int) -> tuple[np.ndarray, float]:
    coef = np.polyfit(t, v, deg)
    rms = float(np.sqrt(np.mean((np.polyval(coef, t) - v) ** 2)))
    return coef, rms


def check_trajectory(track: list[tuple[float, float] | None], state: dict[str, Any],
                     cfg: RenderConfig) -> tuple[dict[str, bool], dict[str, Any]]:
    r, y_rest = state["r"], state["y_rest"]
    n = len(track)
    idx = np.array([i for i, p in enumerate(track) if p is not None])
    pts = np.array([track[i] for i in idx], dtype=float)
    xs = np.interp(np.arange(n), idx, pts[:, 0])
    ys = np.interp(np.arange(n), idx, pts[:, 1])

    tol_start, tol_final = 0.6 * r + 3, r + 5
    start_err = float(np.hypot(*(pts[0] - np.array(state["start"]))))
    expected = np.array(state["trajectory"], dtype=float)
    if len(expected) != n:  # a longer or shorter video: simulate the same scene for its length
        from vreason.synth.gravity import simulate

        expected, _ = simulate(state, n, cfg.fps)
    final = np.median(pts[-3:], axis=0)
    expected_final = np.median(expected[-3:], axis=0)
    final_err = float(np.hypot(*(final - expected_final)))

    sim_step = float(np.hypot(*np.diff(expected, axis=0).T).max()) if len(expected) > 1 else state["max_step"]
    step_limit = 1.5 * sim_step + 0.5 * r + 3
    gaps = np.diff(idx)
    steps = np.hypot(*np.diff(pts, axis=0).T) / np.maximum(gaps, 1) if len(pts) > 1 else np.zeros(1)
    max_step = float(steps.max()) if steps.size else 0.0

    eps = 1.0 + 0.05 * r
    fly_tol = 0.3 * r + 2
    res_tol = 0.15 * r + 1.2
    a_sim = state["g"] / cfg.fps ** 2
    bounces = _bounces(ys, eps)
    bounds = [-1, *bounces, n]
    fits: list[dict[str, Any]] = []
    seg_fit: dict[int, np.ndarray] = {}
    for k in range(len(bounds) - 1):
        t = np.arange(bounds[k] + 1, bounds[k + 1])
        t = t[(ys[t] < y_rest - fly_tol)] if t.size else t
        if t.size < 4:
            continue
        cy, ry = _fit(t.astype(float), ys[t], 2)
        cx, rx = _fit(t.astype(float), xs[t], 1)
        seg_fit[k] = cy
        fits.append({"segment": k, "frames": [int(t[0]), int(t[-1])], "g": round(2 * float(cy[0]), 3),
                     "rms_y": round(ry, 2), "rms_x": round(rx, 2), "apex": round(float(y_rest - ys[t].min()), 1)})

    floor_errs = []
    for k, b in enumerate(bounces):
        before, after = seg_fit.get(k), seg_fit.get(k + 1)
        if before is not None and after is not None:
            tt = np.linspace(b - 1.5, b + 1.5, 61)
            yc = float(np.max(np.minimum(np.polyval(before, tt), np.polyval(after, tt))))
            floor_errs.append(abs(yc - y_rest))
        else:
            local = max(abs(ys[b] - ys[b - 1]), abs(ys[b + 1] - ys[b]))
            floor_errs.append(max(0.0, (y_rest - ys[b]) - local))
    floor_tol = 0.35 * r + 3
    apexes = [f["apex"] for f in fits if f["segment"] > 0]
    gain = any(b > 1.1 * a + 0.3 * r + 2 for a, b in zip(apexes, apexes[1:], strict=False))

    checks = {
        "start_position": start_err <= tol_start,
        "no_teleport": max_step <= step_limit,
        "parabolic_flights": bool(fits) and all(f["rms_y"] <= res_tol for f in fits),
        "gravity": bool(fits) and all(0.6 * a_sim <= f["g"] <= 1.6 * a_sim for f in fits),
        "linear_horizontal": bool(fits) and all(f["rms_x"] <= res_tol for f in fits),
        "bounces_at_floor": bool(bounces) and all(e <= floor_tol for e in floor_errs),
        "no_energy_gain": not gain,
        "final_position": final_err <= tol_final,
    }
    evidence = {
        "start_error_px": round(start_err, 2), "start_tolerance_px": round(tol_start, 2),
        "final_position": np.round(final, 1).tolist(), "final_expected": np.round(expected_final, 1).tolist(),
        "final_error_px": round(final_err, 2), "final_tolerance_px": round(tol_final, 2),
        "max_step_px": round(max_step, 2), "step_limit_px": round(step_limit, 2),
        "bounce_frames": bounces, "bounce_floor_errors_px": [round(e, 2) for e in floor_errs],
        "floor_tolerance_px": round(floor_tol, 2), "flights": fits, "gravity_expected": round(a_sim, 3),
        "residual_tolerance_px": round(res_tol, 2), "frames_tracked": int(len(idx)), "n_frames": n,
        "trajectory": [None if p is None else [round(p[0], 1), round(p[1], 1)] for p in track],
    }
    return checks, evidence
