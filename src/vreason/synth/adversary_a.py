"""Adversarial variants (cheats and honest renderings) for the part-A families (maze, symmetry, sorting, connect).

The shared honest renderings come from :mod:`vreason.synth.adversary_honest` (other fps, speed, size,
exposure, hue, shake, letterbox, pause); each family adds its own honest variants and its cheats.
Cheats are the classes of issue 11 plus jump-to-final, teleports, wrong colours, extra marks and an
end state that does not last. Expensive variants (double size, 60 fps) run on one difficulty.
"""

from __future__ import annotations

import numpy as np

from vreason.synth import draw
from vreason.synth.adversary import Clip, variant
from vreason.synth.adversary_honest import cut, register_honest
from vreason.synth.suite import get_family


# ------------------------------------------------------------------ maze
def _maze():
    from vreason.synth.maze import _positions

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
        from vreason.synth.maze import neighbours

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
        from vreason.synth.maze import bfs, graph_distances, path_to

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
        from vreason.synth.maze import AGENT_R

        out = []
        for k, f in enumerate(frames):
            f = f.copy()
            if k >= len(frames) // 2:
                draw.disc(f, grid.centre(*inst.state["goal"]), AGENT_R * grid.cell, draw.rgb("green"))
            out.append(f)
        return Clip(out, float(cfg.fps))


# ------------------------------------------------------------------ symmetry
def _symmetry():
    from vreason.synth.symmetry import COLS, ROWS

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


# ------------------------------------------------------------------ sorting
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


# ------------------------------------------------------------------ connect
def _connect():
    from vreason.synth.connect import DOT_R, LINE_W

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
        """A left-to-right wipe from the first frame to the final frame over the middle two seconds."""
        n = cfg.n_frames
        a, b = inst.first_frame, inst.final_frame
        w = a.shape[1]
        out = []
        for k in range(n):
            x = int(round(np.clip((k - n / 4) / (n / 2), 0, 1) * w))
            f = a.copy()
            f[:, :x] = b[:, :x]
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


_maze()
_symmetry()
_sorting()
_connect()
