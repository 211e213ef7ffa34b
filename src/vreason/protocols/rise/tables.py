"""RISE-Video's Tables 1 and 2 as numbers in the paper's layout, and what the report declares about them.

:func:`~vreason.protocols.rise.aggregate.table1` / ``table2`` build the paper's Markdown cells
(``"36.67 [0.00, 60.00]"``); the tables a run returns (the Python API, the report's CSV files) hold the same
numbers as numbers: each value with its ``low`` / ``high`` columns, the report renders them as one cell by
the declared format. With ``rounding="released"`` (the default) the value is the released aggregation's
(each metric's mean rounded to 2 decimals, W.Score the weighted sum of those), as in the Markdown.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from vreason.aggregate.tables import declare_format
from vreason.protocols.rise.aggregate import LOGICAL_WEIGHTS, WEIGHTS
from vreason.protocols.rise.data import CATEGORY_NAMES, CATEGORY_ORDER

T1_COLUMNS = ("RA", "TC", "PR", "VQ", "W.Score", "Accuracy")


def _r2(x: Any) -> float:
    return float("nan") if x is None or pd.isna(x) else round(float(x), 2)


def table1_layout(display: pd.DataFrame, numeric: pd.DataFrame, rounding: str = "released",
                  units: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per model: each of RA, TC, PR, VQ, W.Score, Accuracy with ``<col> low`` / ``<col> high``, then the
    counts: ``Samples`` = samples with a scored metric (from ``units``, the unit table; else all samples),
    ``Samples not scored``, ``Unscored/error``, ``Acc. excluded``."""
    rows = []
    shown = display.set_index("Model") if len(display) else display
    scored: dict[str, tuple[int, int]] = {}
    if units is not None and len(units):
        ok = (units[[f"{m}_status" for m in ("ra", "tc", "pr", "vq")]] == "ok").any(axis=1)
        for model, part in units.assign(_ok=ok).groupby("model"):
            yes = part.loc[part["_ok"], "sample_id"].nunique()
            scored[model] = (int(yes), int(part["sample_id"].nunique() - yes))
    for r in numeric.to_dict("records"):
        row: dict[str, Any] = {"Model": r["model"]}
        for col in T1_COLUMNS:
            value = r[col]
            if rounding == "released":
                value = r["W.Score_released"] if col == "W.Score" else _r2(value)
            row[col], row[f"{col} low"], row[f"{col} high"] = value, r[f"{col}_lo"], r[f"{col}_hi"]
        for col in ("Samples", "Unscored/error", "Acc. excluded"):
            row[col] = shown.loc[r["model"], col] if col in shown.columns else None
        if r["model"] in scored:
            row["Samples"] = scored[r["model"]][0]
            row = {**{k: v for k, v in row.items() if k not in ("Unscored/error", "Acc. excluded")},
                   "Samples not scored": scored[r["model"]][1], "Unscored/error": row["Unscored/error"],
                   "Acc. excluded": row["Acc. excluded"]}
        rows.append(row)
    return pd.DataFrame(rows)


def table2_layout(numeric: pd.DataFrame, rounding: str = "released",
                  categories: Sequence[str] = CATEGORY_ORDER) -> pd.DataFrame:
    """Per model: ``<Category> WS`` and ``<Category> Acc.`` with their low / high columns (NaN where the
    model has no sample of the category), then ``Units with unscored/error``."""
    rows = []
    for model, part in numeric.groupby("model", sort=True):
        row: dict[str, Any] = {"Model": model}
        by_cat = part.set_index("category")
        for cat in categories:
            name = CATEGORY_NAMES.get(cat, cat)
            have = cat in by_cat.index
            r = by_cat.loc[cat] if have else None
            for short, key, rel in (("WS", "WS", "WS_released"), ("Acc.", "Acc", None)):
                col = f"{name} {short}"
                if r is None:
                    row[col] = row[f"{col} low"] = row[f"{col} high"] = np.nan
                    continue
                value = r[key] if rounding != "released" else (r[rel] if rel else _r2(r[key]))
                row[col], row[f"{col} low"], row[f"{col} high"] = value, r[f"{key}_lo"], r[f"{key}_hi"]
        row["Units with unscored/error"] = int(part["n_unscored_units"].sum())
        rows.append(row)
    return pd.DataFrame(rows)


def declare(summary: dict[str, Any], t1: pd.DataFrame, t2: pd.DataFrame) -> dict[str, Any]:
    """Formats (x100 scores with the paper's 2 decimals, intervals beside values), the metrics' scales (the
    judge's TC / PR on 1–5 and VQ on 1–3 have no pass threshold; RA has: every question right) and the
    grid's headline metric, the unit's W.Score."""
    for name, frame in (("rise_table1", t1), ("rise_table2", t2)):
        values = [c for c in frame.columns if f"{c} low" in frame.columns]
        declare_format(summary, name, digits={c: 2 for c in values},
                       intervals={c: (f"{c} low", f"{c} high") for c in values})
    summary.setdefault("table_notes", {}).update({
        "rise_table1": "scores x100: RA as is, TC and PR (s - 1)/4 on 1-5, VQ (s - 1)/2 on 1-3; W.Score = 0.4 RA + "
                       "0.25 TC + 0.25 PR + 0.1 VQ; Accuracy = % of samples with all four at full marks; v [lo, hi] = "
                       "95% bootstrap interval over samples; Samples = samples with a scored metric",
        "rise_table2": "per category: W.Score (logical: 0.5 RA + 0.3 TC + 0.2 VQ) and Accuracy, x100; v [lo, hi] = "
                       "95% bootstrap interval over samples",
    })
    summary["metric_scales"] = {
        "ra": {"kind": "unit", "low": 0, "high": 1, "digits": 2, "pass": True},
        "tc": {"kind": "likert", "low": 1, "high": 5, "digits": 0, "pass": False},
        "pr": {"kind": "likert", "low": 1, "high": 5, "digits": 0, "pass": False},
        "vq": {"kind": "likert", "low": 1, "high": 3, "digits": 0, "pass": False},
    }
    summary["grid_metric"] = {
        "label": "W.Score", "weights": dict(WEIGHTS), "weights_by_category": {"logical": dict(LOGICAL_WEIGHTS)},
        "scale": 100.0, "digits": 2, "pass_all": ["ra", "tc", "pr", "vq"],
        "note": "the unit's 0.4 RA + 0.25 TC + 0.25 PR + 0.1 VQ (logical: 0.5 RA + 0.3 TC + 0.2 VQ) on "
                "normalised scores x100, as in rise_table1; none when one of them is not scored; ✓ = all four at "
                "full marks (PR full for logical), as Accuracy counts",
    }
    return summary
