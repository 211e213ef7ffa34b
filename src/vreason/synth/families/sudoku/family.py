"""Sudoku (TiViBench SL / sudoku): the blank cells of a small Sudoku get their digits written in.

Easy 4×4 (2×2 boxes), medium 6×6 (2×3 boxes), hard 9×9 (3×3 boxes); the puzzle has exactly one solution
(givens removed one by one while a solver still finds a single completion). The ground truth writes the
missing digits one after another in dark blue. Verified by TiViBench's Sudoku check
(:mod:`vreason.verify.sudoku`: grid by contour + perspective warp inside the annotated region, digit per
cell by OCR on the cell crop, compared cell by cell with the solution) on the last frame and on the frame
0.15 s before the end. Directional; no process rule (a cut to the solved grid is a valid answer).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from vreason.synth import draw
from vreason.synth import tivi_text as tt
from vreason.synth.base import RenderConfig, TaskFamily, TaskInstance, VerifyResult, family

LEVELS = {"easy": (4, 2, 2, 7), "medium": (6, 2, 3, 14), "hard": (9, 3, 3, 30)}
"""difficulty → (n, box rows, box cols, blanks)."""


def solved_grid(rng: np.random.Generator, n: int, br: int, bc: int) -> list[list[int]]:
    """A random valid n×n grid: the base pattern with rows/columns shuffled within bands and digits permuted."""
    def shuffled(groups: int, size: int) -> list[int]:
        return [int(g) * size + int(i) for g in rng.permutation(groups) for i in rng.permutation(size)]

    rows, cols = shuffled(n // br, br), shuffled(n // bc, bc)
    digits = [int(d) + 1 for d in rng.permutation(n)]
    return [[digits[(bc * (r % br) + r // br + c) % n] for c in cols] for r in rows]


def count_solutions(grid: list[list[int]], br: int, bc: int, limit: int = 2) -> int:
    n = len(grid)
    g = [row[:] for row in grid]

    def ok(r: int, c: int, v: int) -> bool:
        if v in g[r] or any(g[i][c] == v for i in range(n)):
            return False
        r0, c0 = r - r % br, c - c % bc
        return all(g[i][j] != v for i in range(r0, r0 + br) for j in range(c0, c0 + bc))

    def solve() -> int:
        best = None
        for r in range(n):
            for c in range(n):
                if g[r][c] == 0:
                    cand = [v for v in range(1, n + 1) if ok(r, c, v)]
                    if best is None or len(cand) < len(best[2]):
                        best = (r, c, cand)
        if best is None:
            return 1
        r, c, cand = best
        total = 0
        for v in cand:
            g[r][c] = v
            total += solve()
            g[r][c] = 0
            if total >= limit:
                break
        return total

    return solve()


def layout(n: int, cfg: RenderConfig) -> dict[str, Any]:
    cell = int(0.84 * cfg.height) // n
    side = cell * n
    return {"x0": (cfg.width - side) // 2, "y0": (cfg.height - side) // 2, "cell": cell, "side": side}


def render(state: dict[str, Any], cfg: RenderConfig, values: list[list[int]]) -> np.ndarray:
    """The grid holding ``values`` (0 = blank); givens in black, other digits in the answer ink."""
    n, br, bc = state["n"], state["box"][0], state["box"][1]
    g = state["layout"]
    img = draw.canvas(cfg.width, cfg.height)
    x0, y0, cell, side = g["x0"], g["y0"], g["cell"], g["side"]
    for i in range(n + 1):
        thick = 3 if i % br == 0 else 1
        draw.rect(img, x0, y0 + i * cell - thick // 2, x0 + side + 1, y0 + i * cell + (thick + 1) // 2, tt.INK)
        thick = 3 if i % bc == 0 else 1
        draw.rect(img, x0 + i * cell - thick // 2, y0, x0 + i * cell + (thick + 1) // 2, y0 + side + 1, tt.INK)
    size = int(cell * 0.6)
    for r in range(n):
        for c in range(n):
            v = values[r][c]
            if v:
                ink = tt.INK if state["puzzle"][r][c] else tt.ANSWER_INK
                tt.put_text(img, str(v), (x0 + (c + 0.5) * cell, y0 + (r + 0.5) * cell), size, ink)
    return img


def cell_rect(state: dict[str, Any], r: int, c: int) -> tuple[int, int, int, int]:
    g = state["layout"]
    k = 3
    return (g["x0"] + c * g["cell"] + k, g["y0"] + r * g["cell"] + k, g["x0"] + (c + 1) * g["cell"] - k + 1,
            g["y0"] + (r + 1) * g["cell"] - k + 1)


@family
class Sudoku(TaskFamily):
    name = "sudoku"
    scene_check = True
    """The scene (issue 24) is part of the verdict since 27 Nov (fifth session): its last honest failure, a 9:16
    frame decoded at 360×640 (the crop's x and y scales differ by 0.7%, the picture softer than the rendering), is
    explained since the first frame's camera may stretch its axes and its exposure is fitted against the softened
    rendering (:data:`vreason.verify.explain.FIRST_TRIES`); measured in docs/suite_validity.md."""
    version = "2"  # 2: the answer not still fading in over the last 0.35 s (issue 24)
    directional = True
    process_rule = False

    def make(self, rng, difficulty, index, seed, cfg: RenderConfig) -> TaskInstance:
        n, br, bc, blanks = LEVELS[difficulty]
        sol = solved_grid(rng, n, br, bc)
        puzzle = [row[:] for row in sol]
        removed = 0
        for k in rng.permutation(n * n):
            r, c = divmod(int(k), n)
            keep = puzzle[r][c]
            puzzle[r][c] = 0
            if count_solutions(puzzle, br, bc) != 1:
                puzzle[r][c] = keep
                continue
            removed += 1
            if removed == blanks:
                break
        g = layout(n, cfg)
        state: dict[str, Any] = {"n": n, "box": [br, bc], "solution": sol, "puzzle": puzzle, "layout": g}
        gx = (g["x0"], g["y0"], g["x0"] + g["side"], g["y0"] + g["side"])
        state["tivibench"] = tt.tivi_record("SL", "sudoku", {"family": "sudoku", "solution": sol,
                                                             "region": tt.norm_box(gx, cfg, pad=12)})
        frames = self.solve(state, cfg, cfg.n_frames)
        prompt = (f"A {n}×{n} Sudoku puzzle is printed on white paper. Fill in every empty cell with a digit from "
                  f"1 to {n} so that each row, each column and each outlined {br}×{bc} box contains every digit "
                  "exactly once. A pen writes the missing digits one after another; the printed digits and the "
                  "grid stay unchanged and the camera does not move.")
        return TaskInstance(self.name, difficulty, index, seed, prompt, frames[0], frames[-1], frames, state,
                            self.directional, self.process_rule)

    def solve(self, state: dict[str, Any], cfg: RenderConfig, n_frames: int,
              values: list[list[int]] | None = None) -> list[np.ndarray]:
        """The blanks written with ``values`` (default: the solution), one after another, in ``n_frames``."""
        values = values or state["solution"]
        first = render(state, cfg, state["puzzle"])
        final = render(state, cfg, values)
        n = state["n"]
        rects = [cell_rect(state, r, c) for r in range(n) for c in range(n) if not state["puzzle"][r][c]]
        return tt.reveal(first, final, rects, n_frames)

    def random_motion(self, inst: TaskInstance, rng, cfg: RenderConfig) -> list[np.ndarray]:
        """Random digits written into the blanks."""
        st = inst.state
        n = st["n"]
        vals = [[v if v else int(rng.integers(1, n + 1)) for v in row] for row in st["puzzle"]]
        if vals == st["solution"]:
            r, c = next((r, c) for r in range(n) for c in range(n) if not st["puzzle"][r][c])
            vals[r][c] = vals[r][c] % n + 1
        return self.solve(st, cfg, cfg.n_frames, vals)

    def scene(self, state: dict[str, Any], cfg: RenderConfig):
        """Every frame is the printed grid; only the inside of the blank cells may change (the digits written
        there, in any honest style, stays: :mod:`vreason.verify.written`)."""
        from vreason.verify.explain import box_mask
        from vreason.verify.written import written_scene

        n = state["n"]
        blanks = [cell_rect(state, r, c) for r in range(n) for c in range(n) if not state["puzzle"][r][c]]
        free = box_mask((cfg.height, cfg.width), blanks)
        start = render(state, cfg, state["puzzle"])
        return written_scene(start, free, render(state, cfg, state["solution"]))

    def verify(self, frames, state, cfg: RenderConfig, times=None) -> VerifyResult:
        return tt.verify_by_check(frames, state, cfg, times, family=self)
