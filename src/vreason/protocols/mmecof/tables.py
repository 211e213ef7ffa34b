"""MME-CoF-Pro aggregation: Tables 1, 2, 5, 6, per-category / model / hint tables, hint deltas.

Definitions (paper §4, Tables 1–2, 5–6; where the paper is silent, ours, stated here):

* per (model, hint, sample): RS ×100; CS, TC, VS, Hallu, PG as % of the declared scale
  (``normalized`` ×100); GQ ``Avg`` = mean of those five; several seeds are averaged first;
* category value = mean over its samples; ``Average`` = unweighted mean over categories (this
  reproduces the paper's Average RS row from its category rows);
* a cell ``55.9 (+4.2)`` is the no-hint value and, in brackets, the hint effect: the mean over
  the category's samples scored under both settings of (hint − none) (paired); the Average row's
  effect is the mean over categories of those effects;
* Table 2 / 6 (visual hint) use only samples that have a visual hint, no-hint baseline included;
* hint deltas with CIs: text − none over all categories, visual − none over the visual-hint
  samples; ``delta_macro`` (over categories, bootstrap stratified by category) and
  ``delta_micro`` (over samples, plain paired bootstrap).

The hint of a score row comes from a ``hint`` column, else the scorer's evidence
(``details.hint``), else the run's ``--hint``. Other runs' score tables (another hint) can be
passed as ``other_runs`` (hint → DataFrame, a run directory, or its exported scores.csv /
scores.parquet).
"""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np
import pandas as pd

from vreason.aggregate.bootstrap import percentile_ci, stratified_replicates
from vreason.core.protocol import AggregateResult
from vreason.core.records import Sample
from vreason.protocols.mmecof.data import CATEGORIES, VISUAL_HINT_CATEGORIES

GQ = ("CS", "TC", "VS", "Hallu", "PG")
VALUES = ("RS", *GQ, "Avg")


def _read_table(src: Any) -> pd.DataFrame:
    if isinstance(src, pd.DataFrame):
        return src
    path = str(src)
    if os.path.isdir(path):  # another run's directory: read its result store
        from vreason.store import RunStore

        with RunStore(path, create=False) as store:
            return store.scores_frame()
    if path.endswith(".parquet"):
        return pd.read_parquet(path)
    if path.endswith((".jsonl", ".json")):
        return pd.read_json(path, lines=path.endswith(".jsonl"))
    return pd.read_csv(path)


def _hint_of(df: pd.DataFrame, default: str) -> pd.Series:
    if "hint" in df.columns:
        return df["hint"].fillna(default).astype(str)
    if "evidence" in df.columns:
        def get(ev: Any) -> str:
            try:
                d = json.loads(ev) if isinstance(ev, str) else (ev or {})
                return str((d.get("details") or {}).get("hint") or default)
            except (ValueError, AttributeError):
                return default
        return df["evidence"].map(get)
    return pd.Series(default, index=df.index)


def combine_runs(scores: pd.DataFrame, default_hint: str, other_runs: dict[str, Any] | None = None) -> pd.DataFrame:
    """One score table with a ``hint`` column from this run and any other runs."""
    frames = [scores.assign(hint=_hint_of(scores, default_hint))]
    for hint, src in (other_runs or {}).items():
        df = _read_table(src)
        frames.append(df.assign(hint=_hint_of(df, str(hint))))
    return pd.concat(frames, ignore_index=True) if frames else scores


def sample_table(scores: pd.DataFrame, samples: list[Sample]) -> pd.DataFrame:
    """One row per (model, hint, sample): category, has_visual_hint, RS, CS, TC, VS, Hallu, PG, Avg (all %)."""
    df = scores[(scores["status"] == "ok") & scores["metric"].isin(VALUES[:-1])].copy()
    cols = ["model", "hint", "sample_id", "category", "has_visual_hint", *VALUES]
    if df.empty:
        return pd.DataFrame(columns=cols)
    df["pct"] = np.where(df["metric"] == "RS", pd.to_numeric(df["value"], errors="coerce"),
                         100.0 * pd.to_numeric(df["normalized"], errors="coerce"))
    if "seed" not in df.columns:
        df["seed"] = 0
    per_seed = df.pivot_table(index=["model", "hint", "sample_id", "seed"], columns="metric", values="pct",
                              aggfunc="mean").reindex(columns=list(VALUES[:-1]))
    with np.errstate(invalid="ignore"):
        gq = per_seed[list(GQ)]
        per_seed["Avg"] = gq.mean(axis=1).where(gq.notna().all(axis=1))
    inst = per_seed.groupby(level=["model", "hint", "sample_id"]).mean().reset_index()
    info = {s.id: (s.category, bool(s.metadata.get("has_visual_hint"))) for s in samples}
    cat_col = scores.drop_duplicates("sample_id").set_index("sample_id")["category"] \
        if "category" in scores.columns else pd.Series(dtype=str)
    inst["category"] = [info[s][0] if s in info else str(cat_col.get(s, "")) for s in inst["sample_id"]]
    vis_ids = set(scores.loc[scores.get("hint", pd.Series(dtype=str)) == "visual", "sample_id"]) \
        if "hint" in scores.columns else set()
    inst["has_visual_hint"] = [info[s][1] if s in info else s in vis_ids for s in inst["sample_id"]]
    return inst[cols]


def _cat_order(cats) -> list[str]:
    known = [c for c in CATEGORIES if c in set(cats)]
    return known + sorted(set(cats) - set(known))


def long_means(inst: pd.DataFrame) -> pd.DataFrame:
    """model, hint, category (incl. ``Average`` = macro), metric, value, n."""
    rows = []
    for (model, hint), g in inst.groupby(["model", "hint"], sort=True):
        cat_vals: dict[str, dict[str, float]] = {}
        for cat, gg in g.groupby("category"):
            cat_vals[cat] = {}
            for m in VALUES:
                v = gg[m].dropna()
                cat_vals[cat][m] = float(v.mean()) if len(v) else np.nan
                rows.append({"model": model, "hint": hint, "category": cat, "metric": m,
                             "value": cat_vals[cat][m], "n": int(len(v))})
        for m in VALUES:
            vals = [cv[m] for cv in cat_vals.values() if not np.isnan(cv[m])]
            rows.append({"model": model, "hint": hint, "category": "Average", "metric": m,
                         "value": float(np.mean(vals)) if vals else np.nan, "n": int(g[m].notna().sum())})
    return pd.DataFrame(rows, columns=["model", "hint", "category", "metric", "value", "n"])


def paired(inst: pd.DataFrame, hint: str, metric: str) -> pd.DataFrame:
    """model, sample_id, category, none, <hint>, delta for samples scored under both settings."""
    a = inst[inst["hint"] == hint][["model", "sample_id", "category", metric]].rename(columns={metric: hint})
    b = inst[inst["hint"] == "none"][["model", "sample_id", metric]].rename(columns={metric: "none"})
    m = a.merge(b, on=["model", "sample_id"]).dropna(subset=[hint, "none"])
    return m.assign(delta=m[hint] - m["none"])


def hint_deltas(inst: pd.DataFrame, *, n_boot: int = 1000, level: float = 0.95, seed: int = 0,
                metrics: tuple[str, ...] = VALUES) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(overall, by_category) paired hint effects with bootstrap CIs."""
    from vreason.aggregate.bootstrap import paired_delta_ci

    rows, by_cat = [], []
    for hint in ("text", "visual"):
        if hint not in set(inst["hint"]) or "none" not in set(inst["hint"]):
            continue
        for metric in metrics:
            pr = paired(inst, hint, metric)
            if hint == "visual":
                pr = pr[pr["sample_id"].isin(inst.loc[inst["has_visual_hint"], "sample_id"])]
            for model, g in pr.groupby("model", sort=True):
                groups = {c: gg["delta"].to_numpy() for c, gg in g.groupby("category")}
                reps = stratified_replicates(groups, n_boot=n_boot, seed=seed)
                macro_reps = np.nanmean(np.vstack([reps[c][:, 0] for c in groups]), axis=0)
                macro = float(np.mean([v.mean() for v in groups.values()]))
                mlo, mhi = percentile_ci(macro_reps, level)
                micro, ulo, uhi = paired_delta_ci(g[hint], g["none"], n_boot=n_boot, level=level, seed=seed)
                rows.append({"model": model, "comparison": f"{hint} - none", "metric": metric,
                             "delta_macro": macro, "macro_ci_low": mlo, "macro_ci_high": mhi,
                             "delta_micro": micro, "micro_ci_low": ulo, "micro_ci_high": uhi,
                             "n_pairs": int(len(g)), "n_categories": len(groups)})
                for c, vals in groups.items():
                    clo, chi = percentile_ci(reps[c][:, 0], level)
                    by_cat.append({"model": model, "comparison": f"{hint} - none", "category": c, "metric": metric,
                                   "delta": float(vals.mean()), "ci_low": clo, "ci_high": chi, "n_pairs": len(vals)})
    cols = ["model", "comparison", "metric", "delta_macro", "macro_ci_low", "macro_ci_high", "delta_micro",
            "micro_ci_low", "micro_ci_high", "n_pairs", "n_categories"]
    return (pd.DataFrame(rows, columns=cols),
            pd.DataFrame(by_cat, columns=["model", "comparison", "category", "metric", "delta", "ci_low", "ci_high",
                                          "n_pairs"]))


def paper_table(inst: pd.DataFrame, hint: str, metrics: tuple[str, ...], *, visual_only: bool = False) -> pd.DataFrame:
    """Rows (Category, Metric) + Average; per model the no-hint value and ``<model> Δ``, the paired change
    with the hint (numbers; the report prints the paper's ``none(Δhint)`` cell by the declared format)."""
    if visual_only:
        inst = inst[inst["has_visual_hint"] & inst["category"].isin(
            set(VISUAL_HINT_CATEGORIES) | set(inst.loc[inst["hint"] == "visual", "category"]))]
    models = sorted(inst["model"].unique())
    base = inst[inst["hint"] == "none"]
    cats = _cat_order(inst["category"].unique())
    rows = []
    deltas: dict[tuple[str, str], dict[str, list[float]]] = {}
    for c in cats:
        for m in metrics:
            row: dict[str, Any] = {"Category": c, "Metric": m}
            for mod in models:
                b = base[(base["model"] == mod) & (base["category"] == c)][m].dropna()
                pr = paired(inst[(inst["model"] == mod) & (inst["category"] == c)], hint, m) \
                    if hint in set(inst["hint"]) else pd.DataFrame(columns=["delta"])
                d = float(pr["delta"].mean()) if len(pr) else np.nan
                bv = float(b.mean()) if len(b) else np.nan
                deltas.setdefault((mod, m), {"base": [], "delta": []})
                if not np.isnan(bv):
                    deltas[(mod, m)]["base"].append(bv)
                if not np.isnan(d):
                    deltas[(mod, m)]["delta"].append(d)
                row[mod], row[f"{mod} Δ"] = bv, d
            rows.append(row)
    for m in metrics:
        row = {"Category": "Average", "Metric": m}
        for mod in models:
            dd = deltas.get((mod, m), {"base": [], "delta": []})
            row[mod] = float(np.mean(dd["base"])) if dd["base"] else np.nan
            row[f"{mod} Δ"] = float(np.mean(dd["delta"])) if dd["delta"] else np.nan
        rows.append(row)
    return pd.DataFrame(rows, columns=["Category", "Metric", *[c for m in models for c in (m, f"{m} Δ")]])


def declare_formats(summary: dict[str, Any], tables: dict[str, pd.DataFrame]) -> None:
    """The paper's cells: one decimal, the paired change beside the no-hint value (``"75.0(+25.0)"``); the
    deltas' intervals beside them."""
    from vreason.aggregate.tables import declare_format

    for name in ("mmecof_table1", "mmecof_table2", "mmecof_table5", "mmecof_table6"):
        t = tables.get(name, pd.DataFrame())
        models = [c for c in t.columns if f"{c} Δ" in t.columns]
        declare_format(summary, name, digits={c: 1 for c in models}, deltas={c: f"{c} Δ" for c in models})
    declare_format(summary, "mmecof_hint_deltas", digits={c: 2 for c in (
        "delta_macro", "macro_ci_low", "macro_ci_high", "delta_micro", "micro_ci_low", "micro_ci_high")},
        intervals={"delta_macro": ("macro_ci_low", "macro_ci_high"),
                   "delta_micro": ("micro_ci_low", "micro_ci_high")})
    declare_format(summary, "mmecof_hint_deltas_by_category", digits={"delta": 2, "ci_low": 2, "ci_high": 2},
                   intervals={"delta": ("ci_low", "ci_high")})


def _write(tables: dict[str, pd.DataFrame], out_dir: str, header: list[str] | None = None,
           formats: dict[str, Any] | None = None) -> None:
    import os

    from vreason.report.writer import write_table_bundle

    write_table_bundle(tables, out_dir, "mmecof_tables.md", formats=formats)
    if header:
        md = os.path.join(out_dir, "mmecof_tables.md")
        with open(md, encoding="utf-8") as fh:
            body = fh.read()
        with open(md, "w", encoding="utf-8") as fh:
            fh.write("\n".join(f"> {h}" for h in header) + "\n\n" + body)


def header_lines(departing: dict[str, Any] | None = None) -> list[str]:
    """Report-header lines: options departing from the paper's protocol and the definitions used."""
    off = ", ".join(f"{k}={v}" for k, v in (departing or {}).items())
    return [
        "MME-CoF-Pro (no released code; the paper's protocol): "
        + (f"options departing from it: {off}" if off else "paper defaults (no departing option)"),
        "Definitions: RS = completed steps / steps x 100 (every 10th frame, one judge call per step); "
        "Average = unweighted mean over categories; deltas paired per sample.",
    ]


def aggregate_mmecof(scores: pd.DataFrame, samples: list[Sample], out_dir: str, *, default_hint: str = "none",
                     other_runs: dict[str, Any] | None = None, n_boot: int = 1000, level: float = 0.95,
                     seed: int = 0, write: bool = True, departing: dict[str, Any] | None = None) -> AggregateResult:
    allscores = combine_runs(scores, default_hint, other_runs)
    if "scorer" in allscores.columns:
        allscores = allscores[allscores["scorer"].isin(["mmecof_rs", "mmecof_gq"])]
    inst = sample_table(allscores, samples)
    means = long_means(inst)
    overall, by_cat = hint_deltas(inst, n_boot=n_boot, level=level, seed=seed)
    tables: dict[str, pd.DataFrame] = {
        "mmecof_table1": paper_table(inst, "text", ("RS", "CS", "Avg")),
        "mmecof_table2": paper_table(inst, "visual", ("RS", "CS", "Avg"), visual_only=True),
        "mmecof_table5": paper_table(inst, "text", ("TC", "VS", "Hallu", "PG")),
        "mmecof_table6": paper_table(inst, "visual", ("TC", "VS", "Hallu", "PG"), visual_only=True),
        "mmecof_by_category": means[means["category"] != "Average"].pivot_table(
            index=["category", "metric"], columns=["model", "hint"], values="value").round(2),
        "mmecof_by_model": means[means["category"] == "Average"].pivot_table(
            index=["model", "hint"], columns="metric", values="value").reindex(columns=list(VALUES)).round(2),
        "mmecof_hint_deltas": overall,
        "mmecof_hint_deltas_by_category": by_cat,
        "mmecof_samples": inst,
        "mmecof_means": means,
    }
    for k in ("mmecof_by_category", "mmecof_by_model"):
        t = tables[k]
        if isinstance(t.columns, pd.MultiIndex):
            t.columns = [" / ".join(map(str, c)) for c in t.columns]
        t.columns.name = None
        tables[k] = t.reset_index()
    bad = allscores[allscores["status"] != "ok"]
    summary = {
        "headline_tables": ["mmecof_table1", "mmecof_table2", "mmecof_hint_deltas"],
        "hints": sorted(inst["hint"].unique()) if not inst.empty else [],
        "samples_scored": {f"{m}/{h}": int(n) for (m, h), n in inst.groupby(["model", "hint"]).size().items()}
        if not inst.empty else {},
        "rows_not_scored": {f"{s}/{r}": int(n) for (s, r), n in bad.groupby(["scorer", "status"]).size().items()}
        if not bad.empty and "scorer" in bad.columns else {},
        "bootstrap": {"n_boot": n_boot, "level": level, "seed": seed},
        "average_definition": "unweighted mean over categories of per-category means over samples",
        "header": header_lines(departing),
    }
    declare_formats(summary, tables)
    if write:
        _write({k: v for k, v in tables.items() if not v.empty}, out_dir, summary["header"], summary["table_formats"])
    return AggregateResult(tables=tables, summary=summary)
