"""Issue 24: every frame of a sequence video is explained by the family's scene — the oracle's are (the fade-in's
in-between opacities parsed and re-rendered), generated cheats' are not (in memory, no codec: the case generators
of :mod:`vreason.synth.adversary_principles`, drawn from ``VREASON_ADV_SEED`` when set)."""

from __future__ import annotations

import os

import numpy as np
import pytest

from vreason.synth.adversary_principles import Case, NotApplicable, make_case
from vreason.synth.base import RenderConfig, frame_times
from vreason.synth.suite import get_family, make_instance

CFG = RenderConfig()
FAMILY = "sequence"
SEED = int(os.environ.get("VREASON_ADV_SEED", "7")) % 10**6


def _explain(frames, times=None, records=None):
    from vreason.synth.families.sequence.family import _Recording

    inst = make_instance(FAMILY, "medium", 0, 5, CFG)
    t = frame_times(len(frames), CFG, times)
    rec = _Recording(get_family(FAMILY))
    ex = rec.explain([np.ascontiguousarray(f) for f in frames], t, inst.state, CFG)
    if records is not None:
        records.update(rec.records)
    return ex


def test_oracle_every_frame_explained_and_the_fade_parsed():
    inst = make_instance(FAMILY, "medium", 0, 5, CFG)
    records: dict = {}
    ex = _explain(inst.solution, records=records)
    assert ex.ok, ex.reason
    assert len(ex.frames) == len(inst.solution) and not ex.unexplained
    alphas = [records[i].alpha for i in sorted(records)]
    assert alphas[0] == 0 and alphas[-1] >= 0.99 and 0.2 < float(np.median(alphas[1:-1])) < 0.8, alphas
    assert all(p.fill in ("empty", "answer") for p in records.values())


def test_another_card_changing_state_is_not_a_legal_state():
    from vreason.synth.families.sequence.family import render_row

    inst = make_instance(FAMILY, "medium", 0, 5, CFG)
    st = inst.state
    j = (st["missing"] + 1) % st["n"]
    spec = dict(st["cells"][j], shape="cross" if st["cells"][j]["shape"] != "cross" else "star")
    changed = {**st, "cells": [spec if k == j else c for k, c in enumerate(st["cells"])]}
    ex = _explain([inst.first_frame] * 4 + [render_row(changed, CFG, st["answer"])] * 4)
    assert not ex.ok and "not a legal state" in ex.reason, ex.reason


@pytest.mark.parametrize("principle,kind", [("P1", "clone"), ("P2", "drop_object"), ("P2", "blank_frame"),
                                            ("P3", "start_final")])
def test_cheat_not_explained(principle, kind):
    """(``mark`` is left out: a mark of opacity 0.1–0.3 can sit below the shared residual's floor.)"""
    case = Case(principle, FAMILY, kind, False, "medium", 0, 5, SEED)
    try:
        made = make_case(case, CFG)
    except NotApplicable:
        pytest.skip(f"{kind} cannot apply to this instance with case seed {SEED}")
    ex = _explain(made.clip.frames, made.times)
    assert not ex.ok, (kind, made.params)
