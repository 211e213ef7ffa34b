"""Adversarial variants of the choice family: the shared honest renderings of :mod:`vreason.synth.adversary_honest`,
the text families' cheats of :func:`vreason.synth.adversary_cheats.text_cheats` and the family's own (moved from
``adversary_c``)."""

from __future__ import annotations

from vreason.synth.adversary import Clip, variant
from vreason.synth.adversary_cheats import text_cheats, text_config
from vreason.synth.adversary_honest import register_honest
from vreason.synth.suite import get_family


def _choice() -> None:
    fam = get_family("choice")
    register_honest("choice", lambda inst, n: fam.solve(inst.state, text_config(inst), n, (inst.state["correct"],)))

    def wrong(inst, cfg, rng):
        k = (inst.state["correct"] + 1 + int(rng.integers(3))) % 4
        return fam.solve(inst.state, cfg, cfg.n_frames, (k,))

    text_cheats("choice", wrong)

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
        from vreason.synth.families.choice.family import RED

        boxes = inst.state["layout"]["boxes"]
        final = inst.first_frame.copy()
        tt.outline(final, (boxes[0][0] - 8, boxes[0][1] - 8, boxes[-1][2] + 8, boxes[-1][3] + 8), RED, 4)
        n = cfg.n_frames
        return Clip([inst.first_frame] * (n // 2) + [final] * (n - n // 2), float(cfg.fps))


_choice()
