"""kill -9 of a run leaves no process behind: its pool workers exit by themselves, and with them
the forkserver and the resource tracker. A real ``vreason run synth`` is started in its own
session, killed once its workers exist, and the session is watched until it is empty."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

DEADLINE = 20.0


def _session(sid: int) -> dict[int, str]:
    """Live (non-zombie) processes of session ``sid``: pid → command line."""
    out: dict[int, str] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        pid = int(name)
        try:
            if os.getsid(pid) != sid:
                continue
            with open(f"/proc/{pid}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
            if state == b"Z":
                continue
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                out[pid] = f.read().replace(b"\0", b" ").decode(errors="replace")
        except (ProcessLookupError, FileNotFoundError, PermissionError):
            continue
    return out


def _kill_all(pids) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def test_kill_9_of_a_run_leaves_no_process(tmp_path):
    cmd = [sys.executable, "-m", "vreason.cli.main", "run", "synth", "-m", "oracle,noise,random",
           "--families", "maze,gravity", "--per-task", "4", "-j", "2", "--runs", str(tmp_path / "runs"),
           "--name", "orphans", "--no-report"]
    log = open(tmp_path / "run.log", "wb")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, cwd=tmp_path)
    sid = proc.pid
    try:
        t0 = time.monotonic()
        workers: dict[int, str] = {}
        while time.monotonic() - t0 < 60 and proc.poll() is None:
            procs = _session(sid)
            servers = {p for p, c in procs.items() if "forkserver" in c}
            # workers are forked by the forkserver: same command line, parent = the server
            workers = {p: c for p, c in procs.items() if p in servers and _ppid(p) in servers}
            if len(workers) >= 2:
                break
            time.sleep(0.1)
        assert proc.poll() is None, "the run ended before its workers could be seen: make it longer"
        assert len(workers) >= 2, f"no pool workers seen in 60 s: {_session(sid)}"
        before = _session(sid)
        assert any("resource_tracker" in c for c in before.values()), before

        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        t1 = time.monotonic()
        left = _session(sid)
        while left and time.monotonic() - t1 < DEADLINE:
            time.sleep(0.2)
            left = _session(sid)
        assert not left, f"still alive {DEADLINE:.0f} s after kill -9 of the run: {left}"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        _kill_all(_session(sid))
        log.close()


def _ppid(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return int(f.read().rsplit(b")", 1)[1].split()[1])
    except (FileNotFoundError, ProcessLookupError, ValueError):
        return -1
