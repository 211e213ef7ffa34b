"""Adversarial variants of the sequence family: the honest renderings of :mod:`vreason.synth.adversary_replay` (the
solution's frames retimed, resized, re-exposed, hue-shifted, shaken, letterboxed, paused), the family's own variants
and its cheats (moved from the part-B module ``adversary_b``)."""

from __future__ import annotations

import numpy as np

from vreason.synth.adversary import Clip
from vreason.synth.adversary_replay import register_honest, static_cheat
from vreason.synth.base import RenderConfig, TaskInstance

register_honest("sequence", one_difficulty=("double_size", "fps24", "pause_first"))


def _seq_other_card(inst: TaskInstance, cfg: RenderConfig, rng: np.random.Generator, change: str) -> Clip:
    """The right answer fades in while another card's element changes (``change``: colour or shape)."""
    from vreason.synth.families.sequence.family import render_row
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
    from vreason.synth.families.sequence.family import Sequence

    return Clip(Sequence().random_motion(inst, rng, cfg), cfg.fps)


@static_cheat("sequence", "half_faded")
def _seq_half(inst, cfg, rng):
    """The answer stops half faded in."""
    from vreason.synth.families.sequence.family import render_row

    half = render_row(inst.state, cfg, inst.state["answer"], 0.5)
    n = len(inst.solution)
    return Clip([inst.first_frame] * (n // 3) + [half] * (n - n // 3), cfg.fps)


@static_cheat("sequence", "extra_mark")
def _seq_mark(inst, cfg, rng):
    """The right answer plus a pen stroke across another card."""
    import cv2

    from vreason.synth.families.sequence.family import cell_rect

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
