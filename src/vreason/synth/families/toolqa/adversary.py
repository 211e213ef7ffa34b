"""Adversarial variants of the toolqa family: the shared honest renderings of :mod:`vreason.synth.adversary_honest`,
the cheats of :func:`vreason.synth.adversary_cheats.common_cheats` and the family's own (moved from
``adversary_d``)."""

from __future__ import annotations

from vreason.synth.adversary import Clip, variant
from vreason.synth.adversary_cheats import common_cheats
from vreason.synth.adversary_honest import cut, register_honest


def _toolqa() -> None:
    from vreason.synth.families.toolqa import family as q

    def carried(inst, n, moves):
        return q.render(inst.state, q.carry(inst.state, moves, n))

    def solve(inst, n):
        return carried(inst, n, [(inst.state["right"], q.slot_centre())])

    register_honest("toolqa", solve)
    common_cheats("toolqa", solve, jump=False)

    @variant("toolqa", "cut_to_answer", honest=True)
    def cut_(inst, cfg, rng):
        """A cut to the right end state (no process rule)."""
        return Clip(cut(inst, cfg.n_frames), float(cfg.fps))

    @variant("toolqa", "off_centre_in_frame", honest=True)
    def off(inst, cfg, rng):
        """The right tool placed in the frame a little off its centre."""
        x, y = q.slot_centre()
        return Clip(carried(inst, cfg.n_frames, [(inst.state["right"], [x + 14, y - 10])]), float(cfg.fps))

    @variant("toolqa", "wrong_tool", honest=False)
    def wrong(inst, cfg, rng):
        """A wrong tool is carried into the frame."""
        return Clip(carried(inst, cfg.n_frames, [(inst.state["wrong"][0], q.slot_centre())]), float(cfg.fps))

    @variant("toolqa", "every_tool", honest=False)
    def every(inst, cfg, rng):
        """Every tool is carried into the frame (the wrong ones beside the right one)."""
        st = inst.state
        x, y = q.slot_centre()
        moves = [(st["right"], [x, y])] + [(j, [x - 40 + 40 * k, y + 30]) for k, j in enumerate(st["wrong"])]
        return Clip(carried(inst, cfg.n_frames, moves), float(cfg.fps))

    @variant("toolqa", "beside_the_frame", honest=False)
    def beside(inst, cfg, rng):
        """The right tool stops beside the frame, not in it."""
        x, y = q.slot_centre()
        return Clip(carried(inst, cfg.n_frames, [(inst.state["right"], [x + 120, y])]), float(cfg.fps))


_toolqa()
