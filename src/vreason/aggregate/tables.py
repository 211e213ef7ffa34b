"""Summary tables with bootstrap intervals over a run's score table (one row per Score).

Only rows with ``status == "ok"`` enter a mean; ``unscored`` and ``error`` rows are counted in their
own columns and never folded in as zeros.

Tables stay numeric (a value, its low and high in their own columns); how they print is *declared* by
the protocol in ``summary["table_formats"]`` (see :func:`declare_format`): the decimals of each column
(or of each row by the metric it holds) and which low/high columns render beside a value as
``"v [lo, hi]"``. Only the rendered Markdown / HTML / terminal tables are text.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from vreason.aggregate.bootstrap import bootstrap_ci

SUMMARY_COLUMNS = ["mean", "ci_low", "ci_high", "n", "n_unscored", "n_error"]


def as_float(col: pd.Series) -> pd.Series:
    """Numbers or booleans (with None/NaN for missing) as a float column."""
    obj = col.astype(object).where(col.notna(), np.nan)
    return pd.to_numeric(obj, errors="coerce").astype(float)


def status_of(df: pd.DataFrame) -> pd.Series:
    if "status" not in df.columns:
        return pd.Series("ok", index=df.index)
    return df["status"].map(lambda s: getattr(s, "value", s)).astype(str)


def group_positions(df: pd.DataFrame, keys: list[str]) -> list[tuple[tuple[Any, ...], np.ndarray]]:
    """``(key tuple, row positions)`` per group of ``keys``, sorted by key; ``keys=[]`` → one group."""
    if not keys:
        return [((), np.arange(len(df)))]
    if df.empty:
        return []
    gb = df.groupby(keys, sort=True, dropna=False)
    codes = gb.ngroup().to_numpy()
    names = list(gb.size().index)
    order = np.argsort(codes, kind="stable")
    bounds = np.cumsum(np.bincount(codes, minlength=len(names)))[:-1]
    return [(n if isinstance(n, tuple) else (n,), p) for n, p in zip(names, np.split(order, bounds),
                                                                       strict=True)]


def summarize(
    df: pd.DataFrame,
    by: str | Sequence[str],
    value: str = "normalized",
    *,
    scale: float = 1.0,
    n_boot: int = 1000,
    seed: int = 0,
    clusters: str | None = None,
    level: float = 0.95,
) -> pd.DataFrame:
    """One row per group of ``by``: ``mean, ci_low, ci_high`` (× ``scale``) over the ok rows with a
    value, ``n`` = those rows, ``n_unscored`` / ``n_error`` = rows with that status.

    ``clusters`` names a column (e.g. ``"sample_id"``) whose groups are resampled whole, so the
    seeds of one sample stay together. ``by=[]`` gives one overall row.
    """
    keys = [by] if isinstance(by, str) else list(by)
    status = status_of(df).to_numpy()
    vals = (as_float(df[value]) if value in df.columns else pd.Series(np.nan, index=df.index)).to_numpy()
    cl_all = df[clusters].to_numpy() if clusters is not None else None
    rows = []
    for key, pos in group_positions(df, keys):
        st, v = status[pos], vals[pos]
        use = (st == "ok") & ~np.isnan(v)
        cl = cl_all[pos][use] if cl_all is not None else None
        est, lo, hi = bootstrap_ci(v[use], n_boot=n_boot, level=level, seed=seed, clusters=cl)
        rows.append({
            **dict(zip(keys, key, strict=True)),
            "mean": est * scale, "ci_low": lo * scale, "ci_high": hi * scale,
            "n": int(use.sum()),
            "n_unscored": int((st == "unscored").sum()),
            "n_error": int((st == "error").sum()),
        })
    return pd.DataFrame(rows, columns=keys + SUMMARY_COLUMNS)


DIGITS = {"unit": 4, "percent": 2, "likert": 2, "count": 0}
"""Natural decimals by a metric's scale: a value in [0, 1] (SSIM, IoU, F1) keeps 4, a percentage or a
1–5 judge scale keeps 2, a count none."""


def declare_format(summary: dict[str, Any], table: str, *, digits: dict[str, Any] | None = None,
                   intervals: dict[str, Sequence[str]] | None = None,
                   deltas: dict[str, str] | None = None, notes: dict[str, str] | None = None) -> dict[str, Any]:
    """Declare how ``table`` prints (stored in ``summary["table_formats"][table]``, JSON-able).

    ``digits``: column → decimals (an int), or ``{"by": <key column>, "values": {key: decimals},
    "default": decimals}`` when a long table holds several metrics in one column (each row printed with
    its metric's precision). ``intervals``: value column → ``(low column, high column)``, rendered as one
    ``"v [lo, hi]"`` cell (the numeric columns stay in the CSV and the Python API). Undeclared float
    columns print with :func:`default_digits`. ``deltas``: value column → the column of its paired change,
    rendered ``"v(+d)"`` (MME-CoF-Pro's paper cells). ``notes``: value column → a text column shown in the
    same cell, ``"v [lo, hi] (note)"`` when the note is not empty (e.g. which dimensions a score averages).
    Returns ``summary``."""
    spec = summary.setdefault("table_formats", {}).setdefault(table, {})
    if digits:
        spec.setdefault("digits", {}).update(digits)
    if intervals:
        spec.setdefault("intervals", {}).update({k: list(v) for k, v in intervals.items()})
    if deltas:
        spec.setdefault("deltas", {}).update(deltas)
    if notes:
        spec.setdefault("notes", {}).update(notes)
    return summary


def default_digits(values: Sequence[Any]) -> int:
    """Decimals for a float column nothing declared, decided for the whole column (never per value): whole
    numbers (counts) 0; a column within [-1, 1] 4 (a metric in [0, 1]); anything else 2."""
    arr = pd.to_numeric(pd.Series(list(values), dtype=object), errors="coerce").to_numpy(dtype=float)
    arr = arr[np.isfinite(arr)]
    if arr.size == 0:
        return 2
    if np.all(arr == np.round(arr)):
        return 0
    return DIGITS["unit"] if np.all(np.abs(arr) <= 1.0) else DIGITS["percent"]


def shorten(text: str, width: int = 160) -> str:
    """``text`` cut to at most ``width`` characters at a word boundary, ending in ``…`` when cut."""
    text = str(text)
    if len(text) <= width:
        return text
    cut = text[: width - 1]
    space = max(cut.rfind(" "), cut.rfind("\n"))
    if space >= width // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:.-\n") + "…"


def _isnan(x: Any) -> bool:
    try:
        return x is None or math.isnan(float(x))
    except (TypeError, ValueError):
        return False


def format_ci(mean: float, lo: float, hi: float, digits: int = 1) -> str:
    """``"71.2 [68.0, 74.1]"``; ``"–"`` when there is no estimate, the bare mean when no interval."""
    if _isnan(mean):
        return "–"
    if _isnan(lo) or _isnan(hi):
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}]"


def pivot_ci(
    summary: pd.DataFrame,
    index: str | Sequence[str],
    columns: str | Sequence[str],
    *,
    digits: int = 1,
    mean: str = "mean",
    lo: str = "ci_low",
    hi: str = "ci_high",
) -> pd.DataFrame:
    """A paper-layout table of ``"mean [lo, hi]"`` strings (missing cells are ``""``).

    The index becomes ordinary columns, so the table prints and saves as-is.
    """
    cell = [format_ci(m, a, b, digits) for m, a, b in
            zip(summary[mean], summary[lo], summary[hi], strict=True)]
    frame = summary.assign(_cell=cell)
    wide = frame.pivot_table(index=index, columns=columns, values="_cell", aggfunc="first", sort=False)
    wide = wide.fillna("")
    if isinstance(wide.columns, pd.MultiIndex):
        wide.columns = [" / ".join(str(c) for c in col) for col in wide.columns]
    wide.columns.name = None
    return wide.reset_index()


def failures_table(df: pd.DataFrame, by: Sequence[str] = ("status", "scorer", "reason")) -> pd.DataFrame:
    """Counts of non-ok rows grouped by ``by`` (columns that exist), most frequent first."""
    status = status_of(df)
    bad = df.assign(status=status)[status != "ok"]
    keys = [k for k in by if k in bad.columns]
    if bad.empty or not keys:
        return pd.DataFrame(columns=keys + ["count"])
    out = bad.fillna({k: "" for k in keys}).groupby(keys, sort=False).size().reset_index(name="count")
    return out.sort_values(["count"] + keys, ascending=[False] + [True] * len(keys), kind="stable")\
        .reset_index(drop=True)


def status_counts(df: pd.DataFrame) -> dict[str, Any]:
    """Counts for a report header: samples, units (sample × model × seed), rows by status."""
    out: dict[str, Any] = {"rows": int(len(df))}
    if "sample_id" in df.columns:
        out["samples"] = int(df["sample_id"].nunique())
    unit = [c for c in ("sample_id", "model", "seed") if c in df.columns]
    if unit:
        out["units"] = int(df[unit].drop_duplicates().shape[0])
    if "model" in df.columns:
        out["models"] = sorted(str(m) for m in df["model"].dropna().unique())
    out["by_status"] = {str(k): int(v) for k, v in status_of(df).value_counts().sort_index().items()}
    return out


def reason_kind(reason: Any) -> str:
    """The kind of a failure reason: its text before the first ``": "`` (``"video missing: no video for
    s003 …"`` → ``"video missing"``), so reasons that differ only by sample or path group together."""
    text = "" if reason is None or (isinstance(reason, float) and math.isnan(reason)) else str(reason)
    head = text.split(": ", 1)[0].strip() if ": " in text else text.strip()
    return shorten(head or "?", 100)


def errors_by_reason(units: pd.DataFrame) -> pd.DataFrame:
    """Failed units grouped by the kind of their reason: count, status, scorers, models and one example
    (its full text: the rendered tables shorten it at a word boundary and keep the whole in a tooltip)."""
    cols = ["reason", "count", "status", "scorers", "models", "example"]
    if units.empty:
        return pd.DataFrame(columns=cols)
    reasons = units["reason"] if "reason" in units.columns else [None] * len(units)
    frame = units.assign(status=status_of(units), kind=[reason_kind(r) for r in reasons])
    frame = frame[frame["status"] != "ok"]
    rows = []
    for (kind, status), grp in frame.groupby(["kind", "status"], sort=False):
        first = grp.iloc[0]
        where = "/".join(str(first[c]) for c in ("sample_id", "model", "seed", "scorer") if c in grp.columns)
        rows.append({
            "reason": kind, "count": int(len(grp)), "status": status,
            "scorers": ", ".join(sorted({str(x) for x in grp["scorer"]})) if "scorer" in grp.columns else "",
            "models": ", ".join(sorted({str(x) for x in grp["model"]})) if "model" in grp.columns else "",
            "example": f"{where}: {first.get('reason', '')}",
        })
    out = pd.DataFrame(rows, columns=cols)
    return out.sort_values(["count", "reason"], ascending=[False, True], kind="stable").reset_index(drop=True)
