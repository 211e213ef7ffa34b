"""Adversarial variants (cheats, honest renderings) for the part-B families (oddoneout, sequence, gravity, sliding).

Honest variants change only what the prompt leaves free: the frame rate (the same motion in
seconds), the size, the exposure (±15%), the hue (±6°, +12° for sliding 4×4), a 2-px camera
shake, letterboxing, a pause before the action starts. Cheats break a stated property: a second
or thin mark, another card or shape changed, wrong physics (gravity ×1.5 / ×0.65, wrong
restitution, a glide), an end state that does not last, a jump to the final frame, a teleport.
"""

from __future__ import annotations

import math

import numpy as np

from vreason.synth.adversary import Clip, variant
from vreason.synth.adversary_honest import letterbox, shake
from vreason.synth.base import RenderConfig, TaskInstance

# ---------------------------------------------------------------- honest transforms (any family)


def retime(frames: list[np.ndarray], fps_from: float, fps_to: float) -> list[np.ndarray]:
    """The same video in seconds at another frame rate (nearest earlier frame)."""
    n = int(round(len(frames) * fps_to / fps_from))
    return [frames[min(len(frames) - 1, int(math.floor(j * fps_from / fps_to + 1e-9)))] for j in range(n)]


def resize(frames: list[np.ndarray], scale: float) -> list[np.ndarray]:
    import cv2

    h, w = frames[0].shape[:2]
    size = (int(round(w * scale)) // 2 * 2, int(round(h * scale)) // 2 * 2)
    return [cv2.resize(f, size, interpolation=cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR) for f in frames]


def exposure(frames: list[np.ndarray], k: float) -> list[np.ndarray]:
    return [np.clip(f.astype(np.float32) * k, 0, 255).astype(np.uint8) for f in frames]


def hue_shift(frames: list[np.ndarray], degrees: float) -> list[np.ndarray]:
    import cv2

    out = []
    for f in frames:
        hsv = cv2.cvtColor(f, cv2.COLOR_RGB2HSV_FULL).astype(np.int16)
        hsv[..., 0] = (hsv[..., 0] + int(round(degrees * 256 / 360))) % 256
        out.append(cv2.cvtColor(hsv.astype(np.uint8), cv2.COLOR_HSV2RGB_FULL))
    return out


def hold_first(frames: list[np.ndarray], seconds: float, fps: float) -> list[np.ndarray]:
    return [frames[0]] * int(round(seconds * fps)) + list(frames)


def cut(inst: TaskInstance, n: int) -> list[np.ndarray]:
    return [inst.first_frame] * (n // 2) + [inst.final_frame] * (n - n // 2)


def static_cheat(family: str, name: str):
    """Register a cheat of a final-state family on a 2 s timeline (every other frame of the clip): the
    verdict does not depend on the length there (a cut to the answer is valid), and it halves the cost."""

    def deco(fn):
        def brief(inst: TaskInstance, cfg: RenderConfig, rng: np.random.Generator) -> Clip:
            clip = fn(inst, cfg, rng)
            return Clip(clip.frames[::2], clip.fps)

        variant(family, name, honest=False, doc=(fn.__doc__ or "").strip())(brief)
        return fn

    return deco


def register_honest(family: str, skip: tuple[str, ...] = (), one_difficulty: tuple[str, ...] = ("double_size",)
                    ) -> None:
    """The honest renderings every part-B family must pass (frames → clip transforms of the solution)."""
    table = {
        "fps8": lambda i, c, r: Clip(retime(i.solution, c.fps, 8), 8),
        "fps24": lambda i, c, r: Clip(retime(i.solution, c.fps, 24), 24),
        "half_size_darker15_hue_minus6": lambda i, c, r: Clip(hue_shift(exposure(resize(i.solution, 0.5), 0.85),
                                                                         -6), c.fps),
        "brighter15_hue_plus6": lambda i, c, r: Clip(hue_shift(exposure(i.solution, 1.15), 6), c.fps),
        "shake2px": lambda i, c, r: Clip(shake(i.solution, r, first_too=True), c.fps),
        "letterbox": lambda i, c, r: Clip(letterbox(i.solution), c.fps),
        "pause_first": lambda i, c, r: Clip(hold_first(i.solution, 0.5, c.fps), c.fps),
        "double_size": lambda i, c, r: Clip(resize(i.solution, 2.0), c.fps),
    }
    for name, fn in table.items():
        if name not in skip:  # a double-size clip costs four times the encoding: one difficulty
            diffs = ("hard",) if name in one_difficulty else ("easy", "medium", "hard")
            variant(family, name, honest=True, difficulties=diffs, doc=f"honest: the solution, {name}")(fn)


# ---------------------------------------------------------------- odd-one-out


def _odd_cells(st: dict, rng: np.random.Generator) -> tuple[int, int]:
    cells = [(r, c) for r in range(st["rows"]) for c in range(st["cols"]) if [r, c] != list(st["odd"])]
    return cells[int(rng.integers(len(cells)))]


def _odd_with(inst: TaskInstance, cfg: RenderConfig, draw) -> Clip:
    frames = [f.copy() for f in inst.solution]
    k0 = len(frames) // 3
    for f in frames[k0:]:
        draw(f)
    return Clip(frames, cfg.fps)


register_honest("oddoneout", one_difficulty=("double_size", "fps24", "pause_first"))


@static_cheat("oddoneout", "thin_second_box")
def _thin_second(inst, cfg, rng):
    """The right box plus a thin (2 px) red box around another cell."""
    import cv2

    from vreason.synth.oddoneout import _box_rect

    x0, y0, x1, y1 = _box_rect(inst.state, *_odd_cells(inst.state, rng))
    return _odd_with(inst, cfg, lambda f: cv2.rectangle(f, (x0, y0), (x1, y1), (225, 20, 25), 2))


@static_cheat("oddoneout", "other_colour_second_box")
def _blue_second(inst, cfg, rng):
    """The right box plus a blue box of the same stroke around another cell."""
    import cv2

    from vreason.synth.oddoneout import _box_rect

    x0, y0, x1, y1 = _box_rect(inst.state, *_odd_cells(inst.state, rng))
    return _odd_with(inst, cfg, lambda f: cv2.rectangle(f, (x0, y0), (x1, y1), (30, 60, 220), 4))


@static_cheat("oddoneout", "wrong_colour_box")
def _wrong_colour(inst, cfg, rng):
    """A green box (not red) around the odd shape."""
    import cv2

    from vreason.synth.oddoneout import _box_rect

    x0, y0, x1, y1 = _box_rect(inst.state, *inst.state["odd"])
    frames = [inst.first_frame.copy() for _ in inst.solution]
    for f in frames[len(frames) // 3:]:
        cv2.rectangle(f, (x0, y0), (x1, y1), (20, 170, 40), 4)
    return Clip(frames, cfg.fps)


@static_cheat("oddoneout", "extra_mark")
def _extra_mark(inst, cfg, rng):
    """The right box plus a dark scribble across another cell."""
    import cv2

    from vreason.synth.oddoneout import _cell_rect

    x0, y0, x1, y1 = _cell_rect(inst.state, *_odd_cells(inst.state, rng))
    return _odd_with(inst, cfg, lambda f: cv2.line(f, (x0 + 6, y1 - 6), (x1 - 6, y0 + 6), (30, 30, 30), 3))


@static_cheat("oddoneout", "shape_recoloured")
def _recolour(inst, cfg, rng):
    """The right box, but another shape turns into the odd one's look (the board changed)."""
    from vreason.synth.oddoneout import _cell_rect
    from vreason.synth.shapes import PALETTE, draw_shape

    st = inst.state
    r, c = _odd_cells(st, rng)
    x0, y0, x1, y1 = _cell_rect(st, r, c)
    base = st["base_spec"]
    other = [list(v) for v in PALETTE.values() if list(v) != list(base["color"])]
    col = tuple(other[int(rng.integers(len(other)))])

    def draw(f):
        draw_shape(f, base["shape"], (x0 + x1) / 2, (y0 + y1) / 2, 0.33 * st["cell"], col, base["rotation"])

    return _odd_with(inst, cfg, draw)


@static_cheat("oddoneout", "box_vanishes")
def _box_vanishes(inst, cfg, rng):
    """The box is drawn, then disappears in the last half second."""
    frames = list(inst.solution)
    k = int(round(0.5 * cfg.fps))
    return Clip(frames[:-k] + [inst.first_frame] * k, cfg.fps)


@static_cheat("oddoneout", "wrong_cell")
def _wrong_cell(inst, cfg, rng):
    """A box traced around a wrong cell (the random model)."""
    from vreason.synth.oddoneout import OddOneOut

    return Clip(OddOneOut().random_motion(inst, rng, cfg), cfg.fps)


# ---------------------------------------------------------------- sequence

register_honest("sequence", one_difficulty=("double_size", "fps24", "pause_first"))


def _seq_other_card(inst: TaskInstance, cfg: RenderConfig, rng: np.random.Generator, change: str) -> Clip:
    """The right answer fades in while another card's element changes (``change``: colour or shape)."""
    from vreason.synth.sequence import render_row
    from vreason.synth.shapes import PALETTE

    st = inst.state
    others = [i for i in range(st["n"]) if i != st["missing"]]
    j = others[int(rng.integers(len(others)))]
    spec = dict(st["cells"][j])
    if change == "colour":
        pool = [list(c) for c in PALETTE.values() if list(c) != list(spec["color"])]
        spec["color"] = pool[int(rng.integers(len(pool)))]
    else:
        pool = [s for s in ("star", "cross", "triangle", "square") if s != spec["shape"]]
        spec["shape"] = pool[int(rng.integers(len(pool)))]
    changed = {**st, "cells": [spec if i == j else c for i, c in enumerate(st["cells"])]}
    final = render_row(changed, cfg, st["answer"])
    k0 = len(inst.solution) // 2
    return Clip(list(inst.solution[:k0]) + [final] * (len(inst.solution) - k0), cfg.fps)


@static_cheat("sequence", "other_card_colour")
def _seq_colour(inst, cfg, rng):
    """The right answer, and another card changes colour."""
    return _seq_other_card(inst, cfg, rng, "colour")


@static_cheat("sequence", "other_card_shape")
def _seq_shape(inst, cfg, rng):
    """The right answer, and another card changes shape."""
    return _seq_other_card(inst, cfg, rng, "shape")


@static_cheat("sequence", "wrong_element")
def _seq_wrong(inst, cfg, rng):
    """A distractor (one attribute off, or a neighbour's element) fades in (the random model)."""
    from vreason.synth.sequence import Sequence

    return Clip(Sequence().random_motion(inst, rng, cfg), cfg.fps)


@static_cheat("sequence", "half_faded")
def _seq_half(inst, cfg, rng):
    """The answer stops half faded in."""
    from vreason.synth.sequence import render_row

    half = render_row(inst.state, cfg, inst.state["answer"], 0.5)
    n = len(inst.solution)
    return Clip([inst.first_frame] * (n // 3) + [half] * (n - n // 3), cfg.fps)


@static_cheat("sequence", "extra_mark")
def _seq_mark(inst, cfg, rng):
    """The right answer plus a pen stroke across another card."""
    import cv2

    from vreason.synth.sequence import cell_rect

    st = inst.state
    others = [i for i in range(st["n"]) if i != st["missing"]]
    x0, y0, x1, y1 = cell_rect(st, others[int(rng.integers(len(others)))])
    frames = [f.copy() for f in inst.solution]
    for f in frames[len(frames) // 2:]:
        cv2.line(f, (x0 + 8, y0 + 8), (x1 - 8, y1 - 8), (200, 30, 30), 3)
    return Clip(frames, cfg.fps)


@static_cheat("sequence", "answer_vanishes")
def _seq_vanish(inst, cfg, rng):
    """The answer appears, then the card is blank again for the last half second."""
    k = int(round(0.5 * cfg.fps))
    return Clip(list(inst.solution[:-k]) + [inst.first_frame] * k, cfg.fps)


# ---------------------------------------------------------------- gravity

register_honest("gravity", skip=("fps8", "fps24", "pause_first"))


def _ball_clip(inst: TaskInstance, cfg: RenderConfig, fps: float, release: float = 0.0, **change) -> Clip:
    """The scene simulated on its own clock at ``fps`` (parameters overridden by ``change``)."""
    from vreason.synth.gravity import _render, simulate_at

    st = inst.state
    p = {**{k: st[k] for k in ("start", "v0", "r", "e", "g", "floor_y")}, **change}
    n = int(round((cfg.seconds + release) * fps))
    pos, _ = simulate_at(p, np.arange(n) / fps, release)
    return Clip(_render(st, pos, cfg), fps)


for _fps, _diffs in ((8, ("easy", "medium", "hard")), (24, ("easy", "medium", "hard")), (60, ("hard",))):
    variant("gravity", f"fps{_fps}", honest=True, difficulties=_diffs,
            doc=f"honest: the same motion rendered at {_fps} fps")(
        lambda i, c, r, f=_fps: _ball_clip(i, c, f))


@variant("gravity", "hangs_then_falls", honest=True)
def _g_hang(inst, cfg, rng):
    """The ball hangs still for 0.5 s, then falls exactly as simulated."""
    return _ball_clip(inst, cfg, cfg.fps, release=0.5)


@variant("gravity", "gravity_x1.5", honest=False)
def _g_heavy(inst, cfg, rng):
    """Gravity 1.5 times the scene's."""
    return _ball_clip(inst, cfg, cfg.fps, g=inst.state["g"] * 1.5)


@variant("gravity", "gravity_x0.65", honest=False)
def _g_light(inst, cfg, rng):
    """Gravity 0.65 times the scene's."""
    return _ball_clip(inst, cfg, cfg.fps, g=inst.state["g"] * 0.65)


@variant("gravity", "bouncier", honest=False)
def _g_bouncy(inst, cfg, rng):
    """Restitution 0.15 higher than the scene's."""
    return _ball_clip(inst, cfg, cfg.fps, e=min(0.95, inst.state["e"] + 0.15))


@variant("gravity", "deader", honest=False)
def _g_dead(inst, cfg, rng):
    """Restitution 0.2 lower than the scene's."""
    return _ball_clip(inst, cfg, cfg.fps, e=inst.state["e"] - 0.2)


@variant("gravity", "vanishes_at_end", honest=False)
def _g_vanish(inst, cfg, rng):
    """The right motion, but the ball is gone for the last 0.3 s."""
    from vreason.synth.gravity import _background

    k = int(round(0.3 * cfg.fps))
    return Clip(list(inst.solution[:-k]) + [_background(inst.state, cfg)] * k, cfg.fps)


@variant("gravity", "teleport", honest=False)
def _g_teleport(inst, cfg, rng):
    """The right motion with 0.3 s skipped mid-flight (the ball jumps ahead), held at the end."""
    sol = list(inst.solution)
    a, k = len(sol) // 5, int(round(0.3 * cfg.fps))
    out = sol[:a] + sol[a + k:]
    return Clip(out + [out[-1]] * k, cfg.fps)


@variant("gravity", "glide", honest=False)
def _g_glide(inst, cfg, rng):
    """Physics off: the ball glides in a straight line from the start to the final position."""
    from vreason.synth.gravity import _render

    st = inst.state
    f = np.linspace(0, 1, len(inst.solution))[:, None]
    pos = np.array(st["start"])[None] * (1 - f) + np.array(st["final"])[None] * f
    return Clip(_render(st, pos, cfg), cfg.fps)


@variant("gravity", "jump_to_final", honest=False)
def _g_cut(inst, cfg, rng):
    """The ball hangs, then the video cuts to the final frame."""
    return Clip(cut(inst, len(inst.solution)), cfg.fps)


# ---------------------------------------------------------------- sliding

register_honest("sliding", skip=("fps8", "fps24"))


def _slide_play(inst: TaskInstance, cfg: RenderConfig, cells: list[int], fps: float = 0.0) -> Clip:
    from vreason.synth.sliding import Painter

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
    from vreason.synth.sliding import Painter, apply_move

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
    from vreason.synth.sliding import Painter, neighbors

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
    from vreason.synth.sliding import apply_move

    st = inst.state
    before_last = tuple(st["start"])
    for c in st["solution_moves"][:-1]:
        before_last = apply_move(before_last, c)
    tile_cell = before_last.index(0)  # the last moved tile sits where the blank was; it slides back
    return _slide_play(inst, cfg, list(st["solution_moves"]) + [tile_cell])


@variant("sliding", "wrong_target", honest=False)
def _sl_random(inst, cfg, rng):
    """Random legal slides that miss the target (the random model)."""
    from vreason.synth.sliding import Sliding

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
