"""The temporal residual's reference follows what came to rest (``vreason.verify.settle``, issue 24).

Its followed pixels are corrected with an exposure fitted on their own frame, as the first frame's are: the check
may keep the last frame's exposure while it explains a frame, and under a 2.7% flicker that left a sorting bar 10
levels brighter in the reference than in every later frame — 403 px "changed" once it had come to rest (principle 5
flicker, case seed 392374465, failing on 5baae21). Honest flicker on the families whose oracle moves things, drawn
from the run's seed, passes."""

import os
import random

import pytest

from vreason.synth.adversary_principles import Case, run_case, sample_cases
from vreason.synth.suite import default_families

SEED = int(os.environ.get("VREASON_ADV_SEED", "20261207"))


def test_a_flickering_sorting_video_keeps_its_bars_after_they_settle(tmp_path):
    (case,) = [c for c in sample_cases(default_families(), 2220, per_kind=2, index=0, principles=("P5",))
               if c.case_seed == 392374465]
    out = run_case(case, str(tmp_path))
    assert out is not None and out.passed, (out.reason if out else None, out.params if out else None)


@pytest.mark.parametrize("family", ["sorting", "sliding", "match3"])
def test_honest_flicker_passes_where_things_move(tmp_path, family):
    rng = random.Random(SEED * 31 + len(family))
    case = Case("P5", family, "flicker", True, rng.choice(["easy", "medium", "hard"]), 0, rng.randrange(1 << 20),
                rng.randrange(1 << 30))
    out = run_case(case, str(tmp_path))
    assert out is not None and out.passed, (case, out.reason if out else None, out.params if out else None)
