from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from vreason.aggregate.tables import failures_table, format_ci, pivot_ci, status_counts, summarize
from vreason.core.protocol import AggregateResult
from vreason.protocols.synth.tables import synth_tables
from vreason.report.writer import print_tables, write_report


def _row(model, sid, seed, norm, passed, *, family, difficulty, status="ok", reason=None,
         scorer="synth-verifier", metric="score"):
    return {"sample_id": sid, "model": model, "seed": seed, "scorer": scorer, "scorer_version": "1",
            "metric": metric, "value": norm, "normalized": norm, "status": status, "reason": reason,
            "passed": passed, "frame_policy": "all", "judge": None, "benchmark": "synth",
            "category": family, "task": family, "difficulty": difficulty, "mode": "t2v", "evidence": "{}"}


def _synth_frame() -> pd.DataFrame:
    """Two models, samples m1 (maze easy), m2 (maze hard), s1 (sort easy), seeds 0-2."""
    spec = {
        "A": {"m1": [(1.0, True), (0.2, False), (0.9, True)],
              "m2": [(0.1, False), (0.0, False), (0.3, False)],
              "s1": [(1.0, True), None, (0.8, True)]},  # None = error row
        "B": {"m1": [(0.0, False), (0.0, False), (0.0, False)],
              "m2": [(1.0, True), (1.0, True), (1.0, True)],
              "s1": [(0.0, False), (1.0, True), (0.4, False)]},
    }
    meta = {"m1": ("maze", "easy"), "m2": ("maze", "hard"), "s1": ("sort", "easy")}
    rows = []
    for model, samples in spec.items():
        for sid, seeds in samples.items():
            fam, diff = meta[sid]
            for seed, cell in enumerate(seeds):
                if cell is None:
                    rows.append(_row(model, sid, seed, None, None, family=fam, difficulty=diff,
                                     status="error", reason="video unreadable: A/s1/1.mp4"))
                else:
                    rows.append(_row(model, sid, seed, cell[0], cell[1], family=fam, difficulty=diff))
    # a different scorer's row must not leak into the synth tables (but is listed as a failure)
    rows.append(_row("B", "m1", 0, None, None, family="maze", difficulty="easy", status="unscored",
                     reason="judge reply unparseable", scorer="judge-x"))
    rows.append(_row("A", "m2", 0, 1.0, True, family="maze", difficulty="hard", scorer="other"))
    return pd.DataFrame(rows)


def test_summarize_excludes_non_ok_rows_and_counts_them():
    df = pd.DataFrame({
        "model": ["a"] * 5,
        "normalized": [1.0, 0.5, None, None, 0.0],
        "status": ["ok", "ok", "error", "unscored", "ok"],
    })
    s = summarize(df, "model", scale=100, n_boot=200)
    row = s.iloc[0]
    assert row["mean"] == pytest.approx(50.0)  # (1 + 0.5 + 0) / 3, not / 5
    assert (row["n"], row["n_unscored"], row["n_error"]) == (3, 1, 1)
    assert list(s.columns) == ["model", "mean", "ci_low", "ci_high", "n", "n_unscored", "n_error"]
    # a group with only failures has no estimate but keeps its counts
    only_bad = summarize(df.assign(model=["a", "a", "b", "b", "a"]), ["model"]).set_index("model")
    assert math.isnan(only_bad.loc["b", "mean"]) and only_bad.loc["b", "n"] == 0
    assert only_bad.loc["b", "n_error"] == 1 and only_bad.loc["b", "n_unscored"] == 1
    overall = summarize(df, [])
    assert len(overall) == 1 and overall.iloc[0]["n"] == 3


def test_summarize_clusters_keep_seeds_together():
    df = pd.DataFrame({"g": "x", "sample_id": ["p", "p", "q", "q"], "normalized": [0.0, 0.0, 1.0, 1.0],
                       "status": "ok"})
    s = summarize(df, "g", clusters="sample_id", n_boot=2000).iloc[0]
    # resampling the two samples: means 0, 0.5 or 1 -> the 95% interval is [0, 1]
    assert (s["mean"], s["ci_low"], s["ci_high"]) == (0.5, 0.0, 1.0)


def test_format_and_pivot_ci():
    assert format_ci(71.23, 68.0, 74.06) == "71.2 [68.0, 74.1]"
    assert format_ci(0.5, 0.25, 0.75, digits=2) == "0.50 [0.25, 0.75]"
    assert format_ci(float("nan"), 1, 2) == "–"
    assert format_ci(3.0, float("nan"), float("nan")) == "3.0"
    summary = pd.DataFrame({"model": ["a", "a", "b"], "fam": ["x", "y", "x"], "mean": [10.0, 20.0, 30.0],
                            "ci_low": [5.0, 15.0, 25.0], "ci_high": [15.0, 25.0, 35.0]})
    wide = pivot_ci(summary, "model", "fam").set_index("model")
    assert wide.loc["a", "x"] == "10.0 [5.0, 15.0]"
    assert wide.loc["b", "x"] == "30.0 [25.0, 35.0]"
    assert wide.loc["b", "y"] == ""


def test_failures_table_and_status_counts():
    df = _synth_frame()
    fail = failures_table(df)
    assert fail["count"].sum() == 2
    assert set(fail["reason"]) == {"video unreadable: A/s1/1.mp4", "judge reply unparseable"}
    counts = status_counts(df)
    assert counts["by_status"] == {"error": 1, "ok": 18, "unscored": 1}
    assert counts["samples"] == 3 and counts["models"] == ["A", "B"]
    assert counts["units"] == 18


def test_synth_tables_hand_computed(tmp_path):
    res = synth_tables(_synth_frame(), tmp_path, n_boot=500)
    overall = res.tables["overall"].set_index("model")
    # A: ok rows 8, passes 4 ; B: 9 rows, 4 passes (other scorers excluded)
    assert overall.loc["A", "pass_rate"] == pytest.approx(50.0)
    assert overall.loc["B", "pass_rate"] == pytest.approx(400 / 9)
    assert overall.loc["A", "score"] == pytest.approx(4.3 / 8 * 100)
    a_counts = overall.loc["A", ["n_ok", "n_error", "n_unscored"]].tolist()
    assert a_counts == [8, 1, 0]
    assert overall.loc["B", "n_unscored"] == 0  # the judge-x unscored row belongs to another scorer
    # unbiased Pass@k per sample, averaged; A/s1 has only 2 scored seeds
    assert overall.loc["A", "pass@1"] == pytest.approx(100 * (2 / 3 + 0 + 1) / 3)
    assert overall.loc["A", "pass@2"] == pytest.approx(100 * (1 + 0 + 1) / 3)
    assert overall.loc["A", "pass@3"] == pytest.approx(100 * (1 + 0) / 2)
    assert overall.loc["B", "pass@2"] == pytest.approx(100 * (0 + 1 + 2 / 3) / 3)
    assert overall.loc["B", "pass@3"] == pytest.approx(100 * 2 / 3)
    pk = res.tables["pass_at_k"]
    a3 = pk[(pk["model"] == "A") & (pk["family"] == "all") & (pk["k"] == 3)].iloc[0]
    assert (a3["n_samples"], a3["n_short"]) == (2, 1)

    fam = res.tables["by_family"].set_index(["model", "family"])
    assert fam.loc[("A", "maze"), "pass_rate"] == pytest.approx(100 / 3)
    assert fam.loc[("A", "sort"), "pass_rate"] == pytest.approx(100.0)
    assert fam.loc[("B", "sort"), "pass_rate"] == pytest.approx(100 / 3)
    assert fam.loc[("A", "maze"), "score"] == pytest.approx(2.5 / 6 * 100)
    # B/maze: sample m1 all fail, m2 all pass -> resampling samples gives 0, 50 or 100
    assert (fam.loc[("B", "maze"), "pass_ci_low"], fam.loc[("B", "maze"), "pass_ci_high"]) == (0.0, 100.0)

    fd = res.tables["by_family_difficulty"]
    assert list(fd[fd["model"] == "A"]["difficulty"]) == ["easy", "hard", "easy"]
    diff = res.tables["by_difficulty"].set_index(["model", "difficulty"])
    assert diff.loc[("B", "hard"), "pass_rate"] == pytest.approx(100.0)
    assert diff.loc[("A", "easy"), "pass_rate"] == pytest.approx(100 * 4 / 5)

    head = res.tables["headline"]
    assert list(head.columns) == ["model", "family", "pass %", "CI low", "CI high", "n", "unscored", "error"]
    assert list(head[head["model"] == "A"]["family"]) == ["overall", "maze", "sort"]
    a = head.set_index(["model", "family"])
    assert a.loc[("A", "maze"), "pass %"] == pytest.approx(33.3) and a.loc[("A", "overall"), "pass %"] == 50.0
    assert a.loc[("B", "maze"), "CI low"] == 0.0 and a.loc[("B", "maze"), "CI high"] == 100.0
    assert "pass rate" in res.summary["table_notes"]["headline"]
    board = res.tables["leaderboard"]
    assert list(board["model"]) == ["A", "B"]
    for col in ("pass rate", "pass rate low", "pass rate high", "score", "score low", "score high", "pass@1"):
        assert pd.api.types.is_float_dtype(board[col]), col  # numbers, not "50.0 [..]" text
    assert board.set_index("model").loc["A", "pass rate"] == pytest.approx(50.0)

    summ = res.summary
    json.dumps(summ, allow_nan=False)
    assert summ["models"]["A"]["pass_rate"] == pytest.approx(50.0)
    assert summ["models"]["B"]["families"]["maze"]["pass_rate"] == pytest.approx(50.0)
    assert summ["models"]["A"]["pass_at_k"]["3"] == pytest.approx(50.0)
    assert summ["k_max"] == 3

    for name in ("pass_rate_by_family", "score_by_family"):
        path = res.charts[name]
        with open(path, "rb") as fh:
            assert fh.read(8) == b"\x89PNG\r\n\x1a\n"
    assert res.tables["failures"]["count"].sum() == 2


def test_synth_tables_static_baseline_scores_low(tmp_path):
    rows = []
    for model, p in (("oracle", True), ("static", False)):
        for i in range(6):
            for seed in range(2):
                rows.append(_row(model, f"maze-easy-{i:03d}", seed, float(p), p, family="maze",
                                 difficulty="easy"))
    res = synth_tables(pd.DataFrame(rows), tmp_path, n_boot=200, charts=False)
    overall = res.tables["overall"].set_index("model")
    assert overall.loc["oracle", "pass_rate"] == 100.0 and overall.loc["static", "pass_rate"] == 0.0
    assert overall.loc["static", "pass@2"] == 0.0
    assert res.charts == {}


def test_synth_tables_empty_frame(tmp_path):
    res = synth_tables(_synth_frame().iloc[:0], tmp_path)
    assert res.summary["models"] == {} and "no synth-verifier" in res.summary["note"]


def test_write_report_files_and_content(tmp_path):
    df = _synth_frame()
    res = synth_tables(df, tmp_path / "report", n_boot=300)
    unit_fail = [{"sample_id": "s1", "model": "A", "seed": 1, "scorer": "synth-verifier",
                  "status": "error", "reason": "video unreadable: A/s1/1.mp4"}]
    meta = {"run": "demo-run", "models": ["A", "B"], "units": {"ok": 17, "error": 1},
            "config": {"seeds": [0, 1, 2], "protocol": {"name": "synth"}}, "failures": unit_fail}
    paths = write_report(res, tmp_path / "report", title="Synth demo", meta=meta, scores=df)
    out = tmp_path / "report"
    for name in ("headline", "leaderboard", "overall", "by_family", "pass_at_k", "failures"):
        assert str(out / f"{name}.md") in paths and str(out / f"{name}.csv") in paths
    csv = pd.read_csv(out / "overall.csv")
    assert csv.set_index("model").loc["A", "pass_rate"] == pytest.approx(50.0)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["models"]["A"]["pass_rate"] == pytest.approx(50.0)

    report = (out / "report.md").read_text()
    assert report.startswith("# Synth demo")
    assert "- **run**: demo-run" in report and "- **models**: A, B" in report
    assert "- **score rows by status**: error=1, ok=18, unscored=1" in report
    assert "- **samples**: 3" in report and "- **units**: ok=17, error=1" in report
    assert "### headline" in report and "### by_family_difficulty" in report
    assert "metric: pass rate (%)" in report
    head_md = report[report.index("### headline"):report.index("### leaderboard")]
    assert "| model" in head_md and max(len(line) for line in head_md.splitlines()) <= 100
    assert report.index("### headline") < report.index("### overall")
    assert "![pass_rate_by_family](pass_rate_by_family.png)" in report
    assert "## Failures" not in report
    fail_part = report[report.index("## Errors"):]
    assert "judge reply unparseable" in fail_part and "video unreadable: A/s1/1.mp4" in fail_part
    assert "### Failed units by reason" in fail_part and "- **failed units**: 1" in report
    assert "## Run details" in report and '"protocol": {' in report
    assert (out / "failed_units.csv").exists()


def test_write_report_without_failure_info_says_so(tmp_path):
    res = AggregateResult(tables={"t": pd.DataFrame({"a": [1.5, np.nan]})}, summary={"x": float("nan")})
    paths = write_report(res, tmp_path, title="T", meta={})
    report = (tmp_path / "report.md").read_text()
    assert "No failure information" in report and "–" in report
    assert json.loads((tmp_path / "summary.json").read_text()) == {"x": None}
    assert len(paths) == 4


def test_print_tables_shows_headline(tmp_path):
    from rich.console import Console

    res = synth_tables(_synth_frame(), tmp_path, n_boot=200, charts=False)
    console = Console(record=True, width=200)
    print_tables(res, console)
    text = console.export_text()
    assert "headline" in text and "leaderboard" in text
    assert "metric: pass rate" in text and "CI low" in text
    assert "by_family_difficulty" not in text


def test_n_counts_scored_samples_only(tmp_path):
    """A sample none of whose videos was scored is not in n; it is counted apart (unscored / error)."""
    df = _synth_frame()
    extra = [_row("A", "m9", seed, None, None, family="maze", difficulty="easy", status="error",
                  reason="video missing: A/m9") for seed in range(3)]
    res = synth_tables(pd.concat([df, pd.DataFrame(extra)], ignore_index=True), tmp_path, n_boot=100, charts=False)
    overall = res.tables["overall"].set_index("model")
    assert overall.loc["A", "n_samples"] == 3 and overall.loc["A", "n_samples_unscored"] == 1
    assert overall.loc["A", "n_error"] == 4 and overall.loc["B", "n_samples"] == 3
    head = res.tables["headline"].set_index(["model", "family"])
    assert head.loc[("A", "overall"), "n"] == 3 and head.loc[("A", "overall"), "error"] == 4
    assert head.loc[("A", "maze"), "n"] == 2
    assert res.summary["models"]["A"]["n_samples_unscored"] == 1


def test_pass5_from_one_seed_says_it_is_not_pass5(tmp_path):
    df = _synth_frame()
    one = df[df["seed"] == 0].assign(category="maze", task="maze")
    res = synth_tables(one, tmp_path, n_boot=50, charts=False)
    p5 = res.tables["tivibench_pass5"]
    assert set(p5["measured as"]) == {"not Pass@5: 1 scored video per sample at most, so this is Pass@1 (= Pass@1)"}
    assert "NOT a measured Pass@5" in res.summary["table_notes"]["tivibench_pass5"]
    assert "identical to Pass@1" in res.summary["table_notes"]["tivibench_pass5"]
    write_report(res, tmp_path / "r", title="T", meta={})
    md = (tmp_path / "r" / "report.md").read_text()
    part = md[md.index("### tivibench_pass5"):]
    assert "NOT a measured Pass@5" in part.split("###")[1] and "not Pass@5" in part.split("###")[1]


def test_pass5_measured_when_every_sample_has_five_videos():
    from vreason.protocols.tivibench.tables import measured_as

    assert measured_as(pd.Series([5, 6, 5]), 5) == "Pass@5"
    assert measured_as(pd.Series([5, 2, 0]), 5).startswith("Pass@5; 1 of 2 samples")
    assert measured_as(pd.Series([3, 2]), 5).startswith("not Pass@5: 3 scored videos")
