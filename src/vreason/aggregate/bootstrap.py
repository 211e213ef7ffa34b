"""The one bootstrap module: every interval vreason reports is resampled here.

Variants (all percentile intervals, deterministic for a given ``seed``; ``n_boot`` = resamples):

* :func:`bootstrap_ci` — plain (values resampled with replacement) or clustered (``clusters``: whole
  clusters resampled, e.g. all seeds of one sample together), any statistic.
* :func:`paired_delta_ci` — mean of paired differences, pairs resampled.
* :func:`stratified_replicates` — resampling *within* strata (e.g. categories) for stratified
  estimates such as a category-macro average; :func:`percentile_ci` turns replicates into an interval.
* :func:`resample_indices` — the index draws of a plain bootstrap, one array per round, for statistics
  over several aligned arrays (PAI-G's joint Domain/Quality/Overall, agreement statistics, ratings).

Conventions: NaN values are *excluded* (callers count them as unscored/error), never treated as 0.
Each variant keeps the exact draw order it had when it lived at its call site, so tables are
byte-identical across the move (``tests/test_bootstrap_one.py`` pins them). ``scipy.stats.bootstrap``
was compared and does not reproduce them: its percentile path differs in the last bits for some levels.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import pandas as pd

_CHUNK_CELLS = 4_000_000  # max resample cells materialised at once (bounds memory)


def _quantiles(boot: np.ndarray, level: float) -> tuple[float, float]:
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(boot, [alpha, 1.0 - alpha])
    return float(lo), float(hi)


def _apply_stat(stat: Callable[..., Any], mat: np.ndarray) -> np.ndarray:
    """``stat`` over each row of ``mat``; uses ``axis=1`` when the callable supports it."""
    try:
        out = np.asarray(stat(mat, axis=1), dtype=float)
        if out.shape == (mat.shape[0],):
            return out
    except TypeError:
        pass
    return np.array([float(stat(row)) for row in mat])


def _chunks(n_boot: int, width: int) -> list[int]:
    per = max(1, _CHUNK_CELLS // max(1, width))
    sizes = [per] * (n_boot // per)
    if n_boot % per:
        sizes.append(n_boot % per)
    return sizes


def bootstrap_ci(
    values: Sequence[float] | np.ndarray | pd.Series,
    *,
    stat: Callable[..., Any] = np.mean,
    n_boot: int = 2000,
    level: float = 0.95,
    seed: int = 0,
    clusters: Sequence[Any] | np.ndarray | pd.Series | None = None,
) -> tuple[float, float, float]:
    """Percentile bootstrap: ``(estimate, ci_low, ci_high)`` of ``stat`` over ``values``.

    NaNs are dropped first (with their cluster labels). ``n == 0`` → ``(nan, nan, nan)``;
    ``n == 1`` → ``(v, v, v)``. With ``clusters`` (one label per value) whole clusters are resampled
    with replacement and the statistic is computed over all rows of the drawn clusters; for the
    default ``np.mean`` this is the pooled mean, computed without materialising the rows.
    """
    arr = np.asarray(values, dtype=float).ravel()
    keep = ~np.isnan(arr)
    arr = arr[keep]
    n = arr.size
    if n == 0:
        return (float("nan"),) * 3
    est = float(stat(arr))
    if n == 1:
        v = float(arr[0])
        return (v, v, v)
    if n_boot < 1:
        raise ValueError(f"n_boot must be >= 1, got {n_boot}")
    rng = np.random.default_rng(seed)

    if clusters is None:
        parts = []
        for size in _chunks(n_boot, n):
            idx = rng.integers(0, n, size=(size, n))
            parts.append(arr[idx].mean(axis=1) if stat is np.mean else _apply_stat(stat, arr[idx]))
        return (est, *_quantiles(np.concatenate(parts), level))

    labels = np.asarray(clusters, dtype=object).ravel()
    if labels.size != keep.size:
        raise ValueError(f"clusters has {labels.size} labels for {keep.size} values")
    codes, _ = pd.factorize(pd.Series(labels[keep]), use_na_sentinel=False)
    g = int(codes.max()) + 1
    if stat is np.mean:
        sums = np.bincount(codes, weights=arr, minlength=g)
        sizes = np.bincount(codes, minlength=g).astype(float)
        parts = []
        for size in _chunks(n_boot, g):
            idx = rng.integers(0, g, size=(size, g))
            parts.append(sums[idx].sum(axis=1) / sizes[idx].sum(axis=1))
        return (est, *_quantiles(np.concatenate(parts), level))
    members = [arr[codes == c] for c in range(g)]
    boot = np.empty(n_boot)
    for b in range(n_boot):  # generic statistic over clusters: rows differ in length, so loop
        drawn = rng.integers(0, g, size=g)
        boot[b] = float(stat(np.concatenate([members[c] for c in drawn])))
    return (est, *_quantiles(boot, level))


def paired_delta_ci(
    a: Sequence[float] | np.ndarray | pd.Series,
    b: Sequence[float] | np.ndarray | pd.Series,
    *,
    n_boot: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> tuple[float, float, float]:
    """Mean of paired differences ``a − b`` with a bootstrap CI over pairs.

    Pairs where either side is NaN are dropped.
    """
    x = np.asarray(a, dtype=float).ravel()
    y = np.asarray(b, dtype=float).ravel()
    if x.shape != y.shape:
        raise ValueError(f"paired_delta_ci needs equal lengths (got {x.size} and {y.size})")
    d = x - y
    return bootstrap_ci(d[~np.isnan(d)], n_boot=n_boot, level=level, seed=seed)


def stratified_replicates(
    groups: dict[str, np.ndarray], *, n_boot: int, seed: int
) -> dict[str, np.ndarray]:
    """Per stratum, ``n_boot`` bootstrap replicates of the column means of its (n × k) matrix.

    Rows are resampled *within* each stratum (strata in sorted order, one generator for all), so a
    statistic combining strata (e.g. the unweighted mean over categories) keeps the strata of its
    estimate. NaNs are ignored per column (``nanmean``); a replicate whose drawn rows are all NaN in
    a column is NaN there. Returns ``{stratum: (n_boot × k) array}``.
    """
    rng = np.random.default_rng(seed)
    out: dict[str, np.ndarray] = {}
    for cat in sorted(groups):
        mat = np.asarray(groups[cat], dtype=float)
        if mat.ndim == 1:
            mat = mat[:, None]
        n = mat.shape[0]
        if n == 0:
            out[cat] = np.full((n_boot, mat.shape[1]), np.nan)
            continue
        idx = rng.integers(0, n, size=(n_boot, n))
        drawn = mat[idx]  # n_boot × n × k
        with np.errstate(invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", category=RuntimeWarning)  # 'Mean of empty slice'
            out[cat] = np.nanmean(drawn, axis=1)
    return out


def percentile_ci(reps: np.ndarray, level: float) -> tuple[float, float]:
    """Percentile interval of a replicate vector (NaN replicates dropped; none left → NaN, NaN)."""
    r = np.asarray(reps, dtype=float)
    r = r[~np.isnan(r)]
    if r.size == 0:
        return float("nan"), float("nan")
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(r, [alpha, 1.0 - alpha])
    return float(lo), float(hi)


def resample_indices(n: int, n_boot: int, seed: int) -> Iterator[np.ndarray]:
    """``n_boot`` rounds of a plain bootstrap over ``n`` units: each round the ``n`` drawn indices
    (with replacement, in draw order), one draw per round from one generator seeded ``seed``."""
    rng = np.random.default_rng(seed)
    for _ in range(n_boot):
        yield rng.integers(0, n, size=n)


__all__ = ["bootstrap_ci", "paired_delta_ci", "percentile_ci", "resample_indices", "stratified_replicates"]
