"""The suite's adversarial set (src/vreason/synth/adversary*.py), scored through the same scorer as
``vreason run synth``: every cheat must fail and every honest variant must pass, for every family and
difficulty. ``VREASON_ADV_SEED`` picks another suite seed (the benchmark runs fresh seeds)."""

import os

import pytest

from vreason.synth.adversary import load_variants, run_variant
from vreason.synth.suite import FAMILY_MODULES

SEED = int(os.environ.get("VREASON_ADV_SEED", "20261122"))
VARIANTS = load_variants()
CASES = [(v, d) for fam in sorted(VARIANTS) for v in VARIANTS[fam] for d in v.difficulties]


@pytest.mark.parametrize("family", FAMILY_MODULES)
def test_every_family_has_five_cheats_and_five_honest_variants(family):
    got = VARIANTS.get(family, [])
    cheats = [v.name for v in got if not v.honest]
    honest = [v.name for v in got if v.honest]
    assert len(cheats) >= 5 and len(honest) >= 5, (family, cheats, honest)


@pytest.mark.parametrize("v,difficulty", CASES, ids=[f"{v.family}-{d}-{v.name}" for v, d in CASES])
def test_adversarial_variant(tmp_path, v, difficulty):
    score = run_variant(v, difficulty, 0, SEED, str(tmp_path))
    reason = score.evidence.details.get("reason") if score.evidence else score.reason
    assert score.status.value == "ok", score.reason
    if v.honest:
        assert score.passed, f"honest {v.family}/{difficulty}/{v.name} failed: {reason}"
    else:
        assert not score.passed, f"cheat {v.family}/{difficulty}/{v.name} passed"
