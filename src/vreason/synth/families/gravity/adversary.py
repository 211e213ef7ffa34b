"""Adversarial variants of the gravity family: the honest renderings of :mod:`vreason.synth.adversary_replay` (the
solution's frames retimed, resized, re-exposed, hue-shifted, shaken, letterboxed, paused), the family's own variants
and its cheats (moved from the part-B module ``adversary_b``)."""

from __future__ import annotations

import numpy as np

from vreason.synth.adversary import Clip, variant
from vreason.synth.adversary_replay import cut, register_honest
from vreason.synth.base import RenderConfig, TaskInstance

register_honest("gravity", skip=("fps8", "fps24", "pause_first"))


def _ball_clip(inst: TaskInstance, cfg: RenderConfig, fps: float, release: float = 0.0, **change) -> Clip:
    """The scene simulated on its own clock at ``fps`` (parameters overridden by ``change``)."""
    from vreason.synth.families.gravity.family import _render, simulate_at

    st = inst.state
    p = {**{k: st[k] for k in ("start", "v0", "r", "e", "g", "floor_y")}, **change}
    n = int(round((cfg.seconds + release) * fps))
    pos, _ = simulate_at(p, np.arange(n) / fps, release)
    return Clip(_render(st, pos, cfg), fps)


for _fps, _diffs in ((8, ("easy", "medium", "hard")), (24, ("easy", "medium", "hard")), (60, ("hard",))):
    variant("gravity", f"fps{_fps}", honest=True, difficulties=_diffs,
            doc=f"honest: the same motion rendered at {_fps} fps")(
        lambda i, c, r, f=_fps: _ball_clip(i, c, f))


@variant("gravity", "hangs_then_falls", honest=True)
def _g_hang(inst, cfg, rng):
    """The ball hangs still for 0.5 s, then falls exactly as simulated."""
    return _ball_clip(inst, cfg, cfg.fps, release=0.5)


@variant("gravity", "gravity_x1.5", honest=False)
def _g_heavy(inst, cfg, rng):
    """Gravity 1.5 times the scene's."""
    return _ball_clip(inst, cfg, cfg.fps, g=inst.state["g"] * 1.5)


@variant("gravity", "gravity_x0.65", honest=False)
def _g_light(inst, cfg, rng):
    """Gravity 0.65 times the scene's."""
    return _ball_clip(inst, cfg, cfg.fps, g=inst.state["g"] * 0.65)


@variant("gravity", "bouncier", honest=False)
def _g_bouncy(inst, cfg, rng):
    """Restitution 0.15 higher than the scene's."""
    return _ball_clip(inst, cfg, cfg.fps, e=min(0.95, inst.state["e"] + 0.15))


@variant("gravity", "deader", honest=False)
def _g_dead(inst, cfg, rng):
    """Restitution 0.2 lower than the scene's."""
    return _ball_clip(inst, cfg, cfg.fps, e=inst.state["e"] - 0.2)


@variant("gravity", "vanishes_at_end", honest=False)
def _g_vanish(inst, cfg, rng):
    """The right motion, but the ball is gone for the last 0.3 s."""
    from vreason.synth.families.gravity.family import _background

    k = int(round(0.3 * cfg.fps))
    return Clip(list(inst.solution[:-k]) + [_background(inst.state, cfg)] * k, cfg.fps)


@variant("gravity", "teleport", honest=False)
def _g_teleport(inst, cfg, rng):
    """The right motion with 0.3 s skipped mid-flight (the ball jumps ahead), held at the end."""
    sol = list(inst.solution)
    a, k = len(sol) // 5, int(round(0.3 * cfg.fps))
    out = sol[:a] + sol[a + k:]
    return Clip(out + [out[-1]] * k, cfg.fps)


@variant("gravity", "glide", honest=False)
def _g_glide(inst, cfg, rng):
    """Physics off: the ball glides in a straight line from the start to the final position."""
    from vreason.synth.families.gravity.family import _render

    st = inst.state
    f = np.linspace(0, 1, len(inst.solution))[:, None]
    pos = np.array(st["start"])[None] * (1 - f) + np.array(st["final"])[None] * f
    return Clip(_render(st, pos, cfg), cfg.fps)


@variant("gravity", "jump_to_final", honest=False)
def _g_cut(inst, cfg, rng):
    """The ball hangs, then the video cuts to the final frame."""
    return Clip(cut(inst, len(inst.solution)), cfg.fps)
