"""PAI-Bench-C tables.

* ``pai_c_metrics`` — per model and metric: the mean over scored videos (every caption variant is a row,
  as the released ``per_video`` list), its bootstrap interval resampling whole samples (the six variants of
  one ground truth move together), ``n`` scored, ``unscored`` and ``error`` counts, and ``released_zero``: the
  videos scored by a released rule that yields a number measuring nothing (depth si-RMSE 0.0 when no pixel is
  valid in both depth maps, ``depth_empty=zero``).
* ``pai_c_domains`` — the same per model × domain (robotics / driving / egocentric).
* ``pai_c_global`` — one row per model with the released ``global`` dict (mean of each of ``METRICS``
  over the scored videos) and ``diversity_lpips``.
* Diversity: a sample's value is the mean of its K variant rows (= the mean over ordered pairs i ≠ j),
  only when all K rows were scored; a sample with fewer is counted as ``incomplete``, not averaged.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from vreason.aggregate.bootstrap import bootstrap_ci
from vreason.core.protocol import AggregateResult
from vreason.core.records import Sample

METRICS = ["dover_tech_score", "blur_ssim", "canny_f1_score", "canny_precision", "canny_recall", "depth_si_rmse",
           "seg_m_iou", "seg_recall"]
"""The released ``compute_metrics.METRICS`` (its ``global`` means)."""
EXTRA = ["blur_mse"]
LOWER_IS_BETTER = {"depth_si_rmse", "blur_mse"}


def _details(ev: Any) -> dict[str, Any]:
    import json

    if isinstance(ev, str):
        try:
            ev = json.loads(ev)
        except ValueError:
            return {}
    return (ev or {}).get("details", {}) if isinstance(ev, dict) else {}


def _released_zero(ok: pd.DataFrame) -> int:
    """Scored videos whose depth si-RMSE is the released 0.0 for a video with no pixel valid in both depth maps
    (a 'perfect' score that measures nothing): shown beside the number, never hidden in the mean."""
    if "evidence" not in ok or ok.empty or ok["metric"].iloc[0] != "depth_si_rmse":
        return 0
    return int(sum(bool(_details(ev).get("depth_no_valid_pixel")) for ev in ok["evidence"]))


def _row(part: pd.DataFrame, n_boot: int, level: float, seed: int) -> dict[str, Any]:
    ok = part[part["status"] == "ok"]
    est, lo, hi = bootstrap_ci(ok["value"].astype(float), n_boot=n_boot, level=level, seed=seed,
                               clusters=ok["sample_id"])
    return {"mean": est, "ci_low": lo, "ci_high": hi, "n": int(len(ok)),
            "unscored": int((part["status"] == "unscored").sum()), "error": int((part["status"] == "error").sum()),
            "released_zero": _released_zero(ok)}


def _diversity(df: pd.DataFrame, n_variants: int) -> pd.DataFrame:
    """Per (model, sample): the diversity over ordered pairs when all variants were scored."""
    d = df[df["metric"] == "diversity_lpips"]
    rows = []
    for (model, sid), part in d.groupby(["model", "sample_id"]):
        ok = part[part["status"] == "ok"]
        complete = ok["seed"].nunique() == n_variants
        rows.append({"model": model, "sample_id": sid, "category": part["category"].iloc[0],
                     "value": float(ok["value"].mean()) if complete else np.nan, "complete": complete,
                     "unscored": int((part["status"] == "unscored").sum()),
                     "error": int((part["status"] == "error").sum())})
    return pd.DataFrame(rows, columns=["model", "sample_id", "category", "value", "complete", "unscored", "error"])


def aggregate_pai_c(scores: pd.DataFrame, samples: list[Sample], *, n_variants: int = 6,
                    departing: dict[str, Any] | None = None, n_boot: int = 1000, level: float = 0.95,
                    seed: int = 0) -> AggregateResult:
    res = AggregateResult()
    if scores is None or scores.empty:
        res.summary = {"note": "no scores"}
        return res
    df = scores.copy()
    if "category" not in df.columns:
        cats = {s.id: s.category for s in samples}
        df["category"] = df["sample_id"].map(cats).fillna("")
    metric_rows, domain_rows = [], []
    names = [m for m in METRICS + EXTRA if m in set(df["metric"])]
    for (model, metric), part in df[df["metric"].isin(names)].groupby(["model", "metric"]):
        metric_rows.append({"model": model, "metric": metric, **_row(part, n_boot, level, seed),
                            "better": "lower" if metric in LOWER_IS_BETTER else "higher"})
        for dom, dpart in part.groupby("category"):
            domain_rows.append({"model": model, "domain": dom or "unknown", "metric": metric,
                                **_row(dpart, n_boot, level, seed)})
    div = _diversity(df, n_variants)
    for model, part in div.groupby("model"):
        vals = part["value"].dropna()
        est, lo, hi = bootstrap_ci(vals, n_boot=n_boot, level=level, seed=seed)
        metric_rows.append({"model": model, "metric": "diversity_lpips", "mean": est, "ci_low": lo, "ci_high": hi,
                            "n": int(len(vals)), "unscored": int(part["unscored"].sum()),
                            "error": int(part["error"].sum()), "released_zero": 0, "better": "higher",
                            "incomplete": int((~part["complete"]).sum())})
        for dom, dpart in part.groupby("category"):
            v = dpart["value"].dropna()
            e, lo_, hi_ = bootstrap_ci(v, n_boot=n_boot, level=level, seed=seed)
            domain_rows.append({"model": model, "domain": dom or "unknown", "metric": "diversity_lpips", "mean": e,
                                "ci_low": lo_, "ci_high": hi_, "n": int(len(v)),
                                "unscored": int(dpart["unscored"].sum()),
                                "error": int(dpart["error"].sum()), "released_zero": 0})
    table = pd.DataFrame(metric_rows)
    res.tables["pai_c_metrics"] = table
    res.tables["pai_c_domains"] = pd.DataFrame(domain_rows)
    glob = []
    for model, part in table.groupby("model"):
        row = {"model": model}
        for m in [*METRICS, "diversity_lpips"]:
            hit = part[part["metric"] == m]
            row[m] = float(hit["mean"].iloc[0]) if len(hit) else np.nan
        glob.append(row)
    res.tables["pai_c_global"] = pd.DataFrame(glob)
    backends: dict[str, list[str]] = {}
    for ev in df.loc[df["status"] == "ok", "evidence"].dropna().unique()[:2000] if "evidence" in df else []:
        import json

        det = (json.loads(ev) if isinstance(ev, str) else ev or {}).get("details", {})
        for k in ("depth_backend", "detector", "segmenter", "quality_backend", "lpips_backend"):
            if det.get(k) and det[k] not in backends.setdefault(k, []):
                backends[k].append(det[k])
    res.summary = {"global": {r["model"]: {k: v for k, v in r.items() if k != "model"} for r in glob},
                   "models_used": backends, "departing_from_released": departing or {},
                   "diversity_incomplete": int((~div["complete"]).sum()) if len(div) else 0,
                   "depth_no_valid_pixel_scored_0": int(table["released_zero"].sum()) if len(table) else 0}
    declare_formats(res.summary)
    return res


DIGITS = {**{m: 4 for m in [*METRICS, "diversity_lpips"]}, "blur_mse": 2}
"""Decimals each metric prints with: its natural precision (SSIM, F1, IoU, LPIPS in [0, 1] keep 4)."""


def declare_formats(summary: dict[str, Any]) -> None:
    """Each row of the long tables with its metric's decimals, the interval beside the mean; ``pai_c_global``
    per column."""
    from vreason.aggregate.tables import declare_format

    by_metric = {"by": "metric", "values": DIGITS, "default": 4}
    for name in ("pai_c_metrics", "pai_c_domains"):
        declare_format(summary, name, digits={c: by_metric for c in ("mean", "ci_low", "ci_high")},
                       intervals={"mean": ("ci_low", "ci_high")})
    declare_format(summary, "pai_c_global", digits=DIGITS)


__all__ = ["METRICS", "aggregate_pai_c"]
