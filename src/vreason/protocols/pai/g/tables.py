"""PAI-Bench-G tables (the paper's Table 8, domain by category, quality dimensions) as the released code
aggregates them.

* Domain (released ``predict/evaluate_vqa.py``, ``compute_vqa_accuracy``): a question's accuracy = mean over
  the seeds where it was scored; a video's = mean over its questions; Domain = mean over videos; a category's
  score = mean over its videos, **0.0 for a category with no video** (its seven categories are always
  reported; such rows are flagged ``empty`` and counted in the header).
* A quality dimension, ``dimension_mean=released`` (default): as the vendored VBench code, over the video
  *files* (every seed is a file): subject and background consistency = summed frame similarities / summed
  frame pairs (``subject_consistency.py`` / ``background_consistency.py``, on one process), the other
  dimensions = mean over files of the per-file value. ``dimension_mean=per_video``: mean over videos of the
  per-video mean over seeds (unweighted). Normalised values are not clamped (aesthetic / 10 can exceed 1, as
  released); values outside [0, 1] are counted beside the number.
* Quality = unweighted mean of the dimensions scored (or chosen); Overall = (Domain + Quality) / 2 (the paper's
  Table 8; no released code combines them). All ×100, with bootstrap intervals resampling videos.
* Table 8 also shows the human study's ELO (Overall, Domain = physical plausibility, Quality = video quality)
  when the run holds pairwise votes (:func:`vreason.human.ratings.pai_elo_half`).
"""

from __future__ import annotations

import json
import warnings
from typing import Any, Literal

import numpy as np
import pandas as pd

from vreason.core.protocol import AggregateResult
from vreason.core.records import Sample
from vreason.protocols.pai.g.quality import DIMENSIONS

DimensionMean = Literal["released", "per_video"]
FRAME_WEIGHTED = ("subject_consistency", "background_consistency")
"""Dimensions the released code averages over frame pairs, not over videos."""


def _details(ev: Any) -> dict[str, Any]:
    try:
        d = json.loads(ev) if isinstance(ev, str) else (ev or {})
        return d.get("details") or {}
    except (ValueError, AttributeError):
        return {}


def question_table(scores: pd.DataFrame) -> pd.DataFrame:
    """model, sample_id, seed, uid, correct (NaN = unscored), counted_wrong (a reply without an answer word
    scored wrong, the released rule) from the domain scorer's evidence."""
    rows = []
    dom = scores[scores["scorer"] == "pai_g_domain"] if "scorer" in scores.columns else scores.iloc[:0]
    for r in dom.itertuples(index=False):
        for qrow in _details(getattr(r, "evidence", None)).get("questions", []):
            rows.append({"model": r.model, "sample_id": r.sample_id, "seed": int(r.seed), "uid": str(qrow.get("uid")),
                         "correct": float(qrow["correct"]) if "correct" in qrow else np.nan,
                         "counted_wrong": int("counted_wrong" in qrow)})
    return pd.DataFrame(rows, columns=["model", "sample_id", "seed", "uid", "correct", "counted_wrong"])


def unit_table(scores: pd.DataFrame, clamp: bool = False) -> pd.DataFrame:
    """One row per ok quality score (model, sample_id, seed, metric): v (normalised; unclamped as released
    unless ``clamp``), pairs, substitute."""
    ok = scores[(scores["status"] == "ok") & (scores["scorer"] == "pai_g_quality")] if len(scores) else scores
    rows = []
    for r in ok.itertuples(index=False):
        d = _details(getattr(r, "evidence", None))
        rows.append({"model": r.model, "sample_id": r.sample_id, "seed": int(r.seed), "metric": r.metric,
                     "v": float(r.normalized if clamp else d.get("normalized_unclamped", r.normalized)),
                     "pairs": d.get("pairs"), "outside": "normalized_unclamped" in d,
                     "substitute": str(d.get("substitute") or "").split(" (")[0]})
    return pd.DataFrame(rows, columns=["model", "sample_id", "seed", "metric", "v", "pairs", "outside", "substitute"])


def video_table(scores: pd.DataFrame, samples: list[Sample], clamp: bool = False) -> pd.DataFrame:
    """One row per (model, video): category, domain (0–1), the dimensions (0–1, mean over seeds), questions
    scored / unscored / counted wrong."""
    cat = {s.id: s.category for s in samples}
    qt = question_table(scores)
    per_q = qt.groupby(["model", "sample_id", "uid"]).agg(correct=("correct", "mean"),
                                                          counted_wrong=("counted_wrong", "sum")).reset_index()
    vid = per_q.groupby(["model", "sample_id"]).agg(domain=("correct", "mean"), q_scored=("correct", "count"),
                                                    q_total=("correct", "size"),
                                                    counted_wrong=("counted_wrong", "sum")).reset_index()
    vid["q_unscored"] = vid["q_total"] - vid["q_scored"]
    ut = unit_table(scores, clamp)
    if len(ut):
        dims = ut.groupby(["model", "sample_id", "metric"])["v"].mean().unstack("metric").reset_index()
        vid = dims.merge(vid, on=["model", "sample_id"], how="outer") if len(vid) else dims
    for d in (*DIMENSIONS, "domain", "q_scored", "q_unscored", "counted_wrong"):
        if d not in vid.columns:
            vid[d] = np.nan
    vid["category"] = [cat.get(s, "") for s in vid["sample_id"]]
    return vid[["model", "sample_id", "category", "domain", *DIMENSIONS, "q_scored", "q_unscored", "counted_wrong"]]


def sums(ut: pd.DataFrame, vids: list[str], dims: list[str], mode: DimensionMean) -> tuple[np.ndarray, np.ndarray]:
    """Per video (rows, in ``vids`` order) and dimension: the numerator S and weight W whose ratio of column
    sums is the dimension's value (released: S = Σ v·pairs, W = Σ pairs for the frame-weighted dimensions and
    S = Σ v, W = #files for the others; per_video: S = mean over seeds, W = 1)."""
    s = np.zeros((len(vids), len(dims)))
    w = np.zeros((len(vids), len(dims)))
    pos = {v: i for i, v in enumerate(vids)}
    for (sid, metric), g in ut.groupby(["sample_id", "metric"]):
        if metric not in dims or sid not in pos:
            continue
        i, j = pos[sid], dims.index(metric)
        if mode == "per_video":
            s[i, j], w[i, j] = g["v"].mean(), 1.0
        elif metric in FRAME_WEIGHTED and g["pairs"].notna().all():
            p = g["pairs"].astype(float).to_numpy()
            s[i, j], w[i, j] = float((g["v"].to_numpy() * p).sum()), float(p.sum())
        else:
            s[i, j], w[i, j] = float(g["v"].sum()), float(len(g))
    return s, w


def _stats(dom: np.ndarray, s: np.ndarray, w: np.ndarray) -> np.ndarray:
    """[Domain, Quality, Overall, dim_1 … dim_k] of one (re)sample of videos."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        d = float(np.nanmean(dom)) if np.isfinite(dom).any() else np.nan
        tw = w.sum(axis=0)
        dims = np.where(tw > 0, s.sum(axis=0) / np.where(tw > 0, tw, 1), np.nan)
        q = float(np.nanmean(dims)) if np.isfinite(dims).any() else np.nan
    o = (d + q) / 2 if np.isfinite(d) and np.isfinite(q) else np.nan
    return np.concatenate([[d, q, o], dims])


def joint_boot(dom: np.ndarray, s: np.ndarray, w: np.ndarray, n_boot: int, level: float,
               seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Estimates and percentile intervals of :func:`_stats`, resampling videos (rows) with replacement."""
    est = _stats(dom, s, w)
    n = len(dom)
    if n < 2:
        return est, np.full_like(est, np.nan), np.full_like(est, np.nan)
    from vreason.aggregate.bootstrap import resample_indices

    boot = np.array([_stats(dom[k], s[k], w[k]) for k in resample_indices(n, n_boot, seed)])
    a = (1 - level) / 2
    lo, hi = np.full_like(est, np.nan), np.full_like(est, np.nan)
    for j in range(boot.shape[1]):
        col = boot[:, j][np.isfinite(boot[:, j])]
        if len(col) and np.isfinite(est[j]):
            lo[j], hi[j] = np.quantile(col, [a, 1 - a])
    return est, lo, hi


def _pct(x: float) -> float:
    return round(100 * float(x), 2) if x is not None and np.isfinite(x) else np.nan


def quality_note(scored: list[str], chosen: list[str], subs: dict[str, str], missing: list[str]) -> str:
    """The text beside a Quality / Overall number: how many dimensions it averages, which are substitutes."""
    parts = [f"{len(scored)}/{len(DIMENSIONS)} dims" + (" chosen" if len(chosen) < len(DIMENSIONS) else "")]
    if subs:
        parts.append("substitutes: " + ", ".join(f"{d}={v}" for d, v in sorted(subs.items())))
    if missing:
        parts.append("not scored: " + ", ".join(missing))
    return "; ".join(parts) if (subs or missing or len(scored) < len(DIMENSIONS)) else ""


def aggregate_pai_g(scores: pd.DataFrame, samples: list[Sample], out_dir: str, *, n_boot: int = 1000,
                    level: float = 0.95, seed: int = 0, write: bool = True, departing: dict[str, Any] | None = None,
                    dimension_mean: DimensionMean = "released", dimensions: list[str] | None = None,
                    elo: pd.DataFrame | None = None, clamp: bool = False) -> AggregateResult:
    from vreason.aggregate.tables import declare_format
    from vreason.protocols.pai.g.data import CATEGORIES
    from vreason.protocols.pai.tables import unscored_counts, write_tables

    chosen = [d for d in DIMENSIONS if dimensions is None or d in dimensions]
    vids = video_table(scores, samples, clamp)
    ut = unit_table(scores, clamp)
    bad_q = unscored_counts(scores, "pai_g_quality")
    t8, dims_rows, cat_rows = [], [], []
    n_empty = n_outside = 0
    for model, g in vids.groupby("model", sort=True):
        g = g.reset_index(drop=True)
        um = ut[ut["model"] == model]
        scored = [d for d in chosen if (um["metric"] == d).any()]
        s, w = sums(um, g["sample_id"].tolist(), scored, dimension_mean)
        est, lo, hi = joint_boot(g["domain"].to_numpy(float), s, w, n_boot, level, seed)
        subs = {d: ", ".join(sorted(set(um.loc[um["metric"] == d, "substitute"]) - {""})) for d in scored}
        subs = {d: v for d, v in subs.items() if v}
        outside = int(um["outside"].sum())
        n_outside += outside
        wrong = int(g["counted_wrong"].fillna(0).sum())
        qnote = quality_note(scored, chosen, subs, [d for d in chosen if d not in scored])
        row: dict[str, Any] = {"model": model}
        for name, k in (("Overall", 2), ("Domain", 0), ("Quality", 1)):
            row.update({name: _pct(est[k]), f"{name}_ci_low": _pct(lo[k]), f"{name}_ci_high": _pct(hi[k])})
        n_unscored = int(g["q_unscored"].fillna(0).sum())
        dnote = "; ".join(x for x in (f"{wrong} replies without yes/no counted wrong" if wrong else "",
                                      f"{n_unscored} questions unscored" if n_unscored else "") if x)
        row.update({"Overall_note": "; ".join(x for x in (qnote, dnote) if x), "Quality_note": qnote,
                    "Domain_note": dnote,
                    "videos": int(len(g)), "videos_with_domain": int(g["domain"].notna().sum()),
                    "replies_counted_wrong": wrong, "questions_unscored": int(g["q_unscored"].fillna(0).sum()),
                    "values_outside_0_1": outside, "quality_dimensions": ", ".join(scored) or "none",
                    "quality_missing": ", ".join(d for d in chosen if d not in scored)})
        t8.append(row)
        for j, d in enumerate(scored):
            bad = bad_q[(bad_q["model"] == model) & (bad_q["metric"] == d)] if len(bad_q) else bad_q
            md = um[um["metric"] == d]
            dims_rows.append({"model": model, "dimension": d, "value": _pct(est[3 + j]), "ci_low": _pct(lo[3 + j]),
                              "ci_high": _pct(hi[3 + j]), "n": int(md["sample_id"].nunique()), "files": len(md),
                              "aggregation": _agg_label(d, dimension_mean),
                              "outside_0_1": int(md["outside"].sum()),
                              "substitute": subs.get(d, ""),
                              "unscored": int(bad["count"].sum()) if len(bad) else 0,
                              "reason": str(bad["example_reason"].iloc[0]) if len(bad) else ""})
        for d in chosen:
            if d not in scored:
                bad = bad_q[(bad_q["model"] == model) & (bad_q["metric"] == d)] if len(bad_q) else bad_q
                dims_rows.append({"model": model, "dimension": d, "value": np.nan, "n": 0, "files": 0,
                                  "aggregation": _agg_label(d, dimension_mean),
                                  "unscored": int(bad["count"].sum()) if len(bad) else 0,
                                  "reason": str(bad["example_reason"].iloc[0]) if len(bad) else ""})
        if not g["domain"].notna().any() and not g["q_scored"].fillna(0).any():
            continue  # no domain score at all (e.g. domain=false): no category table, not seven 0.0 rows
        cat_rows.append(_cat_row(model, "Overall", g, n_boot, level, seed))
        for c in CATEGORIES:  # released: every category reported, 0.0 when it has no video
            gc = g[g["category"] == c]
            n_empty += int(not gc["domain"].notna().any())
            cat_rows.append(_cat_row(model, c, gc, n_boot, level, seed))
    t8_df = pd.DataFrame(t8)
    if elo is not None and len(elo):
        t8_df = elo.merge(t8_df, on="model", how="outer") if len(t8_df) else elo
    tables = {"pai_g_table8": t8_df, "pai_g_domain_by_category": pd.DataFrame(cat_rows),
              "pai_g_quality_dimensions": pd.DataFrame(dims_rows), "pai_g_videos": vids}
    tables = {k: v for k, v in tables.items() if k == "pai_g_table8" or len(v)}
    off = ", ".join(f"{k}={v}" for k, v in (departing or {}).items())
    header = ["PAI-Bench-G: " + (f"options departing from the released code: {off}" if off
                                 else "released-code defaults")]
    n_wrong = int(sum(r["replies_counted_wrong"] for r in t8))
    header.append(f"{n_wrong} judge replies without yes/no counted wrong (released rule; `unparsed=unscored` "
                  "leaves them out)")
    if n_empty:
        header.append(f"{n_empty} category row(s) with no video reported as 0.0, as released (flagged `empty`)")
    if n_outside:
        header.append(f"{n_outside} normalised quality value(s) outside [0, 1] " + ("clamped (`clamp=true`)" if clamp
                      else "kept unclamped, as released"))
    if len(chosen) < len(DIMENSIONS):
        header.append("quality dimensions chosen (`dimensions`): " + ", ".join(chosen))
    summary = {
        "headline_tables": [t for t in ("pai_g_table8", "pai_g_domain_by_category", "pai_g_quality_dimensions")
                            if t in tables],
        "definitions": "question = mean over seeds; video = mean over questions; Domain = mean over videos; "
                       "dimension = " + ("summed similarities / summed frame pairs (consistency), mean over files "
                                         "(others)" if dimension_mean == "released" else "mean over videos") +
                       "; Quality = mean of the scored dimensions; Overall = (Domain + Quality) / 2; all x100",
        "header": header,
        "bootstrap": {"n_boot": n_boot, "level": level, "seed": seed, "unit": "video"},
        "counts": {"replies_counted_wrong": n_wrong, "empty_categories": n_empty, "values_outside_0_1": n_outside},
    }
    declare_format(summary, "pai_g_table8", intervals={k: (f"{k}_ci_low", f"{k}_ci_high")
                                                       for k in ("Overall", "Domain", "Quality")},
                   notes={k: f"{k}_note" for k in ("Overall", "Domain", "Quality")},
                   digits={"Overall": 2, "Domain": 2, "Quality": 2, "ELO Overall": 1, "ELO Domain": 1,
                           "ELO Quality": 1})
    declare_format(summary, "pai_g_domain_by_category", intervals={"value": ("ci_low", "ci_high")},
                   notes={"value": "note"}, digits={"value": 2})
    declare_format(summary, "pai_g_quality_dimensions", intervals={"value": ("ci_low", "ci_high")},
                   digits={"value": 2})
    if write:
        write_tables({k: v for k, v in tables.items() if not v.empty}, out_dir, "pai_g_tables.md", header)
    return AggregateResult(tables=tables, summary=summary)


def _agg_label(dim: str, mode: DimensionMean) -> str:
    if mode == "per_video":
        return "mean over videos of the mean over seeds"
    return "summed similarities / summed frame pairs" if dim in FRAME_WEIGHTED else "mean over video files"


def _cat_row(model: str, name: str, g: pd.DataFrame, n_boot: int, level: float, seed: int) -> dict[str, Any]:
    from vreason.aggregate.bootstrap import bootstrap_ci

    vals = g["domain"].dropna().to_numpy() if len(g) else np.array([])
    wrong = int(g["counted_wrong"].fillna(0).sum()) if len(g) else 0
    if not len(vals):
        return {"model": model, "domain": name, "value": 0.0, "ci_low": np.nan, "ci_high": np.nan, "n": 0,
                "empty": True, "replies_counted_wrong": 0, "note": "no video: 0.0 as released",
                "questions_unscored": int(g["q_unscored"].fillna(0).sum()) if len(g) else 0}
    est, lo, hi = bootstrap_ci(vals, n_boot=n_boot, level=level, seed=seed)
    return {"model": model, "domain": name, "value": _pct(est), "ci_low": _pct(lo), "ci_high": _pct(hi),
            "n": int(len(vals)), "empty": False, "replies_counted_wrong": wrong,
            "note": f"{wrong} replies without yes/no counted wrong" if wrong else "",
            "questions_unscored": int(g["q_unscored"].fillna(0).sum())}


__all__ = ["FRAME_WEIGHTED", "aggregate_pai_g", "joint_boot", "question_table", "quality_note", "sums",
           "unit_table", "video_table"]
