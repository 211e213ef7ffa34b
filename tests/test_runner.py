"""The runner end to end on a tiny plugin protocol: resume, retry, kill -9, Ctrl-C."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

from conftest import PLUGIN
from vreason.runner.run import RunConfig, Runner
from vreason.store import RunStore

VREASON = [sys.executable, "-m", "vreason.cli.main"]


def _cfg(run_dir, **kw):
    base = dict(protocol="slowtest", run_dir=str(run_dir), models=["counter"], seeds=[0, 1],
                options={"n": 6, "delay": 0.0}, workers=1)
    base.update(kw)
    return RunConfig(**base)


def _rows(run_dir):
    with open(os.path.join(run_dir, "scores.jsonl")) as fh:
        return sorted(fh.read().splitlines())


def test_run_resume_and_retry_failed(tmp_path, slow_plugin, monkeypatch):
    run_dir = tmp_path / "r"
    s = Runner(_cfg(run_dir)).run()
    assert s.units_total == 6 * 2 * 2 and s.units_skipped == 0
    assert s.units_run == {"ok": 20, "error": 2, "unscored": 2}
    with RunStore(run_dir) as st:
        df = st.scores_frame()
    # every value traces back to the right file: brightness encodes (index, seed)
    bright = df[(df.metric == "brightness") & (df.status == "ok")]
    for _, row in bright.iterrows():
        idx = int(row.sample_id[1:])
        assert abs(row.value - (idx * 5 + row.seed * 2)) <= 2
    err = df[df.status == "error"]
    assert set(err.sample_id) == {"s003"} and err.value.isna().all()
    assert "deliberate failure" in err.reason.iloc[0]
    assert os.path.exists(run_dir / "report" / "report.md")

    again = Runner(_cfg(run_dir)).run()  # same command: nothing to do
    assert again.units_skipped == 24 and again.units_run == {}

    monkeypatch.setenv("SLOWPROTO_HEAL", "1")
    healed = Runner(_cfg(run_dir, retry_failed=True)).run()
    assert healed.units_run == {"ok": 4}
    with RunStore(run_dir) as st:
        assert st.counts()["units"] == {"ok": 24}
        assert len(st.scores()) == 24  # replaced, not duplicated


def test_missing_videos_are_errors_not_zeros(tmp_path, slow_plugin):
    import numpy as np

    from vreason.frames import write_video

    run_dir = tmp_path / "r"
    vids = tmp_path / "vids" / "someone_else"
    vids.mkdir(parents=True)  # one video of six: the model is known, the other five are missing
    write_video(str(vids / "s000__0.mp4"), [np.full((32, 32, 3), 0, np.uint8)] * 8, fps=8)
    s = Runner(_cfg(run_dir, models=["someone_else"], seeds=[0], videos_dir=str(tmp_path / "vids"))).run()
    assert s.videos == {"ok": 1, "missing": 5}
    assert s.finished_with_errors and s.units_final == {"ok": 2, "error": 10}
    with RunStore(run_dir) as st:
        df = st.scores_frame()
    bad = df[df.sample_id != "s000"]
    assert len(bad) == 10 and (bad.status == "error").all() and bad.value.isna().all()
    assert bad.reason.str.contains("video missing").all()


def _spawn(run_dir, n, delay, extra=()):
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    cmd = [*VREASON, "--plugin", PLUGIN, "run", "slowtest", "--runs", str(run_dir.parent), "--name", run_dir.name,
           "--models", "counter", "--seeds", "0,1", "--opt", f"n={n}", "--opt", f"delay={delay}", "--workers", "2",
           *extra]
    # SIGINT at its default in the CLI, as in a terminal's foreground job: a process started with SIGINT ignored
    # (a background job of a non-interactive shell: `make test &`, some CI runners) passes that on through exec,
    # and Python then installs no KeyboardInterrupt handler — the interrupt test's lost SIGINT (see below)
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                            preexec_fn=_default_sigint)


def _default_sigint():
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _units_done(run_dir):
    db = run_dir / "results.sqlite"
    if not db.exists():
        return 0
    try:
        con = sqlite3.connect(str(db), timeout=5)
        n = con.execute("SELECT COUNT(*) FROM units").fetchone()[0]
        con.close()
        return n
    except sqlite3.Error:
        return 0


def _wait(proc, timeout=120):
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out.decode(), err.decode()


def test_kill_9_then_resume_equals_uninterrupted(tmp_path):
    n, delay = 24, 0.08  # 96 units on 2 workers: ≈ 4 s of work, ≥ 3 s of it after the kill point
    ref = tmp_path / "ref"
    code, _, err = _wait(_spawn(ref, n, delay))
    assert code == 3, err  # s003/s004 fail by design: finished with errors
    killed = tmp_path / "killed"
    proc = _spawn(killed, n, delay)
    deadline = time.time() + 90
    while _units_done(killed) < 15 and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert proc.poll() is None, "run finished before it could be killed"
    os.killpg(proc.pid, signal.SIGKILL)  # the CLI and its worker processes, at once
    proc.wait()
    done_at_kill = _units_done(killed)
    assert 15 <= done_at_kill < 4 * n
    code, _, err = _wait(_spawn(killed, n, delay))
    assert code == 3, err  # s003/s004 fail by design: finished with errors
    with RunStore(killed) as st:
        rows = st.conn.execute(
            "SELECT sample_id, model, seed, scorer, metric, COUNT(*) FROM scores GROUP BY 1,2,3,4,5"
        ).fetchall()
        assert all(r[-1] == 1 for r in rows), "a unit was duplicated"
        assert len(rows) == 4 * n, "a unit was lost"
    assert _rows(killed) == _rows(ref)
    man = json.loads((killed / "manifest.json").read_text())
    # the killed invocation never finished
    assert [i.get("status") for i in man["invocations"]] == [None, "finished with errors"]


# The SIGINT once "sometimes lost under the full parallel test run" (exit 3, not 130; an xfail from the fourth to the
# eighteenth session): the test process had been started with SIGINT ignored — a background job of a non-interactive
# shell — and the CLI inherited that. _spawn now starts the CLI with SIGINT at its default; the test below also
# runs the CLI from a parent that ignores SIGINT.
def test_ctrl_c_is_clean_and_resumable(tmp_path):
    run_dir = tmp_path / "int"
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)  # this process ignoring SIGINT changes nothing
    try:
        proc = _spawn(run_dir, 30, 0.1)  # 120 units × 0.1 s on 2 workers: ≥ 5 s of work after the first 5
    finally:
        signal.signal(signal.SIGINT, before)
    deadline = time.time() + 90
    while _units_done(run_dir) < 5 and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert proc.poll() is None, "run finished before it could be interrupted"
    assert _units_done(run_dir) < 100
    os.killpg(proc.pid, signal.SIGINT)
    code, out, err = _wait(proc)
    assert code == 130, err
    assert "interrupted" in err and "Traceback" not in err
    man = json.loads((run_dir / "manifest.json").read_text())
    assert man["invocations"][-1]["status"] == "interrupted"
    code, _, err = _wait(_spawn(run_dir, 30, 0.1))  # the same settings: another delay is another plan
    assert code == 3, err  # s003/s004 fail by design: finished with errors
    assert _units_done(run_dir) == 120
