"""Ratings from pairwise votes: PAI-Bench ELO (hand-computed), per-dimension and overall rule, ties,
Bradley–Terry recovery with covering intervals, bootstrap interval shape, Table 8 and rank correlation."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from vreason.human.ratings import (
    Comparison,
    bradley_terry,
    elo,
    elo_expected,
    fit_ratings,
    overall_comparisons,
    rank_correlations,
    rate_votes,
    table8,
    win_matrix,
)
from vreason.human.records import PairVote


def vote(left: str, right: str, verdict: str, t: float, dim: str = "quality", who: str = "ann", sample: str = "s1"):
    return PairVote(annotator=who, sample_id=sample, left_model=left, right_model=right, dimension=dim,
                    verdict=verdict, created=t)


def test_elo_hand_computed_sequence():
    # start 1000 each, K = 32, E_A = 1 / (1 + 10^((R_B − R_A)/400))
    # 1) X (A) vs Y (B), "A better": E_X = 0.5 → X = 1000 + 32·(1 − 0.5) = 1016, Y = 984
    # 2) Y (A) vs Z (B), "both good": S = 0.5 each; E_Y = 1/(1 + 10^(16/400)) = 1/(1 + 1.0964782) = 0.4769904
    #    Y = 984 + 32·(0.5 − 0.4769904) = 984.7363068, Z = 1000 − 0.7363068 = 999.2636932
    # 3) Z (A) vs X (B), "B better": E_Z = 1/(1 + 10^((1016 − 999.2636932)/400)) = 0.4759331
    #    Z = 999.2636932 − 32·0.4759331 = 984.0338330, X = 1016 + 15.2298602 = 1031.2298602
    votes = [vote("X", "Y", "a", 1), vote("Y", "Z", "both_good", 2), vote("Z", "X", "b", 3)]
    res = rate_votes(votes, n_boot=0)
    assert res["quality"].elo["X"] == pytest.approx(1031.2298602, abs=1e-6)
    assert res["quality"].elo["Y"] == pytest.approx(984.7363068, abs=1e-6)
    assert res["quality"].elo["Z"] == pytest.approx(984.0338330, abs=1e-6)
    assert sum(res["quality"].elo.values()) == pytest.approx(3000.0)  # ELO is zero-sum


def test_votes_are_applied_in_time_order_not_store_order():
    votes = [vote("Z", "X", "b", 3), vote("Y", "Z", "both_good", 2), vote("X", "Y", "a", 1)]
    assert rate_votes(votes, n_boot=0)["quality"].elo["X"] == pytest.approx(1031.2298602, abs=1e-6)


def test_separate_trackers_per_dimension_and_overall_from_averaged_preference():
    votes = [
        # comparison 1: quality says A (X), physics says B (Y) → overall preference of X = (1 + 0)/2 = 0.5
        vote("X", "Y", "a", 1, "quality"), vote("X", "Y", "b", 1.5, "physics"),
        # comparison 2 (other sample): quality A, physics both bad → overall (1 + 0.5)/2 = 0.75 for X
        vote("X", "Y", "a", 2, "quality", sample="s2"), vote("X", "Y", "both_bad", 2.5, "physics", sample="s2"),
    ]
    res = rate_votes(votes, n_boot=0)
    assert set(res) == {"quality", "physics", "overall"}
    # quality alone: X wins twice → 1016, then 1016 + 32·(1 − E), E = 1/(1 + 10^(−32/400)) = 0.5460
    e2 = elo_expected(1016, 984)
    assert res["quality"].elo["X"] == pytest.approx(1016 + 32 * (1 - e2))
    # physics alone: Y wins, then a tie: Y = 1016 + 32·(0.5 − E_Y)
    assert res["physics"].elo["Y"] == pytest.approx(1016 + 32 * (0.5 - e2))
    # overall: 0.5 at 1000/1000 changes nothing; then 0.75 → X = 1000 + 32·(0.75 − 0.5) = 1008
    assert res["overall"].elo["X"] == pytest.approx(1008.0)
    assert res["overall"].elo["Y"] == pytest.approx(992.0)
    comps, partial = overall_comparisons(votes, ["quality", "physics"])
    assert [c.score for c in comps] == [0.5, 0.75] and partial == 0


def test_partial_comparison_averages_the_given_dimensions_and_is_counted():
    votes = [vote("X", "Y", "a", 1, "quality"), vote("X", "Y", "b", 2, "physics"),
             vote("X", "Y", "a", 3, "quality", sample="s2")]
    skipped = PairVote(annotator="ann", sample_id="s2", left_model="X", right_model="Y", dimension="physics",
                       skipped=True, created=4)
    comps, partial = overall_comparisons([*votes, skipped], ["quality", "physics"])
    assert [c.score for c in comps] == [0.5, 1.0] and partial == 1


def test_ties_count_half_for_each_side_in_elo_and_bt():
    # both good and both bad are 0.5 each (PAI A.4): between equals nothing moves
    r = rate_votes([vote("X", "Y", "both_good", 1), vote("Y", "X", "both_bad", 2)], n_boot=0)["quality"]
    assert r.elo == {"X": 1000.0, "Y": 1000.0}
    assert r.bt["X"] == pytest.approx(r.bt["Y"])
    # one win and one tie: W[X,Y] = 1.5, W[Y,X] = 0.5 → BT MLE gap = 400·log10(1.5/0.5) = 190.85
    w = win_matrix([Comparison("X", "Y", 1.0), Comparison("X", "Y", 0.5)], ["X", "Y"])
    assert w.tolist() == [[0.0, 1.5], [0.5, 0.0]]
    s = bradley_terry(w, alpha=0.0)
    assert s[0] - s[1] == pytest.approx(400 * math.log10(3), abs=1e-3)
    assert s.mean() == pytest.approx(1000.0)


def _simulate(true: dict[str, float], n: int, seed: int) -> list[Comparison]:
    rng = np.random.default_rng(seed)
    names = list(true)
    out = []
    for t in range(n):
        i, j = rng.choice(len(names), 2, replace=False)
        a, b = names[i], names[j]
        out.append(Comparison(a, b, float(rng.random() < elo_expected(true[a], true[b])), float(t)))
    return out


TRUE = {"m_best": 1200.0, "m_good": 1100.0, "m_mid": 1000.0, "m_low": 850.0}


def test_bradley_terry_recovers_order_and_intervals_cover():
    comps = _simulate(TRUE, 2000, seed=7)
    r = fit_ratings(comps, list(TRUE), "quality", n_boot=200, seed=1)
    assert sorted(r.bt, key=r.bt.get, reverse=True) == list(TRUE)
    centred = {m: v - np.mean(list(TRUE.values())) + 1000.0 for m, v in TRUE.items()}
    for m, v in centred.items():
        lo, hi = r.bt_ci[m]
        assert lo <= v <= hi, (m, v, lo, hi)
        assert lo <= r.bt[m] <= hi


def test_bootstrap_interval_shape_narrows_with_more_votes():
    small = fit_ratings(_simulate(TRUE, 150, 3), list(TRUE), "q", n_boot=150, seed=0)
    large = fit_ratings(_simulate(TRUE, 1500, 3), list(TRUE), "q", n_boot=150, seed=0)
    for r in (small, large):
        assert set(r.bt_ci) == set(TRUE) == set(r.elo_ci)
        assert all(lo < hi for lo, hi in r.bt_ci.values())
    width = lambda r: np.mean([hi - lo for lo, hi in r.bt_ci.values()])
    assert width(large) < 0.6 * width(small)


def test_elo_depends_on_order_bt_does_not():
    comps = _simulate(TRUE, 300, seed=11)
    models = list(TRUE)
    assert elo(comps, models) != pytest.approx(elo(comps[::-1], models))
    assert bradley_terry(win_matrix(comps, models)) == pytest.approx(bradley_terry(win_matrix(comps[::-1], models)))


def test_table8_layout_and_rank_correlation_with_automatic_scores():
    rng = np.random.default_rng(0)
    votes = []
    for t, c in enumerate(_simulate(TRUE, 600, seed=5)):
        for d in ("quality", "physics"):
            verdict = "a" if c.score == 1.0 else "b"
            if rng.random() < 0.1:
                verdict = "both_good"
            votes.append(vote(c.a, c.b, verdict, t + (0.5 if d == "physics" else 0), d, sample=f"s{t}"))
    res = rate_votes(votes, n_boot=50)
    auto = pd.Series({"m_best": 0.9, "m_good": 0.7, "m_mid": 0.5, "m_low": 0.2})
    t8 = table8(res, auto)
    assert list(t8.columns[:3]) == ["model", "elo_overall", "elo_quality"]
    assert {"elo_physics", "bt_overall", "bt_ci_low", "bt_ci_high", "rank", "auto_score", "auto_rank"} <= set(t8)
    assert list(t8["model"]) == list(TRUE)  # sorted by overall ELO, best first
    assert t8["auto_rank"].tolist() == [1.0, 2.0, 3.0, 4.0]
    corr = rank_correlations(res, auto)
    bt_overall = corr[(corr["dimension"] == "overall") & (corr["method"] == "bt")].iloc[0]
    assert bt_overall["spearman"] == pytest.approx(1.0) and bt_overall["kendall"] == pytest.approx(1.0)
    reversed_auto = rank_correlations(res, -auto)
    assert reversed_auto[reversed_auto["method"] == "bt"]["spearman"].max() == pytest.approx(-1.0)
