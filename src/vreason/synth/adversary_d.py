"""Adversarial variants (cheats and honest renderings) for the TiViBench-checked families: graph, counting,
match3, toolqa.

Each family gets the shared honest renderings (:func:`register_honest`: other fps and speed, half/double
size, exposure ±15%, hue ±6°, a 2-px shake, letterboxing, a pause) plus its own honest variants, and at
least five cheats: a static first frame, the reversed solution, jump-to-final (a cut) where the task is
about the process (graph, match3), and the task's wrong answers (wrong route, wrong count, wrong order…).
"""

from __future__ import annotations

import numpy as np

from vreason.synth.adversary import Clip, variant
from vreason.synth.adversary_honest import cut, register_honest


def _common_cheats(family: str, solve, *, jump: bool) -> None:
    @variant(family, "static", honest=False)
    def static(inst, cfg, rng):
        """The first frame held for the whole clip."""
        return Clip([inst.first_frame] * cfg.n_frames, float(cfg.fps))

    @variant(family, "reversed", honest=False)
    def reversed_(inst, cfg, rng):
        """The ground-truth solution played backwards."""
        return Clip(solve(inst, cfg.n_frames)[::-1], float(cfg.fps))

    if jump:
        @variant(family, "jump_to_final", honest=False)
        def jump_(inst, cfg, rng):
            """The first frame held, then a cut to the final frame."""
            return Clip(cut(inst, cfg.n_frames), float(cfg.fps))


# ------------------------------------------------------------------ graph
def _graph() -> None:
    from vreason.synth import graph as g

    def solve(inst, n):
        return g.render(inst.state, g.walk(inst.state, inst.state["route"], n))

    register_honest("graph", solve)
    _common_cheats("graph", solve, jump=True)

    def adj(st):
        return {i: [b for a, b in st["edges"] if a == i] + [a for a, b in st["edges"] if b == i]
                for i in range(len(st["nodes"]))}

    @variant("graph", "pause_midway", honest=True)
    def pause_midway(inst, cfg, rng):
        """The token stops for half a second at a node halfway, then goes on."""
        st, n = inst.state, cfg.n_frames
        r = st["route"]
        k = len(r) // 2
        a = g.walk(st, r[:k + 1], n // 2, (0.1, 1.0))
        b = g.walk(st, r[k:], n - n // 2, (0.2, 0.8))
        return Clip(g.render(st, a + b), float(cfg.fps))

    @variant("graph", "wrong_route", honest=False)
    def wrong_route(inst, cfg, rng):
        """A longer route to the destination through a node off the shortest route."""
        st = inst.state
        nb = adj(st)
        r = st["route"]
        for i in range(len(r) - 1):
            for v in nb[r[i]]:
                if v not in r:
                    # from v, any route back to the rest of the shortest route
                    for w in nb[v]:
                        if w in r[i + 1:]:
                            route = r[:i + 1] + [v] + r[r.index(w):]
                            return Clip(g.render(st, g.walk(st, route, cfg.n_frames)), float(cfg.fps))
        off = next(v for i in r for v in nb[i] if v not in r)
        hub = next(i for i in r if off in nb[i])
        route = r[:r.index(hub) + 1] + [off, hub] + r[r.index(hub) + 1:]
        return Clip(g.render(st, g.walk(st, route, cfg.n_frames)), float(cfg.fps))

    @variant("graph", "straight_line", honest=False)
    def straight(inst, cfg, rng):
        """The token glides in a straight line from its node to the destination, ignoring the lines."""
        st = inst.state
        r = st["route"]
        return Clip(g.render(st, g.walk(st, [r[0], r[-1]], cfg.n_frames)), float(cfg.fps))

    @variant("graph", "stops_short", honest=False)
    def short(inst, cfg, rng):
        """The right route, stopping one node before the destination."""
        st = inst.state
        return Clip(g.render(st, g.walk(st, st["route"][:-1], cfg.n_frames)), float(cfg.fps))

    @variant("graph", "second_token", honest=False)
    def second(inst, cfg, rng):
        """A second token appears on the destination while the first one walks the route."""
        from vreason.synth import draw

        frames = solve(inst, cfg.n_frames)
        st = inst.state
        out = []
        for f in frames:
            f = f.copy()
            draw.disc(f, st["nodes"][st["route"][-1]], g.TOKEN_R * st["spacing"], draw.rgb("blue"))
            out.append(f)
        return Clip(out, float(cfg.fps))


# ------------------------------------------------------------------ counting
def _counting() -> None:
    from vreason.synth import counting as c

    def moved(inst, n, m):
        st = inst.state
        return c.render(st, c.moves(st, st["order"][:m], n))

    def solve(inst, n):
        return moved(inst, n, inst.state["k"])

    register_honest("counting", solve)
    _common_cheats("counting", solve, jump=False)

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


# ------------------------------------------------------------------ match3
def _match3() -> None:
    from vreason.synth import match3 as m

    def solve(inst, n):
        st = inst.state
        return m.render(st, m.clearing(st, st["order"], n))

    register_honest("match3", solve)
    _common_cheats("match3", solve, jump=True)

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


# ------------------------------------------------------------------ toolqa
def _toolqa() -> None:
    from vreason.synth import toolqa as q

    def carried(inst, n, moves):
        return q.render(inst.state, q.carry(inst.state, moves, n))

    def solve(inst, n):
        return carried(inst, n, [(inst.state["right"], q.slot_centre())])

    register_honest("toolqa", solve)
    _common_cheats("toolqa", solve, jump=False)

    @variant("toolqa", "cut_to_answer", honest=True)
    def cut_(inst, cfg, rng):
        """A cut to the right end state (no process rule)."""
        return Clip(cut(inst, cfg.n_frames), float(cfg.fps))

    @variant("toolqa", "off_centre_in_frame", honest=True)
    def off(inst, cfg, rng):
        """The right tool placed in the frame a little off its centre."""
        x, y = q.slot_centre()
        return Clip(carried(inst, cfg.n_frames, [(inst.state["right"], [x + 14, y - 10])]), float(cfg.fps))

    @variant("toolqa", "wrong_tool", honest=False)
    def wrong(inst, cfg, rng):
        """A wrong tool is carried into the frame."""
        return Clip(carried(inst, cfg.n_frames, [(inst.state["wrong"][0], q.slot_centre())]), float(cfg.fps))

    @variant("toolqa", "every_tool", honest=False)
    def every(inst, cfg, rng):
        """Every tool is carried into the frame (the wrong ones beside the right one)."""
        st = inst.state
        x, y = q.slot_centre()
        moves = [(st["right"], [x, y])] + [(j, [x - 40 + 40 * k, y + 30]) for k, j in enumerate(st["wrong"])]
        return Clip(carried(inst, cfg.n_frames, moves), float(cfg.fps))

    @variant("toolqa", "beside_the_frame", honest=False)
    def beside(inst, cfg, rng):
        """The right tool stops beside the frame, not in it."""
        x, y = q.slot_centre()
        return Clip(carried(inst, cfg.n_frames, [(inst.state["right"], [x + 120, y])]), float(cfg.fps))


_graph()
_counting()
_match3()
_toolqa()
