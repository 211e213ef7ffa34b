"""Category-stratified bootstrap for category-macro averages.

Several seed protocols report an "overall" number that is the unweighted mean over categories
of per-category means over instances (RULER-Bench's Average rows, MME-CoF-Pro's Average
rows). Its bootstrap resamples instances *within* each category, recomputes every category
mean, then the macro mean, so each replicate keeps the category structure of the estimate.
"""

from __future__ import annotations

import numpy as np


def category_replicates(
    groups: dict[str, np.ndarray], *, n_boot: int, seed: int
) -> dict[str, np.ndarray]:
    """Per category, ``n_boot`` bootstrap replicates of the column means of its (n × k) matrix.

    NaNs are ignored per column (``nanmean``); a replicate whose drawn rows are all NaN in a
    column is NaN there. Returns ``{category: (n_boot × k) array}``.
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
        with np.errstate(invalid="ignore"), _quiet():
            out[cat] = np.nanmean(drawn, axis=1)
    return out


def percentile_ci(reps: np.ndarray, level: float) -> tuple[float, float]:
    """Percentile interval of a replicate vector (NaN replicates dropped)."""
    r = np.asarray(reps, dtype=float)
    r = r[~np.isnan(r)]
    if r.size == 0:
        return float("nan"), float("nan")
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(r, [alpha, 1.0 - alpha])
    return float(lo), float(hi)


class _quiet:
    """Silence numpy's 'Mean of empty slice' warnings inside a block."""

    def __enter__(self):
        import warnings

        self._cm = warnings.catch_warnings()
        self._cm.__enter__()
        warnings.simplefilter("ignore", category=RuntimeWarning)
        return self

    def __exit__(self, *exc):
        return self._cm.__exit__(*exc)
