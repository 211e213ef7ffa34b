"""Adversarial variants of the oddoneout family: the honest renderings of :mod:`vreason.synth.adversary_replay` (the
solution's frames retimed, resized, re-exposed, hue-shifted, shaken, letterboxed, paused), the family's own variants
and its cheats (moved from the part-B module ``adversary_b``)."""

from __future__ import annotations

import numpy as np

from vreason.synth.adversary import Clip
from vreason.synth.adversary_replay import register_honest, static_cheat
from vreason.synth.base import RenderConfig, TaskInstance


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

    from vreason.synth.families.oddoneout.family import _box_rect

    x0, y0, x1, y1 = _box_rect(inst.state, *_odd_cells(inst.state, rng))
    return _odd_with(inst, cfg, lambda f: cv2.rectangle(f, (x0, y0), (x1, y1), (225, 20, 25), 2))


@static_cheat("oddoneout", "other_colour_second_box")
def _blue_second(inst, cfg, rng):
    """The right box plus a blue box of the same stroke around another cell."""
    import cv2

    from vreason.synth.families.oddoneout.family import _box_rect

    x0, y0, x1, y1 = _box_rect(inst.state, *_odd_cells(inst.state, rng))
    return _odd_with(inst, cfg, lambda f: cv2.rectangle(f, (x0, y0), (x1, y1), (30, 60, 220), 4))


@static_cheat("oddoneout", "wrong_colour_box")
def _wrong_colour(inst, cfg, rng):
    """A green box (not red) around the odd shape."""
    import cv2

    from vreason.synth.families.oddoneout.family import _box_rect

    x0, y0, x1, y1 = _box_rect(inst.state, *inst.state["odd"])
    frames = [inst.first_frame.copy() for _ in inst.solution]
    for f in frames[len(frames) // 3:]:
        cv2.rectangle(f, (x0, y0), (x1, y1), (20, 170, 40), 4)
    return Clip(frames, cfg.fps)


@static_cheat("oddoneout", "extra_mark")
def _extra_mark(inst, cfg, rng):
    """The right box plus a dark scribble across another cell."""
    import cv2

    from vreason.synth.families.oddoneout.family import _cell_rect

    x0, y0, x1, y1 = _cell_rect(inst.state, *_odd_cells(inst.state, rng))
    return _odd_with(inst, cfg, lambda f: cv2.line(f, (x0 + 6, y1 - 6), (x1 - 6, y0 + 6), (30, 30, 30), 3))


@static_cheat("oddoneout", "shape_recoloured")
def _recolour(inst, cfg, rng):
    """The right box, but another shape turns into the odd one's look (the board changed)."""
    from vreason.synth.families.oddoneout.family import _cell_rect
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
    from vreason.synth.families.oddoneout.family import OddOneOut

    return Clip(OddOneOut().random_motion(inst, rng, cfg), cfg.fps)
