"""One run per folder (a lock naming its holder) and one plan per folder (a resume with other settings
is refused and shows the difference)."""

import json
import os
import signal
import subprocess
import sys

import pytest

from conftest import PLUGIN
from vreason.core.errors import ConfigError
from vreason.runner.guard import PlanMismatchError, RunLock, RunLockedError, plan_of
from vreason.runner.run import RunConfig, Runner
from vreason.store import RunStore

VREASON = [sys.executable, "-m", "vreason.cli.main"]


def _cfg(run_dir, **kw):
    base = dict(protocol="slowtest", run_dir=str(run_dir), models=["counter"], seeds=[0],
                options={"n": 3, "delay": 0.0}, workers=1, aggregate=False)
    base.update(kw)
    return RunConfig(**base)


def test_a_second_run_on_a_locked_folder_is_refused_and_names_the_holder(tmp_path, slow_plugin):
    run_dir = tmp_path / "r"
    holder = RunLock(str(run_dir)).acquire("vreason run slowtest (the first one)")
    try:
        with pytest.raises(RunLockedError) as exc:
            Runner(_cfg(run_dir))
        msg = str(exc.value)
        assert f"pid {os.getpid()}" in msg and "the first one" in msg and "in use" in msg
        assert not (run_dir / "results.sqlite").exists()  # refused before touching the store
    finally:
        holder.release()
    s = Runner(_cfg(run_dir)).run()  # released: the next run goes ahead and releases it in turn
    assert s.units_run == {"ok": 6}
    with RunLock(str(run_dir)):
        pass


def test_cli_refuses_a_concurrent_run_and_a_killed_holder_does_not_block(tmp_path):
    run_dir = tmp_path / "runs" / "busy"
    code = ("import sys; from vreason.runner.guard import RunLock; "
            f"lock = RunLock({str(run_dir)!r}).acquire('vreason run slowtest --name busy'); "
            "print('ready', flush=True); "
            "sys.stdin.read()")
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        args = [*VREASON, "--plugin", PLUGIN, "run", "slowtest", "--runs", str(run_dir.parent), "--name", "busy",
                "--models", "counter", "--opt", "n=2", "--opt", "delay=0", "--workers", "1", "--no-report"]
        res = subprocess.run(args, capture_output=True, text=True, timeout=120)
        assert res.returncode == 2, res.stderr
        assert f"pid {proc.pid}" in res.stderr and "--name busy" in res.stderr and "Traceback" not in res.stderr
    finally:
        proc.send_signal(signal.SIGKILL)  # dies holding the lock: the kernel releases it
        proc.wait()
    assert json.loads((run_dir / "run.lock").read_text())["pid"] == proc.pid  # the stale holder is still written
    res = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr


def test_resume_with_other_settings_is_refused_with_the_difference(tmp_path, slow_plugin):
    run_dir = tmp_path / "r"
    first = Runner(_cfg(run_dir)).run()
    assert first.units_run == {"ok": 6}
    for change, shown in (({"models": ["counter", "other"]}, 'models: ["counter"] → ["counter", "other"]'),
                          ({"seeds": [0, 1]}, "seeds: [0] → [0, 1]"),
                          ({"options": {"n": 4, "delay": 0.0}}, "options.n: 3 → 4"),
                          ({"limit": 2}, "limit: null → 2")):
        with pytest.raises(PlanMismatchError) as exc:
            Runner(_cfg(run_dir, **change))
        msg = str(exc.value)
        assert shown in msg and "--force-new" in msg and "--name" in msg
    # how the same plan is carried out is not a change: workers, retry, reporting
    again = Runner(_cfg(run_dir, workers=2, retry_failed=True, aggregate=True)).run()
    assert again.units_skipped == 6 and again.units_run == {}
    man = json.loads((run_dir / "manifest.json").read_text())
    with RunStore(run_dir) as st:
        assert st.get_meta("plan")["seeds"] == [0]
        from vreason.runner.guard import fingerprint
        assert man["config"]["plan_fingerprint"] == fingerprint(st.get_meta("plan"))
    # --force-new starts the folder over with the new plan
    new = Runner(_cfg(run_dir, seeds=[0, 1], force_new=True)).run()
    assert new.units_total == 12 and new.units_skipped == 0
    with RunStore(run_dir) as st:
        assert st.get_meta("plan")["seeds"] == [0, 1] and len(st.scores()) == 12


def test_same_settings_over_changed_data_is_refused(tmp_path, slow_plugin, monkeypatch):
    run_dir = tmp_path / "r"
    Runner(_cfg(run_dir)).run()
    proto = sys.modules["slowproto"].SlowProtocol
    original = proto.load

    def renamed(self):
        res = original(self)
        res.samples = [s.model_copy(update={"id": s.id.replace("s", "t")}) for s in res.samples]
        return res

    monkeypatch.setattr(proto, "load", renamed)
    with pytest.raises(PlanMismatchError, match="other samples"):
        Runner(_cfg(run_dir)).run()


def test_a_failed_first_attempt_does_not_pin_its_settings(tmp_path, slow_plugin):
    """A run that stopped before any result (a mistake in the command) can be re-run with fixed settings."""
    run_dir = tmp_path / "r"
    with pytest.raises(ConfigError):
        Runner(_cfg(run_dir, models=["countr"])).run()
    assert Runner(_cfg(run_dir)).run().units_run == {"ok": 6}


def test_judge_endpoint_is_not_part_of_the_plan_but_its_model_is(tmp_path):
    a = plan_of(_cfg(tmp_path, judges={"default": "vllm:Qwen@http://127.0.0.1:8001/v1"}))
    b = plan_of(_cfg(tmp_path, judges={"default": "vllm:Qwen@http://127.0.0.1:9999/v1"}))
    c = plan_of(_cfg(tmp_path, judges={"default": "vllm:Other@http://127.0.0.1:8001/v1"}))
    assert a == b and a != c


def test_spelling_out_a_default_is_not_a_plan_change(tmp_path):
    """The plan holds the protocol's resolved options: ``--opt max_frames=480`` (synth's default, as the
    CLI's string) is the same plan as no option; another value is not."""
    from vreason.runner.run import make_protocol

    def plan(options):
        cfg = RunConfig(protocol="synth", run_dir=str(tmp_path), models=["oracle"], seeds=[0], options=options)
        return plan_of(cfg, make_protocol("synth", options, run_dir=str(tmp_path)).resolved_options())

    assert plan({}) == plan({"max_frames": "480"})
    assert plan({})["options"]["max_frames"] == 480
    assert plan({"max_frames": "100"})["options"]["max_frames"] == 100
