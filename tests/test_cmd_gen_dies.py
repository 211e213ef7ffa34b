"""Issue 22.3 (``cmd:`` part): a ``cmd:`` generator dies with the run. The run is ``kill -9``ed while a slow
command (which started a child of its own) writes its video; both are gone within seconds (their pids are
in a file the command writes), and the resumed run makes one good, complete video per sample with no
temporary file left behind."""

from __future__ import annotations

import glob
import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import SMALL_SYNTH_ARGS
from vreason.core.records import VideoStatus
from vreason.store import RunStore
from vreason.testing.fake_video_api import tiny_mp4

SLOW_WRITER = """
import json, os, subprocess, sys, time
req = json.load(open(sys.argv[1]))
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
name = os.path.splitext(os.path.basename(sys.argv[1]))[0]
with open(os.path.join(os.environ["PID_DIR"], name + ".pid"), "w") as fh:
    fh.write(f"{os.getpid()} {child.pid}")
data = open(os.environ["VIDEO_SRC"], "rb").read()
slow = os.path.exists(os.environ["SLOW_FLAG"])
with open(req["output"], "wb") as out:
    for i in range(0, len(data), 512):
        out.write(data[i:i + 512])
        out.flush()
        time.sleep(5 if slow else 0)
child.kill()
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead for our purpose
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def _cli(runs, script, env):
    return subprocess.Popen([sys.executable, "-m", "vreason.cli.main", "run", "synth", "--name", "c", "--runs",
                             str(runs), "--models", f"cmd:{script}", "--seeds", "0", "--per-task", "1", "--opt",
                             "families=maze", *SMALL_SYNTH_ARGS, "--workers", "1", "--no-report"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def test_kill_9_takes_the_cmd_generator_with_it_and_the_resume_writes_one_good_video(tmp_path):
    script = tmp_path / "slow_writer.py"
    script.write_text(f"#!{sys.executable}\n{SLOW_WRITER}")
    script.chmod(0o755)
    src = tmp_path / "src.mp4"
    src.write_bytes(tiny_mp4())
    pid_dir, flag = tmp_path / "pids", tmp_path / "slow"
    pid_dir.mkdir()
    flag.write_text("1")
    env = {**os.environ, "PID_DIR": str(pid_dir), "VIDEO_SRC": str(src), "SLOW_FLAG": str(flag)}
    proc = _cli(tmp_path / "runs", script, env)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not glob.glob(str(pid_dir / "*.pid")):
        time.sleep(0.05)
    if not glob.glob(str(pid_dir / "*.pid")):
        proc.kill()
        pytest.fail(f"the command never started: {proc.communicate()[0].decode()[-2000:]}")
    time.sleep(0.3)  # the command is writing its video now
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    pids = [int(p) for f in glob.glob(str(pid_dir / "*.pid")) for p in open(f).read().split()]
    assert len(pids) == 2
    deadline = time.monotonic() + 5
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(p) for p in pids), "the cmd generator (or its child) outlived the run"
    videos = tmp_path / "runs" / "c" / "videos"
    assert glob.glob(str(videos / "**" / "*.part-*"), recursive=True)  # it was killed mid-write
    assert not glob.glob(str(videos / "**" / "*__0.mp4"), recursive=True)  # no half video under the final name

    flag.unlink()
    proc = _cli(tmp_path / "runs", script, env)
    out = proc.communicate(timeout=180)[0].decode()
    assert proc.returncode == 0, out[-3000:]
    store = RunStore(str(tmp_path / "runs" / "c"), create=False)
    vids = store.videos()
    store.close()
    assert len(vids) >= 3 and all(v.status == VideoStatus.ok for v in vids), [v.reason for v in vids]
    for v in vids:  # one complete copy each: nothing interleaved, nothing truncated
        assert open(v.path, "rb").read() == src.read_bytes()
    assert not glob.glob(str(videos / "**" / "*.part-*"), recursive=True)
