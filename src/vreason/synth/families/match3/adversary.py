"""Adversarial variants of the match3 family: the shared honest renderings of :mod:`vreason.synth.adversary_honest`,
the cheats of :func:`vreason.synth.adversary_cheats.common_cheats` and the family's own (moved from
``adversary_d``)."""

from __future__ import annotations

import numpy as np

from vreason.synth.adversary import Clip, variant
from vreason.synth.adversary_cheats import common_cheats
from vreason.synth.adversary_honest import register_honest


def _match3() -> None:
    from vreason.synth.families.match3 import family as m

    def solve(inst, n):
        st = inst.state
        return m.render(st, m.clearing(st, st["order"], n))

    register_honest("match3", solve)
    common_cheats("match3", solve, jump=True)

    @variant("match3", "slow_clearing", honest=True)
    def slow(inst, cfg, rng):
        """Lines clear later and closer together (25–75% of the clip), still one at a time."""
        st = inst.state
        return Clip(m.render(st, m.clearing(st, st["order"], cfg.n_frames, (0.25, 0.75))), float(cfg.fps))

    @variant("match3", "wrong_order", honest=False)
    def wrong(inst, cfg, rng):
        """The two longest lines clear in swapped order."""
        st = inst.state
        order = list(st["order"])
        order[0], order[1] = order[1], order[0]
        return Clip(m.render(st, m.clearing(st, order, cfg.n_frames)), float(cfg.fps))

    @variant("match3", "all_at_once", honest=False)
    def together(inst, cfg, rng):
        """Every line shrinks away at the same time."""
        st = inst.state
        n_obj = len(st["lines"]) + len(st["singles"])
        t = np.arange(cfg.n_frames) / max(1, cfg.n_frames - 1)
        s = np.clip(1 - (t - 0.4) / 0.2, 0, 1)
        sizes = [[float(v) if j < len(st["lines"]) else 1.0 for j in range(n_obj)] for v in s]
        return Clip(m.render(st, sizes), float(cfg.fps))

    @variant("match3", "singles_cleared_too", honest=False)
    def singles(inst, cfg, rng):
        """The lines clear in the right order, then the single tiles vanish too."""
        st = inst.state
        sizes = np.array(m.clearing(st, st["order"], cfg.n_frames))
        t = np.arange(cfg.n_frames) / max(1, cfg.n_frames - 1)
        sizes[:, len(st["lines"]):] = np.clip(1 - (t[:, None] - 0.85) / 0.05, 0, 1)
        return Clip(m.render(st, sizes.tolist()), float(cfg.fps))

    @variant("match3", "last_line_stays", honest=False)
    def stays(inst, cfg, rng):
        """Every line but the shortest clears."""
        st = inst.state
        return Clip(m.render(st, m.clearing(st, st["order"][:-1], cfg.n_frames)), float(cfg.fps))


_match3()
