"""Adversarial variants of the arithmetic family: the shared honest renderings of
:mod:`vreason.synth.adversary_honest`, the text families' cheats of
:func:`vreason.synth.adversary_cheats.text_cheats` and the family's own (moved from ``adversary_c``)."""

from __future__ import annotations

from vreason.synth.adversary import Clip, variant
from vreason.synth.adversary_cheats import text_cheats, text_config
from vreason.synth.adversary_honest import register_honest
from vreason.synth.suite import get_family


def _arithmetic() -> None:
    fam = get_family("arithmetic")
    register_honest("arithmetic", lambda inst, n: fam.solve(inst.state, text_config(inst), n))
    text_cheats("arithmetic", lambda inst, cfg, rng: fam.solve(inst.state, cfg, cfg.n_frames,
                                                           str(int(inst.state["answer"]) + 1)))

    @variant("arithmetic", "question_replaced", honest=False, difficulties=("easy", "hard"))
    def replaced(inst, cfg, rng):
        """The question rewritten as "<answer> =" and the right answer written after it (TiViBench's metric
        reads only the answer; the suite also requires the question to keep its value)."""
        from vreason.synth.families.arithmetic.family import render

        st = dict(inst.state, lhs=inst.state["answer"])
        return Clip([inst.first_frame] * (cfg.n_frames // 2) + [render(st, cfg, st["answer"])] * (cfg.n_frames // 2),
                    float(cfg.fps))

    @variant("arithmetic", "extra_digit", honest=False, difficulties=("medium",))
    def extra(inst, cfg, rng):
        """The right result with a digit too many."""
        return Clip(fam.solve(inst.state, cfg, cfg.n_frames, inst.state["answer"] + "0"), float(cfg.fps))


_arithmetic()
