"""`vreason view`: the FastAPI app served by uvicorn on 127.0.0.1 (free port): index, report, compare."""

from __future__ import annotations

import contextlib
import os
import re

import httpx
import pytest

from _serve import serve
from conftest import SMALL_SYNTH
from vreason.cli.view_cmd import make_app
from vreason.runner.run import RunConfig, Runner


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> str:
    path = str(tmp_path_factory.mktemp("view") / "v")
    opts = {"per_task": 1, "families": ["maze", "symmetry"], "difficulties": ["easy", "medium"], **SMALL_SYNTH}
    Runner(RunConfig(protocol="synth", run_dir=path, models=["oracle", "static"], options=opts, workers=1,
                     aggregate=False)).run()
    return path


@contextlib.contextmanager
def serving(run_dirs):
    """``vreason view``'s app (reports built when missing) served on 127.0.0.1; yields a client that
    opened the tokened URL once (so it holds the access cookie), with the base URL as its base."""
    app = make_app(run_dirs)
    with serve(app) as base, httpx.Client(base_url=base) as client:
        assert client.get("/", params={"token": app.state.token}).status_code == 200
        yield client


def test_view_serves_report_and_paired_compare(run_dir):
    with serving([run_dir]) as c:
        home = c.get("/")
        assert home.status_code == 200 and "/r/0/report/index.html" in home.text
        index = c.get("/r/0/report/index.html")
        assert index.status_code == 200 and 'id="grid-data"' in index.text
        assert c.get("/r/0/report/samples/maze-easy-000.html").status_code == 200
        page = c.get("/compare")
        assert page.status_code == 200 and "0:oracle" in page.text
        got = c.get("/compare.json", params={"a": "0:oracle", "b": "0:static"}).json()
        assert got["scorer"] == "synth-verifier" and got["n_pairs"] == 4
        # oracle solves every task, static none: every paired delta is positive, so is the interval
        assert all(p["delta"] > 0 for p in got["pairs"]) and got["ci_low"] > 0 and got["delta"] > 0.5
        same = c.get("/compare.json", params={"a": "0:static", "b": "0:static"}).json()
        assert same["delta"] == 0.0 and same["ci_low"] == 0.0
        assert c.get("/compare.json", params={"a": "7:x", "b": "0:static"}).status_code == 404


def test_imported_videos_outside_the_run_play_from_file_and_through_view(tmp_path):
    """A model's videos imported from a folder outside the run, and the data's own images and reference
    video, are linked under report/media/linked/, so the sample page reaches them from file:// and through
    the server (which serves the run folder only); nothing else outside the run is served."""
    from test_cli import _cli

    suite, mine = tmp_path / "suite", tmp_path / "vids" / "mine"
    res = _cli("synth", "generate", "--out", str(suite), "--per-task", "1", "--seed", "5", "--families", "maze",
               "--difficulties", "easy", "--videos", "--width", "320", "--height", "180", "--seconds", "2")
    assert res.returncode == 0, res.stderr
    mine.mkdir(parents=True)
    for f in (suite / "videos").glob("*.mp4"):
        (mine / f"{f.stem}__0.mp4").write_bytes(f.read_bytes())
    res = _cli("run", "synth", "--data", str(suite), "--videos", str(tmp_path / "vids"), "--models", "mine",
               "--runs", str(tmp_path / "runs"), "--name", "byo", "--workers", "1")
    assert res.returncode == 0, res.stderr
    run = tmp_path / "runs" / "byo"
    page = (run / "report" / "samples" / "maze-easy-000.html").read_text()
    srcs = re.findall(r'<(?:video|img)[^>]*src="([^"]+)"', page)
    original = mine / "maze-easy-000__0.mp4"
    model_src = next(s for s in srcs if (run / "report" / "samples" / s).resolve() == original.resolve())
    ref_src = next(s for s in srcs if (run / "report" / "samples" / s).resolve()
                   == (suite / "videos" / "maze-easy-000.mp4").resolve())
    inside = [os.path.normpath(run / "report" / "samples" / s).startswith(str(run) + os.sep) for s in srcs]
    assert all(inside), srcs  # no page link leaves the run folder
    with serving([str(run)]) as c:
        for src, want in ((model_src, original), (ref_src, suite / "videos" / "maze-easy-000.mp4")):
            got = c.get("/r/0/report/" + src.removeprefix("../"))
            assert got.status_code == 200 and got.content == want.read_bytes()
        assert c.get("/r/0/../../suite/manifest.jsonl").status_code == 404
