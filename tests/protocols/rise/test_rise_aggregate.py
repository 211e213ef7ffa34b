"""RISE aggregation against hand-computed values (logical weights, unscored samples, Accuracy)."""

from __future__ import annotations

import json
import os

import numpy as np
import pandas as pd
import pytest

from vreason.core.records import Sample
from vreason.protocols.rise.aggregate import summarize_group, table1, table2, unit_table, weighted_score
from vreason.protocols.rise.protocol import RiseProtocol

SCALE = {"ra": (0, 1), "tc": (1, 5), "pr": (1, 5), "vq": (1, 3)}


def row(model, sid, metric, value, status="ok", reason=None):
    lo, hi = SCALE[metric]
    ok = status == "ok"
    return {"sample_id": sid, "model": model, "seed": 0, "scorer": f"rise_{metric}", "scorer_version": "1",
            "metric": metric, "value": value if ok else None,
            "normalized": (value - lo) / (hi - lo) if ok else None, "status": status,
            "reason": reason if not ok else None, "passed": None, "frame_policy": "x", "judge": "j",
            "benchmark": "rise", "category": {"com": "commonsense", "log": "logical", "tem": "temporal"}[sid[:3]],
            "task": "", "difficulty": "", "mode": "ti2v",
            "evidence": json.dumps({"frame_policy": "x", "frame_indices": [0],
                                    "judge": {"judge": "j", "raw_reply": f"reply {sid} {metric}"}})}


def scores():
    U = "unscored"
    rows = [
        *[row("m1", "com_1", m, v) for m, v in (("ra", 1.0), ("tc", 5), ("pr", 5), ("vq", 3))],
        *[row("m1", "com_2", m, v) for m, v in (("ra", 0.5), ("tc", 4), ("pr", 3), ("vq", 2))],
        *[row("m1", "log_1", m, v) for m, v in (("ra", 1.0), ("tc", 5), ("vq", 3))],
        *[row("m1", "log_2", m, v) for m, v in (("ra", 0.5), ("tc", 3), ("vq", 3))],
        row("m1", "tem_1", "ra", None, U, "3 answers for 2 questions"),
        *[row("m1", "tem_1", m, v) for m, v in (("tc", 5), ("pr", 5), ("vq", 3))],
        row("m1", "tem_2", "ra", None, U, "not valid JSON"),
        *[row("m1", "tem_2", m, v) for m, v in (("tc", 2), ("pr", 5), ("vq", 3))],
        *[row("m2", "com_1", m, v) for m, v in (("ra", 1.0), ("tc", 5), ("pr", 5), ("vq", 3))],
    ]
    return pd.DataFrame(rows)


def test_units_and_pass_logic():
    u = unit_table(scores()).set_index(["model", "sample_id"])
    assert u.loc[("m1", "com_1"), "passed"] is True
    assert u.loc[("m1", "com_2"), "passed"] is False
    assert u.loc[("m1", "log_1"), "passed"] is True  # PR counted full for logical
    assert u.loc[("m1", "tem_1"), "passed"] is None  # hinges on the unscored RA
    assert u.loc[("m1", "tem_2"), "passed"] is False  # TC 2 fails whatever RA was
    assert np.isnan(u.loc[("m1", "tem_1"), "ra"]) and u.loc[("m1", "tem_1"), "ra_status"] == "unscored"
    assert u.loc[("m1", "log_1"), "pr_status"] == "absent"
    assert u.loc[("m1", "com_2"), "tc"] == pytest.approx(75.0)


def test_full_set_by_hand():
    u = unit_table(scores())
    s = summarize_group(u[u.model == "m1"], logical_group=False, n_boot=200)
    assert s["RA"][0] == pytest.approx(75.0) and s["RA_n"] == 4 and s["RA_unscored"] == 2
    assert s["TC"][0] == pytest.approx(75.0)
    assert s["PR"][0] == pytest.approx(87.5) and s["PR_n"] == 4  # non-logical samples only
    assert s["VQ"][0] == pytest.approx(550 / 6)
    assert s["W.Score"][0] == pytest.approx(0.4 * 75 + 0.25 * 75 + 0.25 * 87.5 + 0.1 * 550 / 6)
    assert s["Accuracy"][0] == pytest.approx(40.0) and s["acc_n"] == 5 and s["acc_excluded"] == 1
    assert s["n_unscored_units"] == 2
    for key in ("RA", "TC", "PR", "VQ", "W.Score", "Accuracy"):
        est, lo, hi = s[key]
        assert lo <= est + 1e-9 and est <= hi + 1e-9 and hi - lo > 0


def test_per_category_by_hand():
    u = unit_table(scores())
    m1 = u[u.model == "m1"]
    com = summarize_group(m1[m1.category == "commonsense"], logical_group=False, n_boot=100)
    assert com["W.Score"][0] == pytest.approx(0.4 * 75 + 0.25 * 87.5 + 0.25 * 75 + 0.1 * 75)
    log = summarize_group(m1[m1.category == "logical"], logical_group=True, n_boot=100)
    assert log["W.Score"][0] == pytest.approx(0.5 * 75 + 0.3 * 75 + 0.2 * 100)
    assert log["Accuracy"][0] == pytest.approx(50.0)
    tem = summarize_group(m1[m1.category == "temporal"], logical_group=False, n_boot=100)
    assert np.isnan(tem["W.Score"][0])  # RA never scored: no W.Score rather than a 0
    assert tem["Accuracy"][0] == 0.0 and tem["acc_excluded"] == 1 and tem["RA_unscored"] == 2


def test_weighted_score_formula():
    block = np.array([[100, 100, np.nan, 100], [0, 0, np.nan, 0]], float)
    assert weighted_score(block, np.array([True, True]), logical_group=True) == pytest.approx(50.0)
    # a full set of only logical samples has no PR mean: no W.Score
    assert np.isnan(weighted_score(block, np.array([True, True]), logical_group=False))


def test_tables_layout():
    u = unit_table(scores())
    t1, t1n = table1(u, n_boot=100)
    assert list(t1["Model"]) == ["m1", "m2"]
    assert list(t1.columns[:7]) == ["Model", "RA", "TC", "PR", "VQ", "W.Score", "Accuracy"]
    m1 = t1.set_index("Model").loc["m1"]
    assert m1["RA"].startswith("75.00 [") and m1["Accuracy"].startswith("40.00 [")
    assert m1["Unscored/error"] == "RA 2" and m1["Acc. excluded"] == 1
    m2 = t1n.set_index("model").loc["m2"]  # a single sample: degenerate interval
    assert m2["W.Score"] == m2["W.Score_lo"] == m2["W.Score_hi"] == pytest.approx(100.0)
    t2, t2n = table2(u, n_boot=100)
    assert list(t2.columns[1:5]) == ["Commonsense WS", "Commonsense Acc.", "Subject WS", "Subject Acc."]
    r = t2.set_index("Model").loc["m1"]
    assert r["Logical WS"].startswith("80.00 [") and r["Temporal WS"] == "–" and r["Subject WS"] == "–"
    assert set(t2n["category"]) == {"commonsense", "logical", "temporal"}


def test_protocol_aggregate_writes_tables(tmp_path):
    samples = [Sample(id=s, benchmark="rise", category=c) for s, c in
               (("com_1", "commonsense"), ("com_2", "commonsense"), ("log_1", "logical"), ("log_2", "logical"),
                ("tem_1", "temporal"), ("tem_2", "temporal"))]
    res = RiseProtocol(n_boot=50).aggregate(scores(), samples, str(tmp_path))
    for f in ("rise_table1.md", "rise_table1.csv", "rise_table2.md", "rise_table2.csv",
              "rise_table1_numeric.csv", "rise_table2_numeric.csv", "rise_samples.jsonl"):
        assert os.path.isfile(tmp_path / f), f
    assert set(res.tables) == {"rise_table1", "rise_table2"}
    assert res.summary["models"]["m1"]["acc_excluded"] == 1
    recs = [json.loads(x) for x in (tmp_path / "rise_samples.jsonl").read_text().splitlines()]
    tem1 = next(r for r in recs if r["sample_id"] == "tem_1" and r["model"] == "m1")
    assert tem1["passed"] is None and tem1["metrics"]["ra"]["status"] == "unscored"
    assert tem1["metrics"]["ra"]["reason"] == "3 answers for 2 questions"
    assert tem1["metrics"]["tc"]["judge"]["raw_reply"] == "reply tem_1 tc"
    md = (tmp_path / "rise_table1.md").read_text()
    assert "W.Score" in md and "| m1" in md


def test_missing_video_units_do_not_void_the_interval():
    rows = [*[row("m1", "tem_1", m, v) for m, v in (("ra", 1.0), ("tc", 5), ("pr", 5), ("vq", 3))],
            *[row("m1", "tem_2", m, v) for m, v in (("ra", 0.5), ("tc", 3), ("pr", 5), ("vq", 2))],
            *[row("m1", "tem_3", m, None, "error", "video missing") for m in ("ra", "tc", "pr", "vq")]]
    s = summarize_group(unit_table(pd.DataFrame(rows)), logical_group=False, n_boot=300)
    est, lo, hi = s["W.Score"]
    assert est == pytest.approx(0.4 * 75 + 0.25 * 75 + 0.25 * 100 + 0.1 * 75)
    assert not np.isnan(lo) and not np.isnan(hi) and lo < est < hi
    assert s["RA_error"] == 1 and s["n_unscored_units"] == 1 and s["acc_n"] == 2
