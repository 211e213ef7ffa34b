"""TiViBench tables: Pass@1 and unbiased Pass@5 per dimension × difficulty (the paper's Tables 1–2).

Per (model, sample) over its seeds: ``n`` videos that were scored (an ``ok`` row with a verdict) and ``c``
that passed. An **unscored** or **error** video is not a failure: it is left out of ``n`` and counted in
``n_unscored`` / ``n_error`` of its cell; a sample none of whose videos was scored is left out of the cell
and counted in ``samples_unscored``. Per sample, Pass@k = ``1 − C(n−c, k)/C(n, k)`` (Pass@1 = c/n); a
sample with fewer than k scored videos gets Pass@k over what exists, ``pass_at_k(n, c, n)`` (1 if any of
its n videos passed), and is counted in ``n_short``.

Cells pool samples, as the paper's numbers do: a difficulty cell is the mean over its samples, a
dimension's ``Over.`` the mean over all of the dimension's samples (not the mean of its three cells), the
``Overall`` the mean over every sample. Values are percent with 2 decimals; intervals are 95% percentile
bootstrap intervals over samples.

Tables: ``tivibench_pass1`` and ``tivibench_pass5`` (one row per model, the paper's 17 columns),
``tivibench_counts`` (samples per cell, same layout), ``tivibench_cells`` (long: every cell with its
interval and counts), ``tivibench_by_task`` (per task type), ``tivibench_by_family`` (per metric family) and
``failures``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from vreason.aggregate.bootstrap import bootstrap_ci
from vreason.aggregate.stats import pass_at_k
from vreason.aggregate.tables import as_float, failures_table, status_of
from vreason.core.protocol import AggregateResult
from vreason.verify.annotations import DIFFICULTIES, DIMENSION_SHORT, DIMENSIONS, TASK_TYPES

SCORERS = ("tivibench_check", "tivibench_qa")
METRIC = "pass"
KS = (1, 5)
DIFF_LABEL = {"easy": "Easy", "medium": "Med.", "hard": "Hard", "overall": "Over."}


def per_sample(df: pd.DataFrame) -> pd.DataFrame:
    """One row per (model, sample): dimension, difficulty, task type, family, ``n``, ``c`` and the counts of
    unscored / error rows. ``df`` has columns model, sample_id, dimension, difficulty, task_type, family,
    status, passed."""
    keys = ["model", "sample_id", "dimension", "difficulty", "task_type", "family"]
    passed = as_float(df["passed"]) if "passed" in df.columns else pd.Series(np.nan, index=df.index)
    status = status_of(df)
    scored = (status == "ok") & passed.notna()
    frame = df[keys].assign(n=scored.astype(int), c=(scored & (passed == 1)).astype(int),
                            n_unscored=(status == "unscored").astype(int), n_error=(status == "error").astype(int))
    return frame.groupby(keys, sort=True, dropna=False)[["n", "c", "n_unscored", "n_error"]].sum().reset_index()


def sample_pass_at_k(n: np.ndarray, c: np.ndarray, k: int) -> np.ndarray:
    """Per sample Pass@k; over what exists when ``n < k``; NaN when ``n == 0`` (nothing scored)."""
    return np.array([np.nan if a == 0 else pass_at_k(a, b, min(k, a)) for a, b in zip(n, c, strict=True)])


def _cell(ps: pd.DataFrame, k: int, *, n_boot: int, seed: int, level: float) -> dict[str, Any]:
    vals = sample_pass_at_k(ps["n"].to_numpy(), ps["c"].to_numpy(), k)
    est, lo, hi = bootstrap_ci(vals, n_boot=n_boot, seed=seed, level=level)
    have = ~np.isnan(vals)
    return {"value": est * 100, "ci_low": lo * 100, "ci_high": hi * 100, "n_samples": int(have.sum()),
            "n_videos": int(ps["n"].sum()), "n_passed": int(ps["c"].sum()), "n_unscored": int(ps["n_unscored"].sum()),
            "n_error": int(ps["n_error"].sum()), "samples_unscored": int((~have).sum()),
            "n_short": int(((ps["n"] > 0) & (ps["n"] < k)).sum())}


def cells(ps: pd.DataFrame, *, ks: Sequence[int] = KS, n_boot: int = 1000, seed: int = 0,
          level: float = 0.95) -> pd.DataFrame:
    """Long table: every (model, k, dimension, difficulty) cell incl. ``overall`` rows, pooled over samples."""
    rows = []
    for model, m in ps.groupby("model", sort=True):
        for k in ks:
            groups: list[tuple[str, str, pd.DataFrame]] = []
            for dim in DIMENSIONS:
                d = m[m["dimension"] == dim]
                if d.empty:
                    continue
                groups += [(dim, diff, d[d["difficulty"] == diff]) for diff in DIFFICULTIES]
                groups.append((dim, "overall", d))
            groups.append(("overall", "overall", m))
            for dim, diff, g in groups:
                rows.append({"model": model, "k": k, "dimension": dim, "difficulty": diff,
                             **_cell(g, k, n_boot=n_boot, seed=seed, level=level)})
    return pd.DataFrame(rows)


def _by(ps: pd.DataFrame, key: str, *, ks: Sequence[int], n_boot: int, seed: int, level: float) -> pd.DataFrame:
    rows = []
    for (model, val), g in ps.groupby(["model", key], sort=True):
        for k in ks:
            rows.append({"model": model, key: val, "k": k, **_cell(g, k, n_boot=n_boot, seed=seed, level=level)})
    return pd.DataFrame(rows)


def column_name(dim: str, diff: str) -> str:
    return "Overall" if dim == "overall" else f"{DIMENSION_SHORT[dim]} {DIFF_LABEL[diff]}"


def wide(long: pd.DataFrame, k: int, value: str = "value") -> pd.DataFrame:
    """The paper's layout: one row per model; 4 dimensions × (Easy, Med., Hard, Over.) then Overall.
    Percent with 2 decimals (``value``) or sample counts (``n_samples``)."""
    sub = long[long["k"] == k]
    cols = [column_name(d, f) for d in DIMENSIONS for f in (*DIFFICULTIES, "overall")] + ["Overall"]
    out = []
    for model, g in sub.groupby("model", sort=True):
        row: dict[str, Any] = {"model": model}
        for r in g.itertuples(index=False):
            v = getattr(r, value)
            if value == "value":
                row[column_name(r.dimension, r.difficulty)] = np.nan if pd.isna(v) else round(float(v), 2)
            else:
                row[column_name(r.dimension, r.difficulty)] = int(v)
        out.append(row)
    frame = pd.DataFrame(out)
    present = [c for c in cols if c in frame.columns]
    return frame[["model", *present]] if not frame.empty else pd.DataFrame(columns=["model", *cols])


def prepare(scores: pd.DataFrame, samples: Sequence[Any] | None = None, *,
            scorers: Sequence[str] = SCORERS, metric: str = METRIC) -> pd.DataFrame:
    """The score rows of the TiViBench scorers with dimension / difficulty / task type / family columns
    (from the samples' metadata when given, else from the score table's category / task / difficulty)."""
    df = scores
    if "scorer" in df.columns:
        df = df[df["scorer"].isin(list(scorers))]
    if "metric" in df.columns:
        df = df[df["metric"].isin([metric, "*"])]
    df = df.copy()
    meta = {s.id: s.metadata for s in samples or ()}
    dims = df["category"] if "category" in df.columns else pd.Series("", index=df.index)
    tasks = df["task"] if "task" in df.columns else pd.Series("", index=df.index)
    df["dimension"] = [meta.get(sid, {}).get("dimension") or d for sid, d in zip(df["sample_id"], dims, strict=True)]
    df["task_type"] = [meta.get(sid, {}).get("task_type") or t for sid, t in zip(df["sample_id"], tasks, strict=True)]
    df["family"] = [meta.get(sid, {}).get("metric_family") or "" for sid in df["sample_id"]]
    if "difficulty" not in df.columns:
        df["difficulty"] = ""
    df["difficulty"] = df["difficulty"].fillna("").astype(str)
    return df


def tivibench_tables(scores: pd.DataFrame, samples: Sequence[Any] | None = None, *, n_boot: int = 1000,
                     level: float = 0.95, seed: int = 0, scorers: Sequence[str] = SCORERS, metric: str = METRIC,
                     backends: dict[str, str] | None = None, prefix: str = "tivibench") -> AggregateResult:
    """Aggregate the TiViBench score rows (see the module docstring)."""
    result = AggregateResult()
    result.tables["failures"] = failures_table(scores)
    df = prepare(scores, samples, scorers=scorers, metric=metric)
    if df.empty:
        result.summary = {"benchmark": "tivibench", "models": {}, "note": "no TiViBench score rows"}
        return result
    ps = per_sample(df)
    opts = dict(n_boot=n_boot, seed=seed, level=level)
    long = cells(ps, **opts)
    for k in KS:
        result.tables[f"{prefix}_pass{k}"] = with_measured(wide(long, k), ps, k)
    result.tables[f"{prefix}_counts"] = wide(long, 1, "n_samples")
    result.tables[f"{prefix}_cells"] = long
    by_task = _by(ps, "task_type", ks=KS, **opts)
    if not by_task.empty:
        by_task.insert(2, "task_name", by_task["task_type"].map(lambda t: TASK_TYPES.get(t, ("", t))[1]))
    result.tables[f"{prefix}_by_task"] = by_task
    result.tables[f"{prefix}_by_family"] = _by(ps, "family", ks=KS, **opts)
    models: dict[str, Any] = {}
    for r in long[(long["dimension"] == "overall")].itertuples(index=False):
        m = models.setdefault(str(r.model), {})
        m[f"pass@{r.k}"] = None if pd.isna(r.value) else round(float(r.value), 2)
        m[f"pass@{r.k}_ci"] = [None if pd.isna(x) else round(float(x), 2) for x in (r.ci_low, r.ci_high)]
        m.update({"n_samples": r.n_samples, "n_videos": r.n_videos, "n_unscored": r.n_unscored,
                  "n_error": r.n_error, "samples_unscored": r.samples_unscored})
        m[f"n_short@{r.k}"] = r.n_short
    result.summary = {
        "benchmark": "tivibench", "unit": "percent", "ci_level": level, "n_boot": n_boot, "models": models,
        "headline_tables": [f"{prefix}_pass1", f"{prefix}_pass5"], "backends": backends or {},
        "table_notes": table_notes(prefix, int(ps["n"].max()) if len(ps) else 0),
    }
    declare_formats(result.summary, prefix)
    return result


def measured_as(n: pd.Series, k: int) -> str:
    """What a Pass@k column really measures given the scored videos per sample ``n``: ``"Pass@5"`` when every
    scored sample has at least k; else says that (and how) it falls back to Pass@n."""
    got = n[n > 0]
    if got.empty:
        return "nothing scored"
    if int(got.min()) >= k:
        return f"Pass@{k}"
    if int(got.max()) < k:
        most = int(got.max())
        return (f"not Pass@{k}: {most} scored video{'s' if most > 1 else ''} per sample at most, so this is "
                f"Pass@{most}" + (" (= Pass@1)" if most == 1 else ""))
    return f"Pass@{k}; {int((got < k).sum())} of {len(got)} samples with fewer than {k} videos: Pass@n"


def with_measured(table: pd.DataFrame, ps: pd.DataFrame, k: int) -> pd.DataFrame:
    """``table`` (one row per model) with a ``measured as`` column for k > 1 (see :func:`measured_as`)."""
    if k == 1 or table.empty:
        return table
    by_model = {m: measured_as(g["n"], k) for m, g in ps.groupby("model")}
    return table.assign(**{"measured as": table["model"].map(by_model)})


def table_notes(prefix: str, most: int) -> dict[str, str]:
    """Notes of the Pass@1 / Pass@5 / counts tables; ``most``: the most scored videos of any sample."""
    p5 = ("unbiased Pass@5 (%) over the seeds; a sample with n < 5 scored videos gets Pass@n (counted as n_short "
          "in the cells table)")
    if most < 5:
        p5 = (f"NOT a measured Pass@5: at most {most} scored video{'s' if most != 1 else ''} per sample (seeds), so "
              f"each value is Pass@{most}" + (", identical to Pass@1" if most == 1 else "")
              + "; run 5 seeds (--seeds 0,1,2,3,4) to measure Pass@5")
    return {
        f"{prefix}_pass1": "Pass@1 (%) = mean over samples of c/n; cells pool samples (Over. = all samples "
                           "of the dimension, Overall = all samples); unscored videos are left out of n",
        f"{prefix}_pass5": p5,
        f"{prefix}_counts": "samples with at least one scored video per cell",
    }


def declare_formats(summary: dict[str, Any], prefix: str) -> None:
    """Percentages with the paper's 2 decimals."""
    from vreason.aggregate.tables import declare_format

    cols = [column_name(d, f) for d in DIMENSIONS for f in (*DIFFICULTIES, "overall")] + ["Overall"]
    for k in KS:
        declare_format(summary, f"{prefix}_pass{k}", digits={c: 2 for c in cols})
    for name in ("cells", "by_task", "by_family"):
        declare_format(summary, f"{prefix}_{name}", digits={"value": 2, "ci_low": 2, "ci_high": 2},
                       intervals={"value": ("ci_low", "ci_high")})


__all__ = ["cells", "per_sample", "prepare", "sample_pass_at_k", "tivibench_tables", "wide"]


def suite_layout(scores: pd.DataFrame, *, scorer: str = "synth-verifier", metric: str = "score", n_boot: int = 1000,
                 seed: int = 0, level: float = 0.95) -> dict[str, pd.DataFrame]:
    """The built-in suite's scores in TiViBench's layout (``tivibench_pass1`` / ``pass5`` / ``counts``): each
    family under its TiViBench dimension (:func:`vreason.synth.export_tivibench.family_placement`)."""
    from vreason.synth.export_tivibench import family_placement

    if scores.empty or "category" not in scores.columns:
        return {}
    df = scores.copy()
    places = {f: family_placement(str(f)) for f in df["category"].dropna().unique()}
    df["task"] = df["category"].map(lambda f: places.get(f, ("?", f))[1])
    df["category"] = df["category"].map(lambda f: places.get(f, ("?", f))[0])
    df = df[df["category"].isin(list(DIMENSIONS))]
    if df.empty:
        return {}
    res = tivibench_tables(df, None, n_boot=n_boot, seed=seed, level=level, scorers=(scorer,), metric=metric)
    return {k: v for k, v in res.tables.items() if k in ("tivibench_pass1", "tivibench_pass5", "tivibench_counts")}


def suite_layout_notes(scores: pd.DataFrame, tables: dict[str, pd.DataFrame], summary: dict[str, Any]) -> None:
    """The notes and formats of :func:`suite_layout`'s tables, added to the suite's ``summary``."""
    if "tivibench_pass1" not in tables:
        return
    seeds = scores.groupby(["model", "sample_id"])["seed"].nunique() if "seed" in scores.columns else None
    most = int(seeds.max()) if seeds is not None and len(seeds) else 1
    summary.setdefault("table_notes", {}).update(table_notes("tivibench", most))
    declare_formats(summary, "tivibench")
