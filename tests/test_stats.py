from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from vreason.aggregate.stats import (
    bootstrap_ci,
    mean_pass_at_k,
    paired_delta_ci,
    pass_at_k,
    pass_at_k_per_sample,
    win_rate,
)


def _brute_pass_at_k(n: int, c: int, k: int) -> float:
    attempts = [True] * c + [False] * (n - c)
    subsets = list(itertools.combinations(range(n), k))
    return sum(any(attempts[i] for i in s) for s in subsets) / len(subsets)


def test_pass_at_k_matches_brute_force_enumeration():
    checked = 0
    for n in range(1, 9):
        for c in range(n + 1):
            for k in range(1, n + 1):
                assert pass_at_k(n, c, k) == pytest.approx(_brute_pass_at_k(n, c, k), abs=1e-12), (n, c, k)
                checked += 1
    assert checked == sum(n * (n + 1) for n in range(1, 9))


def test_pass_at_k_edges_and_bad_input():
    assert pass_at_k(5, 0, 5) == 0.0
    assert pass_at_k(5, 1, 5) == 1.0  # n - c < k
    assert pass_at_k(5, 2, 1) == pytest.approx(0.4)
    assert pass_at_k(200, 3, 10) == pytest.approx(1 - math.comb(197, 10) / math.comb(200, 10))
    for bad in [(0, 0, 1), (3, 4, 1), (3, 1, 0), (3, 1, 4)]:
        with pytest.raises(ValueError):
            pass_at_k(*bad)


def test_mean_pass_at_k_per_sample_and_short_samples():
    df = pd.DataFrame({
        "sample_id": ["a"] * 3 + ["b"] * 3 + ["c"] * 2,
        "passed": [True, False, False, False, False, False, True, None],
    })
    # a: n=3 c=1 ; b: n=3 c=0 ; c: one verdict missing -> n=1 c=1
    per = pass_at_k_per_sample(df, 2).set_index("sample_id")
    assert per.loc["a", "n"] == 3 and per.loc["a", "c"] == 1
    assert per.loc["c", "n"] == 1 and math.isnan(per.loc["c", "pass_at_k"])
    assert per.loc["a", "pass_at_k"] == pytest.approx(2 / 3)
    assert mean_pass_at_k(df, 1) == pytest.approx((1 / 3 + 0 + 1) / 3)
    with pytest.raises(ValueError, match=r"c \(n=1\)"):
        mean_pass_at_k(df, 2)
    assert mean_pass_at_k(df, 2, short="skip") == pytest.approx((2 / 3 + 0) / 2)
    assert math.isnan(mean_pass_at_k(df, 4, short="skip"))


def test_bootstrap_degenerate_sizes_and_nan_exclusion():
    assert all(math.isnan(x) for x in bootstrap_ci([]))
    assert all(math.isnan(x) for x in bootstrap_ci([np.nan, np.nan]))
    assert bootstrap_ci([0.7]) == (0.7, 0.7, 0.7)
    assert bootstrap_ci([np.nan, 0.4]) == (0.4, 0.4, 0.4)
    est, lo, hi = bootstrap_ci([1.0, 0.0, np.nan, 1.0], n_boot=500)
    assert est == pytest.approx(2 / 3)  # NaN dropped, not counted as 0
    assert 0.0 <= lo <= est <= hi <= 1.0
    # deterministic for a seed
    assert bootstrap_ci([1, 0, 1, 0, 0], seed=3) == bootstrap_ci([1, 0, 1, 0, 0], seed=3)


def test_bootstrap_ci_coverage_normal():
    rng = np.random.default_rng(12345)
    reps, n, mu = 300, 50, 2.0
    covered = 0
    for r in range(reps):
        x = rng.normal(mu, 1.0, size=n)
        _, lo, hi = bootstrap_ci(x, n_boot=500, seed=r)
        covered += lo <= mu <= hi
    rate = covered / reps
    assert 0.92 <= rate <= 0.98, rate


def test_bootstrap_ci_coverage_bernoulli_generic_stat():
    # generic statistic path (stat without the fast mean path) on Bernoulli(0.3) draws
    rng = np.random.default_rng(7)
    covered = 0
    for r in range(300):
        x = (rng.random(50) < 0.3).astype(float)
        _, lo, hi = bootstrap_ci(x, stat=lambda a, axis=None: np.mean(a, axis=axis), n_boot=500, seed=r)
        covered += lo <= 0.3 <= hi
    assert 0.90 <= covered / 300 <= 0.98, covered / 300


def test_cluster_bootstrap_keeps_clusters_together():
    values = [0.0, 0.0, 0.0, 1.0]
    clusters = ["a", "a", "a", "b"]
    # Two clusters: a resample is {a,a} -> 0, {a,b} -> 1/4 (pooled), {b,b} -> 1, each 1/4, 1/2, 1/4.
    est, lo, hi = bootstrap_ci(values, clusters=clusters, level=0.9, n_boot=4000)
    assert est == pytest.approx(0.25)
    assert (lo, hi) == (0.0, 1.0)
    # Row-level resampling almost never gives mean 1 (prob 1/256), so its 95th percentile is < 1.
    _, _, hi_rows = bootstrap_ci(values, level=0.9, n_boot=4000)
    assert hi_rows < 1.0

    seen: list[np.ndarray] = []

    def recording_mean(a):
        seen.append(np.asarray(a).copy())
        return float(np.mean(a))

    bootstrap_ci([1.0, 1.0, 5.0, 7.0, 7.0, 7.0], stat=recording_mean, clusters=[0, 0, 1, 2, 2, 2], n_boot=200)
    for draw in seen[1:]:  # first call is the point estimate
        assert np.count_nonzero(draw == 1.0) % 2 == 0
        assert np.count_nonzero(draw == 7.0) % 3 == 0
        assert np.isin(draw, [1.0, 5.0, 7.0]).all()
    assert len(seen) == 201


def test_cluster_fast_path_agrees_with_generic_path():
    rng = np.random.default_rng(0)
    vals = rng.random(60)
    cl = np.repeat(np.arange(20), 3)
    fast = bootstrap_ci(vals, clusters=cl, n_boot=3000, seed=1)
    slow = bootstrap_ci(vals, clusters=cl, n_boot=3000, seed=1, stat=lambda a: float(np.mean(a)))
    assert fast[0] == pytest.approx(slow[0])
    assert fast[1] == pytest.approx(slow[1], abs=0.02) and fast[2] == pytest.approx(slow[2], abs=0.02)


def test_paired_delta_hand_computed():
    a = [3.0, 5.0, 7.0, np.nan]
    b = [1.0, 4.0, 7.0, 2.0]
    d, lo, hi = paired_delta_ci(a, b, n_boot=2000)
    assert d == pytest.approx(1.0)  # diffs 2, 1, 0 (NaN pair dropped)
    assert lo == pytest.approx(0.0) and hi == pytest.approx(2.0)
    assert paired_delta_ci([2, 3, 4], [1, 2, 3]) == (1.0, 1.0, 1.0)
    with pytest.raises(ValueError):
        paired_delta_ci([1, 2], [1])


def test_win_rate_with_ties_hand_computed():
    rows = []
    table = {"A": [1.0, 0.5, 0.0], "B": [0.0, 0.5, 0.0], "C": [1.0, np.nan, 1.0]}
    for model, vals in table.items():
        for u, v in enumerate(vals):
            rows.append({"model": model, "sample_id": f"u{u}", "seed": 0, "value": v})
    per, mat = win_rate(pd.DataFrame(rows), "model", ["sample_id", "seed"], "value")
    assert mat.loc["A", "B"] == pytest.approx(2 / 3)
    assert mat.loc["A", "C"] == pytest.approx(0.25)
    assert mat.loc["B", "C"] == pytest.approx(0.0)
    assert mat.loc["C", "B"] == pytest.approx(1.0)
    assert math.isnan(mat.loc["A", "A"])
    per = per.set_index("model")
    assert per.loc["A", "win_rate"] == pytest.approx(2.5 / 5)
    assert per.loc["B", "win_rate"] == pytest.approx(1.0 / 5)
    assert per.loc["C", "win_rate"] == pytest.approx(3.5 / 4)
    assert per.loc["C", "comparisons"] == 4
