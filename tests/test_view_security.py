"""`vreason view` serves the report only, to this machine only (issue 22 item 1): the access token,
the Host allow-list, registered media only — no traversal, no symlink out, no store / cache / manifest."""

from __future__ import annotations

import http.client
import os
import urllib.parse

import httpx
import pytest

from _serve import serve
from conftest import SMALL_SYNTH
from vreason.cli.view_cmd import COOKIE, host_name, make_app
from vreason.runner.run import RunConfig, Runner
from vreason.store import RunStore

SECRET = "do-not-serve-this-0123456789"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> str:
    root = tmp_path_factory.mktemp("viewsec")
    path = str(root / "v")
    opts = {"per_task": 1, "families": ["maze"], "difficulties": ["easy"], **SMALL_SYNTH}
    Runner(RunConfig(protocol="synth", run_dir=path, models=["oracle"], options=opts, workers=1)).run()
    outside = root / "outside.txt"
    outside.write_text(SECRET)
    # hostile links planted in the report folder: out of the run, and to the run's own store
    os.symlink(outside, os.path.join(path, "report", "evil.txt"))
    os.symlink(os.path.join(path, "results.sqlite"), os.path.join(path, "report", "store.sqlite"))
    linked = os.path.join(path, "report", "media", "linked")
    os.makedirs(linked, exist_ok=True)
    os.symlink(outside, os.path.join(linked, "planted.mp4"))
    return path


def _raw(base: str, target: str, headers: dict[str, str]) -> tuple[int, bytes]:
    """A GET with the request target sent byte for byte (no client-side normalisation of ``..``)."""
    u = urllib.parse.urlsplit(base)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
    try:
        conn.putrequest("GET", target, skip_host=True, skip_accept_encoding=True)
        for k, v in {"Host": u.netloc, **headers}.items():
            conn.putheader(k, v)
        conn.endheaders()
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def test_token_cookie_and_host_are_required(run_dir):
    app = make_app([run_dir])
    token = app.state.token
    assert len(token) >= 24
    with serve(app) as base:
        assert httpx.get(base + "/").status_code == 403  # no token
        assert httpx.get(base + "/r/0/report/index.html").status_code == 403
        assert httpx.get(base + "/", params={"token": "wrong"}).status_code == 403
        first = httpx.get(base + "/", params={"token": token})
        assert first.status_code == 200
        cookie = first.headers["set-cookie"].lower()
        assert f"{COOKIE}=" in cookie and "httponly" in cookie and "samesite=strict" in cookie
        jar = {"Cookie": f"{COOKIE}={token}"}
        assert httpx.get(base + "/r/0/report/index.html", headers=jar).status_code == 200
        # DNS rebinding: the right token but another Host is refused
        for host in ("attacker.example", "attacker.example:80", "127.0.0.1.attacker.example"):
            status, _ = _raw(base, "/r/0/report/index.html", {**jar, "Host": host})
            assert status == 403, host
        status, _ = _raw(base, f"/?token={token}", {"Host": "attacker.example"})
        assert status == 403
        for host in ("localhost", f"127.0.0.1:{base.rsplit(':', 1)[1]}"):
            assert _raw(base, "/r/0/report/index.html", {**jar, "Host": host})[0] == 200


def test_only_registered_media_are_served(run_dir):
    app = make_app([run_dir])
    jar = {"Cookie": f"{COOKIE}={app.state.token}"}
    with RunStore(run_dir, create=False) as store:
        video = next(v.path for v in store.videos() if v.path)
    rel_video = os.path.relpath(video if os.path.isabs(video) else os.path.join(run_dir, video), run_dir)
    with serve(app) as base:
        ok = _raw(base, "/r/0/" + rel_video.replace(os.sep, "/"), jar)
        assert ok[0] == 200 and len(ok[1]) > 0  # the run's own video, which the report shows
        for target in ("/r/0/results.sqlite", "/r/0/judge_cache.sqlite", "/r/0/manifest.json", "/r/0/run.lock",
                       "/r/0/../../outside.txt", "/r/0/report/../results.sqlite", "/r/0/%2e%2e/outside.txt",
                       "/r/0/report/%2e%2e/%2e%2e/outside.txt", "/r/0/..%2f..%2foutside.txt",
                       "/r/0//etc/passwd", "/r/0/report/evil.txt", "/r/0/report/store.sqlite",
                       "/r/0/report/media/linked/planted.mp4", "/r/1/report/index.html",
                       "/r/0/report/..%5c..%5coutside.txt"):
            status, body = _raw(base, target, jar)
            assert status in (400, 404), (target, status)
            assert SECRET.encode() not in body and b"SQLite format" not in body, target


def test_host_name_parsing():
    assert host_name("127.0.0.1:8765") == "127.0.0.1"
    assert host_name("[::1]:8765") == "::1"
    assert host_name("LOCALHOST") == "localhost"
    assert host_name("attacker.example:80") == "attacker.example"
