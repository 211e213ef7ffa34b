"""Usage mistakes stop before scoring: exit code 2, one line on stderr, no traceback, nothing recorded
(issue 21 item 4): a judged protocol without its judges, a model-less import convention without --model,
a frame-policy preset followed by options."""

import os
import subprocess
import sys

import pytest

from _cli_inproc import run_cli
from vreason.core.errors import ConfigError
from vreason.core.registry import benchmarks, load_builtins
from vreason.runner.checks import check_judges, missing_judge_roles

VREASON = [sys.executable, "-m", "vreason.cli.main"]


def _proc(*args, cwd=None):
    """A real ``vreason`` process: the judged-run test checks exit 2 and exit 0 as a shell sees them."""
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.run([*VREASON, *args], capture_output=True, text=True, env=env, timeout=120, cwd=cwd)


def _cli(*args, cwd=None):
    """``vreason ARGS`` in this process (same exit code, stdout and stderr; no new interpreter)."""
    return run_cli(*args, env={"COLUMNS": "200"}, cwd=cwd)


def _one_line_exit_2(res, *needles):
    assert res.returncode == 2, (res.returncode, res.stderr)
    assert "Traceback" not in res.stderr and "Traceback" not in res.stdout
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, res.stderr
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


def test_judged_run_without_a_judge_is_refused_before_anything_is_recorded(tmp_path):
    from fixtures_rise import write_dataset, write_videos

    data = write_dataset(str(tmp_path / "RISE"))
    write_videos(str(tmp_path / "videos"), "m1", good=True)
    runs = tmp_path / "runs"
    res = _proc("run", "rise", "--models", "m1", "--runs", str(runs))
    line = _one_line_exit_2(res, "rise needs a judge for roles default, vq", "--judge SPEC", "--vq-judge")
    assert line.startswith("error:")
    assert not runs.exists()  # no run folder, so no results.sqlite and no plan to disagree with later
    res = _proc("run", "rise", "--data", data, "--videos", str(tmp_path / "videos"), "--models", "m1",
               "--runs", str(runs), "--no-report")
    _one_line_exit_2(res, "rise needs a judge")
    assert not (runs / "rise" / "results.sqlite").exists()
    # the same run with a judge is not a plan change: it runs (the mock judge, offline)
    res = _proc("run", "rise", "--data", data, "--videos", str(tmp_path / "videos"), "--models", "m1",
               "--runs", str(runs), "--no-report", "--judge", "mock")
    assert res.returncode == 0, res.stderr
    assert (runs / "rise" / "results.sqlite").exists()


@pytest.mark.parametrize("name, opts, judges, missing", [
    ("rise", {}, {}, ["default", "vq"]),
    ("rise", {}, {"vq": "mock"}, ["default"]),  # RA, TC and PR still need the default judge
    ("rise", {}, {"default": "mock"}, []),  # vq falls back to the default judge
    ("ruler", {}, {}, ["default"]),
    ("mmecof", {}, {}, ["default"]),
    ("mmecof", {"quality": False, "judge_role": "steps"}, {"default": "mock"}, []),
    ("mmecof", {"judge_role": "steps", "quality_judge_role": "gq"}, {}, ["steps", "gq"]),
    ("pai-g", {}, {}, ["default"]),
    ("pai-g", {"domain": False}, {}, []),  # quality dimensions only: no judge
    ("pai-u", {}, {}, ["default"]),
    ("pai-c", {}, {}, []),
    ("synth", {}, {}, []),
    ("tivibench", {}, {}, []),  # before loading: QA samples may not be there
])
def test_each_protocol_declares_the_judge_roles_its_options_need(name, opts, judges, missing):
    load_builtins()
    assert missing_judge_roles(benchmarks.get(name), opts, judges) == missing


def test_tivibench_needs_its_judge_only_when_qa_samples_are_loaded():
    from vreason.core.records import Sample

    load_builtins()
    cls = benchmarks.get("tivibench")
    check = [Sample(id="a", benchmark="tivibench", prompt="p", metadata={"metric": {"family": "sudoku"}})]
    qa = [*check, Sample(id="b", benchmark="tivibench", prompt="p", metadata={"metric": {"family": "vlm_qa"}})]
    assert missing_judge_roles(cls, {}, {}, check) == []
    assert missing_judge_roles(cls, {"judge_role": "qa"}, {}, qa) == ["qa"]
    with pytest.raises(ConfigError, match="tivibench needs a judge for role default"):
        check_judges("tivibench", cls, {}, {}, qa)
    check_judges("tivibench", cls, {}, {"default": "mock"}, qa)


@pytest.mark.parametrize("convention", ["tivibench", "pai"])
def test_model_less_conventions_without_model_exit_2(tmp_path, convention):
    (tmp_path / "videos").mkdir()
    res = _cli("import", str(tmp_path / "run"), "--root", str(tmp_path / "videos"), "--convention", convention)
    _one_line_exit_2(res, f"--convention {convention}", "--model NAME")
    assert not (tmp_path / "run").exists()  # nothing written
    res = _cli("preflight", "synth", "--per-task", "1", "--root", str(tmp_path / "videos"),
               "--convention", convention)
    _one_line_exit_2(res, f"--convention {convention}", "--model NAME")
    res = _cli("import", str(tmp_path / "run"), "--root", str(tmp_path / "videos"), "--convention", "nope")
    _one_line_exit_2(res, "unknown convention", "tivibench")
    res = _cli("import", str(tmp_path / "run"))
    _one_line_exit_2(res, "--manifest FILE or --root DIR")


def test_import_scan_still_raises_a_value_error_for_api_callers(tmp_path):
    from vreason.data.importer import scan

    with pytest.raises(ValueError, match="--model"):
        scan(str(tmp_path), "pai")


def test_a_preset_followed_by_options(tmp_path):
    from conftest import gradient_frames
    from vreason.frames.policy import FramePolicy, policy
    from vreason.frames.write import write_video

    p = FramePolicy.parse("pai.u+max_frames=8")
    assert (p.kind, p.fps, p.fps_mode, p.max_frames) == ("fps", 4.0, "qwen", 8)
    assert policy("pai.u+max_frames=8") == p and str(policy("pai.u")) == "fps:4+qwen"
    assert policy("rise.vq+max_side=64").max_side == 64 and policy("rise.vq+max_side=64").drop_first
    path = str(tmp_path / "v.mp4")
    write_video(path, gradient_frames(40), fps=8)
    res = _cli("frames", path, "--policy", "pai.u+max_frames=8")
    assert res.returncode == 0, res.stderr
    assert "policy fps:4+qwen+max_frames=8" in res.stdout
    # as a protocol option: accepted by validation (the run then stops at the missing data)
    from vreason.protocols.pai.u.protocol import PaiUOptions

    assert PaiUOptions(frame_policy="pai.u+max_frames=8").frame_policy == "pai.u+max_frames=8"
    res = _cli("run", "pai-u", "--models", "m", "--judge", "mock", "--opt", "frame_policy=pai.x+max_frames=8",
               "--runs", str(tmp_path / "runs"))
    _one_line_exit_2(res, "pai.x")
