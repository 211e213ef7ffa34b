"""User mistakes stop before scoring with a message that says what was expected; help texts and dry runs."""

import json
import os
import sys

import pytest
from typer.testing import CliRunner

from _cli_inproc import run_cli
from conftest import PLUGIN
from vreason.cli.main import app


def _cli(*args, env=None, drop=()):
    """``vreason ARGS`` in this process (exit code, stdout, stderr as from a real process; the real-process
    exits are tested in tests/test_cli.py, tests/test_usage_mistakes.py and tests/test_exit_codes.py)."""
    return run_cli(*args, env={**(env or {}), "COLUMNS": "200"}, drop=drop)


def _slow(tmp_path, *args):
    return _cli("--plugin", PLUGIN, "run", "slowtest", "--runs", str(tmp_path / "runs"), "--name", "x",
                "--opt", "n=3", "--opt", "delay=0", "--workers", "1", "--no-report", *args)


def _units(tmp_path) -> int:
    db = tmp_path / "runs" / "x" / "results.sqlite"
    if not db.exists():
        return 0
    import sqlite3

    con = sqlite3.connect(str(db))
    try:
        return con.execute("SELECT COUNT(*) FROM units").fetchone()[0]
    finally:
        con.close()


def test_unknown_model_fails_before_scoring_with_the_closest_names(tmp_path):
    res = _cli("run", "synth", "--models", "oracel", "--per-task", "1", "--families", "maze",
               "--runs", str(tmp_path / "runs"), "--name", "x", "--workers", "1")
    assert res.returncode == 2, res.stderr
    assert "model 'oracel' is not a built-in model of synth" in res.stderr and "did you mean oracle" in res.stderr
    assert "Traceback" not in res.stderr and _units(tmp_path) == 0


def test_videos_folder_missing_or_matching_nothing_shows_an_expected_path(tmp_path):
    res = _slow(tmp_path, "--models", "mine", "--videos", str(tmp_path / "nope"))
    assert res.returncode == 2, res.stderr
    assert "folder does not exist" in res.stderr and os.path.join("nope", "mine", "s000__0.mp4") in res.stderr
    flat = tmp_path / "flat"
    flat.mkdir()
    for i in range(3):  # files straight in the folder: the vreason layout wants {model}/{sample}__{seed}.mp4
        (flat / f"s{i:03d}.mp4").write_bytes(b"x")
    res = _slow(tmp_path, "--models", "mine", "--videos", str(flat))
    assert res.returncode == 2, res.stderr
    assert "matched an expected name" in res.stderr
    assert os.path.join("flat", "mine", "s000__0.mp4") in res.stderr and _units(tmp_path) == 0


def test_unknown_opt_key_is_rejected_with_the_known_ones(tmp_path):
    res = _cli("run", "synth", "--models", "oracle", "--opt", "per_tsak=1", "--runs", str(tmp_path / "runs"))
    assert res.returncode == 2, res.stderr
    assert "unknown option 'per_tsak'" in res.stderr and "did you mean per_task" in res.stderr
    res = _cli("run", "rise", "--models", "m", "--opt", "ra_mod=code", "--runs", str(tmp_path / "runs"))
    assert res.returncode == 2 and "unknown option 'ra_mod'" in res.stderr and "ra_mode" in res.stderr


def test_options_the_protocols_read_are_known():
    """Every built-in protocol declares its options as a typed model: declared keys pass, others are refused
    (that the code reads only declared options is tested in test_protocol_options.py)."""
    from vreason.core.registry import benchmarks, load_builtins
    from vreason.runner.checks import OptionsError, check_options, known_option_keys

    load_builtins()
    for name in ("synth", "rise", "ruler", "mmecof"):
        cls = benchmarks.get(name)
        known = known_option_keys(cls)
        assert {"data", "videos", "run_dir"} <= known, name
        check_options(name, cls, {"data": "somewhere"})
        with pytest.raises(OptionsError, match="unknown option 'not_an_option'"):
            check_options(name, cls, {"not_an_option": 1})


def test_data_missing_or_empty_exits_non_zero(tmp_path):
    res = _cli("run", "synth", "--models", "oracle", "--data", str(tmp_path / "nothing"), "--runs", str(tmp_path))
    assert res.returncode == 2 and "no such file or folder" in res.stderr, res.stderr
    empty = tmp_path / "suite"
    empty.mkdir()
    (empty / "manifest.jsonl").write_text("")
    res = _cli("run", "synth", "--models", "oracle", "--data", str(empty), "--runs", str(tmp_path))
    assert res.returncode == 2 and "yielded 0 samples" in res.stderr, res.stderr


def test_videos_of_other_tasks_raise_the_start_warning(tmp_path):
    made = tmp_path / "made_from"
    res = _cli("synth", "generate", "--out", str(made), "--per-task", "1", "--seed", "5", "--families", "maze",
               "--videos", "--width", "320", "--height", "180", "--seconds", "1")
    assert res.returncode == 0, res.stderr
    other = tmp_path / "other"  # the same ids from another generator seed: other mazes
    res = _cli("synth", "generate", "--out", str(other), "--per-task", "1", "--seed", "6", "--families", "maze",
               "--width", "320", "--height", "180", "--seconds", "1")
    assert res.returncode == 0, res.stderr
    (tmp_path / "vids" / "mine").mkdir(parents=True)
    for f in (made / "videos").glob("*.mp4"):
        os.link(f, tmp_path / "vids" / "mine" / f"{f.stem}__0.mp4")
    common = ("run", "synth", "--videos", str(tmp_path / "vids"), "--models", "mine", "--runs", str(tmp_path / "r"),
              "--workers", "1", "--no-report")
    res = _cli(*common, "--data", str(other), "--name", "mismatch")
    assert "do not start from the task's first frame" in res.stderr and "may not match" in res.stderr, res.stderr
    res = _cli(*common, "--data", str(made), "--name", "match")
    assert res.returncode == 0, res.stderr
    assert "do not start from the task's first frame" not in res.stderr


def test_help_shows_defaults_exit_codes_and_what_runs():
    runner = CliRunner()
    res = runner.invoke(app, ["run", "--help"], env={"COLUMNS": "220"}, terminal_width=220)
    text = " ".join(res.output.split())
    assert "[default: (the protocol's name)]" in text and "[default: (one per core)]" in text
    assert "Exit codes" in text and "3 finished with errors" in text and "130 interrupted" in text
    res = runner.invoke(app, ["export", "--help"], env={"COLUMNS": "220"}, terminal_width=220)
    assert "[default: (the run directory)]" in " ".join(res.output.split()) and "write ." not in res.output
    res = runner.invoke(app, ["synth", "generate", "--help"], env={"COLUMNS": "220"}, terminal_width=220)
    assert "[default: (all)]" in res.output
    res = runner.invoke(app, ["--help"], env={"COLUMNS": "220"}, terminal_width=220)
    text = " ".join(res.output.split())
    for name in ("synth", "rise", "ruler", "mmecof", "tivibench", "pai-g", "pai-c", "pai-u", "vreason tpo"):
        assert name in text, name  # the help names every protocol that runs


def test_dry_run_needs_no_key_and_shows_the_plan(tmp_path):
    from fixtures_rise import write_dataset, write_videos

    data = write_dataset(str(tmp_path / "RISE"))
    write_videos(str(tmp_path / "videos"), "m1", good=True)
    res = _cli("run", "rise", "--data", data, "--videos", str(tmp_path / "videos"), "--models", "m1",
               "--judge", "openai:gpt-5", "--runs", str(tmp_path / "runs"), "--dry-run",
               drop=("OPENAI_API_KEY",))
    assert res.returncode == 0, res.stderr
    assert "plan (dry run" in res.stderr and "m1 × rise" in res.stderr and "found:" in res.stderr
    assert "judge requests (estimated)" in res.stderr and "cost (USD)" in res.stderr
    assert "set the API key" not in res.stderr
    # gpt-5 reasons inside its completion budget: the estimate counts the cap it is sent, and says so
    assert "completion tokens" in res.stderr
    assert "judge default: assumed 25000 completion tokens per request: the cap sent to a reasoning judge" in \
        " ".join(res.stderr.split())
    man = json.loads((tmp_path / "runs" / "rise" / "manifest.json").read_text())
    assert man["invocations"][-1]["status"] == "dry-run"
    res = _cli("run", "synth", "--models", "oracle", "--per-task", "1", "--families", "maze", "--runs",
               str(tmp_path / "runs"), "--name", "s", "--dry-run")
    assert res.returncode == 0, res.stderr
    assert "oracle × synth-verifier" in res.stderr and "to generate: 3" in res.stderr
    assert "no judge in this protocol's plan" in res.stderr


def test_load_errors_print_where_field_and_reason(tmp_path, slow_plugin, monkeypatch):
    from rich.console import Console

    from vreason.runner.run import RunConfig, Runner

    proto = sys.modules["slowproto"].SlowProtocol
    original = proto.load

    def with_errors(self):
        res = original(self)
        res.errors += [{"where": "data.jsonl:3", "field": "prompt", "reason": "missing"},
                       {"where": "data.jsonl:7", "reason": "invalid UTF-8"}]
        return res

    monkeypatch.setattr(proto, "load", with_errors)
    console = Console(record=True, width=200)
    s = Runner(RunConfig(protocol="slowtest", run_dir=str(tmp_path / "r"), models=["counter"],
                         options={"n": 1, "delay": 0.0}, workers=1, aggregate=False), console=console).run()
    out = console.export_text()
    assert "record skipped data.jsonl:3 [field prompt]: missing" in out
    assert "record skipped data.jsonl:7: invalid UTF-8" in out and s.load_errors == 2


def test_preflight_per_task_goes_only_to_protocols_that_declare_it(tmp_path):
    from vreason.cli.data_cmds import _declared

    assert _declared("synth", {"per_task": 2}) == ({"per_task": 2}, [])
    assert _declared("rise", {"per_task": 2}) == ({}, ["per_task"])
    (tmp_path / "v5.json").write_text("[]", encoding="utf-8")
    (tmp_path / "vids").mkdir()
    args = ["preflight", "rise", "--data", str(tmp_path / "v5.json"), "--root", str(tmp_path / "vids"),
            "--convention", "rise", "--json"]
    for extra in ([], ["--per-task", "3"]):
        res = _cli(*args, *extra)
        assert res.returncode == 0, res.stderr  # was: exit 2, "rise: unknown option 'per_task'"
        assert json.loads(res.stdout)["record_errors"] == []
        assert ("--per-task ignored: rise has no 'per_task' option" in res.stderr) == bool(extra)
