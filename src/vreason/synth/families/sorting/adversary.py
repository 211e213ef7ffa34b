"""Adversarial variants of the sorting family: the shared honest renderings of :mod:`vreason.synth.adversary_honest`
(other fps, speed, size, exposure, hue, shake, letterbox, pause), the family's own honest variants and its cheats
(moved from the part-A module ``adversary_a``)."""

from __future__ import annotations

import numpy as np

from vreason.synth import draw
from vreason.synth.adversary import Clip, variant
from vreason.synth.adversary_honest import cut, register_honest
from vreason.synth.suite import get_family


def _sorting():
    fam = get_family("sorting")

    def solve(inst, n, **kw):
        return fam.render(inst.state, inst.state["solution"], n, **kw)

    def clip(frames, cfg):
        return Clip(frames, float(cfg.fps))

    def after(st, swaps):
        cur = list(st["initial"])
        for i in swaps:
            cur[i], cur[i + 1] = cur[i + 1], cur[i]
        return dict(st, initial=cur)

    register_honest("sorting", solve)

    @variant("sorting", "lift_right_bar", honest=True)
    def lift_right(inst, cfg, rng):
        """Each swap lifts the right bar of the pair over the left one."""
        return clip(solve(inst, cfg.n_frames, lift_right=True), cfg)

    @variant("sorting", "extra_swap_and_back", honest=True, difficulties=("medium",))
    def extra_swap(inst, cfg, rng):
        """A longer legal solution: one needless swap of an ordered pair, undone, then the solution."""
        st = inst.state
        ini = st["initial"]
        i = next(k for k in range(len(ini) - 1) if ini[k] < ini[k + 1])
        return clip(fam.render(st, [i, i] + st["solution"], cfg.n_frames), cfg)

    @variant("sorting", "pass_through", honest=False)
    def through(inst, cfg, rng):
        """Bars slide through each other on the shelf (no lift)."""
        return clip(solve(inst, cfg.n_frames, clearance=0.0), cfg)

    @variant("sorting", "half_lift", honest=False, difficulties=("hard",))
    def half_lift(inst, cfg, rng):
        """The lifted bar is raised only half as high as needed and cuts through its neighbour."""
        return clip(solve(inst, cfg.n_frames, clearance=0.5), cfg)

    @variant("sorting", "jump_to_final", honest=False, difficulties=("easy", "medium"))
    def jump(inst, cfg, rng):
        """The first frame held, then a cut to the sorted shelf."""
        return clip(cut(inst, cfg.n_frames), cfg)

    @variant("sorting", "teleport_swap", honest=False)
    def teleport(inst, cfg, rng):
        """The first swap happens by a cut; the others are carried honestly."""
        st = inst.state
        n = cfg.n_frames
        return clip(fam.render(st, [], n // 4) + fam.render(after(st, st["solution"][:1]), st["solution"][1:],
                                                             n - n // 4), cfg)

    @variant("sorting", "stop_motion", honest=False, difficulties=("easy", "hard"))
    def stop_motion(inst, cfg, rng):
        """The whole solution in a third of a second at the suite's rate (bars jump between frames)."""
        frames = solve(inst, 6)
        return clip([frames[0]] * 4 + frames + [frames[-1]] * 4, cfg)

    @variant("sorting", "vanish_at_end", honest=False, difficulties=("medium", "hard"))
    def vanish(inst, cfg, rng):
        """The right solution, but one bar disappears in the last 3 frames."""
        st = inst.state
        frames = solve(inst, cfg.n_frames)
        col = np.array(draw.rgb(st["bars"][0]["colour"]), np.uint8)
        out = frames[:-3]
        for f in frames[-3:]:
            f = f.copy()
            f[(f == col).all(axis=2)] = draw.WHITE
            out.append(f)
        return clip(out, cfg)

    @variant("sorting", "wrong_colour", honest=False, difficulties=("easy", "medium"))
    def recolour(inst, cfg, rng):
        """A bar changes colour half-way through."""
        st = inst.state
        used = {b["colour"] for b in st["bars"]}
        new = next(c for c in draw.COLOURS if c not in used)
        col = np.array(draw.rgb(st["bars"][-1]["colour"]), np.uint8)
        frames = solve(inst, cfg.n_frames)
        out = frames[: len(frames) // 2]
        for f in frames[len(frames) // 2:]:
            f = f.copy()
            f[(f == col).all(axis=2)] = draw.rgb(new)
            out.append(f)
        return clip(out, cfg)

    @variant("sorting", "extra_bar", honest=False, difficulties=("medium", "hard"))
    def extra_bar(inst, cfg, rng):
        """A bar of the first bar's colour appears at the right end of the shelf for the last second."""
        st = inst.state
        w, h = st["canvas"]
        frames = solve(inst, cfg.n_frames)
        out = frames[: -cfg.fps]
        for f in frames[-cfg.fps:]:
            f = f.copy()
            draw.rect(f, w * 0.91, h * 0.9 - h * 0.2, w * 0.94, h * 0.9, draw.rgb(st["bars"][0]["colour"]))
            out.append(f)
        return clip(out, cfg)




_sorting()
