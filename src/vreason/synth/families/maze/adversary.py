"""Adversarial variants of the maze family: the shared honest renderings of :mod:`vreason.synth.adversary_honest`
(other fps, speed, size, exposure, hue, shake, letterbox, pause), the family's own honest variants and its cheats
(moved from the part-A module ``adversary_a``)."""

from __future__ import annotations

from vreason.synth import draw
from vreason.synth.adversary import Clip, variant
from vreason.synth.adversary_honest import cut, register_honest
from vreason.synth.suite import get_family


def _maze():
    from vreason.synth.families.maze.family import _positions

    fam = get_family("maze")

    def path(inst):
        return [tuple(p) for p in inst.state["solution"]]

    def solve(inst, n):
        return fam.render(inst.state, _positions(path(inst), n))

    def hops(inst, k: int, hold: int):
        p = path(inst)
        pos = [p[0]] * hold + [p[min(i, len(p) - 1)] for i in range(k, len(p) + k - 1, k)] + [p[-1]] * hold
        return fam.render(inst.state, [(float(r), float(c)) for r, c in pos])

    register_honest("maze", solve)

    @variant("maze", "detour", honest=True)
    def detour(inst, cfg, rng):
        """A longer legal walk: into a dead end off the solution and back, then on to the goal."""
        from vreason.synth.families.maze.family import neighbours

        st = inst.state
        p = path(inst)
        on = set(p)
        for i, cell in enumerate(p[:-1]):
            side = [nb for nb in neighbours(st["open"], *cell) if nb not in on]
            if side:
                walk = p[:i + 1] + [side[0], cell] + p[i + 1:]
                return Clip(fam.render(st, _positions(walk, cfg.n_frames)), float(cfg.fps))
        return Clip(solve(inst, cfg.n_frames), float(cfg.fps))

    @variant("maze", "stop_motion_hops", honest=False)
    def stop_motion(inst, cfg, rng):
        """Stop-motion: the agent hops two cells per frame along the right path (a short video)."""
        return Clip(hops(inst, 2, 3), float(cfg.fps))

    @variant("maze", "stop_motion_60fps", honest=False, difficulties=("medium",))
    def stop_motion60(inst, cfg, rng):
        """One cell per frame at 60 fps: 60 cells/s, every hop one cell."""
        return Clip(hops(inst, 1, 12), 60.0)

    @variant("maze", "jump_to_final", honest=False)
    def jump(inst, cfg, rng):
        """The first frame held, then a cut to the final frame."""
        return Clip(cut(inst, cfg.n_frames), float(cfg.fps))

    @variant("maze", "teleport_midway", honest=False, difficulties=("easy", "hard"))
    def teleport(inst, cfg, rng):
        """A smooth walk that skips the middle third of the path in one frame."""
        p = path(inst)
        a, b = len(p) // 3, 2 * len(p) // 3
        n = cfg.n_frames
        first = _positions(p[:a + 1], n // 2)
        second = _positions(p[b:], n - n // 2)
        return Clip(fam.render(inst.state, first[: n // 2 - n // 20] + second[n // 20:]), float(cfg.fps))

    @variant("maze", "through_walls", honest=False)
    def through_walls(inst, cfg, rng):
        """A smooth walk along the solution until a cell with a wall to a neighbour, through that wall, then
        legally on to the goal."""
        from vreason.synth.families.maze.family import bfs, graph_distances, path_to

        st = inst.state
        dist = graph_distances(st["open"], tuple(st["goal"]))
        p = path(inst)
        for i, (r, c) in enumerate(p[:-1]):
            blocked = [(r + dr, c + dc) for dr, dc, bit in ((-1, 0, 1), (0, 1, 2), (1, 0, 4), (0, -1, 8))
                       if not st["open"][r][c] & bit and 0 <= r + dr < st["rows"] and 0 <= c + dc < st["cols"]]
            if blocked:
                x = min(blocked, key=lambda cell: dist[cell])
                walk = p[:i + 1] + path_to(bfs(st["open"], x), tuple(st["goal"]))
                return Clip(fam.render(st, _positions(walk, cfg.n_frames)), float(cfg.fps))
        raise ValueError("a maze without inner walls along the solution")

    @variant("maze", "vanish_at_end", honest=False)
    def vanish(inst, cfg, rng):
        """The right walk, but the agent disappears in the last 3 frames."""
        frames = solve(inst, cfg.n_frames)
        bg = fam.background(inst.state)
        return Clip(frames[:-3] + [bg] * 3, float(cfg.fps))

    @variant("maze", "second_agent", honest=False, difficulties=("hard",))
    def second(inst, cfg, rng):
        """A second green dot appears on the goal half-way while the first one is still walking."""
        frames = solve(inst, cfg.n_frames)
        grid = draw.GridLayout.from_json(inst.state["grid"])
        from vreason.synth.families.maze.family import AGENT_R

        out = []
        for k, f in enumerate(frames):
            f = f.copy()
            if k >= len(frames) // 2:
                draw.disc(f, grid.centre(*inst.state["goal"]), AGENT_R * grid.cell, draw.rgb("green"))
            out.append(f)
        return Clip(out, float(cfg.fps))




_maze()
