"""RISE-Video aggregation: normalisations, Weighted Score, Accuracy, Tables 1 and 2 with CIs.

* Each metric's ``normalized`` value (RA as is; TC, PR (s − 1)/4; VQ (s − 1)/2) × 100, averaged
  over the samples where it is ``ok``. Unscored / error rows are counted and shown, never 0.
* W.Score = 0.4 RA + 0.25 TC + 0.25 PR + 0.1 VQ over the set's means, PR averaged over the
  non-logical samples; a logical-only group (Table 2's Logical column) uses 0.5 RA + 0.3 TC + 0.2 VQ.
* Accuracy = % of samples with RA = 1, TC = 5, PR = 5 (logical: counted full), VQ = 3. A sample
  with a failed metric fails; one whose verdict hangs on an unscored/error metric is left out of
  the denominator and counted in ``acc_excluded``.
* 95 % percentile bootstrap intervals, resampling samples (all seeds of a sample together).
* Paper tables (``rounding="released"``, the default): as the released ``cal_score/relax.py``,
  each metric's mean is rounded to two decimals first and W.Score is the weighted sum of those
  rounded means, rounded to two decimals (it can differ by 0.01 from the full-precision value).
  ``rounding="none"`` shows full-precision means. The ``*_numeric`` CSVs always keep full
  precision and carry the released value beside it (``W.Score_released``, ``WS_released``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from vreason.protocols.rise.data import CATEGORY_NAMES, CATEGORY_ORDER

METRICS = ("ra", "tc", "pr", "vq")
LABELS = {"ra": "RA", "tc": "TC", "pr": "PR", "vq": "VQ"}
WEIGHTS = {"ra": 0.4, "tc": 0.25, "pr": 0.25, "vq": 0.1}
LOGICAL_WEIGHTS = {"ra": 0.5, "tc": 0.3, "vq": 0.2}


def _status(col: pd.Series) -> pd.Series:
    return col.map(lambda s: getattr(s, "value", s)).astype(str)


def unit_table(scores: pd.DataFrame, categories: dict[str, str] | None = None) -> pd.DataFrame:
    """One row per (model, sample_id, seed): each metric's normalised value × 100 (NaN unless ok),
    its status (``ok`` / ``unscored`` / ``error`` / ``absent``), its reason, and ``logical``."""
    df = scores[scores["metric"].isin(METRICS)].copy()
    if "benchmark" in df.columns:
        df = df[df["benchmark"].isna() | (df["benchmark"].astype(str).isin(["rise", "nan", "None"]))]
    if "seed" not in df.columns:
        df["seed"] = 0
    df["_status"] = _status(df["status"]) if "status" in df.columns else "ok"
    df["_v"] = pd.to_numeric(df["normalized"], errors="coerce") * 100.0
    df.loc[df["_status"] != "ok", "_v"] = np.nan
    keys = ["model", "sample_id", "seed"]
    units = df[keys].drop_duplicates().sort_values(keys).reset_index(drop=True)
    for m in METRICS:
        part = df[df["metric"] == m].drop_duplicates(keys, keep="last").set_index(keys)
        idx = pd.MultiIndex.from_frame(units[keys])
        units[m] = part["_v"].reindex(idx).to_numpy(dtype=float)
        units[f"{m}_status"] = part["_status"].reindex(idx).fillna("absent").to_numpy()
        reason = part["reason"] if "reason" in part.columns else pd.Series(None, index=part.index)
        units[f"{m}_reason"] = reason.reindex(idx).to_numpy()
    cat = categories or {}
    if "category" in df.columns:
        from_rows = df.drop_duplicates("sample_id").set_index("sample_id")["category"].to_dict()
        cat = {**from_rows, **cat}
    units["category"] = units["sample_id"].map(lambda s: cat.get(s) or "")
    units["logical"] = units["category"] == "logical"
    units["passed"] = [_passed(r) for r in units.to_dict("records")]
    return units


def _full(row: dict[str, Any], m: str) -> bool | None:
    if row[f"{m}_status"] != "ok" or pd.isna(row[m]):
        return None
    return bool(row[m] >= 100.0 - 1e-9)


def _passed(row: dict[str, Any]) -> bool | None:
    """All four at full marks (PR counted full for logical); None when it hinges on a missing metric."""
    comps = [_full(row, "ra"), _full(row, "tc"), True if row["logical"] else _full(row, "pr"), _full(row, "vq")]
    if any(c is False for c in comps):
        return False
    if all(c is True for c in comps):
        return True
    return None


def weighted_score(block: np.ndarray, logical: np.ndarray, *, logical_group: bool) -> float:
    """W.Score from a (n, 4) block of RA, TC, PR, VQ values (× 100, NaN = not ok)."""
    with np.errstate(all="ignore"):
        if logical_group:
            means = {m: np.nanmean(block[:, i]) if np.any(~np.isnan(block[:, i])) else np.nan
                     for i, m in enumerate(METRICS)}
            return float(sum(w * means[m] for m, w in LOGICAL_WEIGHTS.items()))
        out = 0.0
        for i, m in enumerate(METRICS):
            col = block[:, i][~logical] if m == "pr" else block[:, i]
            col = col[~np.isnan(col)]
            if col.size == 0:
                return float("nan")
            out += WEIGHTS[m] * float(col.mean())
        return out


def _ci(values: np.ndarray, clusters: np.ndarray, n_boot: int, seed: int) -> tuple[float, float, float]:
    from vreason.aggregate.bootstrap import bootstrap_ci

    keep = ~np.isnan(values)
    if not keep.any():
        return (float("nan"),) * 3
    return bootstrap_ci(values[keep], n_boot=n_boot, seed=seed, clusters=clusters[keep])


def summarize_group(units: pd.DataFrame, *, logical_group: bool, n_boot: int = 1000, seed: int = 0) -> dict:
    """Means with CIs of RA/TC/PR/VQ, W.Score and Accuracy for one group of units, plus counts."""
    from vreason.aggregate.bootstrap import bootstrap_ci

    out: dict[str, Any] = {"n_samples": int(units["sample_id"].nunique()), "n_units": len(units)}
    clusters = units["sample_id"].to_numpy()
    block = units[list(METRICS)].to_numpy(dtype=float)
    logical = units["logical"].to_numpy(dtype=bool)
    for i, m in enumerate(METRICS):
        vals = block[:, i].copy()
        if m == "pr":
            vals[logical] = np.nan
        est, lo, hi = _ci(vals, clusters, n_boot, seed)
        st = units[f"{m}_status"]
        out[LABELS[m]] = (est, lo, hi)
        out[f"{LABELS[m]}_n"] = int((~np.isnan(vals)).sum())
        out[f"{LABELS[m]}_unscored"] = int((st == "unscored").sum())
        out[f"{LABELS[m]}_error"] = int((st == "error").sum())
    # units with no usable metric at all (e.g. a missing video) carry nothing into any mean: leave
    # them out of the W.Score resampling so a resample of only such units cannot void the interval
    some = ~np.all(np.isnan(block), axis=1)
    wblock, wlogical, wclusters = block[some], logical[some], clusters[some]
    if len(wblock) == 1:  # bootstrap_ci returns the single *value* (an index here) for n == 1
        w = weighted_score(wblock, wlogical, logical_group=logical_group)
        out["W.Score"] = (w, w, w)
    elif len(wblock):
        idx = np.arange(len(wblock), dtype=float)

        def stat(ix: np.ndarray) -> float:
            ii = ix.astype(int)
            return weighted_score(wblock[ii], wlogical[ii], logical_group=logical_group)

        out["W.Score"] = bootstrap_ci(idx, stat=stat, n_boot=n_boot, seed=seed, clusters=wclusters)
    else:
        out["W.Score"] = (float("nan"),) * 3
    passed = units["passed"].map(lambda p: np.nan if p is None else float(p)).to_numpy(dtype=float) * 100.0
    out["Accuracy"] = _ci(passed, clusters, n_boot, seed)
    out["acc_n"] = int((~np.isnan(passed)).sum())
    out["acc_excluded"] = int(np.isnan(passed).sum())
    non_ok = units[[f"{m}_status" for m in METRICS]].isin(["unscored", "error"]).any(axis=1)
    out["n_unscored_units"] = int(non_ok.sum())
    return out


def _fmt(t: tuple[float, float, float], digits: int) -> str:
    from vreason.aggregate.tables import format_ci

    return format_ci(*t, digits=digits)


ROUNDINGS = ("released", "none")


def _round2(x: float) -> float:
    return float("nan") if x is None or np.isnan(x) else round(float(x), 2)


def released_scores(s: dict[str, Any], *, logical_group: bool) -> dict[str, float]:
    """The released aggregation's numbers for a group: each metric mean rounded to 2 decimals,
    then W.Score = the weighted sum of the rounded means, rounded to 2 decimals."""
    out = {LABELS[m]: _round2(s[LABELS[m]][0]) for m in METRICS}
    weights = LOGICAL_WEIGHTS if logical_group else WEIGHTS
    vals = [w * out[LABELS[m]] for m, w in weights.items()]
    out["W.Score"] = _round2(sum(vals)) if not any(np.isnan(v) for v in vals) else float("nan")
    out["Accuracy"] = _round2(s["Accuracy"][0])
    return out


def _shown(s: dict[str, Any], col: str, released: dict[str, float] | None) -> tuple[float, float, float]:
    est, lo, hi = s[col]
    return (released[col], lo, hi) if released is not None else (est, lo, hi)


def _check_rounding(rounding: str) -> None:
    if rounding not in ROUNDINGS:
        raise ValueError(f"rounding must be one of {ROUNDINGS}, got {rounding!r}")


def table1(units: pd.DataFrame, *, n_boot: int = 1000, seed: int = 0, digits: int = 2, rounding: str = "released"):
    """Per model: RA, TC, PR, VQ, W.Score, Accuracy (display and numeric frames)."""
    _check_rounding(rounding)
    disp, num = [], []
    for model, part in units.groupby("model", sort=True):
        s = summarize_group(part, logical_group=False, n_boot=n_boot, seed=seed)
        rel = released_scores(s, logical_group=False)
        d: dict[str, Any] = {"Model": model}
        n: dict[str, Any] = {"model": model}
        for col in ("RA", "TC", "PR", "VQ", "W.Score", "Accuracy"):
            d[col] = _fmt(_shown(s, col, rel if rounding == "released" else None), digits)
            n[col], n[f"{col}_lo"], n[f"{col}_hi"] = s[col]
        n["W.Score_released"] = rel["W.Score"]
        unsc = {k: s[f"{k}_unscored"] + s[f"{k}_error"] for k in ("RA", "TC", "PR", "VQ")}
        d["Samples"] = s["n_samples"]
        d["Unscored/error"] = ", ".join(f"{k} {v}" for k, v in unsc.items() if v) or "0"
        d["Acc. excluded"] = s["acc_excluded"]
        n.update(n_samples=s["n_samples"], acc_n=s["acc_n"], acc_excluded=s["acc_excluded"],
                 n_unscored_units=s["n_unscored_units"])
        for k in ("RA", "TC", "PR", "VQ"):
            n[f"{k}_n"], n[f"{k}_unscored"], n[f"{k}_error"] = s[f"{k}_n"], s[f"{k}_unscored"], s[f"{k}_error"]
        disp.append(d)
        num.append(n)
    return pd.DataFrame(disp), pd.DataFrame(num)


def table2(units: pd.DataFrame, *, n_boot: int = 1000, seed: int = 0, digits: int = 2,
           categories: Sequence[str] = CATEGORY_ORDER, rounding: str = "released"):
    """Per model × category: W.Score and Accuracy (display: one row per model; numeric: long)."""
    _check_rounding(rounding)
    disp, num = [], []
    for model, part in units.groupby("model", sort=True):
        d: dict[str, Any] = {"Model": model}
        unscored = 0
        for cat in categories:
            sub = part[part["category"] == cat]
            name = CATEGORY_NAMES.get(cat, cat)
            if sub.empty:
                d[f"{name} WS"] = d[f"{name} Acc."] = "–"
                continue
            s = summarize_group(sub, logical_group=cat == "logical", n_boot=n_boot, seed=seed)
            rel = released_scores(s, logical_group=cat == "logical")
            shown = rel if rounding == "released" else None
            d[f"{name} WS"] = _fmt(_shown(s, "W.Score", shown), digits)
            d[f"{name} Acc."] = _fmt(_shown(s, "Accuracy", shown), digits)
            unscored += s["n_unscored_units"]
            num.append({"model": model, "category": cat, "name": name,
                        "WS": s["W.Score"][0], "WS_lo": s["W.Score"][1], "WS_hi": s["W.Score"][2],
                        "WS_released": rel["W.Score"],
                        "Acc": s["Accuracy"][0], "Acc_lo": s["Accuracy"][1], "Acc_hi": s["Accuracy"][2],
                        "n_samples": s["n_samples"], "acc_n": s["acc_n"], "acc_excluded": s["acc_excluded"],
                        "n_unscored_units": s["n_unscored_units"]})
        d["Units with unscored/error"] = unscored
        disp.append(d)
    return pd.DataFrame(disp), pd.DataFrame(num)


def _evidence(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str) and raw:
        try:
            return json.loads(raw)
        except json.JSONDecodeError:
            return {}
    return {}


def sample_records(scores: pd.DataFrame, units: pd.DataFrame) -> list[dict[str, Any]]:
    """Per (model, sample, seed): the four values, statuses, reasons, pass and the judge replies."""
    df = scores[scores["metric"].isin(METRICS)]
    by_key: dict[tuple, dict[str, Any]] = {}
    for row in df.to_dict("records"):
        key = (row["model"], row["sample_id"], row.get("seed", 0))
        ev = _evidence(row.get("evidence"))
        judge = ev.get("judge") or None
        entry = {"value": None if pd.isna(row.get("value")) else row.get("value"),
                 "normalized": None if pd.isna(row.get("normalized")) else row.get("normalized"),
                 "status": str(getattr(row.get("status"), "value", row.get("status"))),
                 "reason": row.get("reason") if isinstance(row.get("reason"), str) else None,
                 "scorer": row.get("scorer"), "frame_policy": ev.get("frame_policy"),
                 "frame_indices": ev.get("frame_indices"), "judge": judge,
                 "details": ev.get("details") or {}}
        by_key.setdefault(key, {})[row["metric"]] = entry
    out = []
    for u in units.to_dict("records"):
        key = (u["model"], u["sample_id"], u["seed"])
        out.append({"model": u["model"], "sample_id": u["sample_id"], "seed": int(u["seed"]),
                    "category": u["category"], "passed": u["passed"],
                    "metrics": by_key.get(key, {})})
    return out


def write_tables(out_dir: str, tables: dict[str, pd.DataFrame], records: list[dict[str, Any]],
                 header: str = "", markdown: dict[str, pd.DataFrame] | None = None) -> dict[str, str]:
    """Write each table as Markdown (``header`` lines first; ``markdown[name]`` when given: the paper's
    ``"v [lo, hi]"`` cells of a numeric table) and CSV and the per-sample records as JSONL; returns the
    paths."""
    os.makedirs(out_dir, exist_ok=True)
    paths: dict[str, str] = {}
    for name, frame in tables.items():
        csv = os.path.join(out_dir, f"{name}.csv")
        frame.to_csv(csv, index=False)
        paths[f"{name}.csv"] = csv
        if not name.endswith("_numeric"):
            md = os.path.join(out_dir, f"{name}.md")
            with open(md, "w", encoding="utf-8") as fh:
                if header:
                    fh.write(header.rstrip("\n") + "\n\n")
                shown = (markdown or {}).get(name, frame)
                fh.write(shown.to_markdown(index=False) if len(shown) else "(no rows)")
                fh.write("\n")
            paths[f"{name}.md"] = md
    jl = os.path.join(out_dir, "rise_samples.jsonl")
    with open(jl, "w", encoding="utf-8") as fh:
        for rec in records:
            fh.write(json.dumps(rec, default=_json_default) + "\n")
    paths["rise_samples.jsonl"] = jl
    return paths


def _json_default(o: Any) -> Any:
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)
