"""vreason.evaluate / aevaluate: tables as DataFrames, from scripts (no __main__ re-import) and async code."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap

import pandas as pd

import vreason
from conftest import SMALL_SYNTH

OPTS = {"families": ["maze"], "per_task": 1, "difficulties": ["easy"], **SMALL_SYNTH}


def test_evaluate_returns_tables_and_scores(tmp_path):
    res = vreason.evaluate("synth", ["oracle", "static"], options=OPTS, runs=str(tmp_path), name="api", workers=1)
    assert res.exit_code == 0 and res.run_dir.endswith("api")
    assert res.tables and all(isinstance(t, pd.DataFrame) for t in res.tables.values())
    passed = res.scores.groupby("model")["passed"].apply(lambda s: bool(s.all()))
    assert passed["oracle"] and not passed["static"]
    assert os.path.exists(os.path.join(res.run_dir, "report", "report.md"))


def test_evaluate_inside_a_running_loop_and_aevaluate(tmp_path):
    async def main():
        inner = vreason.evaluate("synth", ["oracle"], options=OPTS, runs=str(tmp_path), name="loop", workers=1)
        outer = await vreason.aevaluate("synth", ["static"], options=OPTS, runs=str(tmp_path), name="async",
                                        workers=1)
        return inner, outer

    inner, outer = asyncio.run(main())
    assert inner.scores["passed"].all() and not outer.scores["passed"].any()


def test_script_without_main_guard_runs_once(tmp_path):
    script = tmp_path / "eval_script.py"
    marker = tmp_path / "imports.txt"
    script.write_text(textwrap.dedent(f"""
        with open({str(marker)!r}, "a") as f:
            f.write("imported\\n")
        import vreason
        res = vreason.evaluate("synth", ["oracle", "random"], options={OPTS!r}, runs={str(tmp_path)!r},
                               name="script", workers=2)
        print("RAN", res.exit_code, sorted(res.scores["model"].unique()))
    """))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.count("RAN") == 1, out.stdout
    assert "RAN 0 ['oracle', 'random']" in out.stdout, out.stdout
    assert marker.read_text().count("imported") == 1, "a worker process re-imported the script"
    assert "__mp_main__" not in out.stderr


def test_api_tables_are_numeric_and_a_refusal_names_the_api_argument(tmp_path):
    import pytest

    from vreason.runner.guard import PlanMismatchError

    res = vreason.evaluate("synth", ["oracle", "static"], options=OPTS, runs=str(tmp_path), name="num", workers=1)
    board = res.tables["leaderboard"].set_index("model")
    for col in ("pass rate", "pass rate low", "pass rate high", "score", "score low", "score high"):
        assert pd.api.types.is_float_dtype(board[col]), col
    assert board.loc["oracle", "pass rate"] == 100.0 and board.loc["static", "pass rate"] == 0.0
    csv = pd.read_csv(os.path.join(res.run_dir, "report", "leaderboard.csv"))
    assert pd.api.types.is_float_dtype(csv["pass rate low"])
    md = open(os.path.join(res.run_dir, "report", "leaderboard.md")).read()
    assert "100.0 [100.0, 100.0]" in md  # text only where it is rendered
    with pytest.raises(PlanMismatchError) as err:
        vreason.evaluate("synth", ["oracle"], options=OPTS, runs=str(tmp_path), name="num", workers=1)
    msg = str(err.value)
    assert "evaluate(..., force_new=True)" in msg and "--force-new" not in msg and "--name" not in msg
    again = vreason.evaluate("synth", ["oracle"], options=OPTS, runs=str(tmp_path), name="num", workers=1,
                             force_new=True)
    assert again.exit_code == 0 and list(again.scores["model"].unique()) == ["oracle"]
