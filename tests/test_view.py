"""`vreason view`: the FastAPI app served by uvicorn on 127.0.0.1 (free port): index, report, compare."""

from __future__ import annotations

import socket
import threading
import time

import httpx
import pytest
import uvicorn

from vreason.cli.view_cmd import make_app
from vreason.runner.run import RunConfig, Runner


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> str:
    path = str(tmp_path_factory.mktemp("view") / "v")
    opts = {"per_task": 1, "families": ["maze", "symmetry"], "difficulties": ["easy", "medium"]}
    Runner(RunConfig(protocol="synth", run_dir=path, models=["oracle", "static"], options=opts, workers=1,
                     aggregate=False)).run()
    return path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_view_serves_report_and_paired_compare(run_dir):
    app = make_app([run_dir])  # builds the missing report
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        while not server.started:
            assert thread.is_alive(), "server did not start"
            time.sleep(0.05)
        base = f"http://127.0.0.1:{port}"
        home = httpx.get(base + "/")
        assert home.status_code == 200 and "/r/0/report/index.html" in home.text
        index = httpx.get(base + "/r/0/report/index.html")
        assert index.status_code == 200 and 'id="grid-data"' in index.text
        assert httpx.get(base + "/r/0/report/samples/maze-easy-000.html").status_code == 200
        page = httpx.get(base + "/compare")
        assert page.status_code == 200 and "0:oracle" in page.text
        got = httpx.get(base + "/compare.json", params={"a": "0:oracle", "b": "0:static"}).json()
        assert got["scorer"] == "synth-verifier" and got["n_pairs"] == 4
        # oracle solves every task, static none: every paired delta is positive, so is the interval
        assert all(p["delta"] > 0 for p in got["pairs"]) and got["ci_low"] > 0 and got["delta"] > 0.5
        same = httpx.get(base + "/compare.json", params={"a": "0:static", "b": "0:static"}).json()
        assert same["delta"] == 0.0 and same["ci_low"] == 0.0
        assert httpx.get(base + "/compare.json", params={"a": "7:x", "b": "0:static"}).status_code == 404
    finally:
        server.should_exit = True
        thread.join(timeout=10)
    assert not thread.is_alive()
