"""PAI-Bench-G and PAI-Bench-U tables with 95% bootstrap intervals, counts and unscored counts.

PAI-Bench-G (released ``compute_vqa_accuracy`` + the paper's Table 8):

* a question's accuracy = mean over the seeds where it was scored; a video's domain accuracy = mean over its
  scored questions; Domain = mean over videos; a category's score = mean over its videos (all ×100);
* a quality dimension per model = mean over videos (each the mean over seeds) of the normalised value;
  Quality = unweighted mean of the dimensions that were scored; Overall = (Domain + Quality) / 2;
* intervals resample videos (all seeds and dimensions of a video together); the per-question correctness
  is read from the domain scorer's evidence, also of units that ended unscored (their scored questions
  count, the others are counted as unscored questions).

PAI-Bench-U (released ``reason/run.py::evaluate``): accuracy per category, per subcategory, per main group
(category starting with "space" → Space, "time" → Time) and overall, over the items that were scored.
"""

from __future__ import annotations

import json
import warnings
from typing import Any

import numpy as np
import pandas as pd

from vreason.aggregate.stats import bootstrap_ci
from vreason.protocols.base import AggregateResult
from vreason.protocols.pai_g_quality import DIMENSIONS
from vreason.records import Sample


def _details(ev: Any) -> dict[str, Any]:
    try:
        d = json.loads(ev) if isinstance(ev, str) else (ev or {})
        return d.get("details") or {}
    except (ValueError, AttributeError):
        return {}


def question_table(scores: pd.DataFrame) -> pd.DataFrame:
    """model, sample_id, seed, uid, correct (NaN = unscored) from the domain scorer's evidence."""
    rows = []
    dom = scores[scores["scorer"] == "pai_g_domain"] if "scorer" in scores.columns else scores.iloc[:0]
    for r in dom.itertuples(index=False):
        for qrow in _details(getattr(r, "evidence", None)).get("questions", []):
            rows.append({"model": r.model, "sample_id": r.sample_id, "seed": int(r.seed), "uid": str(qrow.get("uid")),
                         "correct": float(qrow["correct"]) if "correct" in qrow else np.nan})
    return pd.DataFrame(rows, columns=["model", "sample_id", "seed", "uid", "correct"])


def video_table(scores: pd.DataFrame, samples: list[Sample]) -> pd.DataFrame:
    """One row per (model, video): category, domain (0–1, NaN if no scored question), the dimensions (0–1),
    questions scored / unscored."""
    cat = {s.id: s.category for s in samples}
    qt = question_table(scores)
    per_q = qt.groupby(["model", "sample_id", "uid"])["correct"].mean().reset_index()
    vid = per_q.groupby(["model", "sample_id"]).agg(domain=("correct", "mean"),
                                                    q_scored=("correct", "count"),
                                                    q_total=("correct", "size")).reset_index()
    vid["q_unscored"] = vid["q_total"] - vid["q_scored"]
    ok = scores[(scores["status"] == "ok") & (scores["scorer"] == "pai_g_quality")] if len(scores) else scores
    if len(ok):
        dims = (ok.assign(v=pd.to_numeric(ok["normalized"], errors="coerce"))
                .groupby(["model", "sample_id", "metric"])["v"].mean().unstack("metric").reset_index())
        vid = dims.merge(vid, on=["model", "sample_id"], how="outer") if len(vid) else dims
    for d in (*DIMENSIONS, "domain", "q_scored", "q_unscored"):
        if d not in vid.columns:
            vid[d] = np.nan
    vid["category"] = [cat.get(s, "") for s in vid["sample_id"]]
    return vid[["model", "sample_id", "category", "domain", *DIMENSIONS, "q_scored", "q_unscored"]]


def _joint_boot(mat: np.ndarray, dom_col: int, n_boot: int, level: float, seed: int) -> dict[str, tuple]:
    """Domain, Quality (mean over dimension means) and Overall with intervals, resampling rows (videos)."""
    def stats(m: np.ndarray) -> tuple[float, float, float]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN column (no scored video) stays NaN
            means = np.nanmean(m, axis=0)
        dom = means[dom_col]
        dims = np.delete(means, dom_col)
        qual = float(np.nanmean(dims)) if np.isfinite(dims).any() else np.nan
        overall = (dom + qual) / 2 if np.isfinite(dom) and np.isfinite(qual) else np.nan
        return float(dom), qual, overall

    est = stats(mat)
    rng = np.random.default_rng(seed)
    n = len(mat)
    boot = np.array([stats(mat[rng.integers(0, n, n)]) for _ in range(n_boot)]) if n > 1 else np.array([est])
    a = (1 - level) / 2
    out = {}
    for k, name in enumerate(("Domain", "Quality", "Overall")):
        col = boot[:, k][np.isfinite(boot[:, k])]
        lo, hi = (np.quantile(col, [a, 1 - a]) if len(col) else (np.nan, np.nan))
        out[name] = (est[k], float(lo), float(hi))
    return out


def _pct(x: float) -> float:
    return round(100 * x, 2) if x is not None and np.isfinite(x) else np.nan


def _ci_row(values: pd.Series, n_boot: int, level: float, seed: int) -> dict[str, Any]:
    est, lo, hi = bootstrap_ci(values.dropna().to_numpy(), n_boot=n_boot, level=level, seed=seed)
    return {"value": _pct(est), "ci_low": _pct(lo), "ci_high": _pct(hi), "n": int(values.notna().sum())}


def _unscored(scores: pd.DataFrame, scorer: str) -> pd.DataFrame:
    bad = scores[(scores["scorer"] == scorer) & (scores["status"] != "ok")] if len(scores) else scores
    if not len(bad):
        return pd.DataFrame(columns=["model", "metric", "status", "count", "example_reason"])
    return (bad.groupby(["model", "metric", "status"])
            .agg(count=("sample_id", "size"), example_reason=("reason", "first")).reset_index())


def aggregate_pai_g(scores: pd.DataFrame, samples: list[Sample], out_dir: str, *, n_boot: int = 1000,
                    level: float = 0.95, seed: int = 0, write: bool = True,
                    departing: dict[str, Any] | None = None) -> AggregateResult:
    vids = video_table(scores, samples)
    bad_q = _unscored(scores, "pai_g_quality")
    t8, dims_rows, cat_rows = [], [], []
    for model, g in vids.groupby("model", sort=True):
        cols = ["domain", *DIMENSIONS]
        scored_dims = [d for d in DIMENSIONS if g[d].notna().any()]
        mat = g[["domain", *scored_dims]].to_numpy(dtype=float)
        j = _joint_boot(mat, 0, n_boot, level, seed)
        row: dict[str, Any] = {"model": model}
        for name in ("Overall", "Domain", "Quality"):
            est, lo, hi = j[name]
            row.update({name: _pct(est), f"{name}_ci_low": _pct(lo), f"{name}_ci_high": _pct(hi)})
        row.update({"videos": int(len(g)), "videos_with_domain": int(g["domain"].notna().sum()),
                    "questions_unscored": int(g["q_unscored"].fillna(0).sum()),
                    "quality_dimensions": ", ".join(scored_dims) or "none",
                    "quality_missing": ", ".join(d for d in DIMENSIONS if d not in scored_dims)})
        t8.append(row)
        for d in cols[1:]:
            bad = bad_q[(bad_q["model"] == model) & (bad_q["metric"] == d)] if len(bad_q) else bad_q
            dims_rows.append({"model": model, "dimension": d, **_ci_row(g[d], n_boot, level, seed),
                              "unscored": int(bad["count"].sum()) if len(bad) else 0,
                              "reason": str(bad["example_reason"].iloc[0]) if len(bad) else ""})
        for c, gc in [("Overall", g), *sorted(g.groupby("category"))]:
            cat_rows.append({"model": model, "domain": c, **_ci_row(gc["domain"], n_boot, level, seed),
                             "questions_unscored": int(gc["q_unscored"].fillna(0).sum())})
    tables = {
        "pai_g_table8": pd.DataFrame(t8),
        "pai_g_domain_by_category": pd.DataFrame(cat_rows),
        "pai_g_quality_dimensions": pd.DataFrame(dims_rows),
        "pai_g_videos": vids,
    }
    off = ", ".join(f"{k}={v}" for k, v in (departing or {}).items())
    summary = {
        "headline_tables": ["pai_g_table8", "pai_g_domain_by_category", "pai_g_quality_dimensions"],
        "definitions": "question = mean over seeds; video = mean over questions; Domain = mean over videos; "
                       "Quality = mean of the scored dimensions; Overall = (Domain + Quality) / 2; all x100",
        "header": ["PAI-Bench-G: " + (f"options departing from the released code: {off}" if off
                                      else "released-code defaults")],
        "bootstrap": {"n_boot": n_boot, "level": level, "seed": seed, "unit": "video"},
    }
    if write:
        _write({k: v for k, v in tables.items() if not v.empty}, out_dir, "pai_g_tables.md", summary["header"])
    return AggregateResult(tables=tables, summary=summary)


def main_group(category: str) -> str | None:
    c = str(category).lower()
    return "Space" if c.startswith("space") else "Time" if c.startswith("time") else None


def aggregate_pai_u(scores: pd.DataFrame, samples: list[Sample], out_dir: str, *, n_boot: int = 1000,
                    level: float = 0.95, seed: int = 0, write: bool = True,
                    departing: dict[str, Any] | None = None) -> AggregateResult:
    info = {s.id: (s.category, s.task) for s in samples}
    sc = scores[scores["scorer"] == "pai_u_mcq"] if len(scores) else scores
    rows = []
    for r in sc.itertuples(index=False):
        cat, sub = info.get(r.sample_id, ("", ""))
        v = float(r.value) if r.status == "ok" else np.nan
        rows.append({"model": r.model, "sample_id": r.sample_id, "seed": int(r.seed), "category": cat,
                     "subcategory": sub, "group": main_group(cat), "correct": v, "status": r.status,
                     "reason": r.reason})
    items = pd.DataFrame(rows, columns=["model", "sample_id", "seed", "category", "subcategory", "group", "correct",
                                        "status", "reason"])
    out: list[dict[str, Any]] = []
    for model, g in items.groupby("model", sort=True):
        def add(level_name: str, name: str, gg: pd.DataFrame, model: str = model) -> None:
            est, lo, hi = bootstrap_ci(gg["correct"].dropna().to_numpy(), n_boot=n_boot, level=level, seed=seed,
                                       clusters=gg.loc[gg["correct"].notna(), "sample_id"].to_numpy())
            out.append({"model": model, "level": level_name, "name": name, "accuracy": _pct(est),
                        "ci_low": _pct(lo), "ci_high": _pct(hi), "n": int(gg["correct"].notna().sum()),
                        "unscored": int((gg["status"] == "unscored").sum()),
                        "errors": int((gg["status"] == "error").sum())})

        add("overall", "Overall", g)
        for grp, gg in sorted(g.dropna(subset=["group"]).groupby("group")):
            add("group", grp, gg)
        for c, gg in sorted(g.groupby("category")):
            add("category", c, gg)
        for c, gg in sorted(g.groupby("subcategory")):
            add("subcategory", c, gg)
    acc = pd.DataFrame(out, columns=["model", "level", "name", "accuracy", "ci_low", "ci_high", "n", "unscored",
                                     "errors"])
    headline = acc[acc["level"].isin(["overall", "group"])].pivot_table(
        index="model", columns="name", values="accuracy").reset_index() if len(acc) else pd.DataFrame()
    headline.columns.name = None
    tables = {"pai_u_summary": headline, "pai_u_accuracy": acc, "pai_u_items": items}
    off = ", ".join(f"{k}={v}" for k, v in (departing or {}).items())
    summary = {"headline_tables": ["pai_u_summary", "pai_u_accuracy"],
               "header": ["PAI-Bench-U: " + (f"options departing from the released code: {off}" if off
                                             else "released-code defaults")],
               "definitions": "accuracy = correct / scored items (x100); unscored items are counted apart",
               "bootstrap": {"n_boot": n_boot, "level": level, "seed": seed, "unit": "item"}}
    if write:
        _write({k: v for k, v in tables.items() if not v.empty}, out_dir, "pai_u_tables.md", summary["header"])
    return AggregateResult(tables=tables, summary=summary)


def _write(tables: dict[str, pd.DataFrame], out_dir: str, md_name: str, header: list[str]) -> None:
    import os

    from vreason.report.writer import write_table_bundle

    write_table_bundle(tables, out_dir, md_name)
    md = os.path.join(out_dir, md_name)
    with open(md, encoding="utf-8") as fh:
        body = fh.read()
    with open(md, "w", encoding="utf-8") as fh:
        fh.write("\n".join(f"> {h}" for h in header) + "\n\n" + body)


__all__ = ["aggregate_pai_g", "aggregate_pai_u", "main_group", "question_table", "video_table"]
