"""TiViBench tables against hand-computed Pass@1 / Pass@5, incl. short and unscored samples."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from vreason.protocols.tivibench.tables import sample_pass_at_k, tivibench_tables

# sample → (dimension, difficulty, task, verdicts per seed: 1 pass, 0 fail, "u" unscored, "e" error)
PLAN = {
    "A": ("SS", "easy", "graph", [1, 1, 0, 0, 0]),
    "B": ("SS", "easy", "graph", [0, 0, 0, 0, 0]),
    "C": ("SS", "hard", "maze", [0, 1, 0]),                # only 3 videos exist
    "D": ("SV", "medium", "pattern", ["u"] * 5),           # nothing scored
    "E": ("SV", "medium", "pattern", [0, 1, 0, 0, "u"]),   # 4 scored
    "F": ("SL", "easy", "sudoku", [1, 1, 1, 1, 1]),
    "G": ("AT", "hard", "tool", [0, 0, 1, 0, 0]),
    "H": ("AT", "hard", "tool", [0, 0, 0, "e", 0]),
}


def _frame(plan=PLAN, model="m", scorer="tivibench_check") -> pd.DataFrame:
    rows = []
    for sid, (dim, diff, task, verdicts) in plan.items():
        for seed, v in enumerate(verdicts):
            status = {"u": "unscored", "e": "error"}.get(v, "ok") if isinstance(v, str) else "ok"
            rows.append({"sample_id": sid, "model": model, "seed": seed, "scorer": scorer, "metric": "pass",
                         "status": status, "passed": None if status != "ok" else bool(v),
                         "value": None if status != "ok" else float(v), "category": dim, "task": task,
                         "difficulty": diff, "reason": None if status == "ok" else status})
    return pd.DataFrame(rows)


def test_hand_computed_tables():
    res = tivibench_tables(_frame(), n_boot=200)
    p1 = res.tables["tivibench_pass1"].set_index("model").loc["m"]
    # SS easy: (2/5 + 0)/2; SS hard: C's 1/3; SS Over. pools the 3 samples: (0.4 + 0 + 1/3)/3
    assert p1["Structural & Search Easy"] == 20.0
    assert p1["Structural & Search Hard"] == 33.33
    assert math.isnan(p1["Structural & Search Med."])  # no sample there
    assert p1["Structural & Search Over."] == 24.44      # pooled, not (20 + 33.33)/2
    assert p1["Spatial & Visual Pattern Med."] == 25.0   # E only: 1 of its 4 scored videos; D left out
    assert p1["Symbolic & Logical Over."] == 100.0
    assert p1["Planning & Execution Hard"] == 10.0       # (1/5 + 0/4)/2: H's error video is not a failure
    assert p1["Overall"] == round(100 * (0.4 + 0 + 1 / 3 + 0.25 + 1 + 0.2 + 0) / 7, 2) == 31.19
    cols = list(res.tables["tivibench_pass1"].columns)
    assert cols[:5] == ["model", "Structural & Search Easy", "Structural & Search Med.", "Structural & Search Hard",
                        "Structural & Search Over."] and cols[-1] == "Overall" and len(cols) == 18
    p5 = res.tables["tivibench_pass5"].set_index("model").loc["m"]
    # Pass@5 per sample: A 1, B 0, C 1 (over its 3), E 1 (over its 4), F 1, G 1, H 0 (over its 4)
    assert p5["Structural & Search Easy"] == 50.0 and p5["Structural & Search Over."] == 66.67
    assert p5["Spatial & Visual Pattern Over."] == 100.0 and p5["Planning & Execution Hard"] == 50.0
    assert p5["Overall"] == round(500 / 7, 2) == 71.43

    cells = res.tables["tivibench_cells"].set_index(["model", "k", "dimension", "difficulty"])
    sv = cells.loc[("m", 1, "SV", "medium")]
    assert (sv["n_samples"], sv["samples_unscored"], sv["n_unscored"], sv["n_videos"]) == (1, 1, 6, 4)
    tot5 = cells.loc[("m", 5, "overall", "overall")]
    assert (tot5["n_short"], tot5["n_samples"], tot5["n_error"], tot5["n_passed"]) == (3, 7, 1, 10)
    assert cells.loc[("m", 1, "overall", "overall"), "n_short"] == 0
    lo, hi = tot5["ci_low"], tot5["ci_high"]
    assert lo <= tot5["value"] <= hi and lo < hi
    counts = res.tables["tivibench_counts"].set_index("model").loc["m"]
    assert counts["Structural & Search Over."] == 3 and counts["Overall"] == 7

    by_task = res.tables["tivibench_by_task"].set_index(["model", "task_type", "k"])
    assert by_task.loc[("m", "graph", 1), "value"] == pytest.approx(20.0)
    assert by_task.loc[("m", "graph", 1), "task_name"] == "Graph Traversal"
    assert by_task.loc[("m", "pattern", 1), "value"] == pytest.approx(25.0)
    assert by_task.loc[("m", "tool", 5), "n_short"] == 1
    summ = res.summary["models"]["m"]
    assert summ["pass@1"] == 31.19 and summ["pass@5"] == 71.43 and summ["samples_unscored"] == 1


def test_models_are_separate_rows_and_other_scorers_are_ignored():
    other = _frame(model="z")
    other["passed"] = other["passed"].map(lambda v: None if v is None else True)
    noise = _frame(model="m", scorer="something_else")
    noise["passed"] = True
    res = tivibench_tables(pd.concat([_frame(), other, noise]), n_boot=50)
    p1 = res.tables["tivibench_pass1"].set_index("model")
    assert list(p1.index) == ["m", "z"]
    assert p1.loc["m", "Overall"] == 31.19 and p1.loc["z", "Overall"] == 100.0


def test_sample_pass_at_k_over_what_exists():
    import numpy as np

    got = sample_pass_at_k(np.array([5, 3, 0, 10, 10]), np.array([1, 0, 0, 1, 0]), 5)
    assert got[0] == 1.0 and got[1] == 0.0 and math.isnan(got[2])
    assert got[3] == pytest.approx(1 - math.comb(9, 5) / math.comb(10, 5)) and got[4] == 0.0


def test_no_rows_is_an_empty_summary():
    res = tivibench_tables(pd.DataFrame(columns=["sample_id", "model", "scorer", "metric", "status", "passed"]))
    assert res.summary["models"] == {} and "no TiViBench" in res.summary["note"]


def test_builtin_suite_tables_in_tivibench_layout(tmp_path):
    from vreason.protocols.synth.tables import synth_tables

    rows = []
    for fam, verdicts in (("maze", [1, 0]), ("connect", [1, 1]), ("gravity", [0, 0])):
        for i, v in enumerate(verdicts):
            rows.append({"sample_id": f"{fam}-easy-{i:03d}", "model": "oracle", "seed": 0, "scorer": "synth-verifier",
                         "metric": "score", "status": "ok", "passed": bool(v), "normalized": float(v),
                         "value": float(v), "category": fam, "task": fam, "difficulty": "easy"})
    res = synth_tables(pd.DataFrame(rows), str(tmp_path), n_boot=50, charts=False)
    p1 = res.tables["tivibench_pass1"].set_index("model").loc["oracle"]
    assert p1["Structural & Search Easy"] == 50.0 and p1["Spatial & Visual Pattern Over."] == 100.0
    assert p1["Planning & Execution Easy"] == 0.0 and p1["Overall"] == 50.0
    assert res.tables["tivibench_counts"].set_index("model").loc["oracle", "Overall"] == 6
