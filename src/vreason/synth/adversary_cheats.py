"""Cheats shared by groups of families: every text family's (:func:`text_cheats`: a static first frame, a
wrong answer, the answer vanishing, reversed, noise, and the honest cut to the answer) and every
TiViBench-checked family's (:func:`common_cheats`: static, reversed, a jump to the final frame). Moved from
``adversary_c`` and ``adversary_d``."""

from __future__ import annotations

import numpy as np

from vreason.synth.adversary import Clip, variant
from vreason.synth.adversary_honest import cut
from vreason.synth.base import RenderConfig, TaskInstance


def text_config(inst: TaskInstance) -> RenderConfig:
    h, w = inst.first_frame.shape[:2]
    return RenderConfig(width=w, height=h)


def text_cheats(family: str, wrong) -> None:
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



def common_cheats(family: str, solve, *, jump: bool) -> None:
    @variant(family, "static", honest=False)
    def static(inst, cfg, rng):
        """The first frame held for the whole clip."""
        return Clip([inst.first_frame] * cfg.n_frames, float(cfg.fps))

    @variant(family, "reversed", honest=False)
    def reversed_(inst, cfg, rng):
        """The ground-truth solution played backwards."""
        return Clip(solve(inst, cfg.n_frames)[::-1], float(cfg.fps))

    if jump:
        @variant(family, "jump_to_final", honest=False)
        def jump_(inst, cfg, rng):
            """The first frame held, then a cut to the final frame."""
            return Clip(cut(inst, cfg.n_frames), float(cfg.fps))
