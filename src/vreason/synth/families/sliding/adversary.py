"""Adversarial variants of the sliding family: the honest renderings of :mod:`vreason.synth.adversary_replay` (the
solution's frames retimed, resized, re-exposed, hue-shifted, shaken, letterboxed, paused), the family's own variants
and its cheats (moved from the part-B module ``adversary_b``)."""

from __future__ import annotations

from vreason.synth.adversary import Clip, variant
from vreason.synth.adversary_replay import cut, hue_shift, register_honest
from vreason.synth.base import RenderConfig, TaskInstance

register_honest("sliding", skip=("fps8", "fps24"))


def _slide_play(inst: TaskInstance, cfg: RenderConfig, cells: list[int], fps: float = 0.0) -> Clip:
    from vreason.synth.families.sliding.family import Painter

    c2 = RenderConfig(cfg.width, cfg.height, int(fps or cfg.fps), cfg.seconds)
    return Clip(Painter(inst.state, c2).play(tuple(inst.state["start"]), cells), c2.fps)


for _fps in (8, 24):
    variant("sliding", f"fps{_fps}", honest=True, doc=f"honest: the solution rendered at {_fps} fps")(
        lambda i, c, r, f=_fps: _slide_play(i, c, i.state["solution_moves"], f))


@variant("sliding", "hue_plus12", honest=True)
def _sl_hue12(inst, cfg, rng):
    """The solution with the hue turned by +12°."""
    return Clip(hue_shift(inst.solution, 12), cfg.fps)


@variant("sliding", "jump_to_final", honest=False)
def _sl_cut(inst, cfg, rng):
    """A cut from the start to the solved board."""
    return Clip(cut(inst, len(inst.solution)), cfg.fps)


@variant("sliding", "teleport_moves", honest=False)
def _sl_teleport(inst, cfg, rng):
    """Every move is a jump: the boards of the solution without the gliding frames."""
    from vreason.synth.families.sliding.family import Painter, apply_move

    st = inst.state
    p = Painter(st, cfg)
    arr, boards = tuple(st["start"]), [p.board(st["start"])]
    for c in st["solution_moves"]:
        arr = apply_move(arr, c)
        boards.append(p.board(arr))
    per = len(inst.solution) // len(boards)
    frames = [b for b in boards for _ in range(per)]
    return Clip(frames + [boards[-1]] * (len(inst.solution) - len(frames)), cfg.fps)


@variant("sliding", "swap_through", honest=False)
def _sl_swap(inst, cfg, rng):
    """Two tiles trade places by sliding through each other, then the right moves follow."""
    from vreason.synth.families.sliding.family import Painter, neighbors

    st = inst.state
    n, start = st["n"], tuple(st["start"])
    pairs = [(a, b) for a in range(n * n) for b in neighbors(n, a) if a < b and start[a] and start[b]]
    a, b = pairs[int(rng.integers(len(pairs)))]
    p = Painter(st, cfg)
    frames = [p.board(start)] * 4
    for j in range(1, 8):  # both tiles glide at once, overlapping half-way
        img = p.board([0 if c in (a, b) else v for c, v in enumerate(start)])
        for src, dst in ((a, b), (b, a)):
            (xa, ya), (xb, yb) = p.cell_xy(src), p.cell_xy(dst)
            x, y = int(round(xa + (xb - xa) * j / 8)), int(round(ya + (yb - ya) * j / 8))
            t = st["tile"]
            img[y:y + t, x:x + t] = p.sprites[start[src]]
        frames.append(img)
    swapped = list(start)
    swapped[a], swapped[b] = swapped[b], swapped[a]
    frames += [p.board(swapped)] * 4
    return Clip(frames + _slide_play(inst, cfg, inst.state["solution_moves"]).frames, cfg.fps)


@variant("sliding", "target_then_undone", honest=False)
def _sl_undo(inst, cfg, rng):
    """The solution, then the last move is undone at the end (the solved board does not last)."""
    from vreason.synth.families.sliding.family import apply_move

    st = inst.state
    before_last = tuple(st["start"])
    for c in st["solution_moves"][:-1]:
        before_last = apply_move(before_last, c)
    tile_cell = before_last.index(0)  # the last moved tile sits where the blank was; it slides back
    return _slide_play(inst, cfg, list(st["solution_moves"]) + [tile_cell])


@variant("sliding", "wrong_target", honest=False)
def _sl_random(inst, cfg, rng):
    """Random legal slides that miss the target (the random model)."""
    from vreason.synth.families.sliding.family import Sliding

    return Clip(Sliding().random_motion(inst, rng, cfg), cfg.fps)


@variant("sliding", "extra_mark", honest=False)
def _sl_mark(inst, cfg, rng):
    """The solution with a dark stroke scribbled over the board at the end."""
    import cv2

    st = inst.state
    frames = [f.copy() for f in inst.solution]
    x0, y0 = st["bx"], st["by"]
    side = st["n"] * st["tile"]
    for f in frames[-len(frames) // 3:]:
        cv2.line(f, (x0 + side // 4, y0 + side // 3), (x0 + 3 * side // 4, y0 + side // 2), (250, 250, 250), 6)
    return Clip(frames, cfg.fps)
