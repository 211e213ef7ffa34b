"""Adversarial variants of the text families (sudoku, arithmetic, choice, numseq): TiViBench's OCR checks.

Honest: the shared camera/encoder/timing renderings of :mod:`vreason.synth.adversary_honest` (other fps,
speed, half/double size, exposure ±15%, hue ±6°, a 2-px shake, letterbox, a pause) plus, per family, a cut
to the answer (these are final-state tasks: no process rule) or the answers written in another order.
Cheats: the first frame held, a wrong answer (one wrong digit, a wrong result, the wrong box, two boxes,
a wrong number), the answer vanishing at the end, the video reversed, noise, and family ones (the question
rewritten, one red box around every option, a "?" left).
"""

from __future__ import annotations

import numpy as np

from vreason.synth.adversary import Clip, variant
from vreason.synth.adversary_honest import register_honest
from vreason.synth.base import RenderConfig, TaskInstance
from vreason.synth.suite import get_family


def _cfg(inst: TaskInstance) -> RenderConfig:
    h, w = inst.first_frame.shape[:2]
    return RenderConfig(width=w, height=h)


def _common(family: str, wrong) -> None:
    """Cheats every text family gets; ``wrong(inst, cfg, rng)`` renders a wrong answer."""

    @variant(family, "static_first_frame", honest=False, difficulties=("easy", "hard"))
    def static(inst, cfg, rng):
        """The first frame held for the whole video."""
        return Clip([inst.first_frame] * cfg.n_frames, float(cfg.fps))

    @variant(family, "wrong_answer", honest=False)
    def wrong_answer(inst, cfg, rng):
        """The process of writing, with a wrong answer."""
        return Clip(wrong(inst, cfg, rng), float(cfg.fps))

    @variant(family, "vanish_at_end", honest=False, difficulties=("medium",))
    def vanish(inst, cfg, rng):
        """The right answer, erased again in the last 3 frames."""
        return Clip(inst.solution[:-3] + [inst.first_frame] * 3, float(cfg.fps))

    @variant(family, "reversed", honest=False, difficulties=("hard",))
    def rev(inst, cfg, rng):
        """The ground truth played backwards (ends on the unsolved task)."""
        return Clip(inst.solution[::-1], float(cfg.fps))

    @variant(family, "noise", honest=False, difficulties=("easy",))
    def noise(inst, cfg, rng):
        """One second of random pixels."""
        h, w = inst.first_frame.shape[:2]
        return Clip([rng.integers(0, 256, (h, w, 3), dtype=np.uint8) for _ in range(cfg.fps)], float(cfg.fps))

    @variant(family, "cut_to_answer", honest=True, difficulties=("medium",))
    def cut(inst, cfg, rng):
        """The first frame, then a cut to the solved task (final-state task: a valid answer)."""
        n = cfg.n_frames
        return Clip([inst.first_frame] * (n // 2) + [inst.final_frame] * (n - n // 2), float(cfg.fps))


def _sudoku() -> None:
    fam = get_family("sudoku")
    register_honest("sudoku", lambda inst, n: fam.solve(inst.state, _cfg(inst), n))

    def one_wrong(inst, cfg, rng):
        st = inst.state
        vals = [row[:] for row in st["solution"]]
        blanks = [(r, c) for r, row in enumerate(st["puzzle"]) for c, v in enumerate(row) if not v]
        r, c = blanks[int(rng.integers(len(blanks)))]
        vals[r][c] = vals[r][c] % st["n"] + 1
        return fam.solve(st, cfg, cfg.n_frames, vals)

    _common("sudoku", one_wrong)

    @variant("sudoku", "given_changed", honest=False, difficulties=("hard",))
    def given(inst, cfg, rng):
        """Every blank filled right, but a printed digit overwritten with another."""
        from vreason.synth.sudoku import cell_rect, render

        st = inst.state
        frames = fam.solve(st, cfg, cfg.n_frames)
        r, c = next((r, c) for r, row in enumerate(st["puzzle"]) for c, v in enumerate(row) if v)
        vals = [row[:] for row in st["solution"]]
        vals[r][c] = vals[r][c] % st["n"] + 1
        bad = render(st, cfg, vals)
        x0, y0, x1, y1 = cell_rect(st, r, c)
        out = frames[: len(frames) // 2]
        for f in frames[len(frames) // 2:]:
            f = f.copy()
            f[y0:y1, x0:x1] = bad[y0:y1, x0:x1]
            out.append(f)
        return Clip(out, float(cfg.fps))


def _arithmetic() -> None:
    fam = get_family("arithmetic")
    register_honest("arithmetic", lambda inst, n: fam.solve(inst.state, _cfg(inst), n))
    _common("arithmetic", lambda inst, cfg, rng: fam.solve(inst.state, cfg, cfg.n_frames,
                                                           str(int(inst.state["answer"]) + 1)))

    @variant("arithmetic", "question_replaced", honest=False, difficulties=("easy", "hard"))
    def replaced(inst, cfg, rng):
        """The question rewritten as "<answer> =" and the right answer written after it (TiViBench's metric
        reads only the answer; the suite also requires the question to keep its value)."""
        from vreason.synth.arithmetic import render

        st = dict(inst.state, lhs=inst.state["answer"])
        return Clip([inst.first_frame] * (cfg.n_frames // 2) + [render(st, cfg, st["answer"])] * (cfg.n_frames // 2),
                    float(cfg.fps))

    @variant("arithmetic", "extra_digit", honest=False, difficulties=("medium",))
    def extra(inst, cfg, rng):
        """The right result with a digit too many."""
        return Clip(fam.solve(inst.state, cfg, cfg.n_frames, inst.state["answer"] + "0"), float(cfg.fps))


def _choice() -> None:
    fam = get_family("choice")
    register_honest("choice", lambda inst, n: fam.solve(inst.state, _cfg(inst), n, (inst.state["correct"],)))

    def wrong(inst, cfg, rng):
        k = (inst.state["correct"] + 1 + int(rng.integers(3))) % 4
        return fam.solve(inst.state, cfg, cfg.n_frames, (k,))

    _common("choice", wrong)

    @variant("choice", "two_boxes", honest=False)
    def two(inst, cfg, rng):
        """The right box and a wrong one turn red."""
        c = inst.state["correct"]
        return Clip(fam.solve(inst.state, cfg, cfg.n_frames, (c, (c + 1) % 4)), float(cfg.fps))

    @variant("choice", "all_boxes", honest=False, difficulties=("medium",))
    def every(inst, cfg, rng):
        """Every box turns red."""
        return Clip(fam.solve(inst.state, cfg, cfg.n_frames, (0, 1, 2, 3)), float(cfg.fps))

    @variant("choice", "box_around_all", honest=False, difficulties=("easy", "hard"))
    def around(inst, cfg, rng):
        """One red box drawn around all four options."""
        from vreason.synth import tivi_text as tt
        from vreason.synth.choice import RED

        boxes = inst.state["layout"]["boxes"]
        final = inst.first_frame.copy()
        tt.outline(final, (boxes[0][0] - 8, boxes[0][1] - 8, boxes[-1][2] + 8, boxes[-1][3] + 8), RED, 4)
        n = cfg.n_frames
        return Clip([inst.first_frame] * (n // 2) + [final] * (n - n // 2), float(cfg.fps))


def _numseq() -> None:
    fam = get_family("numseq")
    register_honest("numseq", lambda inst, n: fam.solve(inst.state, _cfg(inst), n))

    def off_by_one(inst, cfg, rng):
        st = inst.state
        i = st["missing"][-1]
        ans = {j: str(st["values"][j]) for j in st["missing"]}
        ans[i] = str(st["values"][i] + 1)
        return fam.solve(st, cfg, cfg.n_frames, ans)

    _common("numseq", off_by_one)

    @variant("numseq", "one_left_open", honest=False, difficulties=("medium", "hard"))
    def left_open(inst, cfg, rng):
        """Only the first missing number written; the other "?" stays."""
        st = inst.state
        i = st["missing"][0]
        return Clip(fam.solve(st, cfg, cfg.n_frames, {i: str(st["values"][i])}), float(cfg.fps))

    @variant("numseq", "answers_swapped", honest=False, difficulties=("medium", "hard"))
    def swapped(inst, cfg, rng):
        """The two missing numbers written into each other's cards."""
        st = inst.state
        a, b = st["missing"]
        return Clip(fam.solve(st, cfg, cfg.n_frames, {a: str(st["values"][b]), b: str(st["values"][a])}),
                    float(cfg.fps))


_sudoku()
_arithmetic()
_choice()
_numseq()
