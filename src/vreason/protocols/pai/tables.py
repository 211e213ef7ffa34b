"""PAI-Bench-U tables (and the helpers PAI-Bench-G's tables share; G's aggregation is in
:mod:`vreason.protocols.pai.g.tables`).

PAI-Bench-U (released ``reason/run.py::evaluate``): accuracy per category, per subcategory, per main group
(category starting with "space" → Space, "time" → Time) and overall, over the items that were scored. A reply
without an ``<answer>`` tag is a wrong answer as released; the count of such replies is a column beside every
accuracy (``counted_wrong``). Besides the released groups, the paper's Fig. 9 groups: **Common Sense**
(sub-groups Space, Time, Physics — the categories starting with those words) and **Embodied Reasoning**
(sub-groups by data source, appendix C.1: RoboVQA, RoboFail, BridgeData V2, AgiBot, HoloAssist, AV — matched
in the category, else the subcategory); an item matching neither is counted as ``unassigned``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from vreason.aggregate.bootstrap import bootstrap_ci
from vreason.core.protocol import AggregateResult
from vreason.core.records import Sample
from vreason.protocols.pai.g.tables import aggregate_pai_g, question_table, video_table


def _pct(x: float) -> float:
    return round(100 * x, 2) if x is not None and np.isfinite(x) else np.nan


def unscored_counts(scores: pd.DataFrame, scorer: str) -> pd.DataFrame:
    """model, metric, status, count, example_reason of the non-ok scores of ``scorer``."""
    bad = scores[(scores["scorer"] == scorer) & (scores["status"] != "ok")] if len(scores) else scores
    if not len(bad):
        return pd.DataFrame(columns=["model", "metric", "status", "count", "example_reason"])
    return (bad.groupby(["model", "metric", "status"])
            .agg(count=("sample_id", "size"), example_reason=("reason", "first")).reset_index())


EMBODIED_SOURCES: tuple[tuple[str, str], ...] = (
    ("robovqa", "RoboVQA"), ("robofail", "RoboFail"), ("bridge", "BridgeData V2"), ("agibot", "AgiBot"),
    ("holoassist", "HoloAssist"), ("av", "AV"))
"""Embodied-reasoning data sources of the paper's appendix C.1: (lower-case key matched, name shown)."""


def fig9_group(category: str, subcategory: str = "") -> tuple[str, str] | None:
    """(group, sub-group) of the paper's Fig. 9: Common Sense (Space / Time / Physics by the category's first
    word) or Embodied Reasoning (by data source, in the category, else the subcategory); ``None`` otherwise."""
    c = str(category).lower().strip()
    for word, name in (("space", "Space"), ("time", "Time"), ("physic", "Physics")):
        if c.startswith(word):
            return "Common Sense", name
    for text in (c, str(subcategory).lower().strip()):
        tokens = text.replace("-", "_").replace(" ", "_").split("_")
        for key, name in EMBODIED_SOURCES:
            if (key == "av" and "av" in tokens) or (key != "av" and key in text.replace(" ", "")):
                return "Embodied Reasoning", name
    return None


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
        d = _details(getattr(r, "evidence", None))
        f9 = fig9_group(cat, sub) or ("unassigned", "unassigned")
        rows.append({"model": r.model, "sample_id": r.sample_id, "seed": int(r.seed), "category": cat,
                     "subcategory": sub, "group": main_group(cat), "fig9_group": f9[0], "fig9_subgroup": f9[1],
                     "correct": v, "counted_wrong": int("counted_wrong" in d), "status": r.status,
                     "reason": r.reason})
    items = pd.DataFrame(rows, columns=["model", "sample_id", "seed", "category", "subcategory", "group", "fig9_group",
                                        "fig9_subgroup", "correct", "counted_wrong", "status", "reason"])
    # in sample order, not the order the units finished in (the bootstrap draws rows by position)
    items = items.sort_values(["model", "sample_id", "seed"], kind="stable").reset_index(drop=True)
    out: list[dict[str, Any]] = []
    for model, g in items.groupby("model", sort=True):
        def add(level_name: str, name: str, gg: pd.DataFrame, model: str = model) -> None:
            est, lo, hi = bootstrap_ci(gg["correct"].dropna().to_numpy(), n_boot=n_boot, level=level, seed=seed,
                                       clusters=gg.loc[gg["correct"].notna(), "sample_id"].to_numpy())
            wrong = int(gg["counted_wrong"].sum())
            out.append({"model": model, "level": level_name, "name": name, "accuracy": _pct(est),
                        "ci_low": _pct(lo), "ci_high": _pct(hi), "n": int(gg["correct"].notna().sum()),
                        "counted_wrong": wrong,
                        "note": f"{wrong} replies without <answer> counted wrong" if wrong else "",
                        "unscored": int((gg["status"] == "unscored").sum()),
                        "errors": int((gg["status"] == "error").sum())})

        add("overall", "Overall", g)
        for grp, gg in sorted(g.dropna(subset=["group"]).groupby("group")):
            add("group", grp, gg)
        for grp, gg in sorted(g.groupby("fig9_group")):
            add("fig9_group", grp, gg)
        for (grp, sub), gg in sorted(g.groupby(["fig9_group", "fig9_subgroup"])):
            if grp != "unassigned":
                add("fig9_subgroup", f"{grp} / {sub}", gg)
        for c, gg in sorted(g.groupby("category")):
            add("category", c, gg)
        for c, gg in sorted(g.groupby("subcategory")):
            add("subcategory", c, gg)
    acc = pd.DataFrame(out, columns=["model", "level", "name", "accuracy", "ci_low", "ci_high", "n", "counted_wrong",
                                     "note", "unscored", "errors"])
    headline = acc[acc["level"].isin(["overall", "group", "fig9_group"]) & (acc["name"] != "unassigned")].pivot_table(
        index="model", columns="name", values="accuracy").reset_index() if len(acc) else pd.DataFrame()
    headline.columns.name = None
    if len(headline):
        wrong = items.groupby("model")["counted_wrong"].sum()
        headline["replies_counted_wrong"] = [int(wrong.get(m, 0)) for m in headline["model"]]
    tables = {"pai_u_summary": headline, "pai_u_accuracy": acc, "pai_u_items": items}
    off = ", ".join(f"{k}={v}" for k, v in (departing or {}).items())
    n_wrong = int(items["counted_wrong"].sum()) if len(items) else 0
    n_unassigned = int((items["fig9_group"] == "unassigned").sum()) if len(items) else 0
    header = ["PAI-Bench-U: " + (f"options departing from the released code: {off}" if off
                                 else "released-code defaults"),
              f"{n_wrong} replies without an <answer> tag counted wrong (released rule; `missing_answer=unscored` "
              "leaves them out)"]
    if n_unassigned:
        header.append(f"{n_unassigned} item(s) in no Fig. 9 group (category matches neither Common Sense nor an "
                      "Embodied Reasoning source)")
    summary = {"headline_tables": ["pai_u_summary", "pai_u_accuracy"], "header": header,
               "definitions": "accuracy = correct / scored items (x100); unscored items are counted apart; "
                              "Space/Time = the released main groups; Common Sense / Embodied Reasoning = the "
                              "paper's Fig. 9 groups",
               "bootstrap": {"n_boot": n_boot, "level": level, "seed": seed, "unit": "item"},
               "counts": {"replies_counted_wrong": n_wrong, "fig9_unassigned": n_unassigned}}
    from vreason.aggregate.tables import declare_format

    declare_format(summary, "pai_u_accuracy", intervals={"accuracy": ("ci_low", "ci_high")},
                   notes={"accuracy": "note"}, digits={"accuracy": 2})
    if write:
        write_tables({k: v for k, v in tables.items() if not v.empty}, out_dir, "pai_u_tables.md", header)
    return AggregateResult(tables=tables, summary=summary)


def _details(ev: Any) -> dict[str, Any]:
    import json

    try:
        d = json.loads(ev) if isinstance(ev, str) else (ev or {})
        return d.get("details") or {}
    except (ValueError, AttributeError):
        return {}


def write_tables(tables: dict[str, pd.DataFrame], out_dir: str, md_name: str, header: list[str]) -> None:
    import os

    from vreason.report.writer import write_table_bundle

    write_table_bundle(tables, out_dir, md_name)
    md = os.path.join(out_dir, md_name)
    with open(md, encoding="utf-8") as fh:
        body = fh.read()
    with open(md, "w", encoding="utf-8") as fh:
        fh.write("\n".join(f"> {h}" for h in header) + "\n\n" + body)


__all__ = ["EMBODIED_SOURCES", "aggregate_pai_g", "aggregate_pai_u", "fig9_group", "main_group", "question_table",
           "unscored_counts", "video_table", "write_tables"]
