"""Numeric sequence (TiViBench SS / rule): the missing numbers of a sequence get written in.

A row of cells holds a sequence following a rule; missing cells show "?". Easy: 5 cells, an arithmetic
progression, one missing; medium: 6 cells, arithmetic or geometric (×2, ×3), two missing; hard: 7 cells,
squares, Fibonacci-like (each the sum of the two before) or two interleaved progressions, two missing. The
ground truth replaces each "?" by its number in dark blue. Verified by TiViBench's numeric-sequence check
(:mod:`vreason.verify.digit_sequence`: OCR on each annotated cell crop, every item equal to the expected
one) on the last frame and the frame 0.15 s before the end. Directional; no process rule.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from vreason.synth import draw
from vreason.synth import tivi_text as tt
from vreason.synth.base import RenderConfig, TaskFamily, TaskInstance, VerifyResult, family

N_CELLS = {"easy": 5, "medium": 6, "hard": 7}
CELL_BG = (255, 255, 255)


def sequence(rng: np.random.Generator, difficulty: str, n: int) -> tuple[list[int], str]:
    def r(a: int, b: int) -> int:
        return int(rng.integers(a, b + 1))

    if difficulty == "easy" or (difficulty == "medium" and rng.random() < 0.5):
        a, d = r(1, 20), r(2, 9)
        return [a + i * d for i in range(n)], f"add {d}"
    if difficulty == "medium":
        a, q = r(1, 4), r(2, 3)
        return [a * q ** i for i in range(n)], f"multiply by {q}"
    kind = int(rng.integers(3))
    if kind == 0:
        s = r(1, 4)
        return [(s + i) ** 2 for i in range(n)], "squares"
    if kind == 1:
        seq = [r(1, 3), r(1, 4)]
        while len(seq) < n:
            seq.append(seq[-1] + seq[-2])
        return seq, "sum of the two before"
    a, d, b, e = r(1, 9), r(2, 5), r(40, 60), -r(1, 3)
    return [a + (i // 2) * d if i % 2 == 0 else b + (i // 2) * e for i in range(n)], "two interleaved progressions"


def geometry(n: int, cfg: RenderConfig) -> dict[str, int]:
    gap = 12
    cell = int(min(0.22 * cfg.height, (0.9 * cfg.width - gap * (n - 1)) / n))
    return {"cell": cell, "gap": gap, "x0": (cfg.width - n * cell - (n - 1) * gap) // 2,
            "y0": (cfg.height - cell) // 2}


def cell_rect(state: dict[str, Any], i: int) -> tuple[int, int, int, int]:
    g = state["geometry"]
    x = g["x0"] + i * (g["cell"] + g["gap"])
    return x, g["y0"], x + g["cell"], g["y0"] + g["cell"]


def render(state: dict[str, Any], cfg: RenderConfig, filled: dict[int, str] | None = None) -> np.ndarray:
    filled = filled or {}
    img = draw.canvas(cfg.width, cfg.height, (240, 238, 232))
    for i, v in enumerate(state["values"]):
        x0, y0, x1, y1 = cell_rect(state, i)
        draw.rect(img, x0, y0, x1, y1, CELL_BG)
        tt.outline(img, (x0, y0, x1 - 1, y1 - 1), (110, 110, 110), 2)
        if i in state["missing"]:
            text, ink = (filled[i], tt.ANSWER_INK) if i in filled else ("?", (120, 120, 120))
        else:
            text, ink = str(v), tt.INK
        tt.put_text(img, text, ((x0 + x1) / 2, (y0 + y1) / 2), int(0.45 * (x1 - x0)), ink)
    return img


@family
class Numseq(TaskFamily):
    name = "numseq"
    scene_check = True
    """Every frame must be explained by the scene (issue 24): the 2-px per-frame shake is absorbed since each
    frame is realigned on its own (verify.relative.relative) and the held end window is compared camera-aligned."""
    version = "2"  # 2: the answer not still fading in over the last 0.35 s (issue 24)
    directional = True
    process_rule = False

    def make(self, rng, difficulty, index, seed, cfg: RenderConfig) -> TaskInstance:
        n = N_CELLS[difficulty]
        values, rule = sequence(rng, difficulty, n)
        k = 1 if difficulty == "easy" else 2
        if difficulty == "easy":
            missing = [int(rng.integers(1, n))]
        else:  # two missing, never both of the first two (the rule must stay visible)
            while True:
                missing = sorted(int(x) for x in rng.choice(n, size=k, replace=False))
                if missing != [0, 1] and not (rule == "two interleaved progressions" and missing[1] - missing[0] == 2):
                    break
        state: dict[str, Any] = {"values": values, "rule": rule, "missing": missing, "geometry": geometry(n, cfg)}
        cells = [tt.norm_box(cell_rect(state, i), cfg, pad=-4) for i in range(n)]
        state["tivibench"] = tt.tivi_record("SS", "rule", {
            "family": "sequence", "expected": [str(v) for v in values], "cells": cells})
        frames = self.solve(state, cfg, cfg.n_frames)
        prompt = (f"A row of {n} cards shows a sequence of numbers that follows a simple rule; the cards marked "
                  "\"?\" are missing. Work out the rule and write the missing numbers in dark blue on those cards, "
                  "replacing the question marks. The other cards stay unchanged and the camera does not move.")
        return TaskInstance(self.name, difficulty, index, seed, prompt, frames[0], frames[-1], frames, state,
                            self.directional, self.process_rule)

    def solve(self, state: dict[str, Any], cfg: RenderConfig, n_frames: int,
              answers: dict[int, str] | None = None) -> list[np.ndarray]:
        """The "?" cards filled with ``answers`` (default: the right numbers), one after another."""
        answers = answers if answers is not None else {i: str(state["values"][i]) for i in state["missing"]}
        first, final = render(state, cfg), render(state, cfg, answers)
        rects = []
        for i in state["missing"]:
            x0, y0, x1, y1 = cell_rect(state, i)
            rects.append((x0 + 3, y0 + 3, x1 - 3, y1 - 3))
        return tt.reveal(first, final, rects, n_frames, 0.25, 0.8)

    def random_motion(self, inst: TaskInstance, rng, cfg: RenderConfig) -> list[np.ndarray]:
        """Plausible but wrong numbers written on the "?" cards."""
        st = inst.state
        wrong = {i: str(max(0, st["values"][i] + int(rng.choice([-3, -2, -1, 1, 2, 3])))) for i in st["missing"]}
        return self.solve(st, cfg, cfg.n_frames, wrong)

    def scene(self, state: dict[str, Any], cfg: RenderConfig):
        """Every frame is the row of cards; only the inside of the "?" cards may change (the number written
        there, in any honest style, stays: :mod:`vreason.verify.written`)."""
        from vreason.verify.explain import box_mask
        from vreason.verify.written import written_scene

        free = box_mask((cfg.height, cfg.width), [cell_rect(state, i) for i in state["missing"]], pad=-3)
        start = render(state, cfg)
        answers = {i: str(state["values"][i]) for i in state["missing"]}
        return written_scene(start, free, render(state, cfg, answers))

    def verify(self, frames, state, cfg: RenderConfig, times=None) -> VerifyResult:
        def written_as_numbers(frame, res) -> tuple[dict[str, bool], dict[str, Any]]:
            from vreason.verify.math_answer import same_text

            # each answer is the number as written: TiViBench's check takes any text of equal value ("030" for 30:
            # a copy of the answer's "0" pasted left of it, VREASON_ADV_SEED=818863493); the suite asks for the numeral
            read = (res.details or {}).get("read", [])
            return ({"one_value": all(i < len(read) and same_text(read[i], str(state["values"][i]))
                                      for i in state["missing"])}, {})

        return tt.verify_by_check(frames, state, cfg, times, extra=written_as_numbers, family=self)
