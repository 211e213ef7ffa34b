"""Agreement of the automatic scores with people, and of people with each other, per protocol metric.

Human labels (:class:`~vreason.human.records.RubricLabel`) are joined with the run's scores through
:data:`~vreason.human.agreement_links.METRIC_LINKS` on (sample, model, seed[, item]). An *item* is one key;
its human value is the **mean of its annotators' labels** (RISE-Video §4.1: "the average of their ratings for
each sample"). Over the items the judge scored:

* ``mae`` / ``std`` — mean and (population) standard deviation of the absolute errors ``|judge − human|`` on
  the paper's native scale (RISE-Video Table 3: "the STD denotes the standard deviation of these absolute
  errors"); ``mae_norm`` the MAE on [0, 1];
* ``acc`` — exact match on the label scale (RULER-Bench Table 3 ACC): per item the share of its annotators
  whose label equals the judge's (with one annotator per item: RULER's ACC); only for discrete scales;
* ``kendall`` (τ-b), ``spearman`` (ρ), ``pearson`` (r) between judge and human values (RULER Table 3 KRCC,
  SRCC, PLCC; scipy.stats);
* each with a percentile bootstrap interval over items (``*_lo``/``*_hi``) and ``n`` items.

Labels whose key the judge left ``unscored`` or ``error`` are counted in ``judge_unscored`` / ``judge_error``
and labels with no score at all in ``no_judge`` — never dropped silently, never counted as 0; skipped labels
in ``skipped``.

Humans vs humans (items with ≥ 2 annotators): Krippendorff's α (the ``krippendorff`` package; ordinal on a
discrete scale, interval otherwise; any number of annotators, missing labels allowed); Cohen's κ when the
metric has exactly 2 annotators, Fleiss' κ when it has ≥ 3 (over the items rated by the largest number of
annotators, as Fleiss' κ needs a constant number per item); ``pair_agree`` = share of agreeing annotator
pairs; each with a bootstrap interval over items.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from vreason.aggregate.bootstrap import resample_indices
from vreason.core.records import Score
from vreason.human.agreement_links import METRIC_LINKS, JudgeCell, Key, MetricLink, judge_cells
from vreason.human.records import RubricLabel

JUDGE_STATS = ("mae", "std", "mae_norm", "acc", "kendall", "spearman", "pearson")
HUMAN_STATS = ("alpha", "cohen_kappa", "fleiss_kappa", "pair_agree")


# ---------------------------------------------------------------------------------------------- statistics
def cohen_kappa(a: Sequence[float], b: Sequence[float]) -> float:
    """Cohen's κ of two raters (nominal): ``(p_o − p_e) / (1 − p_e)``."""
    a, b = np.asarray(a), np.asarray(b)
    if a.size == 0:
        return float("nan")
    cats = np.union1d(a, b)
    p_o = float(np.mean(a == b))
    p_e = float(sum(np.mean(a == c) * np.mean(b == c) for c in cats))
    return float("nan") if p_e == 1.0 else (p_o - p_e) / (1.0 - p_e)


def fleiss_kappa(counts: np.ndarray) -> float:
    """Fleiss' κ from an items × categories table of rating counts (the same number of raters per item)."""
    counts = np.asarray(counts, dtype=float)
    if counts.size == 0:
        return float("nan")
    n = counts.sum(axis=1)
    if np.any(n != n[0]) or n[0] < 2:
        raise ValueError("Fleiss' kappa needs the same number (>= 2) of ratings per item")
    p_j = counts.sum(axis=0) / counts.sum()
    p_i = (np.sum(counts**2, axis=1) - n) / (n * (n - 1))
    p_bar, p_e = float(p_i.mean()), float(np.sum(p_j**2))
    return float("nan") if p_e == 1.0 else (p_bar - p_e) / (1.0 - p_e)


def krippendorff_alpha(matrix: np.ndarray, level: str) -> float:
    """Krippendorff's α (package ``krippendorff``) of an annotators × items matrix with NaN for missing."""
    import krippendorff

    m = np.asarray(matrix, dtype=float)
    if m.shape[1] < 1 or np.sum(~np.isnan(m)) < 2 or np.unique(m[~np.isnan(m)]).size < 2:
        return float("nan")
    try:
        return float(krippendorff.alpha(reliability_data=m, level_of_measurement=level))
    except (ValueError, ZeroDivisionError):
        return float("nan")


def _corr(fn: Callable, x: np.ndarray, y: np.ndarray) -> float:
    if x.size < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    return float(fn(x, y)[0])


def _bootstrap(stat: Callable[[np.ndarray], dict[str, float]], n: int, names: Sequence[str], *, n_boot: int,
               seed: int, level: float) -> dict[str, tuple[float, float]]:
    """Percentile intervals of every statistic in ``stat(indices)`` over ``n_boot`` resamples of the items
    (rounds where a statistic is undefined, e.g. a constant resample for a correlation, are left out)."""
    nan = (float("nan"), float("nan"))
    if n < 2 or n_boot < 1:
        return {k: nan for k in names}
    draws = {k: [] for k in names}
    for ix in resample_indices(n, n_boot, seed):
        got = stat(ix)
        for k in names:
            draws[k].append(got[k])
    a = (1.0 - level) / 2.0
    out = {}
    for k, vals in draws.items():
        arr = np.asarray(vals, dtype=float)
        arr = arr[~np.isnan(arr)]
        out[k] = nan if arr.size < max(2, n_boot // 2) else tuple(float(q) for q in np.quantile(arr, [a, 1 - a]))
    return out


def _with_ci(point: dict[str, float], ci: dict[str, tuple[float, float]]) -> dict[str, float]:
    row: dict[str, float] = {}
    for k, v in point.items():
        row[k] = v
        row[f"{k}_lo"], row[f"{k}_hi"] = ci[k]
    return row


# ---------------------------------------------------------------------------------------------- judge vs humans
def _snap(v: float, levels: tuple[float, ...]) -> float:
    return min(levels, key=lambda lv: abs(lv - v))


def judge_vs_human_stats(judge: np.ndarray, human: np.ndarray, judge_norm: np.ndarray, human_norm: np.ndarray,
                         item_acc: np.ndarray | None) -> dict[str, float]:
    """The statistics of one set of items (arrays aligned by item; ``item_acc`` per-item exact-match share)."""
    from scipy import stats

    err = np.abs(judge - human)
    nan = float("nan")
    return {
        "mae": float(err.mean()) if err.size else nan,
        "std": float(err.std()) if err.size else nan,
        "mae_norm": float(np.abs(judge_norm - human_norm).mean()) if err.size else nan,
        "acc": float(item_acc.mean()) if item_acc is not None and item_acc.size else nan,
        "kendall": _corr(stats.kendalltau, judge, human),
        "spearman": _corr(stats.spearmanr, judge, human),
        "pearson": _corr(stats.pearsonr, judge, human),
    }


def _label_key(link: MetricLink, lab: RubricLabel) -> Key:
    return (lab.sample_id, lab.model, lab.seed, lab.item if link.per_item else "")


def _human_values(link: MetricLink, labels: Sequence[RubricLabel]) -> dict[Key, dict[str, tuple[float, float]]]:
    """Per key: annotator → (native, normalized). An annotator's repeated label on one item: the latest counts;
    on a per-video link, an annotator's labels on several items of the video are averaged (RISE RA: the
    share of yes answers)."""
    latest: dict[tuple[Key, str, str], tuple[float, float]] = {}
    for lab in sorted(labels, key=lambda x: x.created):
        if lab.skipped or lab.value is None:
            continue
        native = link.native(lab.value, lab.normalized)
        latest[(_label_key(link, lab), lab.annotator, lab.item)] = (native, link.normalized(lab.value, lab.normalized))
    grouped: dict[Key, dict[str, list[tuple[float, float]]]] = {}
    for (key, who, _), v in latest.items():
        grouped.setdefault(key, {}).setdefault(who, []).append(v)
    return {k: {w: (float(np.mean([v[0] for v in vs])), float(np.mean([v[1] for v in vs]))) for w, vs in by.items()}
            for k, by in grouped.items()}


def judge_agreement(link: MetricLink, labels: Sequence[RubricLabel], scores: Sequence[Score], *, n_boot: int = 1000,
                    seed: int = 0, level: float = 0.95) -> dict[str, object]:
    """One row of the judge-vs-human table for ``link``."""
    humans = _human_values(link, labels)
    cells, video_fail = judge_cells(link, scores)
    counts = {"judge_unscored": 0, "judge_error": 0, "no_judge": 0}
    keys: list[Key] = []
    for key, by_person in humans.items():
        cell: JudgeCell | None = cells.get(key) or video_fail.get((*key[:3], ""))
        if cell is None:
            counts["no_judge"] += len(by_person)
        elif cell.status != "ok":
            counts["judge_error" if cell.status == "error" else "judge_unscored"] += len(by_person)
        else:
            keys.append(key)
    keys.sort()
    j = np.array([cells[k].native for k in keys], dtype=float)
    jn = np.array([cells[k].norm for k in keys], dtype=float)
    h = np.array([np.mean([v[0] for v in humans[k].values()]) for k in keys], dtype=float)
    hn = np.array([np.mean([v[1] for v in humans[k].values()]) for k in keys], dtype=float)
    acc = None
    if link.levels:
        acc = np.array([np.mean([_snap(v[0], link.levels) == _snap(cells[k].native, link.levels)
                                 for v in humans[k].values()]) for k in keys], dtype=float)

    def stat(idx: np.ndarray) -> dict[str, float]:
        return judge_vs_human_stats(j[idx], h[idx], jn[idx], hn[idx], None if acc is None else acc[idx])

    point = stat(np.arange(len(keys)))
    ci = _bootstrap(stat, len(keys), JUDGE_STATS, n_boot=n_boot, seed=seed, level=level)
    judges = sorted({cells[k].judge for k in keys} | {c.judge for c in video_fail.values()})
    return {"metric": link.label_metric, "judge": ", ".join(j_ for j_ in judges if j_), "scale": _scale(link),
            "n": len(keys), **_with_ci(point, ci), "n_labels": sum(len(humans[k]) for k in keys),
            "annotators": len({a for k in humans for a in humans[k]}), **counts,
            "skipped": sum(1 for lab in labels if lab.skipped), "paper": link.paper}


def _scale(link: MetricLink) -> str:
    kind = "levels " + "/".join(f"{v:g}" for v in link.levels) if link.levels else "continuous"
    return f"{link.lo:g}–{link.hi:g} ({kind})"


# ---------------------------------------------------------------------------------------------- humans vs humans
def human_agreement(metric: str, labels: Sequence[RubricLabel], link: MetricLink | None, *, n_boot: int = 1000,
                    seed: int = 0, level: float = 0.95) -> dict[str, object]:
    """One row of the human-vs-human table: items with at least two annotators."""
    link = link or _fallback_link(metric, labels)
    humans = {k: v for k, v in _human_values(link, labels).items() if len(v) >= 2}
    keys = sorted(humans)
    people = sorted({a for k in keys for a in humans[k]})
    mat = np.full((len(people), len(keys)), np.nan)
    for c, k in enumerate(keys):
        for a, (native, _) in humans[k].items():
            mat[people.index(a), c] = _snap(native, link.levels) if link.levels else native
    level_kind = "ordinal" if link.levels else "interval"
    levels = list(link.levels or ())
    max_k = int(np.max(np.sum(~np.isnan(mat), axis=0))) if keys else 0

    def stat(idx: np.ndarray) -> dict[str, float]:
        sub = mat[:, idx]
        out = {k: float("nan") for k in HUMAN_STATS}
        if sub.shape[1] == 0:
            return out
        out["alpha"] = krippendorff_alpha(sub, level_kind)
        if levels:
            pairs = [np.mean([x == y for i, x in enumerate(col) for y in col[i + 1:]])
                     for col in (c[~np.isnan(c)] for c in sub.T)]
            out["pair_agree"] = float(np.mean(pairs))
            if len(people) == 2:
                both = ~np.isnan(sub).any(axis=0)
                out["cohen_kappa"] = cohen_kappa(sub[0, both], sub[1, both]) if both.any() else float("nan")
            elif len(people) >= 3 and max_k >= 3:
                full = sub[:, np.sum(~np.isnan(sub), axis=0) == max_k]
                table = np.array([[np.sum(col == lv) for lv in levels] for col in full.T])
                out["fleiss_kappa"] = fleiss_kappa(table) if len(table) else float("nan")
        return out

    point = stat(np.arange(len(keys)))
    ci = _bootstrap(stat, len(keys), HUMAN_STATS, n_boot=n_boot, seed=seed, level=level)
    return {"metric": metric, "scale": _scale(link), "n": len(keys), "annotators": len(people),
            "level": level_kind, **_with_ci(point, ci),
            "labels_single": sum(1 for v in _human_values(link, labels).values() if len(v) == 1)}


def _fallback_link(metric: str, labels: Sequence[RubricLabel]) -> MetricLink:
    """A metric with no mapping: its labels' own values (discrete when they take few distinct values)."""
    vals = sorted({float(lab.value) for lab in labels if lab.value is not None})
    lo, hi = (vals[0], vals[-1]) if vals else (0.0, 1.0)
    return MetricLink(metric, (), "", lo, hi if hi > lo else lo + 1.0, tuple(vals) if 1 < len(vals) <= 11 else None,
                      "value", "no judge metric mapped", from_normalized=False)


# ---------------------------------------------------------------------------------------------- tables
def agreement_tables(labels: Sequence[RubricLabel], scores: Sequence[Score], *, metrics: Sequence[str] | None = None,
                     n_boot: int = 1000, seed: int = 0, level: float = 0.95) -> dict[str, pd.DataFrame]:
    """``judge_vs_human`` (one row per mapped metric with labels) and ``human_vs_human`` (every metric)."""
    by_metric: dict[str, list[RubricLabel]] = {}
    for lab in labels:
        by_metric.setdefault(lab.metric, []).append(lab)
    wanted = [m for m in by_metric if not metrics or m in metrics]
    judge_rows, human_rows = [], []
    for i, m in enumerate(sorted(wanted)):
        link = METRIC_LINKS.get(m)
        if link is not None:
            judge_rows.append(judge_agreement(link, by_metric[m], scores, n_boot=n_boot, seed=seed + i, level=level))
        human_rows.append(human_agreement(m, by_metric[m], link, n_boot=n_boot, seed=seed + i, level=level))
    return {"judge_vs_human": pd.DataFrame(judge_rows), "human_vs_human": pd.DataFrame(human_rows),
            "unmapped": pd.DataFrame({"metric": [m for m in sorted(wanted) if m not in METRIC_LINKS]})}
