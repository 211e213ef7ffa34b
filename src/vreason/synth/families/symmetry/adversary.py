"""Adversarial variants of the symmetry family: the shared honest renderings of
:mod:`vreason.synth.adversary_honest` (other fps, speed, size, exposure, hue, shake, letterbox, pause), the family's
own honest variants and its cheats (moved from the part-A module ``adversary_a``)."""

from __future__ import annotations

import numpy as np

from vreason.synth import draw
from vreason.synth.adversary import Clip, variant
from vreason.synth.adversary_honest import register_honest
from vreason.synth.suite import get_family


def _symmetry():
    from vreason.synth.families.symmetry.family import COLS, ROWS

    fam = get_family("symmetry")

    def order(st, reverse=False):
        tg = st["targets"]
        keys = sorted(range(len(tg)), key=lambda k: (tg[k][0], abs(tg[k][1] - 7.5)))
        return [tg[k] for k in (keys[::-1] if reverse else keys)]

    def solve(inst, n):
        return fam.render(inst.state, order(inst.state), n)

    register_honest("symmetry", solve)

    @variant("symmetry", "reverse_order", honest=True)
    def reverse(inst, cfg, rng):
        """The same cells painted in the opposite order."""
        return Clip(fam.render(inst.state, order(inst.state, True), cfg.n_frames), float(cfg.fps))

    def repaint(inst, cfg, paint) -> Clip:
        """The honest video with every painted target cell repainted by ``paint(img, rect, colour)``."""
        st = inst.state
        grid = draw.GridLayout.from_json(st["grid"])
        out = []
        for f in solve(inst, cfg.n_frames):
            f = f.copy()
            for r, c, col in st["targets"]:
                x0, y0, x1, y1 = grid.rect(r, c)
                if tuple(f[(y0 + y1) // 2, (x0 + x1) // 2]) == draw.rgb(col):
                    f[y0 + 1:y1 - 1, x0 + 1:x1 - 1] = draw.WHITE
                    paint(f, grid, r, c, col)
            out.append(f)
        return Clip(out, float(cfg.fps))

    def other_colour(st):
        used = {c for _, _, c in st["given"]}
        return next(c for c in ("red", "green", "blue", "yellow", "purple", "orange") if c not in used)

    @variant("symmetry", "wrong_colour", honest=False)
    def wrong(inst, cfg, rng):
        """The right cells painted in a colour the pattern does not use."""
        oc = other_colour(inst.state)
        return repaint(inst, cfg, lambda f, g, r, c, col: draw.fill_cell(f, g, r, c, draw.rgb(oc), inset=1))

    @variant("symmetry", "grey_cells", honest=False, difficulties=("medium", "hard"))
    def grey(inst, cfg, rng):
        """The right cells painted grey."""
        return repaint(inst, cfg, lambda f, g, r, c, col: draw.fill_cell(f, g, r, c, (128, 128, 128), inset=1))

    @variant("symmetry", "black_cells", honest=False, difficulties=("easy", "medium"))
    def black(inst, cfg, rng):
        """The right cells painted black."""
        return repaint(inst, cfg, lambda f, g, r, c, col: draw.fill_cell(f, g, r, c, draw.BLACK, inset=1))

    @variant("symmetry", "small_dots", honest=False)
    def dots(inst, cfg, rng):
        """A dot of the right colour in each right cell instead of painting it."""
        return repaint(inst, cfg, lambda f, g, r, c, col: draw.disc(f, g.centre(r, c), 0.3 * g.cell, draw.rgb(col)))

    @variant("symmetry", "given_recoloured", honest=False, difficulties=("easy", "hard"))
    def recolour(inst, cfg, rng):
        """The right answer, but the given half changes colour half-way."""
        st = inst.state
        grid = draw.GridLayout.from_json(st["grid"])
        oc = other_colour(st)
        frames = solve(inst, cfg.n_frames)
        out = frames[: len(frames) // 2]
        for f in frames[len(frames) // 2:]:
            f = f.copy()
            for r, c, _ in st["given"]:
                draw.fill_cell(f, grid, r, c, draw.rgb(oc), inset=1)
            out.append(f)
        return Clip(out, float(cfg.fps))

    @variant("symmetry", "extra_cell", honest=False, difficulties=("medium",))
    def extra(inst, cfg, rng):
        """The right answer plus one more painted cell on the empty half."""
        st = inst.state
        grid = draw.GridLayout.from_json(st["grid"])
        taken = {(r, c) for r, c, _ in st["targets"]}
        cols = range(COLS // 2, COLS) if st["side"] == "left" else range(COLS // 2)
        free = [(r, c) for r in range(ROWS) for c in cols if (r, c) not in taken]
        r, c = free[int(rng.integers(len(free)))]
        frames = solve(inst, cfg.n_frames)
        out = frames[: len(frames) // 2]
        for f in frames[len(frames) // 2:]:
            f = f.copy()
            draw.fill_cell(f, grid, r, c, draw.rgb(st["colours"][0]), inset=1)
            out.append(f)
        return Clip(out, float(cfg.fps))

    @variant("symmetry", "vanish_at_end", honest=False, difficulties=("easy", "medium"))
    def vanish(inst, cfg, rng):
        """The right answer, erased again in the last 3 frames."""
        frames = solve(inst, cfg.n_frames)
        return Clip(frames[:-3] + [frames[0]] * 3, float(cfg.fps))

    @variant("symmetry", "grid_erased", honest=False, difficulties=("medium",))
    def grid_erased(inst, cfg, rng):
        """The right answer, but the grid lines are wiped away half-way (the grid must stay as it is)."""
        frames = solve(inst, cfg.n_frames)
        grey = np.array(draw.GRID_GREY, np.uint8)
        out = frames[: len(frames) // 2]
        for f in frames[len(frames) // 2:]:
            f = f.copy()
            f[(f == grey).all(axis=2)] = draw.WHITE
            out.append(f)
        return Clip(out, float(cfg.fps))

    @variant("symmetry", "missing_one", honest=False, difficulties=("hard",))
    def missing(inst, cfg, rng):
        """All but one of the cells painted."""
        fills = order(inst.state)
        return Clip(fam.render(inst.state, fills[:-1], cfg.n_frames), float(cfg.fps))




_symmetry()
