"""Issue 24: every frame of a graph video is explained by the family's scene — the oracle's are, generated cheats'
are not (in memory, no codec: the case generators of :mod:`vreason.synth.adversary_principles`, drawn from
``VREASON_ADV_SEED`` when set)."""

from __future__ import annotations

import os

import numpy as np
import pytest

from vreason.synth.adversary_principles import Case, NotApplicable, make_case
from vreason.synth.base import RenderConfig, frame_times
from vreason.synth.suite import get_family, make_instance

CFG = RenderConfig()
FAMILY = "graph"
SEED = int(os.environ.get("VREASON_ADV_SEED", "7")) % 10**6


def _explain(frames, difficulty="easy", times=None):
    fam = get_family(FAMILY)
    inst = make_instance(FAMILY, difficulty, 0, 5, CFG)
    t = frame_times(len(frames), CFG, times)
    return fam.explain([np.ascontiguousarray(f) for f in frames], t, inst.state, CFG)


@pytest.mark.parametrize("difficulty", ["medium"])
def test_oracle_every_frame_explained(difficulty):
    inst = make_instance(FAMILY, difficulty, 0, 5, CFG)
    ex = _explain(inst.solution, difficulty)
    assert ex.ok, ex.reason
    assert len(ex.frames) == len(inst.solution) and not ex.unexplained


@pytest.mark.parametrize("principle,kind", [("P1", "mark"), ("P1", "ghost"), ("P2", "drop_object"),
                                            ("P2", "blank_frame"), ("P2", "jump"), ("P1", "clone")])
def test_cheat_not_explained(principle, kind):
    case = Case(principle, FAMILY, kind, False, "easy", 0, 5, SEED)
    try:
        made = make_case(case, CFG)
    except NotApplicable:
        pytest.skip(f"{kind} cannot apply to this instance with case seed {SEED}")
    ex = _explain(made.clip.frames, times=made.times)
    assert not ex.ok, (kind, made.params)
