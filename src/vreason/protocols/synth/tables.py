"""Tables, summary and charts of the built-in (synth) suite.

Input: the run's score table (one row per Score). The synth verifier writes scorer
``"synth-verifier"``, metric ``"score"``, ``normalized`` in [0, 1] and a ``passed`` flag; the sample's
``category`` is its task family. All numbers are percentages. Intervals are 95% percentile
bootstrap intervals resampling *samples* (all seeds of a sample stay together). "Overall" pools
every sample of a model (micro-average over families).

Tables (``AggregateResult.tables``):

* ``headline`` — per model × family (``overall`` first): pass rate (%), its CI low / high in their own
  columns and n samples; narrow enough for a 100-column terminal; the metric is named in
  ``summary["table_notes"]["headline"]``.
* ``leaderboard`` — per model: pass rate and score with their interval (numeric ``low`` / ``high`` columns,
  rendered ``"mean [lo, hi]"``), Pass@k, counts.
* ``overall`` / ``by_family`` / ``by_difficulty`` / ``by_family_difficulty`` — numeric: score mean and
  CI, pass rate and CI, Pass@1…Pass@K (unbiased estimator, K = most seeds of any sample), ``n_samples``
  (samples with a scored video), ``n_samples_unscored`` (samples none of whose videos was scored) and
  counts of ok / unscored / error rows.
* ``pass_at_k`` — long form: Pass@k with a CI over samples and the number of samples left out for
  having fewer than k scored seeds (``n_short``).
* ``failures`` — non-ok rows by status, scorer and reason.
* ``tivibench_pass1`` / ``tivibench_pass5`` / ``tivibench_counts`` — the same verdicts in TiViBench's Tables 1–2
  layout (each family under its TiViBench dimension; :func:`vreason.protocols.tivibench.tables.suite_layout`).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from vreason.aggregate.bootstrap import bootstrap_ci
from vreason.aggregate.charts import grouped_bar_chart
from vreason.aggregate.stats import pass_at_k
from vreason.aggregate.tables import (
    as_float,
    declare_format,
    failures_table,
    group_positions,
    status_of,
    summarize,
)
from vreason.core.protocol import AggregateResult

SCORER = "synth-verifier"
METRIC = "score"
DIFFICULTY_ORDER = ("easy", "medium", "hard")
LEVELS: dict[str, list[str]] = {
    "overall": ["model"],
    "by_family": ["model", "family"],
    "by_difficulty": ["model", "difficulty"],
    "by_family_difficulty": ["model", "family", "difficulty"],
}


def _select(scores: pd.DataFrame, scorer: str, metric: str) -> pd.DataFrame:
    df = scores
    if "scorer" in df.columns:
        df = df[df["scorer"] == scorer]
    if "metric" in df.columns:
        df = df[df["metric"] == metric]
    df = df.copy()
    df["family"] = df["category"] if "category" in df.columns else df.get("task", "all")
    df["family"] = df["family"].fillna("?").astype(str)
    if "difficulty" not in df.columns:
        df["difficulty"] = "?"
    df["difficulty"] = df["difficulty"].fillna("?").astype(str)
    df["status"] = status_of(df)
    return df


def _per_sample(df: pd.DataFrame) -> pd.DataFrame:
    """Per (model, family, difficulty, sample): ``n`` scored attempts (ok rows with a pass verdict)
    and ``c`` passes. Samples whose every row failed are kept with ``n = 0``."""
    keys = ["model", "family", "difficulty", "sample_id"]
    passed = as_float(df["passed"]) if "passed" in df.columns else pd.Series(np.nan, index=df.index)
    attempt = (df["status"] == "ok") & passed.notna()
    frame = df[keys].assign(_n=attempt.astype(int), _c=(attempt & (passed == 1)).astype(int))
    out = frame.groupby(keys, sort=True, dropna=False)[["_n", "_c"]].sum().reset_index()
    return out.rename(columns={"_n": "n", "_c": "c"})


def _pass_at_k_long(
    per_sample: pd.DataFrame, keys: list[str], k_max: int, *, n_boot: int, seed: int, level: float
) -> pd.DataFrame:
    """Pass@k for k = 1..k_max per group: mean over samples with >= k attempts, CI over samples."""
    n = per_sample["n"].to_numpy()
    c = per_sample["c"].to_numpy()
    by_k = {k: np.array([pass_at_k(a, b, k) if a >= k else np.nan for a, b in zip(n, c, strict=True)])
            for k in range(1, k_max + 1)}
    rows = []
    for key, pos in group_positions(per_sample, keys):
        for k in range(1, k_max + 1):
            vals = by_k[k][pos]
            est, lo, hi = bootstrap_ci(vals, n_boot=n_boot, seed=seed, level=level)
            have = int(np.count_nonzero(~np.isnan(vals)))
            rows.append({**dict(zip(keys, key, strict=True)), "k": k, "pass_at_k": est * 100,
                         "ci_low": lo * 100, "ci_high": hi * 100, "n_samples": have,
                         "n_short": int(len(pos) - have)})
    return pd.DataFrame(rows, columns=keys + ["k", "pass_at_k", "ci_low", "ci_high", "n_samples", "n_short"])


def _level_table(
    df: pd.DataFrame, per_sample: pd.DataFrame, keys: list[str], k_max: int, *,
    n_boot: int, seed: int, level: float,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    opts = dict(scale=100.0, n_boot=n_boot, seed=seed, clusters="sample_id", level=level)
    score = summarize(df, keys, "normalized", **opts)
    passed = summarize(df, keys, "passed", **opts)
    counts = df.groupby(keys, sort=True, dropna=False).agg(n_ok=("status", lambda st: int((st == "ok").sum())))
    scored = per_sample.assign(_s=(per_sample["n"] > 0).astype(int), _u=(per_sample["n"] == 0).astype(int))
    scored = scored.groupby(keys, sort=True, dropna=False)[["_s", "_u"]].sum().rename(
        columns={"_s": "n_samples", "_u": "n_samples_unscored"})
    counts = scored.join(counts, how="outer").fillna(0).astype(int)
    table = score[keys].merge(counts.reset_index(), on=keys, how="left")
    table["score"], table["score_ci_low"], table["score_ci_high"] = (
        score["mean"], score["ci_low"], score["ci_high"])
    pr = score[keys].merge(passed, on=keys, how="left")
    table["pass_rate"], table["pass_ci_low"], table["pass_ci_high"] = (
        pr["mean"], pr["ci_low"], pr["ci_high"])
    long = _pass_at_k_long(per_sample, keys, k_max, n_boot=n_boot, seed=seed, level=level)
    wide = long.pivot_table(index=keys, columns="k", values="pass_at_k", aggfunc="first", dropna=False)
    wide.columns = [f"pass@{k}" for k in wide.columns]
    table = table.merge(wide.reset_index(), on=keys, how="left")
    un_col = table.pop("n_samples_unscored")
    ok_col = table.pop("n_ok")
    table["n_ok"] = ok_col.astype(int)
    table["n_unscored"] = score["n_unscored"].to_numpy()
    table["n_error"] = score["n_error"].to_numpy()
    table["n_samples_unscored"] = un_col.astype(int)
    return _order(table), _order(long)


def _order(table: pd.DataFrame) -> pd.DataFrame:
    if table.empty:
        return table
    sort = [c for c in ("model", "family", "difficulty", "k") if c in table.columns]
    key_fn = {"difficulty": lambda s: s.map(lambda d: DIFFICULTY_ORDER.index(d)
                                            if d in DIFFICULTY_ORDER else len(DIFFICULTY_ORDER))}
    return table.sort_values(sort, key=lambda s: key_fn.get(s.name, lambda x: x)(s), kind="stable")\
        .reset_index(drop=True)


HEADLINE_NOTE = "metric: pass rate (%), all checks passed; 95% CI; n = scored samples; unscored/error: videos"


def _headline(both: pd.DataFrame) -> pd.DataFrame:
    """Narrow headline: one row per model × family (``overall`` first), the pass rate with its interval in
    its own columns and n, so it fits a terminal (100 columns)."""
    frame = both.assign(_o=(both["family"] != "overall").astype(int))
    frame = frame.sort_values(["model", "_o", "family"], kind="stable")
    out = pd.DataFrame({"model": frame["model"], "family": frame["family"],
                        "pass %": frame["pass_rate"].round(1), "CI low": frame["pass_ci_low"].round(1),
                        "CI high": frame["pass_ci_high"].round(1), "n": frame["n_samples"].astype(int),
                        "unscored": frame["n_unscored"].astype(int), "error": frame["n_error"].astype(int)})
    return out.reset_index(drop=True)


def _leaderboard(overall: pd.DataFrame, k_max: int) -> pd.DataFrame:
    """Compact per-model table, best pass rate first: pass rate and score with their interval in numeric
    columns (rendered ``"mean [lo, hi]"`` by the declared format), Pass@k, counts."""
    board = pd.DataFrame({"model": overall["model"]})
    for name, col, lo, hi in (("pass rate", "pass_rate", "pass_ci_low", "pass_ci_high"),
                              ("score", "score", "score_ci_low", "score_ci_high")):
        board[name], board[f"{name} low"], board[f"{name} high"] = overall[col], overall[lo], overall[hi]
    for k in range(1, k_max + 1):
        board[f"pass@{k}"] = overall[f"pass@{k}"]
    for col in ("n_samples", "n_samples_unscored", "n_ok", "n_unscored", "n_error"):
        board[col] = overall[col]
    order = overall["pass_rate"].fillna(-1).to_numpy().argsort(kind="stable")[::-1]
    return board.iloc[order].reset_index(drop=True)


def _declare_formats(summary: dict[str, Any], k_max: int, names: list[str]) -> None:
    """Percentages with one decimal; the leaderboard's intervals beside their values."""
    pct = [f"pass@{k}" for k in range(1, k_max + 1)]
    declare_format(summary, "headline", digits={c: 1 for c in ("pass %", "CI low", "CI high")})
    declare_format(summary, "leaderboard", digits={c: 1 for c in ("pass rate", "score", *pct)},
                   intervals={"pass rate": ("pass rate low", "pass rate high"), "score": ("score low", "score high")})
    for name in names:
        declare_format(summary, name, digits={c: 1 for c in (
            "score", "score_ci_low", "score_ci_high", "pass_rate", "pass_ci_low", "pass_ci_high", *pct)})
    declare_format(summary, "pass_at_k", digits={c: 1 for c in ("pass_at_k", "ci_low", "ci_high")})
    summary["grid_metric"] = {"label": "score (%)", "weights": {METRIC: 1.0}, "scale": 100.0, "digits": 1,
                              "note": "the verifier's score of the video, as in the score columns; ✓ = every "
                                      "check passed"}


def _num(x: Any) -> float | None:
    try:
        f = float(x)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) else round(f, 4)


def _summary(tables: dict[str, pd.DataFrame], k_max: int, n_boot: int, level: float) -> dict[str, Any]:
    models: dict[str, Any] = {}
    for _, row in tables["overall"].iterrows():
        models[str(row["model"])] = {
            "pass_rate": _num(row["pass_rate"]),
            "pass_ci": [_num(row["pass_ci_low"]), _num(row["pass_ci_high"])],
            "score": _num(row["score"]),
            "score_ci": [_num(row["score_ci_low"]), _num(row["score_ci_high"])],
            "pass_at_k": {str(k): _num(row[f"pass@{k}"]) for k in range(1, k_max + 1)},
            "n_samples": int(row["n_samples"]), "n_samples_unscored": int(row["n_samples_unscored"]),
            "n_ok": int(row["n_ok"]),
            "n_unscored": int(row["n_unscored"]), "n_error": int(row["n_error"]),
            "families": {},
        }
    for _, row in tables["by_family"].iterrows():
        models[str(row["model"])]["families"][str(row["family"])] = {
            "pass_rate": _num(row["pass_rate"]),
            "pass_ci": [_num(row["pass_ci_low"]), _num(row["pass_ci_high"])],
            "score": _num(row["score"]),
            "n_samples": int(row["n_samples"]),
        }
    return {"benchmark": "synth", "unit": "percent", "ci_level": level, "n_boot": n_boot,
            "ci_resamples": "samples (seeds kept together)", "k_max": k_max, "models": models,
            "headline_tables": ["headline", "leaderboard"],
            "table_notes": {"headline": HEADLINE_NOTE,
                            "leaderboard": "pass rate and mean verifier score (%) with 95% bootstrap CI; "
                                           "pass@k over seeds; counts of samples and rows by status"}}


def synth_tables(
    scores: pd.DataFrame,
    out_dir: str | Path,
    *,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    scorer: str = SCORER,
    metric: str = METRIC,
    charts: bool = True,
) -> AggregateResult:
    """Aggregate the built-in suite's score table into tables, a JSON-able summary and charts."""
    df = _select(scores, scorer, metric)
    result = AggregateResult()
    result.tables["failures"] = failures_table(scores)
    if df.empty:
        result.summary = {"benchmark": "synth", "models": {}, "note": f"no {scorer}/{metric} rows"}
        return result
    seeds_col = "seed" if "seed" in df.columns else None
    per_unit = df.groupby(["model", "sample_id"])[seeds_col].nunique() if seeds_col else \
        df.groupby(["model", "sample_id"]).size()
    k_max = max(1, int(per_unit.max()))
    per_sample = _per_sample(df)
    long_parts = []
    for name, keys in LEVELS.items():
        table, long = _level_table(df, per_sample, keys, k_max, n_boot=n_boot, seed=seed, level=level)
        result.tables[name] = table
        if name in ("overall", "by_family"):
            long_parts.append(long.assign(family="all") if name == "overall" else long)
    pass_k = pd.concat(long_parts, ignore_index=True)
    cols = ["model", "family", "k", "pass_at_k", "ci_low", "ci_high", "n_samples", "n_short"]
    result.tables["pass_at_k"] = pass_k[cols]

    fam = result.tables["by_family"]
    overall = result.tables["overall"].assign(family="overall")
    both = pd.concat([fam, overall], ignore_index=True)
    result.tables["headline"] = _headline(both)
    result.tables["leaderboard"] = _leaderboard(result.tables["overall"], k_max)
    result.summary = _summary(result.tables, k_max, n_boot, level)
    _declare_formats(result.summary, k_max, list(LEVELS))
    from vreason.protocols.tivibench.tables import suite_layout, suite_layout_notes

    layout = suite_layout(scores, scorer=scorer, metric=metric, n_boot=n_boot, seed=seed, level=level)
    result.tables.update(layout)
    suite_layout_notes(df[df["status"] == "ok"], layout, result.summary)

    if charts:
        out = Path(out_dir)
        common = dict(group="family", series="model", ylim=(0, 115))
        result.charts["pass_rate_by_family"] = grouped_bar_chart(
            fam, value="pass_rate", lo="pass_ci_low", hi="pass_ci_high",
            path=out / "pass_rate_by_family.png", title=f"Pass rate by family ({level:.0%} CI)",
            ylabel="pass rate (%)", **common)
        result.charts["score_by_family"] = grouped_bar_chart(
            fam, value="score", lo="score_ci_low", hi="score_ci_high",
            path=out / "score_by_family.png", title=f"Mean verifier score by family ({level:.0%} CI)",
            ylabel="score (%)", **common)
    return result
