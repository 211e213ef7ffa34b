"""RULER-Bench aggregation against hand-computed values (released cal_acc.py semantics)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from vreason.core.records import Mode, Sample
from vreason.protocols.ruler.tables import aggregate_ruler, instance_table

SAMPLES = [
    Sample(id="physics-0", benchmark="ruler", category="science", task="physics", mode=Mode.t2v),
    Sample(id="chemistry-0", benchmark="ruler", category="science", task="chemistry", mode=Mode.t2v),
    Sample(id="maze-0", benchmark="ruler", category="game", task="maze", mode=Mode.i2v),
    Sample(id="color-0", benchmark="ruler", category="vision rule", task="color", mode=Mode.i2v),
    Sample(id="count-0", benchmark="ruler", category="vision rule", task="count", mode=Mode.i2v),
]
CAT = {s.id: s for s in SAMPLES}


def _rows(model, sid, vals, seed=0, status="ok"):
    s = CAT[sid]
    out = []
    for metric, v in vals.items():
        out.append({"sample_id": sid, "model": model, "seed": seed, "scorer": "ruler_checklist", "metric": metric,
                    "value": v if status == "ok" else None, "normalized": v / 100 if status == "ok" else None,
                    "status": status, "reason": None if status == "ok" else "judge reply unusable",
                    "category": s.category, "task": s.task, "mode": s.mode.value})
    return out


def scores() -> pd.DataFrame:
    rows = []
    rows += _rows("A", "physics-0", {"IF": 100, "VC": 50, "VF": 100, "RC": 0})
    rows += _rows("A", "chemistry-0", {"IF": 50, "VC": 100, "VF": 100, "RC": 50})
    rows += _rows("A", "maze-0", {"IF": 0, "VC": 50, "VF": 50, "RC": 0})
    rows += _rows("A", "color-0", {"IF": 100, "VC": 100, "VF": 50, "RC": 0})  # IF is not a vision-rule metric
    rows += _rows("A", "count-0", {"VC": 50, "VF": 50, "RC": 50})
    rows += _rows("B", "physics-0", {"IF": 100, "VC": 100, "VF": 100, "RC": 50})
    rows += _rows("B", "chemistry-0", {"IF": 0, "VC": 0, "VF": 0, "RC": 0}, status="unscored")
    rows += _rows("B", "maze-0", {"IF": 0, "VC": 50, "VF": 100, "RC": 0}, seed=0)
    rows += _rows("B", "maze-0", {"IF": 100, "VC": 50, "VF": 100, "RC": 50}, seed=1)
    rows += _rows("B", "color-0", {"VC": 50, "VF": 50, "RC": 50})
    rows += _rows("B", "count-0", {"VC": 100, "VF": 100})  # no RC question → 0 in the released script
    rows.append({**_rows("A", "maze-0", {"VQ": 1.0})[0], "scorer": "other"})  # another scorer: ignored
    return pd.DataFrame(rows)


def _cell(t, cat, metric, model):
    return float(t[(t["Category"] == cat) & (t["Metric"] == metric)][model].iloc[0])


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    out = tmp_path_factory.mktemp("ruler_out")
    return aggregate_ruler(scores(), SAMPLES, str(out), n_boot=400), out


def test_table2_hand_computed(result):
    res, _ = result
    t = res.tables["ruler_table2"]
    # model A
    assert _cell(t, "science", "IF", "A") == 75 and _cell(t, "science", "RC", "A") == 25
    assert _cell(t, "science", "Avg", "A") == 68.75
    assert _cell(t, "game", "Avg", "A") == 25
    assert _cell(t, "vision rule", "VC", "A") == 75 and _cell(t, "vision rule", "Avg", "A") == 50  # 3 metrics
    assert not ((t["Category"] == "vision rule") & (t["Metric"] == "IF")).any()
    assert _cell(t, "Average", "IF", "A") == 37.5  # over the non-vision categories only
    assert _cell(t, "Average", "VC", "A") == round(200 / 3, 2)
    assert _cell(t, "Average", "RC", "A") == round(50 / 3, 2)
    assert _cell(t, "Average", "Avg", "A") == 46.88  # mean of the four overall metrics = 46.875
    # model B: unscored instance left out, seeds averaged, missing RC question counted 0
    assert _cell(t, "science", "Avg", "B") == 87.5
    assert _cell(t, "game", "IF", "B") == 50 and _cell(t, "game", "Avg", "B") == 56.25
    assert _cell(t, "vision rule", "RC", "B") == 25 and _cell(t, "vision rule", "Avg", "B") == 58.33
    assert _cell(t, "Average", "VF", "B") == 91.67 and _cell(t, "Average", "Avg", "B") == 68.75
    assert list(t["Category"])[-1] == "Win Rate"


def test_category_macro_is_not_the_instance_mean(result):
    res, _ = result
    inst = res.tables["ruler_instances"]
    a = inst[inst["model"] == "A"]
    assert a["Avg"].mean() == pytest.approx(52.5)  # micro mean over instances differs …
    assert res.summary["overall"]["A"]["Avg"] == pytest.approx(46.875)  # … from the category-macro overall


def test_skip_mode_leaves_missing_metric_out():
    inst = instance_table(scores(), SAMPLES, missing_metric="skip")
    row = inst[(inst["model"] == "B") & (inst["sample_id"] == "count-0")].iloc[0]
    assert math.isnan(row["RC"]) and row["Avg"] == 100
    zero = instance_table(scores(), SAMPLES).set_index(["model", "sample_id"])
    assert zero.loc[("B", "count-0"), "RC"] == 0 and zero.loc[("B", "maze-0"), "n_seeds"] == 2
    assert ("B", "chemistry-0") not in zero.index
    with pytest.raises(ValueError):
        instance_table(scores(), SAMPLES, missing_metric="nan")


def test_win_rate_definition(result):
    res, _ = result
    w = res.tables["ruler_win_rate"].set_index("model")
    # 14 (instance, metric) pairs both scored: A higher on 2, tied on 4, lower on 8
    assert w.loc["A", "comparisons"] == 14 and w.loc["A", "definition"] == "pairwise_strict"
    assert w.loc["A", "win_rate"] == pytest.approx(2 / 14) and w.loc["B", "win_rate"] == pytest.approx(8 / 14)
    assert w.loc["A", "pairwise_half"] == pytest.approx(4 / 14)
    assert w.loc["B", "pairwise_half"] == pytest.approx(10 / 14)
    assert w.loc["A", "best_share"] == pytest.approx(6 / 14) and w.loc["B", "best_share"] == pytest.approx(12 / 14)
    t = res.tables["ruler_table2"]
    row = t[t["Category"] == "Win Rate"]
    assert row["A"].iloc[0] == round(2 / 14, 3) and row["Metric"].iloc[0] == "pairwise_strict"


def test_mode_split_and_per_task(result):
    res, _ = result
    m = res.tables["ruler_mode_split"].set_index(["model", "mode"])
    assert m.loc[("A", "T2V"), "Avg"] == 68.75 and m.loc[("A", "T2V"), "n"] == 2
    assert m.loc[("A", "I2V"), "Avg"] == pytest.approx(125 / 3)
    assert m.loc[("A", "I2V"), "IF"] == 0  # only the game instance has IF among I2V
    assert m.loc[("A", "I2V"), "Avg_ci_low"] <= 125 / 3 <= m.loc[("A", "I2V"), "Avg_ci_high"]
    pt = res.tables["ruler_per_task"]
    assert list(pt.columns) == ["Category", "Task", "A", "B"]
    # categories and tasks in the released order (science lists chemistry before physics)
    assert list(pt["Task"]) == ["chemistry", "physics", "maze", "color", "count"]
    a = pt.set_index("Task")["A"]
    assert (a["physics"], a["chemistry"], a["maze"], a["color"], a["count"]) == (62.5, 75, 25, 50, 50)
    assert math.isnan(pt.set_index("Task").loc["chemistry", "B"])


def test_bootstrap_cis_bracket_the_estimates_and_are_deterministic(result, tmp_path):
    res, _ = result
    ci = res.tables["ruler_ci"]
    assert ((ci["ci_low"] <= ci["mean"] + 1e-9) & (ci["mean"] <= ci["ci_high"] + 1e-9)).all()
    one = ci[(ci["model"] == "A") & (ci["category"] == "game") & (ci["metric"] == "Avg")].iloc[0]
    assert one["ci_low"] == one["ci_high"] == 25  # a single instance: no spread
    ov = ci[(ci["model"] == "A") & (ci["category"] == "Average") & (ci["metric"] == "Avg")].iloc[0]
    assert ov["mean"] == pytest.approx(46.875) and ov["ci_low"] < ov["mean"] < ov["ci_high"]
    again = aggregate_ruler(scores(), SAMPLES, str(tmp_path), n_boot=400, write=False).tables["ruler_ci"]
    pd.testing.assert_frame_equal(ci, again)
    t2ci = res.tables["ruler_table2_ci"].set_index(["Category", "Metric"])
    assert t2ci.loc[("Average", "Avg"), "A"] == pytest.approx(46.875)  # numbers, not text
    avg = t2ci.loc[("Average", "Avg")]
    assert avg["A low"] == ov["ci_low"] and avg["A high"] == ov["ci_high"]


def test_files_written(result):
    _, out = result
    for name in ("ruler_table2.csv", "ruler_table2_ci.csv", "ruler_mode_split.csv", "ruler_per_task.csv",
                 "ruler_win_rate.csv", "ruler_tables.md"):
        assert (out / name).exists(), name
    back = pd.read_csv(out / "ruler_table2.csv")
    assert np.isclose(back[(back.Category == "science") & (back.Metric == "Avg")]["A"].iloc[0], 68.75)


def test_empty_scores_do_not_crash(tmp_path):
    df = scores().assign(status="error", value=None)
    res = aggregate_ruler(df, SAMPLES, str(tmp_path), n_boot=10)
    assert res.tables["ruler_instances"].empty and res.summary["units_not_scored"]
