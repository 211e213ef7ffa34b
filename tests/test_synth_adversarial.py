"""The suite's adversarial set (src/vreason/synth/adversary*.py), scored through the same scorer as
``vreason run synth``: every cheat must fail and every honest variant must pass, for every family and
difficulty. Each run draws a fresh seed (printed in the summary; replay with ``VREASON_ADV_SEED=<seed>``).

Default run (``make test``): a sample of at most ``PER_FAMILY`` variants per family (both kinds in every family,
honest and cheat, the cheats first), each at one difficulty, all drawn by the run's seed, so every variant is
drawn over runs (each has a probability of at least 1/8 per run); the summary line lists the variants that ran.
``--adv-full`` (``make test-all``, ``make bench``): every variant at every difficulty."""

import os
import random

import pytest

from vreason.synth.adversary import load_variants, run_variant
from vreason.synth.base import DIFFICULTIES
from vreason.synth.suite import FAMILY_MODULES

SEED = int(os.environ.get("VREASON_ADV_SEED", "20261122"))
FULL = os.environ.get("VREASON_ADV_FULL") == "1"
VARIANTS = load_variants()
PER_FAMILY = {"cheat": 2, "honest": 1}
"""Default sample per family: 2 cheats and 1 honest variant (16 families: 48 cases of the 317 variants; the full
matrix in ``make test-all`` / ``make bench``). The principles' generators (tests/test_explain_families.py,
tests/test_synth_principles.py) draw fresh honest cameras and codecs every run besides."""


def _sample(variants: list, rng: random.Random) -> list:
    """Up to PER_FAMILY[kind] variants of each kind (cheat / honest), drawn without replacement by ``rng``."""
    out = []
    for kind, k in PER_FAMILY.items():
        pool = [v for v in variants if v.honest == (kind == "honest")]
        out += rng.sample(pool, min(k, len(pool)))
    return out


def _cases() -> list:
    """Full matrix under ``--adv-full``; otherwise the seeded per-family sample, each at a difficulty drawn from
    its own difficulties by the run's seed."""
    rng = random.Random(SEED)
    out = []
    for fam in sorted(VARIANTS):
        if FULL:
            out += [(v, d) for v in VARIANTS[fam] for d in v.difficulties]
        else:
            out += [(v, rng.choice(v.difficulties)) for v in _sample(VARIANTS[fam], rng)]
    # drawn in registry order (the same cases for a seed), run grouped by (family, difficulty): consecutive cases
    # share one task instance, which the scorer re-creates through a small cache
    return sorted(out, key=lambda c: (c[0].family, DIFFICULTIES.index(c[1]), c[0].name))


CASES = _cases()


@pytest.mark.parametrize("family", FAMILY_MODULES)
def test_every_family_has_five_cheats_and_five_honest_variants(family):
    got = VARIANTS.get(family, [])
    cheats = [v.name for v in got if not v.honest]
    honest = [v.name for v in got if v.honest]
    assert len(cheats) >= 5 and len(honest) >= 5, (family, cheats, honest)


def test_the_default_sample_covers_every_family_with_both_kinds_and_every_variant_over_seeds():
    """The sample is a fixed budget, holds a cheat and an honest variant of every family, and reaches every
    variant: over 200 seeds each (family, variant) is drawn at least once."""
    seen: set[tuple[str, str]] = set()
    for seed in range(200):
        rng = random.Random(seed)
        for fam in sorted(VARIANTS):
            got = _sample(VARIANTS[fam], rng)
            assert len(got) <= sum(PER_FAMILY.values())
            assert any(v.honest for v in got) and any(not v.honest for v in got), fam
            seen |= {(v.family, v.name) for v in got}
    assert seen == {(v.family, v.name) for vs in VARIANTS.values() for v in vs}
    assert len(CASES) <= 16 * sum(PER_FAMILY.values()) or FULL


KNOWN_GAPS = {
    ("sequence", "brighter15_hue_plus6"): "issue 24: sequence's every-frame scene (in its verdict: it alone catches "
    "an extra mark) fails an honest +15% exposure with a +6° hue turn at medium/hard on some seeds (e.g. "
    "468594633, 282467383): the hue turn is now undone, but a 28–32 px blob at card edges stays against the "
    "first frame (the temporal residual; limit 24)",
    ("sliding", "brighter15_hue_plus6"): "issue 24: sliding's start check fails an honest +15% exposure with a +6° hue "
    "turn at medium on some seeds (VREASON_ADV_SEED=261988366: frame 0, a 26-px one-pixel column at x=581 against the "
    "24-px limit; the same at 7697915, before the seventh session's changes); its temporal residual at the green "
    "clip (seed 143667987, easy and medium) is fixed since the eighth session",
    ("sliding", "half_size_darker15_hue_minus6"): "issue 24: sliding's every-frame scene fails an honest half-size, "
    "-15% exposure, -6° hue video at hard on some seeds (VREASON_ADV_SEED=853426842, fresh-clone make test of "
    "2026-11-28: 'failed checks: scene'; the same at 7a5de25, before the eleventh session's changes)",
}
"""Honest variants a verifier is known to fail on some draws (non-strict: a pass is fine), each with its issue."""


@pytest.mark.parametrize("v,difficulty", CASES, ids=[f"{v.family}-{d}-{v.name}" for v, d in CASES])
def test_adversarial_variant(tmp_path, request, v, difficulty):
    if (v.family, v.name) in KNOWN_GAPS:
        request.applymarker(pytest.mark.xfail(reason=KNOWN_GAPS[(v.family, v.name)], strict=False))
    score = run_variant(v, difficulty, 0, SEED, str(tmp_path))
    reason = score.evidence.details.get("reason") if score.evidence else score.reason
    assert score.status.value == "ok", (score.reason, f"VREASON_ADV_SEED={SEED}")
    if v.honest:
        assert score.passed, f"honest {v.family}/{difficulty}/{v.name} failed: {reason} (VREASON_ADV_SEED={SEED})"
    else:
        assert not score.passed, f"cheat {v.family}/{difficulty}/{v.name} passed (VREASON_ADV_SEED={SEED})"
