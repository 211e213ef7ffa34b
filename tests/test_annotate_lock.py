"""The run folder's lock in two modes (issue 22 item 4): `vreason annotate` holds it shared, so `run --force-new`
(which would delete results.sqlite under the server) and imports are refused with the holder named, while
`report` runs beside it; an answer written into a store file that is no longer the run's is a 409, never a
200; and the annotation app refuses a foreign ``Host`` (DNS rebinding)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time

import httpx
import pytest

from _serve import serve
from test_annotate_app import synth_run
from vreason.human.app import make_app
from vreason.runner.guard import LOCK_NAME, RunLock, RunLockedError


def _cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "vreason.cli.main", *args], capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> str:
    root = str(tmp_path_factory.mktemp("annlock"))
    synth_run(os.path.join(root, "small"), models=("oracle", "static"), difficulties=("easy",))
    return root


def test_shared_holders_coexist_and_exclusive_is_refused_with_the_holder(tmp_path):
    run_dir = str(tmp_path / "r")
    os.makedirs(run_dir)
    a = RunLock(run_dir, shared=True, purpose="being annotated").acquire("vreason annotate r")
    b = RunLock(run_dir, shared=True, purpose="being reported").acquire("vreason report r")
    with pytest.raises(RunLockedError, match=rf"run .* is being annotated \(pid {os.getpid()}: vreason annotate r\)"
                       r" and 1 more; stop it first"):
        RunLock(run_dir).acquire("vreason run synth")
    a.release()
    with pytest.raises(RunLockedError, match="is being reported"):
        RunLock(run_dir).acquire()
    b.release()
    assert not [n for n in os.listdir(run_dir) if n != LOCK_NAME]  # the holders' notes went with them
    with RunLock(run_dir).acquire("vreason run synth"):
        with pytest.raises(RunLockedError, match="in use by another vreason run .*vreason run synth"):
            RunLock(run_dir, shared=True).acquire()
    with pytest.raises(FileNotFoundError):  # a shared lock never creates the folder
        RunLock(str(tmp_path / "missing"), shared=True).acquire()


def test_a_dead_shared_holders_note_does_not_block(tmp_path):
    run_dir = str(tmp_path / "r")
    os.makedirs(run_dir)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    with open(os.path.join(run_dir, f".{LOCK_NAME}.{dead.pid}"), "w") as f:
        f.write(json.dumps({"pid": dead.pid, "purpose": "being annotated"}) + "\n")
    with RunLock(run_dir).acquire():  # the kernel's lock is free: the note is stale and removed
        assert not os.path.exists(os.path.join(run_dir, f".{LOCK_NAME}.{dead.pid}"))


def _start_server(run_dir: str) -> tuple[subprocess.Popen, str]:
    """``vreason annotate`` on any free port (``--port 0``: the server binds before it prints the URL, so no other
    process can take the port in between)."""
    proc = subprocess.Popen([sys.executable, "-m", "vreason.cli.main", "annotate", run_dir, "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while time.time() < deadline:
        assert proc.poll() is None, proc.stderr.read()
        line = proc.stdout.readline()
        if "?token=" in line:
            url = line.strip()
            break
    else:
        raise AssertionError("the annotate server printed no URL")
    base = url.split("/?")[0]
    assert not base.endswith(":0"), url  # the port it bound, not the one asked for
    while time.time() < deadline:
        assert proc.poll() is None, proc.stderr.read()
        try:
            httpx.get(base + "/", timeout=2)
            return proc, url
        except httpx.TransportError:
            time.sleep(0.1)
    raise AssertionError("the annotate server did not answer")


def test_a_port_in_use_is_refused_before_any_url_is_printed(runs):
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen(1)
        port = held.getsockname()[1]
        for cmd in (["annotate", os.path.join(runs, "small")], ["view", os.path.join(runs, "small")]):
            res = _cli(*cmd, "--port", str(port), timeout=120)
            assert res.returncode == 2, (cmd, res.stdout, res.stderr)
            err = " ".join(res.stderr.split())
            assert f"cannot serve on 127.0.0.1:{port}" in err and "--port 0 picks a free port" in err, err
            assert "token=" not in res.stdout and "Traceback" not in res.stderr


def test_force_new_and_imports_refused_while_annotating_report_works_beside(runs, tmp_path):
    run_dir = os.path.join(runs, "small")
    proc, url = _start_server(run_dir)
    try:
        res = _cli("run", "synth", "--runs", runs, "--name", "small", "--models", "oracle,static", "--force-new",
                   "--per-task", "1", "--families", "maze", "-j", "1")
        assert res.returncode == 2, res.stderr
        assert f"is being annotated (pid {proc.pid}: vreason annotate" in " ".join(res.stderr.split())
        assert "stop it first" in " ".join(res.stderr.split()) and "Traceback" not in res.stderr
        assert os.path.exists(os.path.join(run_dir, "results.sqlite"))

        rows = tmp_path / "labels.jsonl"
        rows.write_text("")
        res = _cli("annotate", "import", run_dir, str(rows))
        assert res.returncode == 2 and "being annotated" in res.stderr, res.stderr

        res = _cli("report", run_dir)
        assert res.returncode == 0, res.stderr
        assert os.path.exists(os.path.join(run_dir, "report", "index.html"))

        with httpx.Client() as client:  # the server still saves answers: the folder was not cleared
            assert client.get(url).status_code == 200
            base = url.split("/?")[0]
            st = client.post(base + "/api/annotator", json={"annotator": "ann"}).json()
            item = st["item"]
            r = client.post(base + "/api/answer", json={"annotator": "ann", "pair": item["pair"],
                                                        "dimension": "quality", "verdict": "a"})
            assert r.status_code == 200 and r.json()["item"]["answered"] == {"quality": "a"}
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    res = _cli("annotate", "import", run_dir, str(rows))  # the server stopped: the lock went with it
    assert res.returncode == 0, res.stderr


def test_an_answer_into_a_deleted_or_replaced_store_is_not_a_200(runs, tmp_path):
    import shutil

    run_dir = str(tmp_path / "copy")
    shutil.copytree(os.path.join(runs, "small"), run_dir)
    app = make_app(run_dir, token="t")
    db = os.path.join(run_dir, "results.sqlite")
    with serve(app) as base, httpx.Client(base_url=base) as client:
        assert client.get("/?token=t").status_code == 200
        item = client.post("/api/annotator", json={"annotator": "p"}).json()["item"]
        ok = client.post("/api/answer", json={"annotator": "p", "pair": item["pair"], "dimension": "quality",
                                              "verdict": "a"})
        assert ok.status_code == 200
        os.replace(db, db + ".old")  # replaced under the server (as --force-new did before the lock)
        shutil.copy(db + ".old", db)
        r = client.post("/api/answer", json={"annotator": "p", "pair": item["pair"], "dimension": "physics",
                                             "verdict": "b"})
        assert r.status_code == 409 and "NOT SAVED" in r.text
        os.remove(db)
        for wal in ("-wal", "-shm"):
            if os.path.exists(db + wal):
                os.remove(db + wal)
        r = client.post("/api/undo", json={"annotator": "p"})
        assert r.status_code == 409 and "deleted or replaced" in r.text


def test_a_foreign_host_is_refused(runs):
    app = make_app(os.path.join(runs, "small"), token="t")
    with serve(app) as base:
        evil = httpx.get(base + "/?token=t", headers={"Host": "attacker.example"})
        assert evil.status_code == 403 and "wrong Host" in evil.text
        evil = httpx.get(base + "/api/state?annotator=x&token=t", headers={"Host": "attacker.example:80"})
        assert evil.status_code == 403
        for host in ("127.0.0.1", "localhost:1234", "[::1]:9"):
            assert httpx.get(base + "/?token=t", headers={"Host": host}).status_code == 200, host
