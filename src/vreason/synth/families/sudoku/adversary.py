"""Adversarial variants of the sudoku family: the shared honest renderings of :mod:`vreason.synth.adversary_honest`,
the text families' cheats of :func:`vreason.synth.adversary_cheats.text_cheats` and the family's own (moved from
``adversary_c``)."""

from __future__ import annotations

from vreason.synth.adversary import Clip, variant
from vreason.synth.adversary_cheats import text_cheats, text_config
from vreason.synth.adversary_honest import register_honest
from vreason.synth.suite import get_family


def _sudoku() -> None:
    fam = get_family("sudoku")
    register_honest("sudoku", lambda inst, n: fam.solve(inst.state, text_config(inst), n))

    def one_wrong(inst, cfg, rng):
        st = inst.state
        vals = [row[:] for row in st["solution"]]
        blanks = [(r, c) for r, row in enumerate(st["puzzle"]) for c, v in enumerate(row) if not v]
        r, c = blanks[int(rng.integers(len(blanks)))]
        vals[r][c] = vals[r][c] % st["n"] + 1
        return fam.solve(st, cfg, cfg.n_frames, vals)

    text_cheats("sudoku", one_wrong)

    @variant("sudoku", "given_changed", honest=False, difficulties=("hard",))
    def given(inst, cfg, rng):
        """Every blank filled right, but a printed digit overwritten with another."""
        from vreason.synth.families.sudoku.family import cell_rect, render

        st = inst.state
        frames = fam.solve(st, cfg, cfg.n_frames)
        r, c = next((r, c) for r, row in enumerate(st["puzzle"]) for c, v in enumerate(row) if v)
        vals = [row[:] for row in st["solution"]]
        vals[r][c] = vals[r][c] % st["n"] + 1
        bad = render(st, cfg, vals)
        x0, y0, x1, y1 = cell_rect(st, r, c)
        out = frames[: len(frames) // 2]
        for f in frames[len(frames) // 2:]:
            f = f.copy()
            f[y0:y1, x0:x1] = bad[y0:y1, x0:x1]
            out.append(f)
        return Clip(out, float(cfg.fps))


_sudoku()
