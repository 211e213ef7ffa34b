"""Issue 9, item 8: RULER win-rate definitions, their magnitudes, and the labelled default."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from vreason.protocols.ruler.tables import DEFAULT_WIN_RATE, header_lines, table2, win_rates

PUBLISHED = [0.397, 0.186, 0.340, 0.300, 0.257, 0.267, 0.151, 0.151, 0.193, 0.162]  # RULER Table 2


def _inst(values: dict[str, list[float]]) -> pd.DataFrame:
    """One metric (VF) per instance; values[model][k] = the model's score on instance k."""
    rows = [{"model": m, "sample_id": f"s{k}", "IF": np.nan, "VC": np.nan, "VF": v, "RC": np.nan}
            for m, vs in values.items() for k, v in enumerate(vs)]
    return pd.DataFrame(rows)


def test_three_models_by_hand():
    # instance:  s0   s1   s2   s3
    # A          100  50   50   0
    # B          100  100  0    0
    # C          50   50   0    0
    inst = _inst({"A": [100, 50, 50, 0], "B": [100, 100, 0, 0], "C": [50, 50, 0, 0]})
    w = win_rates(inst).set_index("model")
    # A vs B: s1 lose, s2 win, s0/s3 tie → 1 win; A vs C: s0 win, s2 win, s1/s3 tie → 2 wins
    assert w.loc["A", "pairwise_strict"] == pytest.approx(3 / 8)
    assert w.loc["A", "pairwise_half"] == pytest.approx((3 + 0.5 * 4) / 8)
    # B: vs A 1 win (s1); vs C 2 wins (s0, s1; s2, s3 tied) → 3 of 8
    assert w.loc["B", "pairwise_strict"] == pytest.approx(3 / 8)
    assert w.loc["C", "pairwise_strict"] == pytest.approx(0 / 8)
    # best (ties: every tied model): s0 A,B; s1 B; s2 A; s3 A,B,C → A 3/4, B 3/4, C 1/4
    assert (w.loc["A", "best_share"], w.loc["B", "best_share"], w.loc["C", "best_share"]) == (0.75, 0.75, 0.25)
    assert DEFAULT_WIN_RATE == "pairwise_strict" and (w["definition"] == "pairwise_strict").all()
    assert (w["win_rate"] == w["pairwise_strict"]).all()
    best = win_rates(inst, "best_share").set_index("model")
    assert best.loc["C", "win_rate"] == 0.25 and best.loc["C", "comparisons"] == 4
    with pytest.raises(ValueError):
        win_rates(inst, "elo")


def test_half_credit_always_averages_one_half_and_cannot_match_the_paper():
    rng = np.random.default_rng(0)
    models = {f"m{i}": list(rng.choice([0, 50, 100], size=60, p=[0.3, 0.3, 0.4])) for i in range(10)}
    w = win_rates(_inst(models))
    assert w["pairwise_half"].mean() == pytest.approx(0.5)
    assert np.mean(PUBLISHED) == pytest.approx(0.2404)
    # with a 3-level scale ties are frequent: strict pairwise averages (1 - tie share) / 2
    ties = 1 - 2 * w["pairwise_strict"].mean()
    assert 0.2 < w["pairwise_strict"].mean() < 0.4 and 0.2 < ties < 0.6


def test_table_row_names_the_definition():
    inst = _inst({"A": [100, 50], "B": [50, 50]})
    cat = pd.DataFrame([{"model": m, "category": "science", "metric": "VF", "value": 1.0, "n": 1} for m in "AB"])
    overall = pd.DataFrame([{"model": m, "metric": "VF", "value": 1.0} for m in "AB"])
    t = table2(cat, overall, win_rates(inst, "best_share"))
    row = t[t["Category"] == "Win Rate"].iloc[0]
    assert row["Metric"] == "best_share" and row["A"] == 1.0 and row["B"] == 0.5
    head = header_lines(missing_metric="skip", win_rate="best_share")
    assert head[0] == "RULER-Bench: options departing from the released code: missing_metric=skip"
    assert head[1].startswith("Win Rate (best_share): share of (instance, metric) pairs")
