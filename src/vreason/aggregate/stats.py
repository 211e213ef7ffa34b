"""Statistics shared by every protocol: unbiased Pass@k, win rates (and, re-exported, the bootstrap
intervals and paired deltas of :mod:`vreason.aggregate.bootstrap`, where every resampling lives).

NaN values are *excluded* (callers count them as unscored/error); they are never treated as 0.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from vreason.aggregate.bootstrap import bootstrap_ci, paired_delta_ci  # re-exported (old import path)

__all__ = ["bootstrap_ci", "mean_pass_at_k", "paired_delta_ci", "pass_at_k", "pass_at_k_per_sample", "win_rate"]


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
