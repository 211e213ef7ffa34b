"""Trajectory checks of the gravity family: ball tracking by colour and the physics checks, in seconds.

The tracked ball is compared with the scene's own simulation (its g, restitution, friction, start
and throw) on the video's clock: the release time is detected (the prompt says the ball *hangs*
before it falls, so a pause before the drop is honest), then every tracked position must lie on the
simulated trajectory let go at that time, within a space tolerance (tracking noise, a 2-px shake,
scaling) and a time tolerance of half a frame of the suite's rate (a video assembled from the
suite's frames at another rate shows each position up to that much early or late). The checks are
split by what they test: held still before the release, the first fall (gravity), the flights
after the first bounce (restitution), no teleport (per-frame steps bounded by the simulation's
fastest speed), the final position, and the end state holding to the last frame (the ball is seen,
where it should be, through the last ``END_HOLD_S`` seconds).

Measured (default render, seeds 20261122/1/2/3, H.264 through the scorer): honest variants (8, 24
and 60 fps, half and double size, ±15% exposure with ±6° hue, 2-px shake, letterbox, a 0.5 s
hang) keep the largest per-frame error ≤ 4.5 px and the RMS ≤ 2 px; ×1.5 and ×0.65 gravity give
errors ≥ 40 px within the first fall, a restitution off by ±0.15 gives ≥ 15 px after the first
bounce. Tolerances: max error ``0.4 r + 4`` px (8.3–10.5 px), RMS ``0.2 r + 2.5`` px.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from vreason.synth import frametools as ft
from vreason.synth.base import RenderConfig

HUE_MARGIN, S_MIN, V_MIN = 12, 100, 70
END_HOLD_S = 0.3
"""The end state must be seen for at least this long (and at least two frames) at the end."""
MIN_MOTION_FRACTION = 0.75
"""A video must show at least min(settling time, this × the suite's duration) after the release."""


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


class Model:
    """The scene's simulated trajectory on a fine clock (1 ms), evaluated at any time after a release."""

    STEP = 0.001

    def __init__(self, state: dict[str, Any], duration: float):
        from vreason.synth.families.gravity.physics import settle_time, simulate_at

        self.t = np.arange(0.0, duration + 0.1, self.STEP)
        self.pos, self.bounces = simulate_at(state, self.t)
        self.start = np.array(state["start"], dtype=float)
        self.settle = settle_time(state)
        speed = np.hypot(*np.diff(self.pos, axis=0).T) / self.STEP
        self.v_max = float(speed.max()) if speed.size else 0.0

    def at(self, times: np.ndarray, release: float) -> np.ndarray:
        """Positions (…, 2) at ``times`` for a release at ``release`` (held at the start before)."""
        s = np.asarray(times, dtype=float) - release
        x = np.interp(s, self.t, self.pos[:, 0], left=self.start[0])
        y = np.interp(s, self.t, self.pos[:, 1], left=self.start[1])
        return np.stack([x, y], axis=-1)

    def release(self, t: np.ndarray, pts: np.ndarray, cap: float) -> float:
        """The release time (seconds) that best explains the tracked points (coarse grid, then 1 ms)."""
        def best(cands: np.ndarray) -> float:
            exp = self.at(t[None, :] - cands[:, None], 0.0)
            err = np.minimum(np.hypot(*(exp - pts[None]).transpose(2, 0, 1)), cap)
            return float(cands[int(np.argmin((err ** 2).mean(axis=1)))])

        r0 = best(np.arange(0.0, float(t[-1]) + 1e-9, 1 / 120))
        return best(np.clip(np.arange(r0 - 1 / 120, r0 + 1 / 120 + 1e-9, self.STEP), 0.0, None))

    def error(self, t: np.ndarray, pts: np.ndarray, release: float, slack: float) -> np.ndarray:
        """Per point, the distance to the trajectory within ±``slack`` seconds of its time."""
        offs = np.linspace(-slack, slack, 9)
        exp = self.at(t[:, None] + offs[None, :], release)  # (n, 9, 2)
        return np.hypot(*(exp - pts[:, None, :]).transpose(2, 0, 1)).min(axis=1)


def check_trajectory(track: list[tuple[float, float] | None], state: dict[str, Any], cfg: RenderConfig,
                     times: np.ndarray) -> tuple[dict[str, bool], dict[str, Any]]:
    r = state["r"]
    n = len(track)
    idx = np.array([i for i, p in enumerate(track) if p is not None])
    pts = np.array([track[i] for i in idx], dtype=float)
    t = times[idx]
    duration = float(times[-1])
    model = Model(state, duration)

    tol_max, tol_rms, tol_start = 0.4 * r + 4, 0.2 * r + 2.5, 0.6 * r + 3
    slack = 0.5 / cfg.fps
    release = model.release(t, pts, cap=3 * r)
    err = model.error(t, pts, release, slack)
    need = min(model.settle, MIN_MOTION_FRACTION * cfg.seconds)
    shown = duration - release

    def phase(sel: np.ndarray) -> dict[str, Any]:
        e = err[sel]
        if e.size == 0:
            return {"frames": 0, "ok": True}
        return {"frames": int(e.size), "max_px": round(float(e.max()), 2),
                "rms_px": round(float(np.sqrt((e ** 2).mean())), 2),
                "ok": bool(e.max() <= tol_max and np.sqrt((e ** 2).mean()) <= tol_rms)}

    first_bounce = release + (model.bounces[0] if model.bounces else np.inf)
    phases = {"held": phase(t < release), "fall": phase((t >= release) & (t < first_bounce)),
              "bounces": phase(t >= first_bounce)}

    gaps = np.diff(t)
    steps = np.hypot(*np.diff(pts, axis=0).T) if len(pts) > 1 else np.zeros(0)
    limits = 1.5 * model.v_max * gaps + 0.5 * r + 3
    teleport = bool(steps.size) and bool(np.any(steps > limits))

    start_err = float(np.hypot(*(pts[0] - model.start))) if idx[0] == 0 else float("inf")
    end_from = min(duration - END_HOLD_S, float(times[-2]) if n > 1 else 0.0)
    end_frames = np.flatnonzero(times >= end_from - 1e-9)
    end_tracked = np.flatnonzero(np.isin(idx, end_frames))  # positions in ``idx`` of the end frames seen
    # the end state against the trajectory let go at the detected release, or at 0 (a video whose process
    # is wrong can still end in the right state: the score scale gives it half credit)
    end_err, final_err = float("inf"), float("inf")
    for rel in ((release, 0.0) if shown >= need - 1e-6 else (0.0,)):  # a ball never let go is not "at rest"
        if end_tracked.size:
            # each end frame must show the ball where the trajectory is during the end window (a held
            # final frame of a still-rolling ball is the end state; a vanished or displaced ball is not)
            span = model.at(np.linspace(end_from - slack, duration + slack, 64), rel)
            e = np.hypot(*(span[None] - pts[end_tracked][:, None]).transpose(2, 0, 1)).min(axis=1)
            e[-1] = float(model.error(t[end_tracked[-1:]], pts[end_tracked[-1:]], rel, slack)[0])
            if float(e.max()) < end_err:
                end_err = float(e.max())
                final_err = float(e[-1]) if idx[end_tracked[-1]] == n - 1 else float("inf")
    end_ok = end_tracked.size == end_frames.size and end_err <= tol_max

    checks = {
        "start_position": start_err <= tol_start,
        "shows_the_motion": bool(shown >= need - 1e-6),
        "held_before_release": phases["held"]["ok"],
        "gravity": phases["fall"]["frames"] >= 2 and phases["fall"]["ok"],
        "restitution": phases["bounces"]["frames"] >= 2 and phases["bounces"]["ok"],
        "no_teleport": not teleport,
        "final_position": final_err <= tol_max,
        "end_state_holds": end_ok,
    }
    evidence = {
        "release_s": round(release, 3), "motion_shown_s": round(shown, 3), "motion_needed_s": round(need, 3),
        "phases": phases, "error_tolerance_px": {"max": round(tol_max, 2), "rms": round(tol_rms, 2)},
        "time_slack_s": round(slack, 4), "start_error_px": round(start_err, 2),
        "start_tolerance_px": round(tol_start, 2), "final_error_px": round(final_err, 2),
        "end_state_frames": [int(end_frames[0]), int(end_frames[-1])] if end_frames.size else [],
        "end_state_tracked": int(end_tracked.size), "end_state_error_px": round(end_err, 2),
        "max_step_over_limit": round(float((steps - limits).max()), 2) if steps.size else 0.0,
        "max_error_px": round(float(err.max()), 2), "frames_tracked": int(len(idx)),
        "n_frames": n, "duration_s": round(duration, 3),
        "trajectory": [None if p is None else [round(p[0], 1), round(p[1], 1)] for p in track],
    }
    if not checks["shows_the_motion"]:
        evidence["reason"] = (f"the video shows {shown:.2f} s after the release at {release:.2f} s; the task needs "
                              f"{need:.2f} s of motion")
    return checks, evidence
