"""One score scale across the suite's families: 1 = solved, 0.5 = right end state reached by a
process that breaks the rule, 0 = wrong end state. Trivial baselines must score 0 on the scale,
not only fail the pass flag (a static video earning partial credit is a bug)."""

import numpy as np
import pytest

from vreason.synth.base import RenderConfig
from vreason.synth.suite import FAMILY_MODULES, get_family, make_instance

CFG = RenderConfig(width=320, height=180, fps=12, seconds=3.0)


@pytest.mark.parametrize("family", FAMILY_MODULES)
def test_score_scale(family):
    fam = get_family(family)
    inst = make_instance(family, "medium", 0, 1234, CFG)
    n = len(inst.solution)
    rng = np.random.default_rng(0)
    videos = {
        "oracle": inst.solution,
        "static": [inst.first_frame] * n,
        "noise": [rng.integers(0, 256, inst.first_frame.shape, dtype=np.uint8) for _ in range(n)],
        "reversed": inst.solution[::-1],
        "cut": [inst.first_frame] * (n // 2) + [inst.final_frame] * (n - n // 2),
    }
    got = {k: fam.verify(list(v), inst.state, CFG) for k, v in videos.items()}
    assert got["oracle"].passed and got["oracle"].score == 1.0
    for k in ("static", "noise"):
        assert not got[k].passed and got[k].score == 0.0, (k, got[k].evidence.get("reason"))
    if inst.directional:
        assert not got["reversed"].passed and got["reversed"].score <= 0.5
    if inst.process_rule:
        assert not got["cut"].passed and got["cut"].score <= 0.5, got["cut"].evidence.get("reason")
