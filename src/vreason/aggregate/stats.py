"""Statistics shared by every protocol: bootstrap intervals, unbiased Pass@k, paired deltas, win rates.

Conventions:

* NaN values are *excluded* (callers count them as unscored/error); they are never treated as 0.
* Intervals are percentile bootstrap intervals, deterministic for a given ``seed``.
* ``clusters`` resamples whole clusters (e.g. all seeds of one sample together), so the interval
  reflects the number of independent samples, not the number of rows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
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


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased Pass@k for one item with ``n`` attempts of which ``c`` passed: ``1 − C(n−c,k)/C(n,k)``.

    Computed as ``1 − Π_{i=n−c+1..n} (1 − k/i)`` (numerically stable); ``1.0`` when ``n − c < k``.
    """
    n, c, k = int(n), int(c), int(k)
    if n < 1 or not 0 <= c <= n:
        raise ValueError(f"pass_at_k needs n >= 1 and 0 <= c <= n (got n={n}, c={c})")
    if not 1 <= k <= n:
        raise ValueError(f"pass_at_k needs 1 <= k <= n (got k={k}, n={n})")
    if n - c < k:
        return 1.0
    return float(1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))


def _passed_as_float(col: pd.Series) -> pd.Series:
    """A pass column (bool / 0-1 / None) as floats with NaN for missing."""
    return pd.to_numeric(col.astype(object).where(col.notna(), np.nan), errors="coerce").astype(float)


def pass_at_k_per_sample(
    df: pd.DataFrame, k: int, sample_col: str = "sample_id", pass_col: str = "passed"
) -> pd.DataFrame:
    """Per sample: ``n`` attempts with a pass verdict, ``c`` passes and ``pass_at_k``
    (NaN when ``n < k``; rows whose verdict is missing are not attempts)."""
    passed = _passed_as_float(df[pass_col])
    frame = pd.DataFrame({"sample": df[sample_col].to_numpy(), "p": passed.to_numpy()}).dropna()
    if ((frame["p"] != 0) & (frame["p"] != 1)).any():
        raise ValueError(f"column {pass_col!r} must hold booleans (0/1)")
    grouped = frame.groupby("sample", sort=True)["p"].agg(["size", "sum"])
    out = pd.DataFrame({
        sample_col: grouped.index.to_numpy(),
        "n": grouped["size"].astype(int).to_numpy(),
        "c": grouped["sum"].astype(int).to_numpy(),
    })
    out["pass_at_k"] = [pass_at_k(n, c, k) if n >= k else float("nan")
                        for n, c in zip(out["n"], out["c"], strict=True)]
    return out


def mean_pass_at_k(
    df: pd.DataFrame,
    k: int,
    sample_col: str = "sample_id",
    pass_col: str = "passed",
    *,
    short: str = "raise",
) -> float:
    """Pass@k per sample over its seeds, averaged over samples.

    Samples with fewer than ``k`` scored attempts: ``short="raise"`` raises a ``ValueError`` naming
    them; ``short="skip"`` leaves them out (see :func:`pass_at_k_per_sample` to count them).
    Returns NaN when no sample qualifies.
    """
    if short not in ("raise", "skip"):
        raise ValueError(f"short must be 'raise' or 'skip', got {short!r}")
    per = pass_at_k_per_sample(df, k, sample_col, pass_col)
    few = per[per["n"] < k]
    if len(few) and short == "raise":
        names = ", ".join(f"{s} (n={n})" for s, n in zip(few[sample_col][:10], few["n"][:10], strict=True))
        more = f" and {len(few) - 10} more" if len(few) > 10 else ""
        raise ValueError(f"Pass@{k} needs >= {k} scored seeds per sample; too few for: {names}{more}")
    vals = per["pass_at_k"].dropna()
    return float(vals.mean()) if len(vals) else float("nan")


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


def win_rate(
    df: pd.DataFrame, model_col: str, unit_cols: str | Sequence[str], value_col: str
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Pairwise win rates of models compared on the same units (higher value wins).

    A *unit* is one combination of ``unit_cols`` (e.g. sample and seed). For every ordered pair of
    models (A, B) and every unit where both have a non-NaN value (several rows of one model on
    one unit are averaged first), A scores 1 if its value is higher, 0.5 on a tie, 0 otherwise.

    Returns ``(per_model, matrix)``:

    * ``matrix.loc[A, B]`` = A's score summed over the units shared with B / the number of those
      units (NaN on the diagonal or when they share no unit); ``matrix + matrix.T == 1``.
    * ``per_model`` has columns ``model_col, wins, comparisons, win_rate``: wins summed over all
      opponents and shared units (ties half) divided by the number of those comparisons.
    """
    units = [unit_cols] if isinstance(unit_cols, str) else list(unit_cols)
    vals = pd.to_numeric(df[value_col], errors="coerce")
    frame = df[units + [model_col]].assign(_v=vals).dropna(subset=["_v"])
    wide = frame.pivot_table(index=units, columns=model_col, values="_v", aggfunc="mean")
    models = list(wide.columns)
    mat = wide.to_numpy(dtype=float)
    m = len(models)
    wins = np.full((m, m), np.nan)
    counts = np.zeros((m, m), dtype=int)
    for i in range(m):
        for j in range(m):
            if i == j:
                continue
            both = ~np.isnan(mat[:, i]) & ~np.isnan(mat[:, j])
            counts[i, j] = int(both.sum())
            if counts[i, j]:
                vi, vj = mat[both, i], mat[both, j]
                wins[i, j] = float((vi > vj).sum() + 0.5 * (vi == vj).sum())
    with np.errstate(invalid="ignore", divide="ignore"):
        rates = np.where(counts > 0, wins / np.maximum(counts, 1), np.nan)
    matrix = pd.DataFrame(rates, index=pd.Index(models, name=model_col), columns=models)
    total_w = np.nansum(wins, axis=1)
    total_c = counts.sum(axis=1)
    per_model = pd.DataFrame({
        model_col: models,
        "wins": total_w,
        "comparisons": total_c,
        "win_rate": np.where(total_c > 0, total_w / np.maximum(total_c, 1), np.nan),
    })
    return per_model, matrix
