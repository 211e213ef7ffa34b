"""MME-CoF-Pro aggregation against hand-computed values: category-macro Average, Table 1/2 cells,
paired hint deltas (text − none over all categories, visual − none over visual-hint samples)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from vreason.core.records import Mode, Sample
from vreason.protocols.mmecof.tables import aggregate_mmecof, combine_runs

VIS = {"vd1", "vd2"}
SAMPLES = [Sample(id=i, benchmark="mmecof", category="Visual Detail", mode=Mode.i2v,
                  metadata={"has_visual_hint": True}) for i in ("vd1", "vd2")] + \
          [Sample(id=i, benchmark="mmecof", category="Physics-based", mode=Mode.i2v,
                  metadata={"has_visual_hint": False}) for i in ("ph1", "ph2", "ph3")]
CAT = {s.id: s.category for s in SAMPLES}


def rs_rows(model, hint_in_evidence, values):
    rows = []
    for sid, v in values.items():
        ev = {"details": {"hint": hint_in_evidence}} if hint_in_evidence else {}
        rows.append({"sample_id": sid, "model": model, "seed": 0, "scorer": "mmecof_rs", "metric": "RS",
                     "value": v, "normalized": v / 100, "status": "ok", "category": CAT[sid],
                     "evidence": json.dumps(ev)})
    return rows


def gq_rows(model, sid, norm):
    return [{"sample_id": sid, "model": model, "seed": 0, "scorer": "mmecof_gq", "metric": m, "value": n * 9,
             "normalized": n, "status": "ok", "category": CAT[sid], "evidence": "{}"} for m, n in norm.items()]


NONE = pd.DataFrame(
    rs_rows("M1", None, {"vd1": 50, "vd2": 100, "ph1": 0, "ph2": 50, "ph3": 0})
    + rs_rows("M2", None, {"vd1": 0})
    + gq_rows("M1", "vd1", {"CS": 1.0, "TC": 0.5, "VS": 0.5, "Hallu": 0.5, "PG": 0.5})
    + [{"sample_id": "vd2", "model": "M2", "seed": 0, "scorer": "mmecof_rs", "metric": "RS", "value": None,
        "normalized": None, "status": "unscored", "category": "Visual Detail", "evidence": "{}"}]
)
TEXT = pd.DataFrame(rs_rows("M1", "text", {"vd1": 100, "vd2": 100, "ph1": 50, "ph2": 50, "ph3": 100}))
VISUAL = pd.DataFrame(rs_rows("M1", "visual", {"vd1": 0, "vd2": 100}))


@pytest.fixture(scope="module")
def res(tmp_path_factory):
    out = tmp_path_factory.mktemp("mmecof")
    text_csv = out / "text_scores.csv"
    TEXT.to_csv(text_csv, index=False)
    return aggregate_mmecof(NONE, SAMPLES, str(out), default_hint="none",
                            other_runs={"text": str(text_csv), "visual": VISUAL}, n_boot=500), out


def cell(t, cat, metric, model):
    return t[(t["Category"] == cat) & (t["Metric"] == metric)][model].iloc[0]


def shown(r, name):
    """The table as the report prints it (its declared format: the paper's ``none(Δhint)`` cells)."""
    from vreason.report.cells import formats_of, text_frame

    return text_frame(r.tables[name], formats_of(r.summary, name))[0]


def test_hint_from_column_evidence_or_default():
    both = combine_runs(NONE.assign(hint="none"), "text", {"text": TEXT.drop(columns=["evidence"])})
    assert set(both["hint"]) == {"none", "text"}
    assert set(combine_runs(TEXT, "none")["hint"]) == {"text"}  # read from evidence details


def test_table1_cells_and_macro_average(res):
    r, _ = res
    raw = r.tables["mmecof_table1"]
    assert list(raw.columns) == ["Category", "Metric", "M1", "M1 Δ", "M2", "M2 Δ"]  # numbers, not text
    assert cell(raw, "Visual Detail", "RS", "M1") == 75.0 and cell(raw, "Visual Detail", "RS", "M1 Δ") == 25.0
    t = shown(r, "mmecof_table1")
    assert list(t.columns) == ["Category", "Metric", "M1", "M2"]
    assert cell(t, "Visual Detail", "RS", "M1") == "75.0(+25.0)"
    assert cell(t, "Physics-based", "RS", "M1") == "16.7(+50.0)"
    # Average = unweighted mean over categories: (75 + 16.67) / 2; effect = (25 + 50) / 2
    assert cell(t, "Average", "RS", "M1") == "45.8(+37.5)"
    assert cell(t, "Visual Detail", "RS", "M2") == "0.0"  # no text run, unscored vd2 left out
    assert cell(t, "Visual Detail", "CS", "M1") == "100.0"
    assert cell(t, "Visual Detail", "Avg", "M1") == "60.0"  # (100 + 4 × 50) / 5
    assert cell(t, "Physics-based", "CS", "M1") == "–"
    assert list(t["Category"]) == ["Visual Detail"] * 3 + ["Physics-based"] * 3 + ["Average"] * 3


def test_table2_visual_only(res):
    r, _ = res
    t = shown(r, "mmecof_table2")
    assert set(t["Category"]) == {"Visual Detail", "Average"}
    assert cell(t, "Visual Detail", "RS", "M1") == "75.0(-25.0)"
    assert cell(t, "Average", "RS", "M1") == "75.0(-25.0)"


def test_paired_hint_deltas_with_cis(res):
    r, _ = res
    d = r.tables["mmecof_hint_deltas"].set_index(["model", "comparison", "metric"])
    text = d.loc[("M1", "text - none", "RS")]
    assert text["delta_macro"] == pytest.approx(37.5) and text["delta_micro"] == pytest.approx(40.0)
    assert text["n_pairs"] == 5 and text["n_categories"] == 2
    assert text["macro_ci_low"] <= 37.5 <= text["macro_ci_high"]
    assert 0 <= text["micro_ci_low"] <= 40 <= text["micro_ci_high"] <= 100
    vis = d.loc[("M1", "visual - none", "RS")]
    assert vis["delta_macro"] == pytest.approx(-25) and vis["n_pairs"] == 2 and vis["n_categories"] == 1
    assert -50 <= vis["macro_ci_low"] <= -25 <= vis["macro_ci_high"] <= 0
    assert ("M2", "text - none", "RS") not in d.index  # nothing to pair
    bc = r.tables["mmecof_hint_deltas_by_category"].set_index(["model", "comparison", "category", "metric"])
    assert bc.loc[("M1", "text - none", "Physics-based", "RS"), "delta"] == pytest.approx(50)
    assert bc.loc[("M1", "text - none", "Visual Detail", "RS"), "ci_low"] >= 0


def test_per_model_hint_category_tables_and_files(res):
    r, out = res
    bm = r.tables["mmecof_by_model"].set_index(["model", "hint"])
    assert bm.loc[("M1", "none"), "RS"] == pytest.approx(45.83, abs=0.01)
    assert bm.loc[("M1", "text"), "RS"] == pytest.approx(83.33, abs=0.01)  # (100 + 66.67) / 2
    assert bm.loc[("M1", "visual"), "RS"] == 50
    bc = r.tables["mmecof_by_category"].set_index(["category", "metric"])
    assert bc.loc[("Physics-based", "RS"), "M1 / text"] == pytest.approx(66.67, abs=0.01)
    assert r.summary["hints"] == ["none", "text", "visual"]
    assert r.summary["rows_not_scored"] == {"mmecof_rs/unscored": 1}
    for name in ("mmecof_table1.csv", "mmecof_table2.csv", "mmecof_table5.csv", "mmecof_hint_deltas.csv",
                 "mmecof_tables.md"):
        assert (out / name).exists(), name


def test_tables_5_and_6_layout(res):
    r, _ = res
    t5 = shown(r, "mmecof_table5")
    assert list(t5["Metric"].unique()) == ["TC", "VS", "Hallu", "PG"]
    assert cell(t5, "Visual Detail", "TC", "M1") == "50.0"
