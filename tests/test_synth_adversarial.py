"""The suite's adversarial set (src/vreason/synth/adversary*.py), scored through the same scorer as
``vreason run synth``: every cheat must fail and every honest variant must pass, for every family and
difficulty. Each run draws a fresh seed (printed in the header; replay with ``VREASON_ADV_SEED=<seed>``)."""

import os
import random

import pytest

from vreason.synth.adversary import load_variants, run_variant
from vreason.synth.base import DIFFICULTIES
from vreason.synth.suite import FAMILY_MODULES

SEED = int(os.environ.get("VREASON_ADV_SEED", "20261122"))
FULL = os.environ.get("VREASON_ADV_FULL") == "1"
VARIANTS = load_variants()


def _cases() -> list:
    """Full matrix under ``--adv-full`` (``make test-all``, ``make bench``); otherwise every variant of every
    family once, at a difficulty drawn from its own difficulties by the run's seed (printed in the header)."""
    rng = random.Random(SEED)
    out = []
    for fam in sorted(VARIANTS):
        for v in VARIANTS[fam]:
            out += [(v, d) for d in v.difficulties] if FULL else [(v, rng.choice(v.difficulties))]
    # drawn in registry order (the same cases for a seed), run grouped by (family, difficulty): consecutive cases
    # share one task instance, which the scorer re-creates through a small cache
    return sorted(out, key=lambda c: (c[0].family, DIFFICULTIES.index(c[1])))


CASES = _cases()


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
    assert score.status.value == "ok", (score.reason, f"VREASON_ADV_SEED={SEED}")
    if v.honest:
        assert score.passed, f"honest {v.family}/{difficulty}/{v.name} failed: {reason} (VREASON_ADV_SEED={SEED})"
    else:
        assert not score.passed, f"cheat {v.family}/{difficulty}/{v.name} passed (VREASON_ADV_SEED={SEED})"
