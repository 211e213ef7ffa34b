"""vreason.evaluate / aevaluate: tables as DataFrames, from scripts (no __main__ re-import) and async code."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap

import pandas as pd

import vreason

OPTS = {"families": ["maze"], "per_task": 1, "difficulties": ["easy"]}


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
