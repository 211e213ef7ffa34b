"""RULER-Bench aggregation: the paper's Table 2, the T2V/I2V split, Table A4, win rates, CIs.

Follows the released ``cal_acc.py`` (official-code.md §3.4):

* per instance and metric: mean over the metric's questions of Good/Medium/Poor → 2/1/0, × 50
  (the scorer's value); with ``missing_metric="zero"`` (released behaviour) a judged instance
  with no question for one of its category's metrics counts 0 there, with ``"skip"`` it is
  left out of that metric;
* several seeds of one (model, instance) are averaged first;
* instance Avg = mean over its category's metrics (IF, VC, VF, RC; vision rule has no IF);
* category × metric (and category Avg) = mean over instances;
* overall per metric = the unweighted mean over categories (IF over the non-vision ones);
  overall Avg = mean of the four overall metrics;
* unscored/error instances are left out (the released script saves nothing for them) and
  counted in the summary.

Extras, defined here: T2V vs I2V (and V2V) = means over the instances of each mode; Table A4 =
the instance Avg per task. CIs: percentile bootstrap over instances, stratified by category for
category-macro numbers.

Win rate: the paper shows a "Win Rate" row under Table 2 without defining it, and the released
code has none. Its ten values average 0.240. Every definition here compares models on the
(instance, metric) pairs that all compared models scored:

* ``pairwise_strict`` (default): against every other model, 1 for a higher score, 0 for a tie or
  a lower one, summed over opponents and pairs / the number of comparisons. The mean over models
  is (1 − tie share) / 2, so the many ties of a 3-level checklist bring it to the paper's ~0.24;
* ``best_share``: the share of pairs on which the model has the highest score, every tied model
  counted as best. The mean over models is (models tied at the top) / (models), also ≪ 0.5;
* ``pairwise_half``: as ``pairwise_strict`` with ties counted ½. The mean over models is always
  exactly 0.5, so it cannot reproduce the published row (0.240 on average); kept for reference.

A reader who takes "win rate" as the usual head-to-head rate and finds it averaging 0.24 gets
``pairwise_strict``; all three are in ``ruler_win_rate``, and Table 2 names the one it shows.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from vreason.aggregate.bootstrap import percentile_ci, stratified_replicates
from vreason.core.protocol import AggregateResult
from vreason.core.records import Sample
from vreason.protocols.ruler.data import CATEGORIES, metrics_for

CODES = ("IF", "VC", "VF", "RC")
COLS = (*CODES, "Avg")


def _sample_info(scores: pd.DataFrame, samples: list[Sample]) -> pd.DataFrame:
    info = pd.DataFrame([{"sample_id": s.id, "category": s.category, "task": s.task, "mode": s.mode.value}
                         for s in samples], columns=["sample_id", "category", "task", "mode"])
    if info.empty and {"category", "task", "mode"} <= set(scores.columns):
        info = scores[["sample_id", "category", "task", "mode"]].drop_duplicates("sample_id")
    return info.drop_duplicates("sample_id").set_index("sample_id")


def instance_table(scores: pd.DataFrame, samples: list[Sample], *, missing_metric: str = "zero") -> pd.DataFrame:
    """One row per (model, sample): category, task, mode, IF, VC, VF, RC, Avg (0–100, NaN where a
    metric does not apply or, with ``skip``, has no question), n_seeds."""
    if missing_metric not in ("zero", "skip"):
        raise ValueError(f"missing_metric must be 'zero' or 'skip', got {missing_metric!r}")
    df = scores
    if "scorer" in df.columns:
        df = df[df["scorer"] == "ruler_checklist"]
    ok = df[(df["status"] == "ok") & df["metric"].isin(CODES)].copy()
    cols = ["model", "sample_id", "category", "task", "mode", *COLS, "n_seeds"]
    if ok.empty:
        return pd.DataFrame(columns=cols)
    ok["value"] = pd.to_numeric(ok["value"], errors="coerce")
    if "seed" not in ok.columns:
        ok["seed"] = 0
    wide = ok.pivot_table(index=["model", "sample_id", "seed"], columns="metric", values="value", aggfunc="mean")
    wide = wide.reindex(columns=list(CODES))
    info = _sample_info(scores, samples)
    cats = info["category"].reindex(wide.index.get_level_values("sample_id")).fillna("").to_numpy()
    vals = np.array(wide.to_numpy(dtype=float), copy=True)
    for r, cat in enumerate(cats):
        expected = metrics_for(str(cat))
        for j, code in enumerate(CODES):
            if code not in expected:
                vals[r, j] = np.nan
            elif missing_metric == "zero" and np.isnan(vals[r, j]):
                vals[r, j] = 0.0
    wide = pd.DataFrame(vals, index=wide.index, columns=list(CODES))
    inst = wide.groupby(level=["model", "sample_id"]).mean()
    inst["n_seeds"] = wide.groupby(level=["model", "sample_id"]).size()
    with np.errstate(invalid="ignore"):
        inst["Avg"] = inst[list(CODES)].mean(axis=1, skipna=True)
    inst = inst.reset_index()
    inst = inst.join(info, on="sample_id")
    return inst[cols]


def _cat_order(cats) -> list[str]:
    known = [c for c in CATEGORIES if c in set(cats)]
    return known + sorted(set(cats) - set(known))


def category_means(inst: pd.DataFrame) -> pd.DataFrame:
    """Long table: model, category, metric (IF..RC, Avg), value, n (instances)."""
    rows = []
    for (model, cat), g in inst.groupby(["model", "category"], sort=False):
        for m in (*metrics_for(cat), "Avg"):
            v = g[m].dropna()
            rows.append({"model": model, "category": cat, "metric": m,
                         "value": float(v.mean()) if len(v) else np.nan, "n": int(len(v))})
    return pd.DataFrame(rows, columns=["model", "category", "metric", "value", "n"])


def overall_means(cat: pd.DataFrame) -> pd.DataFrame:
    """Long table: model, metric, value — unweighted means over categories; Avg = mean of the four."""
    rows = []
    for model, g in cat.groupby("model", sort=False):
        per = {m: g.loc[g["metric"] == m, "value"].dropna() for m in CODES}
        vals = {m: float(v.mean()) if len(v) else np.nan for m, v in per.items()}
        present = [vals[m] for m in CODES if not np.isnan(vals[m])]
        # the mean of the four overall metrics (of those present, e.g. vision-rule-only data has no IF)
        vals["Avg"] = float(np.mean(present)) if present else np.nan
        rows += [{"model": model, "metric": m, "value": v} for m, v in vals.items()]
    return pd.DataFrame(rows, columns=["model", "metric", "value"])


def bootstrap_cis(inst: pd.DataFrame, *, n_boot: int = 1000, level: float = 0.95, seed: int = 0) -> pd.DataFrame:
    """CIs for every category × metric and overall metric: columns model, category (``Average``
    for overall), metric, mean, ci_low, ci_high, n."""
    rows: list[dict[str, Any]] = []
    for model, g in inst.groupby("model", sort=True):
        groups = {c: gg[list(COLS)].to_numpy(dtype=float) for c, gg in g.groupby("category")}
        reps = stratified_replicates(groups, n_boot=n_boot, seed=seed)
        overall_reps: dict[str, np.ndarray] = {}
        for cat, mat in groups.items():
            for j, m in enumerate(COLS):
                if m != "Avg" and m not in metrics_for(cat):
                    continue
                col = mat[:, j]
                lo, hi = percentile_ci(reps[cat][:, j], level)
                n = int((~np.isnan(col)).sum())
                rows.append({"model": model, "category": cat, "metric": m,
                             "mean": float(np.nanmean(col)) if n else np.nan, "ci_low": lo, "ci_high": hi, "n": n})
        for j, m in enumerate(CODES):
            stack = [reps[c][:, j] for c in groups if m in metrics_for(c)]
            if stack:
                overall_reps[m] = np.nanmean(np.vstack(stack), axis=0)
        if overall_reps:
            overall_reps["Avg"] = np.mean(np.vstack(list(overall_reps.values())), axis=0)
        point = overall_means(category_means(g)).set_index("metric")["value"]
        for m, r in overall_reps.items():
            lo, hi = percentile_ci(r, level)
            rows.append({"model": model, "category": "Average", "metric": m, "mean": float(point.get(m, np.nan)),
                         "ci_low": lo, "ci_high": hi, "n": int(len(g))})
    return pd.DataFrame(rows, columns=["model", "category", "metric", "mean", "ci_low", "ci_high", "n"])


WIN_RATE_DEFINITIONS: dict[str, str] = {
    "pairwise_strict": "head-to-head over (instance, metric) pairs: a higher score 1, a tie or lower 0",
    "best_share": "share of (instance, metric) pairs where the model has the top score (ties: every tied model)",
    "pairwise_half": "head-to-head over (instance, metric) pairs: higher 1, tie 1/2, lower 0 (averages 0.5)",
}
DEFAULT_WIN_RATE = "pairwise_strict"


def win_rates(inst: pd.DataFrame, definition: str = DEFAULT_WIN_RATE) -> pd.DataFrame:
    """Per model: wins, comparisons, ``win_rate`` (the chosen definition) and every definition
    (``pairwise_strict``, ``best_share``, ``pairwise_half``), over (instance, metric) pairs."""
    if definition not in WIN_RATE_DEFINITIONS:
        raise ValueError(f"win rate definition must be one of {list(WIN_RATE_DEFINITIONS)}, got {definition!r}")
    long = inst.melt(id_vars=["model", "sample_id"], value_vars=list(CODES), var_name="metric",
                     value_name="value").dropna(subset=["value"])
    cols = ["model", "definition", "win_rate", "wins", "comparisons", *WIN_RATE_DEFINITIONS, "n_pairs_best"]
    if long["model"].nunique() < 2:
        return pd.DataFrame(columns=cols)
    wide = long.pivot_table(index=["sample_id", "metric"], columns="model", values="value", aggfunc="mean")
    mat = wide.to_numpy(dtype=float)
    rows = []
    full = ~np.isnan(mat).any(axis=1)  # pairs every model scored: the field for "best"
    top = np.nanmax(mat[full], axis=1) if full.any() else np.array([])
    for i, a in enumerate(wide.columns):
        won = tied = total = 0
        for j in range(mat.shape[1]):
            if i == j:
                continue
            both = ~np.isnan(mat[:, i]) & ~np.isnan(mat[:, j])
            won += int((mat[both, i] > mat[both, j]).sum())
            tied += int((mat[both, i] == mat[both, j]).sum())
            total += int(both.sum())
        best = int((mat[full, i] >= top).sum()) if full.any() else 0
        rates = {"pairwise_strict": won / total if total else np.nan,
                 "pairwise_half": (won + 0.5 * tied) / total if total else np.nan,
                 "best_share": best / int(full.sum()) if full.any() else np.nan}
        wins = {"pairwise_strict": won, "pairwise_half": won + 0.5 * tied, "best_share": best}[definition]
        comps = int(full.sum()) if definition == "best_share" else total
        rows.append({"model": a, "definition": definition, "win_rate": rates[definition], "wins": wins,
                     "comparisons": comps, **rates, "n_pairs_best": int(full.sum())})
    return pd.DataFrame(rows, columns=cols)


def mode_split(inst: pd.DataFrame, *, n_boot: int = 1000, level: float = 0.95, seed: int = 0) -> pd.DataFrame:
    """Per model and mode (t2v / i2v / v2v): mean over instances of each metric and Avg, with a CI for Avg."""
    from vreason.aggregate.bootstrap import bootstrap_ci

    rows = []
    for (model, mode), g in inst.groupby(["model", "mode"], sort=True):
        row: dict[str, Any] = {"model": model, "mode": mode.upper(), "n": len(g)}
        for m in COLS:
            v = g[m].dropna()
            row[m] = float(v.mean()) if len(v) else np.nan
        _, row["Avg_ci_low"], row["Avg_ci_high"] = bootstrap_ci(g["Avg"], n_boot=n_boot, level=level, seed=seed)
        rows.append(row)
    return pd.DataFrame(rows, columns=["model", "mode", "n", *COLS, "Avg_ci_low", "Avg_ci_high"])


def per_task_table(inst: pd.DataFrame) -> pd.DataFrame:
    """Table A4 layout: Category, Task, one column per model = mean instance Avg over the task."""
    t = inst.groupby(["category", "task", "model"])["Avg"].mean().unstack("model")
    t = t.reset_index()
    order = {c: i for i, c in enumerate(_cat_order(t["category"]))}
    task_rank = {tk: i for c, ts in CATEGORIES.items() for i, tk in enumerate(ts)}
    t = t.assign(_c=t["category"].map(order), _t=t["task"].map(task_rank).fillna(999))
    t = t.sort_values(["_c", "_t", "task"]).drop(columns=["_c", "_t"])
    t.columns.name = None
    return t.rename(columns={"category": "Category", "task": "Task"}).round(2)


def table2(cat: pd.DataFrame, overall: pd.DataFrame, wins: pd.DataFrame) -> pd.DataFrame:
    """Paper layout: rows (Category, Metric) incl. Avg rows, the Average block and the Win Rate
    row, whose Metric cell names the win-rate definition shown."""
    models = sorted(cat["model"].unique())
    rows: list[dict[str, Any]] = []
    for c in _cat_order(cat["category"].unique()):
        g = cat[cat["category"] == c]
        for m in (*metrics_for(c), "Avg"):
            vals = g[g["metric"] == m].set_index("model")["value"]
            rows.append({"Category": c, "Metric": m, **{mod: round(float(vals.get(mod, np.nan)), 2) for mod in models}})
    for m in COLS:
        vals = overall[overall["metric"] == m].set_index("model")["value"]
        rows.append({"Category": "Average", "Metric": m,
                     **{mod: round(float(vals.get(mod, np.nan)), 2) for mod in models}})
    if not wins.empty:
        w = wins.set_index("model")["win_rate"]
        rows.append({"Category": "Win Rate", "Metric": str(wins["definition"].iloc[0]),
                     **{mod: round(float(w.get(mod, np.nan)), 3) for mod in models}})
    return pd.DataFrame(rows, columns=["Category", "Metric", *models])


def table2_ci(ci: pd.DataFrame) -> pd.DataFrame:
    """Table 2's cells with their interval: per model the mean and ``<model> low`` / ``<model> high`` columns
    (numbers; the report renders ``"mean [lo, hi]"`` by the declared format)."""
    models = sorted(ci["model"].unique())
    rows = []
    order = [*_cat_order(ci.loc[ci["category"] != "Average", "category"].unique()), "Average"]
    for c in order:
        g = ci[ci["category"] == c]
        for m in COLS:
            sub = g[g["metric"] == m].set_index("model")
            if sub.empty:
                continue
            row: dict[str, Any] = {"Category": c, "Metric": m}
            for mod in models:
                have = mod in sub.index
                for col, key in ((mod, "mean"), (f"{mod} low", "ci_low"), (f"{mod} high", "ci_high")):
                    row[col] = float(sub.loc[mod, key]) if have else np.nan
            rows.append(row)
    cols = ["Category", "Metric", *[c for mod in models for c in (mod, f"{mod} low", f"{mod} high")]]
    return pd.DataFrame(rows, columns=cols)


def declare_formats(summary: dict[str, Any], tables: dict[str, pd.DataFrame]) -> None:
    """Scores (0–100) with the paper's 2 decimals, the Win Rate row with 3; intervals beside their means."""
    from vreason.aggregate.tables import declare_format

    t2 = tables.get("ruler_table2", pd.DataFrame())
    by_row = {"by": "Category", "values": {"Win Rate": 3}, "default": 2}
    declare_format(summary, "ruler_table2", digits={c: by_row for c in t2.columns if c not in ("Category", "Metric")})
    t2ci = tables.get("ruler_table2_ci", pd.DataFrame())
    means = [c for c in t2ci.columns if f"{c} low" in t2ci.columns]
    declare_format(summary, "ruler_table2_ci", digits={c: 2 for c in means},
                   intervals={c: (f"{c} low", f"{c} high") for c in means})
    declare_format(summary, "ruler_mode_split", digits={c: 2 for c in (*COLS, "Avg_ci_low", "Avg_ci_high")})
    declare_format(summary, "ruler_ci", digits={"mean": 2, "ci_low": 2, "ci_high": 2},
                   intervals={"mean": ("ci_low", "ci_high")})


def _write(tables: dict[str, pd.DataFrame], out_dir: str, header: list[str] | None = None,
           formats: dict[str, Any] | None = None) -> None:
    import os

    from vreason.report.writer import write_table_bundle

    write_table_bundle(tables, out_dir, "ruler_tables.md", formats=formats)
    if header:
        md = os.path.join(out_dir, "ruler_tables.md")
        with open(md, encoding="utf-8") as fh:
            body = fh.read()
        with open(md, "w", encoding="utf-8") as fh:
            fh.write("\n".join(f"> {h}" for h in header) + "\n\n" + body)


def header_lines(*, missing_metric: str, win_rate: str, extra: dict[str, Any] | None = None) -> list[str]:
    """Report-header lines: options departing from the released code and the definitions used."""
    off = {"missing_metric": missing_metric} if missing_metric != "zero" else {}
    off.update({k: v for k, v in (extra or {}).items()})
    departs = ", ".join(f"{k}={v}" for k, v in off.items())
    return [
        "RULER-Bench: " + (f"options departing from the released code: {departs}" if off
                           else "released-code defaults (no departing option)"),
        f"Win Rate ({win_rate}): {WIN_RATE_DEFINITIONS[win_rate]}. The paper does not define it; "
        "see ruler_win_rate for every definition.",
    ]


def aggregate_ruler(scores: pd.DataFrame, samples: list[Sample], out_dir: str, *, missing_metric: str = "zero",
                    n_boot: int = 1000, level: float = 0.95, seed: int = 0, write: bool = True,
                    win_rate: str = DEFAULT_WIN_RATE, departing: dict[str, Any] | None = None) -> AggregateResult:
    inst = instance_table(scores, samples, missing_metric=missing_metric)
    cat = category_means(inst)
    overall = overall_means(cat)
    wins = win_rates(inst, win_rate) if not inst.empty else pd.DataFrame()
    ci = bootstrap_cis(inst, n_boot=n_boot, level=level, seed=seed) if not inst.empty else pd.DataFrame(
        columns=["model", "category", "metric", "mean", "ci_low", "ci_high", "n"])
    tables = {
        "ruler_table2": table2(cat, overall, wins),
        "ruler_table2_ci": table2_ci(ci) if not ci.empty else pd.DataFrame(),
        "ruler_mode_split": mode_split(inst, n_boot=n_boot, level=level, seed=seed),
        "ruler_per_task": per_task_table(inst) if not inst.empty else pd.DataFrame(),
        "ruler_win_rate": wins,
        "ruler_ci": ci,
        "ruler_instances": inst,
    }
    rel = scores
    if "scorer" in rel.columns:
        rel = rel[rel["scorer"] == "ruler_checklist"]
    bad = rel[rel["status"] != "ok"].drop_duplicates(["model", "sample_id", "seed"]) if not rel.empty else rel
    summary = {
        "headline_tables": ["ruler_table2", "ruler_mode_split", "ruler_win_rate"],
        "missing_metric": missing_metric,
        "instances_scored": {m: int(n) for m, n in inst.groupby("model").size().items()} if not inst.empty else {},
        "units_not_scored": {f"{m}/{s}": int(n) for (m, s), n in bad.groupby(["model", "status"]).size().items()}
        if not bad.empty else {},
        "overall": {m: {r["metric"]: r["value"] for _, r in g.iterrows()} for m, g in overall.groupby("model")},
        "win_rate_definition": {"name": win_rate, "text": WIN_RATE_DEFINITIONS[win_rate]},
        "header": header_lines(missing_metric=missing_metric, win_rate=win_rate, extra=departing),
        "bootstrap": {"n_boot": n_boot, "level": level, "seed": seed, "unit": "instance, stratified by category"},
    }
    declare_formats(summary, tables)
    if write:
        _write({k: v for k, v in tables.items() if not v.empty}, out_dir, summary["header"], summary["table_formats"])
    return AggregateResult(tables=tables, summary=summary)
