"""Ratings of models from pairwise human votes: PAI-Bench's ELO and an order-free Bradley–Terry fit.

**ELO, exactly as PAI-Bench** (paper, appendix A.4 "ELO Rating Formulation", reported in its Table 8):

* every model starts at ``R = 1000``; ``K = 32``;
* a vote's score for a model is its PAI preference (:meth:`PairVote.preference`): 1.0 for the preferred
  model, 0.0 for the other, 0.5 each for *both good* and *both bad*;
* the update is the standard ELO one, applied to both sides of a comparison at once:
  ``E_A = 1 / (1 + 10 ** ((R_B − R_A) / 400))``, ``R_A ← R_A + K (S_A − E_A)``, ``R_B ← R_B + K (S_B − E_B)``;
* votes are applied one after another in the order they were given (``created``, then store order);
* one independent tracker per dimension (PAI: video quality, physical plausibility);
* **overall**: "a separate ELO rating by averaging the quality and plausibility preference scores for each
  comparison and using these averaged preference values as the inputs to the ELO update". A *comparison*
  here is one annotator's verdicts on one pair of videos (same annotator, sample, seed and pair shown); its
  overall score is the mean of the preferences over the dimensions that comparison has a verdict on (a
  comparison with a skipped dimension averages the others: the paper does not say, and the count of such
  partial comparisons is reported); its time is that of its first verdict.

**Bradley–Terry** (order-free): ``P(i beats j) = 1 / (1 + 10 ** ((r_j − r_i) / 400))`` on the ELO scale,
fitted by maximum likelihood with :func:`choix.ilsr_pairwise_dense` on the matrix of wins. Ties (*both good*,
*both bad*) count as half a win for each side — the same 0.5 the paper feeds ELO, and what Chatbot Arena's
BT fit does (``fastchat/serve/monitor/elo_analysis.py``). The overall fit uses the averaged preference of
each comparison as a fractional win. ``alpha`` (default :data:`BT_ALPHA`) adds that many pseudo-comparisons
to every pair (choix's regulariser), so a model that never lost gets a finite strength. Strengths are
centred at 1000 (mean of the log-strengths 0) and mapped to the ELO scale as ``1000 + 400·θ / ln 10``.

**Intervals**: percentile bootstrap over votes (comparisons for *overall*): each round draws as many
votes as there are, with replacement; BT is refitted; ELO is replayed over the drawn votes **in a random
order** (so the ELO interval includes the order dependence). The reported value is the one fitted on all
votes in their real order. ``rank`` follows Chatbot Arena: ``1 + #{others whose lower bound > my upper}``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from vreason.aggregate.bootstrap import resample_indices
from vreason.human.records import PairVote

ELO_START = 1000.0
ELO_K = 32.0
ELO_SCALE = 400.0
BT_ALPHA = 0.01
OVERALL = "overall"


@dataclass(frozen=True)
class Comparison:
    """One outcome fed to a rating: ``score`` is ``a``'s preference (1, 0, 0.5 or an average of those)."""

    a: str
    b: str
    score: float
    time: float = 0.0


def elo_expected(r_a: float, r_b: float) -> float:
    """ELO's expected score of A against B."""
    return 1.0 / (1.0 + 10.0 ** ((r_b - r_a) / ELO_SCALE))


def elo(comparisons: Sequence[Comparison], models: Sequence[str] = (), *, k: float = ELO_K,
        start: float = ELO_START) -> dict[str, float]:
    """Sequential ELO over ``comparisons`` in the given order (every model in ``models`` starts at ``start``)."""
    r = {m: start for m in models}
    for c in comparisons:
        ra, rb = r.setdefault(c.a, start), r.setdefault(c.b, start)
        ea = elo_expected(ra, rb)
        r[c.a] = ra + k * (c.score - ea)
        r[c.b] = rb + k * ((1.0 - c.score) - (1.0 - ea))
    return r


def win_matrix(comparisons: Sequence[Comparison], models: Sequence[str]) -> np.ndarray:
    """``W[i, j]`` = wins of model i over model j (a tie adds 0.5 to both; fractional scores split)."""
    idx = {m: i for i, m in enumerate(models)}
    w = np.zeros((len(models), len(models)))
    for c in comparisons:
        i, j = idx[c.a], idx[c.b]
        w[i, j] += c.score
        w[j, i] += 1.0 - c.score
    return w


def bradley_terry(w: np.ndarray, *, alpha: float = BT_ALPHA) -> np.ndarray:
    """BT strengths on the ELO scale (centred at 1000) from a win matrix (choix, iterative LSR = the MLE)."""
    import choix

    n = w.shape[0]
    if n == 0:
        return np.zeros(0)
    if n == 1:
        return np.array([ELO_START])
    theta = choix.ilsr_pairwise_dense(w, alpha=alpha, max_iter=1000, tol=1e-10)
    theta = theta - theta.mean()
    return ELO_START + ELO_SCALE * theta / math.log(10.0)


# ---------------------------------------------------------------------------------------------- votes
def dimensions_of(votes: Sequence[PairVote]) -> list[str]:
    """The dimensions voted on, in order of first appearance."""
    return list(dict.fromkeys(v.dimension for v in votes if v.verdict is not None))


def dimension_comparisons(votes: Sequence[PairVote], dimension: str) -> list[Comparison]:
    """The votes of one dimension as comparisons (skips left out), in time order."""
    rows = [(v.created, i, v) for i, v in enumerate(votes) if v.dimension == dimension and v.verdict is not None]
    rows.sort(key=lambda t: (t[0], t[1]))
    return [Comparison(v.left_model, v.right_model, float(v.preference(v.left_model)), t) for t, _, v in rows]


def overall_comparisons(votes: Sequence[PairVote], dimensions: Sequence[str]) -> tuple[list[Comparison], int]:
    """PAI's overall input: per comparison (annotator, sample, seed, pair shown) the mean preference of the
    left model over the ``dimensions`` it has a verdict on. Returns the comparisons in time order and the
    number of them that miss a verdict on some dimension."""
    groups: dict[tuple, list[PairVote]] = {}
    for v in votes:
        if v.verdict is None or v.dimension not in dimensions:
            continue
        groups.setdefault((v.annotator, v.sample_id, v.seed, v.left_model, v.right_model), []).append(v)
    out, partial = [], 0
    for (_, _, _, left, right), vs in groups.items():
        by_dim = {}
        for v in sorted(vs, key=lambda x: x.created):
            by_dim[v.dimension] = v.preference(left)  # a repeated verdict on a dimension: the latest counts
        if len(by_dim) < len(dimensions):
            partial += 1
        out.append(Comparison(left, right, float(np.mean(list(by_dim.values()))), min(v.created for v in vs)))
    out.sort(key=lambda c: c.time)
    return out, partial


# ---------------------------------------------------------------------------------------------- fitting
@dataclass
class RatingResult:
    """Ratings of one dimension (or overall): value and interval per model, for ELO and BT."""

    dimension: str
    models: list[str]
    n: int
    elo: dict[str, float]
    bt: dict[str, float]
    elo_ci: dict[str, tuple[float, float]] = field(default_factory=dict)
    bt_ci: dict[str, tuple[float, float]] = field(default_factory=dict)
    n_votes: dict[str, int] = field(default_factory=dict)
    partial: int = 0


def _percentiles(boot: np.ndarray, level: float) -> np.ndarray:
    a = (1.0 - level) / 2.0
    return np.quantile(boot, [a, 1.0 - a], axis=0)


def fit_ratings(comparisons: Sequence[Comparison], models: Sequence[str], dimension: str, *, n_boot: int = 1000,
                level: float = 0.95, seed: int = 0, alpha: float = BT_ALPHA) -> RatingResult:
    """ELO (in the given order) and BT over ``comparisons``, each with a percentile bootstrap interval."""
    models = list(models)
    comps = list(comparisons)
    n_votes = {m: sum(1 for c in comps if m in (c.a, c.b)) for m in models}
    bt = bradley_terry(win_matrix(comps, models), alpha=alpha)
    res = RatingResult(dimension, models, len(comps), elo(comps, models),
                       {m: float(v) for m, v in zip(models, bt, strict=True)}, n_votes=n_votes)
    if n_boot < 1 or len(comps) < 2:
        return res
    boot_elo = np.empty((n_boot, len(models)))
    boot_bt = np.empty((n_boot, len(models)))
    for b, ix in enumerate(resample_indices(len(comps), n_boot, seed)):
        drawn = [comps[i] for i in ix]  # random order too
        e = elo(drawn, models)
        boot_elo[b] = [e[m] for m in models]
        boot_bt[b] = bradley_terry(win_matrix(drawn, models), alpha=alpha)
    for arr, target in ((boot_elo, res.elo_ci), (boot_bt, res.bt_ci)):
        lo, hi = _percentiles(arr, level)
        target.update({m: (float(lo[i]), float(hi[i])) for i, m in enumerate(models)})
    return res


def ci_rank(values: dict[str, float], ci: dict[str, tuple[float, float]]) -> dict[str, int]:
    """Chatbot Arena's rank: 1 + the number of models whose lower bound lies above this one's upper bound
    (without intervals: 1 + the number of strictly higher values)."""
    out = {}
    for m, v in values.items():
        hi = ci.get(m, (v, v))[1]
        out[m] = 1 + sum(1 for o in values if o != m and ci.get(o, (values[o],) * 2)[0] > hi)
    return out


def rate_votes(votes: Sequence[PairVote], *, dimensions: Sequence[str] | None = None, n_boot: int = 1000,
               level: float = 0.95, seed: int = 0, alpha: float = BT_ALPHA) -> dict[str, RatingResult]:
    """One :class:`RatingResult` per dimension, plus ``overall`` (PAI's averaged preference) when the
    votes cover more than one dimension or ``overall`` is all there is."""
    dims = list(dimensions) if dimensions else dimensions_of(votes)
    models = sorted({m for v in votes if v.verdict is not None and v.dimension in dims
                     for m in (v.left_model, v.right_model)})
    out: dict[str, RatingResult] = {}
    for i, d in enumerate(dims):
        out[d] = fit_ratings(dimension_comparisons(votes, d), models, d, n_boot=n_boot, level=level,
                             seed=seed + i, alpha=alpha)
    overall, partial = overall_comparisons(votes, dims)
    out[OVERALL] = fit_ratings(overall, models, OVERALL, n_boot=n_boot, level=level, seed=seed + len(dims),
                               alpha=alpha)
    out[OVERALL].partial = partial
    return out


# ---------------------------------------------------------------------------------------------- tables
def ratings_long(results: dict[str, RatingResult]) -> pd.DataFrame:
    """One row per (dimension, model, method) with the value, interval, rank and number of votes."""
    rows = []
    for dim, r in results.items():
        for method, vals, ci in (("elo", r.elo, r.elo_ci), ("bt", r.bt, r.bt_ci)):
            ranks = ci_rank(vals, ci)
            for m in r.models:
                lo, hi = ci.get(m, (float("nan"), float("nan")))
                rows.append({"dimension": dim, "model": m, "method": method, "rating": vals[m], "ci_low": lo,
                             "ci_high": hi, "rank": ranks[m], "n_votes": r.n_votes.get(m, 0), "n": r.n})
    return pd.DataFrame(rows, columns=["dimension", "model", "method", "rating", "ci_low", "ci_high", "rank",
                                       "n_votes", "n"])


def auto_model_scores(scores: pd.DataFrame, scorer: str | None = None, metric: str | None = None
                      ) -> tuple[pd.Series, str]:
    """Per model: mean ``normalized`` of the run's ok scores of one (scorer, metric) — by default the pair
    with the most ok scores. Returns the series and the ``scorer:metric`` label."""
    ok = scores[(scores["status"] == "ok") & scores["normalized"].notna()] if len(scores) else scores
    if ok is None or ok.empty:
        return pd.Series(dtype=float), ""
    if scorer is None or metric is None:
        sel = ok if scorer is None else ok[ok["scorer"] == scorer]
        sel = sel if metric is None else sel[sel["metric"] == metric]
        if sel.empty:
            return pd.Series(dtype=float), f"{scorer or '*'}:{metric or '*'}"
        scorer, metric = sel.groupby(["scorer", "metric"]).size().sort_values(ascending=False).index[0]
    sel = ok[(ok["scorer"] == scorer) & (ok["metric"] == metric)]
    return sel.groupby("model")["normalized"].mean().astype(float), f"{scorer}:{metric}"


def table8(results: dict[str, RatingResult], auto: pd.Series | None = None) -> pd.DataFrame:
    """PAI-Bench Table 8 layout: a row per model; ELO overall and per dimension; BT overall with its interval
    and rank; the automatic score (mean normalised, ×100) and its rank."""
    overall = results[OVERALL]
    dims = [d for d in results if d != OVERALL]
    bt_rank = ci_rank(overall.bt, overall.bt_ci)
    auto = auto if auto is not None else pd.Series(dtype=float)
    auto_rank = auto.rank(ascending=False, method="min") if len(auto) else auto
    rows = []
    for m in overall.models:
        row = {"model": m, "elo_overall": overall.elo[m]}
        row.update({f"elo_{d}": results[d].elo[m] for d in dims})
        lo, hi = overall.bt_ci.get(m, (float("nan"), float("nan")))
        row.update({"bt_overall": overall.bt[m], "bt_ci_low": lo, "bt_ci_high": hi, "rank": bt_rank[m],
                    "auto_score": float(auto[m]) * 100.0 if m in auto.index else float("nan"),
                    "auto_rank": float(auto_rank[m]) if m in auto.index else float("nan"),
                    "n_votes": overall.n_votes.get(m, 0)})
        rows.append(row)
    df = pd.DataFrame(rows)
    return df.sort_values("elo_overall", ascending=False, kind="stable").reset_index(drop=True) if len(df) else df


PAI_ELO_COLUMNS = {OVERALL: "ELO Overall", "physics": "ELO Domain", "quality": "ELO Quality"}
"""PAI-Bench Table 8's ELO half: the study's physical-plausibility tracker is its *Domain* column, video quality
its *Quality* column, the averaged-preference rating its *Overall* (appendix A.4)."""


def pai_elo_half(votes: Sequence[PairVote], *, dimensions: Sequence[str] = ("quality", "physics")) -> pd.DataFrame:
    """model, ELO Overall, ELO Domain, ELO Quality (and ``elo_votes``) from the pairwise votes on the PAI
    dimensions, as :func:`rate_votes` computes them (no bootstrap); empty when there is no such vote."""
    cols = ["model", *PAI_ELO_COLUMNS.values(), "elo_votes"]
    given = [v for v in votes if v.verdict is not None and v.dimension in dimensions]
    if not given:
        return pd.DataFrame(columns=cols)
    res = rate_votes(given, dimensions=[d for d in dimensions if any(v.dimension == d for v in given)], n_boot=0)
    overall = res[OVERALL]
    rows = [{"model": m, **{name: (res[d].elo[m] if d in res else float("nan")) for d, name in PAI_ELO_COLUMNS.items()},
             "elo_votes": overall.n_votes.get(m, 0)} for m in overall.models]
    return pd.DataFrame(rows, columns=cols)


def rank_correlations(results: dict[str, RatingResult], auto: pd.Series) -> pd.DataFrame:
    """Spearman ρ and Kendall τ-b (scipy) across models between each human rating and the automatic score."""
    from scipy import stats

    rows = []
    for dim, r in results.items():
        for method, vals in (("elo", r.elo), ("bt", r.bt)):
            common = [m for m in r.models if m in auto.index]
            x = np.array([vals[m] for m in common])
            y = auto.loc[common].to_numpy(dtype=float)
            rho = tau = p_rho = p_tau = float("nan")
            if len(common) >= 3 and np.ptp(x) > 0 and np.ptp(y) > 0:
                rho, p_rho = (float(v) for v in stats.spearmanr(x, y))
                tau, p_tau = (float(v) for v in stats.kendalltau(x, y))
            rows.append({"dimension": dim, "method": method, "spearman": rho, "spearman_p": p_rho,
                         "kendall": tau, "kendall_p": p_tau, "n_models": len(common)})
    return pd.DataFrame(rows, columns=["dimension", "method", "spearman", "spearman_p", "kendall", "kendall_p",
                                       "n_models"])
