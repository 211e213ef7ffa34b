"""Round trip: built-in suite instances exported in TiViBench's layout and scored by `run tivibench` give the
same verdict per video (hence the same pass rates per model) as `run synth` on the same instances — older
families through their own verifier (metric vreason_synth), new ones through their TiViBench check: `run synth`
records that check's verdict (`checks.tivibench_metric`) beside the suite's own checks (the every-frame scene,
the held end), which may only fail more videos, never pass one that TiViBench's check fails.

Slower than the other tests (two small runs, ~15 units each, one OCR family)."""

from __future__ import annotations

import json
import os

import pandas as pd
from typer.testing import CliRunner

from conftest import SMALL_SYNTH_ARGS
from vreason.cli.main import app
from vreason.protocols.tivibench.data import load_tivibench
from vreason.store import RunStore

FAMILIES = "maze,sorting,counting,match3,arithmetic"
MODELS = "oracle,static,shortcut"


def _run(*args: str) -> str:
    res = CliRunner().invoke(app, list(args))
    assert res.exit_code == 0, res.output
    return res.output


def test_export_then_run_tivibench_gives_the_synth_verdicts(tmp_path):
    runs = str(tmp_path / "runs")
    _run("run", "synth", "--runs", runs, "--name", "s", "--families", FAMILIES, "--per-task", "1",
         "--opt", "difficulties=easy", *SMALL_SYNTH_ARGS, "--models", MODELS, "--workers", "1", "--no-report")
    out = str(tmp_path / "tivi")
    text = _run("synth", "export", out, "--format", "tivibench", "--videos-from", os.path.join(runs, "s"))
    assert "wrote 5 tasks (15 videos)" in text
    loaded = load_tivibench(out)
    assert not loaded.errors and len(loaded.samples) == 5
    fam = {s.metadata["task_type"]: s.metadata["metric_family"] for s in loaded.samples}
    assert fam["maze"] == "vreason_synth" and fam["sorting"] == "vreason_synth"
    assert fam["counting"] == "grounding" and fam["gamerule"] != "vreason_synth" and fam["arithmetic"] == "math"
    _run("run", "tivibench", "--runs", runs, "--name", "t", "--data", out, "--videos", os.path.join(out, "videos"),
         "--models", MODELS, "--seeds", "0", "--workers", "1")

    ids = json.load(open(os.path.join(out, "vreason_export.json")))["ids"]
    with RunStore(os.path.join(runs, "s"), create=False) as st:
        a = st.scores_frame()
    with RunStore(os.path.join(runs, "t"), create=False) as st:
        b = st.scores_frame()
    assert set(b["status"]) == {"ok"} and set(b["scorer"]) == {"tivibench_check"}
    a["sample_id"] = a["sample_id"].map(ids)
    both = a.merge(b, on=["sample_id", "model", "seed"], suffixes=("_synth", "_tivi"))
    assert len(both) == 15

    def metric_verdict(row: pd.Series) -> bool:  # the TiViBench check inside the synth verdict (or the verdict)
        checks = json.loads(row["evidence_synth"] or "{}").get("details", {}).get("checks", {})
        return bool(checks.get("tivibench_metric", row["passed_synth"]))

    both["metric_synth"] = both.apply(metric_verdict, axis=1)
    cols = ["sample_id", "model", "passed_synth", "metric_synth", "passed_tivi"]
    assert (both["metric_synth"] == both["passed_tivi"].astype(bool)).all(), both[cols]
    assert (~both["passed_synth"].astype(bool) | both["passed_tivi"].astype(bool)).all(), both[cols]
    rates = both.groupby("model")[["metric_synth", "passed_tivi"]].agg(lambda c: c.astype(float).mean())
    assert rates.loc["oracle", "passed_tivi"] == 1.0 and rates.loc["static", "passed_tivi"] == 0.0
    assert (rates["metric_synth"] == rates["passed_tivi"]).all()
    table = pd.read_csv(os.path.join(runs, "t", "report", "tivibench_pass1.csv")).set_index("model")
    assert table.loc["oracle", "Overall"] == 100.0 and table.loc["static", "Overall"] == 0.0


def test_export_from_options_and_placement_errors(tmp_path):
    from vreason.core.records import Sample
    from vreason.synth.export_tivibench import export_samples

    out = str(tmp_path / "o")
    _run("synth", "export", out, "--families", "maze,sorting", "--per-task", "2", "--difficulties", "easy",
         "--width", "160", "--height", "90")
    res = load_tivibench(out)
    assert not res.errors and sorted(s.id for s in res.samples) == [
        "SS_easy_maze_001", "SS_easy_maze_002", "SS_easy_sorting_001", "SS_easy_sorting_002"]
    m = res.samples[0].metadata["metric"]
    assert m["family"] == "vreason_synth" and m["render"]["width"] == 160 and m["state"]
    assert not os.path.exists(os.path.join(out, "videos"))
    odd = Sample(id="x-easy-000", benchmark="synth", metadata={"family": "nosuch", "difficulty": "easy"})
    got = export_samples([odd], str(tmp_path / "p"))
    assert got.samples == 0 and "no TiViBench placement" in got.errors[0]
