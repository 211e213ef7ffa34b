"""Adversarial variants of the connect family: the shared honest renderings of :mod:`vreason.synth.adversary_honest`
(other fps, speed, size, exposure, hue, shake, letterbox, pause), the family's own honest variants and its cheats
(moved from the part-A module ``adversary_a``)."""

from __future__ import annotations

import numpy as np

from vreason.synth import draw
from vreason.synth.adversary import Clip, variant
from vreason.synth.adversary_honest import cut, register_honest
from vreason.synth.suite import get_family


def _connect():
    from vreason.synth.families.connect.family import DOT_R, LINE_W

    fam = get_family("connect")

    def solve(inst, n):
        return fam.render(inst.state, inst.state["solution"], n)

    def clip(frames, cfg):
        return Clip(frames, float(cfg.fps))

    register_honest("connect", solve)

    @variant("connect", "reverse_direction", honest=True)
    def backwards(inst, cfg, rng):
        """Every line drawn from the other dot of its pair, the last colour first."""
        st = inst.state
        order = list(range(len(st["pairs"])))[::-1]
        st2 = dict(st, pairs=[st["pairs"][k] for k in order])
        return clip(fam.render(st2, [st["solution"][k][::-1] for k in order], cfg.n_frames), cfg)

    @variant("connect", "stray_blob", honest=False)
    def stray(inst, cfg, rng):
        """The right lines plus a blob of the first line's colour on an empty square."""
        st = inst.state
        grid = draw.GridLayout.from_json(st["grid"])
        used = {tuple(c) for p in st["solution"] for c in p}
        free = [(r, c) for r in range(st["n"]) for c in range(st["n"]) if (r, c) not in used]
        cell = free[int(rng.integers(len(free)))]
        frames = solve(inst, cfg.n_frames)
        out = frames[: len(frames) // 2]
        for f in frames[len(frames) // 2:]:
            f = f.copy()
            draw.disc(f, grid.centre(*cell), 0.22 * grid.cell, draw.rgb(st["pairs"][0]["colour"]))
            out.append(f)
        return clip(out, cfg)

    @variant("connect", "diagonal_lines", honest=False)
    def diagonal(inst, cfg, rng):
        """Each pair joined by a straight line drawn steadily from dot to dot, across the squares."""
        st = inst.state
        return clip(fam.render(st, [[p["a"], p["b"]] for p in st["pairs"]], cfg.n_frames), cfg)

    @variant("connect", "screen_wipe", honest=False)
    def wipe(inst, cfg, rng):
        """A wipe from the first frame to the final frame over the middle two seconds, from both side edges to
        the middle at once: lines are revealed in screen order, not drawn. (A single left-to-right wipe is a
        legal drawing order when the lines lie one after another across the board, each growing steadily from
        a dot: easy, seeds 574924287 and 1390851128; from both edges, lines on either side appear together.)"""
        n = cfg.n_frames
        a, b = inst.first_frame, inst.final_frame
        w = a.shape[1]
        out = []
        for k in range(n):
            x = int(round(np.clip((k - n / 4) / (n / 2), 0, 1) * w / 2))
            f = a.copy()
            f[:, :x] = b[:, :x]
            f[:, w - x:] = b[:, w - x:]
            out.append(f)
        return clip(out, cfg)

    @variant("connect", "all_at_once", honest=False)
    def together(inst, cfg, rng):
        """Every line grows at the same time (the prompt asks for one colour after another)."""
        st = inst.state
        per = [fam.render(dict(st, pairs=[p]), [sol], cfg.n_frames) for p, sol in zip(st["pairs"], st["solution"],
                                                                                      strict=True)]
        # lines and dots are darker than the white board in some channel: the pixel-wise minimum composes them
        return clip([np.minimum.reduce([frames[k] for frames in per]) for k in range(cfg.n_frames)], cfg)

    @variant("connect", "jump_to_final", honest=False, difficulties=("medium", "hard"))
    def jump(inst, cfg, rng):
        """The first frame held, then a cut to the final frame."""
        return clip(cut(inst, cfg.n_frames), cfg)

    @variant("connect", "vanish_at_end", honest=False, difficulties=("easy", "hard"))
    def vanish(inst, cfg, rng):
        """The right drawing, but the lines disappear in the last 3 frames."""
        frames = solve(inst, cfg.n_frames)
        return clip(frames[:-3] + [frames[0]] * 3, cfg)

    @variant("connect", "extra_mark", honest=False, difficulties=("easy", "hard"))
    def extra(inst, cfg, rng):
        """The right drawing plus a black scribble on the board for the last second."""
        st = inst.state
        grid = draw.GridLayout.from_json(st["grid"])
        frames = solve(inst, cfg.n_frames)
        a, b = grid.centre(0, 0), grid.centre(0.6, 0.6)
        out = frames[: -cfg.fps]
        for f in frames[-cfg.fps:]:
            f = f.copy()
            draw.thick_line(f, a, b, LINE_W * grid.cell * 0.6, draw.BLACK)
            out.append(f)
        assert DOT_R > 0
        return clip(out, cfg)




_connect()
