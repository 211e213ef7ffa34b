"""Adversarial variants of the counting family: the shared honest renderings of
:mod:`vreason.synth.adversary_honest`, the cheats of :func:`vreason.synth.adversary_cheats.common_cheats` and the
family's own (moved from ``adversary_d``)."""

from __future__ import annotations

from vreason.synth.adversary import Clip, variant
from vreason.synth.adversary_cheats import common_cheats
from vreason.synth.adversary_honest import cut, register_honest


def _counting() -> None:
    from vreason.synth.families.counting import family as c

    def moved(inst, n, m):
        st = inst.state
        return c.render(st, c.moves(st, st["order"][:m], n))

    def solve(inst, n):
        return moved(inst, n, inst.state["k"])

    register_honest("counting", solve)
    common_cheats("counting", solve, jump=False)

    @variant("counting", "cut_to_answer", honest=True)
    def cut_(inst, cfg, rng):
        """A cut to the right tray (the task has no process rule)."""
        return Clip(cut(inst, cfg.n_frames), float(cfg.fps))

    @variant("counting", "other_coins_other_slots", honest=True)
    def other(inst, cfg, rng):
        """Other coins of the pile, dropped into other places in the tray."""
        st = inst.state
        k = st["k"]
        order = list(st["order"][::-1][:k])
        slots = [st["tray_slots"][i] for i in range(len(st["tray_slots"]) - 1, -1, -1)][:k]
        return Clip(c.render(st, c.moves(st, order, cfg.n_frames, slots)), float(cfg.fps))

    @variant("counting", "one_too_many", honest=False)
    def more(inst, cfg, rng):
        """One coin more than the stars."""
        return Clip(moved(inst, cfg.n_frames, inst.state["k"] + 1), float(cfg.fps))

    @variant("counting", "one_too_few", honest=False)
    def fewer(inst, cfg, rng):
        """One coin fewer than the stars."""
        return Clip(moved(inst, cfg.n_frames, inst.state["k"] - 1), float(cfg.fps))

    @variant("counting", "all_coins", honest=False)
    def all_(inst, cfg, rng):
        """Every coin of the pile goes into the tray."""
        return Clip(moved(inst, cfg.n_frames, inst.state["total"]), float(cfg.fps))

    @variant("counting", "coins_drawn_in_tray", honest=False)
    def drawn(inst, cfg, rng):
        """The right number of new coins appears in the tray; the pile stays full."""
        st = inst.state
        pile = [list(p) for p in st["pool"]]
        n = cfg.n_frames
        per = [pile + (st["tray_slots"][:st["k"]] if i >= n // 2 else []) for i in range(n)]
        return Clip(c.render(st, per), float(cfg.fps))

    @variant("counting", "answer_then_undone", honest=False)
    def undone(inst, cfg, rng):
        """The right tray, then one coin taken back out before the end."""
        st = inst.state
        n = cfg.n_frames
        a = moved(inst, n // 2 + 8, st["k"])[:n // 2 + 8]
        k1 = st["k"] - 1
        rest = c.render(st, c.moves(st, st["order"][:k1], 1, st["tray_slots"][:k1]))[-1:] * (n - len(a))
        return Clip(a + rest, float(cfg.fps))


_counting()
