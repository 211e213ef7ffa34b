"""Adversarial variants of the graph family: the shared honest renderings of :mod:`vreason.synth.adversary_honest`,
the cheats of :func:`vreason.synth.adversary_cheats.common_cheats` and the family's own (moved from
``adversary_d``)."""

from __future__ import annotations

from vreason.synth import draw
from vreason.synth.adversary import Clip, variant
from vreason.synth.adversary_cheats import common_cheats
from vreason.synth.adversary_honest import register_honest


def _graph() -> None:
    from vreason.synth.families.graph import family as g

    def solve(inst, n):
        return g.render(inst.state, g.walk(inst.state, inst.state["route"], n))

    register_honest("graph", solve)
    common_cheats("graph", solve, jump=True)

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

        frames = solve(inst, cfg.n_frames)
        st = inst.state
        out = []
        for f in frames:
            f = f.copy()
            draw.disc(f, st["nodes"][st["route"][-1]], g.TOKEN_R * st["spacing"], draw.rgb("blue"))
            out.append(f)
        return Clip(out, float(cfg.fps))


_graph()
