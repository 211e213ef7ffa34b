"""Arithmetic (TiViBench SL / arithmetic): the result of an expression gets written after "=".

Easy ``a + b`` / ``a - b``; medium ``a x b + c`` / ``a x b - c``; hard ``(a + b) x c - d`` or
``a / b + c x d`` (exact integer division). Operators are drawn as ASCII ``x`` and ``/`` (the built-in
font's × and ÷ are not read reliably by OCR; the parser accepts both). Verified by TiViBench's math check
(:mod:`vreason.verify.math_answer`: recognition on the annotated equation line, the text after "=" equal to
the result as text or as a value) on the last frame and the frame 0.15 s before the end; the suite also
requires the left-hand side to still read as the question (operators ×/x/* and ÷// alike, spaces ignored):
a model rewriting the question into an easier one, or into its own answer, fails. Directional; no process rule.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from vreason.synth import draw
from vreason.synth import tivi_text as tt
from vreason.synth.base import RenderConfig, TaskFamily, TaskInstance, VerifyResult, family

SIZE = 40
"""Text height in px at the suite's 360-px canvas height (scaled with the canvas)."""


def expression(rng: np.random.Generator, difficulty: str) -> tuple[str, int]:
    def r(a: int, b: int) -> int:
        return int(rng.integers(a, b + 1))

    while True:
        form = int(rng.integers(2))
        if difficulty == "easy":
            a, b = r(11, 89), r(3, 49)
            text, value = (f"{a} + {b}", a + b) if form == 0 else (f"{a} - {b}", a - b)
        elif difficulty == "medium":
            a, b, c = r(3, 12), r(3, 9), r(2, 30)
            text, value = (f"{a} x {b} + {c}", a * b + c) if form == 0 else (f"{a} x {b} - {c}", a * b - c)
        else:
            if form == 0:
                a, b, c, d = r(2, 15), r(2, 15), r(2, 6), r(2, 20)
                text, value = f"({a} + {b}) x {c} - {d}", (a + b) * c - d
            else:
                b, q, c, d = r(2, 9), r(2, 9), r(2, 9), r(2, 9)
                text, value = f"{b * q} / {b} + {c} x {d}", q + c * d
        if value > 0:
            return text, value


def render(state: dict[str, Any], cfg: RenderConfig, answer: str = "") -> np.ndarray:
    img = draw.canvas(cfg.width, cfg.height, (250, 249, 244))
    x, y, size = state["x"], state["y"], state["size"]
    tt.put_text(img, state["lhs"] + " =", (x, y), size, tt.INK, anchor="lm")
    if answer:
        tt.put_text(img, answer, (state["ans_x"], y), size, tt.ANSWER_INK, anchor="lm")
    return img


@family
class Arithmetic(TaskFamily):
    name = "arithmetic"
    scene_check = True
    """The scene (issue 24) is part of the verdict since 27 Nov (fifth session): the −0.54° rotation and MJPEG q 7
    that failed it (bench seed 418207) are explained by today's shared layer (replayed: 0 unexplained frames each);
    measured in docs/suite_validity.md."""
    version = "2"  # 2: the answer not still fading in over the last 0.35 s (issue 24)
    directional = True
    process_rule = False

    def make(self, rng, difficulty, index, seed, cfg: RenderConfig) -> TaskInstance:
        lhs, value = expression(rng, difficulty)
        ans = str(value)
        size = max(12, int(round(SIZE * cfg.height / 360)))
        w_lhs = tt.text_box(lhs + " =", size)[2]
        w_ans = tt.text_box("8888", size)[2]
        gap = size // 2
        x = (cfg.width - (w_lhs + gap + w_ans)) // 2
        y = cfg.height // 2
        state: dict[str, Any] = {"lhs": lhs, "answer": ans, "x": x, "y": y, "ans_x": x + w_lhs + gap, "size": size,
                                 "line": [x, y - size, x + w_lhs + gap + w_ans, y + size]}
        state["tivibench"] = tt.tivi_record("SL", "arithmetic", {
            "family": "math", "expected": ans, "region": tt.norm_box(state["line"], cfg, pad=size // 2)})
        frames = self.solve(state, cfg, cfg.n_frames)
        prompt = (f"The expression \"{lhs} =\" is written on a sheet of paper. Work out the result and write it "
                  "after the equals sign in dark blue ink, then stop. The expression itself stays unchanged and "
                  "the camera does not move.")
        return TaskInstance(self.name, difficulty, index, seed, prompt, frames[0], frames[-1], frames, state,
                            self.directional, self.process_rule)

    def solve(self, state: dict[str, Any], cfg: RenderConfig, n_frames: int, answer: str | None = None):
        """The answer (default: the right one) written after "=", one character after another."""
        ans = state["answer"] if answer is None else answer
        first, final = render(state, cfg), render(state, cfg, ans)
        x0, y, size = state["ans_x"], state["y"], state["size"]
        rects, pos = [], x0
        for i in range(len(ans)):
            nxt = x0 + tt.text_box(ans[:i + 1], size)[2]
            rects.append((max(0, pos - 2), y - size, min(cfg.width, nxt + 2), y + size))
            pos = nxt
        return tt.reveal(first, final, rects, n_frames, 0.3, 0.8)

    def random_motion(self, inst: TaskInstance, rng, cfg: RenderConfig) -> list[np.ndarray]:
        """A wrong result written after "=" (off by a small amount)."""
        v = int(inst.state["answer"]) + int(rng.choice([-10, -2, -1, 1, 2, 10]))
        return self.solve(inst.state, cfg, cfg.n_frames, str(abs(v) if v else 1))

    def scene(self, state: dict[str, Any], cfg: RenderConfig):
        """Every frame is the question; only the answer's place right of "=" may change, and what is written there
        stays (:mod:`vreason.verify.written`): the box of the answer's ink as the suite writes it, grown by a
        quarter of the text height (other handwriting)."""
        from vreason.verify.explain import box_mask, changed_box
        from vreason.verify.written import written_scene

        start, final = render(state, cfg), render(state, cfg, state["answer"])
        free = box_mask((cfg.height, cfg.width), [changed_box(start, final)], pad=state["size"] / 4)
        return written_scene(start, free, final)

    def verify(self, frames, state, cfg: RenderConfig, times=None) -> VerifyResult:
        def lhs_kept(frame, res) -> tuple[dict[str, bool], dict[str, Any]]:
            from vreason.verify.math_answer import same_text

            left = (res.details or {}).get("left", "")
            right = (res.details or {}).get("answer", "")
            # the answer is one value written as a number: not an expression that evaluates to it (TiViBench's
            # check accepts either; the suite asks for the result)
            return ({"question_kept": same_text(left, state["lhs"]), "one_value": same_text(right, state["answer"])},
                    {"question_read": left})

        return tt.verify_by_check(frames, state, cfg, times, extra=lhs_kept, family=self)
