"""Gravity: a ball dropped or thrown falls under gravity and bounces on the floor.

The solution is the simulated trajectory (analytic flights, restitution ``e`` and tangential
friction at each bounce, rolling friction once the bounces die out). Difficulty: easy = dropped,
big ball; medium = thrown; hard = thrown harder (upward too), smaller and bouncier ball (more bounces).

Verifier (:mod:`vreason.synth.families.gravity.check`): frames are letterbox-cropped and a vertical shake is
undone (registered on the floor line); the ball is tracked by colour per frame and compared, on the
video's own clock in seconds, with the scene's simulation let go at a detected release time (the
ball "hangs" first, for any time). Checks: start position, the video shows enough motion after the
release, held still before it, the first fall (gravity), the flights after the first bounce
(restitution), no teleport, the final position, and the end state held through the last 0.3 s.
Directional and a process rule. Measured tolerances: docs/suite_validity.md.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from vreason.synth import frametools as ft
from vreason.synth.base import RenderConfig, TaskFamily, TaskInstance, VerifyResult, family
from vreason.synth.draw import canvas
from vreason.synth.families.gravity.physics import (  # noqa: F401  (re-exported: the family's names)
    BALLS,
    BOUNCE_FRICTION,
    FLOOR,
    ROLL_DECAY,
    SKY,
    settle_time,
    simulate,
    simulate_at,
)


def _background(state: dict[str, Any], cfg: RenderConfig) -> np.ndarray:
    import cv2

    img = canvas(cfg.width, cfg.height, SKY)
    img[state["floor_y"]:] = FLOOR
    cv2.line(img, (0, state["floor_y"]), (cfg.width, state["floor_y"]), (40, 40, 44), 2)
    return img


def _render(state: dict[str, Any], positions: np.ndarray, cfg: RenderConfig) -> list[np.ndarray]:
    from vreason.synth.families.gravity.scene import render_ball

    bg = _background(state, cfg)
    return [render_ball(bg, state, float(x), float(y)) for x, y in positions]


def _params(rng: np.random.Generator, difficulty: str, cfg: RenderConfig) -> dict[str, Any]:
    H, W = cfg.height, cfg.width
    floor_y = int(round(0.86 * H))
    r = {"easy": 0.045, "medium": 0.04, "hard": 0.03}[difficulty] * H
    e = float(rng.uniform(*{"easy": (0.55, 0.7), "medium": (0.6, 0.75), "hard": (0.7, 0.8)}[difficulty]))
    g = 2.4 * H
    y0 = float(rng.uniform(0.14, 0.38) * H)
    if difficulty == "easy":
        x0, v0 = float(rng.uniform(0.2, 0.8) * W), (0.0, 0.0)
    else:
        side = 1.0 if rng.random() < 0.5 else -1.0
        x0 = float(rng.uniform(0.08, 0.25) * W) if side > 0 else float(rng.uniform(0.75, 0.92) * W)
        speed = {"medium": (0.12, 0.22), "hard": (0.2, 0.32)}[difficulty]
        vx = side * float(rng.uniform(*speed)) * W
        vy = -float(rng.uniform(0.0, 0.25 if difficulty == "medium" else 0.5)) * math.sqrt(2 * g * (floor_y - y0))
        v0 = (vx, vy)
    return {"start": [x0, y0], "v0": list(v0), "r": float(r), "e": e, "g": float(g), "floor_y": floor_y}


@family
class Gravity(TaskFamily):
    name = "gravity"
    scene_check = True
    """The every-frame scene (issue 24, :mod:`.scene`) is part of the verdict. It explains the frames with the
    family's own camera undone (:mod:`.camera`): the shared whole-picture estimate has only the floor line to go
    by, and an honest rotation, zoom or shake left the floor line unexplained (measured in the docs)."""
    version = "4"  # 2: checks in seconds and task units, nothing-else-changed, end state held, corrections (issue 11)
    # 3: a vertical shake undone per frame, the scene on that camera (issue 24)
    # 4: frame 0's camera moves the picture's centre sideways by a shake at most (a mirror is not a pan, issue 24)
    directional = True
    process_rule = True

    def make(self, rng: np.random.Generator, difficulty: str, index: int, seed: int,
             cfg: RenderConfig) -> TaskInstance:
        n = cfg.n_frames
        p = _params(rng, difficulty, cfg)
        for _ in range(30):
            pos, bounces = simulate(p, n, cfg.fps)
            r = p["r"]
            if pos[:, 0].min() >= r + 4 and pos[:, 0].max() <= cfg.width - r - 4 and pos[:, 1].min() >= r + 4:
                break
            p["v0"] = [0.85 * v for v in p["v0"]]
        name = str(rng.choice(list(BALLS)))
        steps = np.linalg.norm(np.diff(pos, axis=0), axis=1)
        state: dict[str, Any] = {
            **p, "ball_name": name, "ball_color": list(BALLS[name]), "hue": ft.rgb_hue(BALLS[name]),
            "y_rest": p["floor_y"] - p["r"], "trajectory": np.round(pos, 2).tolist(),
            "bounce_times": [round(b, 4) for b in bounces], "final": np.round(pos[-1], 2).tolist(),
            "max_step": float(steps.max()), "fps": cfg.fps, "width": cfg.width, "height": cfg.height,
        }
        solution = _render(state, pos, cfg)
        how = "is let go and drops" if difficulty == "easy" else "is tossed sideways and flies"
        prompt = (
            f"A {name} ball hangs in the air above a dark floor, exactly where it is shown. It {how} under "
            "ordinary gravity, strikes the floor and rebounds, each bounce a little lower than the one before, "
            "until it settles on the floor. The ball keeps its size and colour, the floor is solid and the camera "
            "does not move."
        )
        return TaskInstance(family=self.name, difficulty=difficulty, index=index, seed=seed, prompt=prompt,
                            first_frame=solution[0], final_frame=solution[-1], solution=solution, state=state,
                            directional=self.directional, process_rule=self.process_rule)

    def shortest_oracle(self, inst: TaskInstance, cfg: RenderConfig) -> int:
        """The verdict needs the motion from the release (the oracle's first frame) for min(settling time,
        :data:`MIN_MOTION_FRACTION` of the clip) seconds: a prefix a frame short of that fails (one frame of
        margin: the release is estimated to 1/120 s); the oracle cut after that is an honest shorter video."""
        from vreason.synth.families.gravity.check import MIN_MOTION_FRACTION

        need = min(settle_time(inst.state), MIN_MOTION_FRACTION * cfg.seconds)
        return min(len(inst.solution), int(math.ceil(need * cfg.fps - 1e-9)))

    def random_motion(self, inst: TaskInstance, rng: np.random.Generator, cfg: RenderConfig) -> list[np.ndarray]:
        """The ball moves with wrong physics (straight glide, mid-air bounce, low gravity, wrong throw)."""
        st = inst.state
        n = cfg.n_frames
        final = np.array(st["final"])
        far = 3 * (st["r"] + 4)
        for _ in range(12):
            kind = str(rng.choice(["glide", "midair", "lowg", "throw"]))
            p = {k: st[k] for k in ("start", "v0", "r", "e", "g", "floor_y")}
            if kind == "glide":
                end = np.array([rng.uniform(0.1, 0.9) * cfg.width, rng.uniform(0.1, 0.8) * cfg.height])
                f = ft.ramp(n, 0.1, 0.9)[:, None]
                pos = np.array(st["start"])[None] * (1 - f) + end[None] * f
            else:
                if kind == "midair":
                    p["floor_y"] = int(st["floor_y"] - rng.uniform(0.15, 0.3) * cfg.height)
                    p["start"] = [st["start"][0], min(st["start"][1], p["floor_y"] - st["r"] - 5)]
                elif kind == "lowg":
                    p["g"] = st["g"] * float(rng.uniform(0.15, 0.35))
                else:
                    p["v0"] = [st["v0"][0] + float(rng.choice([-1, 1]) * rng.uniform(0.15, 0.3) * cfg.width),
                               st["v0"][1]]
                pos, _ = simulate(p, n, cfg.fps)
            pos[:, 0] = np.clip(pos[:, 0], st["r"], cfg.width - st["r"])
            pos[:, 1] = np.clip(pos[:, 1], st["r"], st["y_rest"])
            if np.linalg.norm(pos[-1] - final) > far:
                return _render(st, pos, cfg)
        pos = np.array(st["start"])[None].repeat(n, 0)
        pos[:, 1] = np.linspace(st["start"][1], st["r"] + 2, n)
        return _render(st, pos, cfg)

    def scene(self, state: dict[str, Any], cfg: RenderConfig):
        """Every frame is the sky, the floor and the ball at the position parsed from it (see
        :mod:`vreason.synth.families.gravity.scene`)."""
        from vreason.synth.families.gravity.scene import make_scene

        return make_scene(state, cfg)

    def explain(self, frames: list[np.ndarray], times: Sequence[float] | np.ndarray, state: dict[str, Any],
                cfg: RenderConfig) -> Any:
        """Every frame explained (:mod:`.scene`) on the frames with the family's camera undone (:mod:`.camera`):
        the shared whole-picture estimate has only the floor line to go by, which fixes neither a zoom nor a
        horizontal place (an honest 2.2% zoom left the floor line 1 px off in the last frames, bench seed
        731942), and frame to frame it is no better: on an honest 2-px shake it re-aligned frames 4, 8 and 23 by
        the moving ball (medium, VREASON_ADV_SEED=716559779), and on a clone cheat it took a 59.6-px horizontal
        shift for the last frame, whose unjudged band hid the clone on the floor (easy, case seed 559779). So
        this camera also undoes a vertical shake per frame (the floor edge), and the shared check applies it as
        given (``track_camera=False``). The picture's outer band that this camera moved (its largest corner
        move) is not judged, as the shared check does for its own."""
        from vreason.synth.families.gravity.camera import undo_camera
        from vreason.synth.families.gravity.scene import render_ball
        from vreason.verify.explain import BORDER_PX, explain_scene

        sc = self.scene(state, cfg)
        if sc is None:
            return None
        undone, camera = undo_camera(list(frames), np.asarray(times, np.float64), state,
                                     render_ball(_background(state, cfg), state, *state["start"]), shake=True)
        border = BORDER_PX + int(np.ceil(float(camera.get("moved_px", 0.0))))
        return explain_scene(undone, times, sc, border=border, track_camera=False)

    def verify(self, frames: list[np.ndarray], state: dict[str, Any], cfg: RenderConfig,
               times: Sequence[float] | None = None) -> VerifyResult:
        from vreason.synth.base import frame_times
        from vreason.synth.families.gravity.check import check_trajectory, track_ball

        try:
            t = frame_times(len(frames), cfg, times)
        except ValueError as exc:
            return ft.zero(str(exc))
        frames, bad = ft.usable(frames, cfg)
        if bad is not None:
            return bad
        scene_checks: dict[str, bool] = {}
        scene_ev: dict[str, Any] = {}
        ft.explain_check(self, frames, t, state, cfg, scene_checks, scene_ev)  # see :meth:`explain`
        # a constant rotation or a slow zoom undone (frame 0 against the start picture, the last frame's floor
        # and ball size: :mod:`.camera`), then a shake vertically (the scene's only edges besides the ball are
        # horizontal: the floor)
        from vreason.synth.families.gravity.camera import undo_camera
        from vreason.synth.families.gravity.scene import render_ball

        frames, camera = undo_camera(frames, t, state, render_ball(_background(state, cfg), state, *state["start"]))
        frames, shifts = ft.stabilise(frames, _background(state, cfg), axes="y")
        track = track_ball(frames, state)
        found = sum(p is not None for p in track)
        if found < 0.85 * len(frames) or track[0] is None:
            return ft.zero(f"the ball was found in {found} of {len(frames)} frames"
                           + ("" if track[0] is not None else " (not in the first frame)"),
                           trajectory=[None if p is None else [round(p[0], 1), round(p[1], 1)] for p in track])
        checks, evidence = check_trajectory(track, state, cfg, t)
        checks.update(scene_checks)
        evidence.update(scene_ev)
        evidence["camera_shift_max_px"] = float(np.abs(np.array(shifts)).max())
        evidence["camera"] = camera
        return ft.finish(checks, evidence, _debug(frames[0], track, state),
                         goal=("final_position", "end_state_holds"))


def _debug(frame: np.ndarray, track: list[tuple[float, float] | None], state: dict[str, Any]) -> np.ndarray:
    import cv2

    img = frame.copy()
    for x, y in state["trajectory"]:
        cv2.circle(img, (int(x), int(y)), 2, (0, 180, 0), -1)
    for p in track:
        if p is not None:
            cv2.circle(img, (int(p[0]), int(p[1])), 2, (255, 0, 255), -1)
    return img
