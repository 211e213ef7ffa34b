"""Adversarial variants of the numseq family: the shared honest renderings of :mod:`vreason.synth.adversary_honest`,
the text families' cheats of :func:`vreason.synth.adversary_cheats.text_cheats` and the family's own (moved from
``adversary_c``)."""

from __future__ import annotations

from vreason.synth.adversary import Clip, variant
from vreason.synth.adversary_cheats import text_cheats, text_config
from vreason.synth.adversary_honest import register_honest
from vreason.synth.suite import get_family


def _numseq() -> None:
    fam = get_family("numseq")
    register_honest("numseq", lambda inst, n: fam.solve(inst.state, text_config(inst), n))

    def off_by_one(inst, cfg, rng):
        st = inst.state
        i = st["missing"][-1]
        ans = {j: str(st["values"][j]) for j in st["missing"]}
        ans[i] = str(st["values"][i] + 1)
        return fam.solve(st, cfg, cfg.n_frames, ans)

    text_cheats("numseq", off_by_one)

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


_numseq()
