"""Basic-auth secrets (issue 22 item 8): a base URL's ``user:password@`` goes out as
``Authorization: Basic base64(user:password)``; a judge error echoing the request's headers must leave no
trace of it in any file of the run (store, manifest, report)."""

from __future__ import annotations

import base64
import json
import os

import pytest

from fixtures_rise import write_dataset, write_videos
from vreason.core.errors import ConfigError
from vreason.runner.run import RunConfig, Runner
from vreason.testing.loopback import LoopbackServer, Reply

USER, PASSWORD = "alice", "s3cret-Pa55word"


def _files_with(root: str, needles: list[str]) -> dict[str, list[str]]:
    hits: dict[str, list[str]] = {}
    for dirpath, _, names in os.walk(root):
        for name in names:
            path = os.path.join(dirpath, name)
            with open(path, "rb") as fh:
                data = fh.read()
            found = [n for n in needles if n.encode() in data]
            if found:
                hits[os.path.relpath(path, root)] = found
    return hits


def test_no_basic_auth_secret_in_any_file_of_a_run_whose_judge_echoes_headers(tmp_path, monkeypatch):
    monkeypatch.delenv("VLLM_API_KEY", raising=False)
    data = write_dataset(str(tmp_path / "RISE"))
    videos = str(tmp_path / "videos")
    write_videos(videos, "good", good=True)
    run_dir = str(tmp_path / "runs" / "rise")
    srv = LoopbackServer(lambda body: None)

    def echo(body):  # a proxy that echoes the request's headers in its error
        headers = srv.headers[-1]
        token = headers.get("authorization", "").split()[-1]
        decoded = base64.b64decode(token).decode(errors="replace")
        return Reply(status=400, body={"error": {"message": f"denied {token} = {decoded}; headers were "
                                                            f"{json.dumps(headers)}"}})

    srv.script = echo
    with srv:
        base = srv.base_url.replace("http://", f"http://{USER}:{PASSWORD}@")
        Runner(RunConfig(protocol="rise", run_dir=run_dir, models=["good"],
                         options={"data": data, "videos": videos, "n_boot": 20},
                         judges={"default": f"vllm:judge@{base}"}, workers=1)).run()
        assert srv.count > 0
        sent = srv.headers[0]["authorization"]
    b64 = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    assert sent == f"Basic {b64}"  # the secret really went out, and really was echoed
    assert os.path.isdir(os.path.join(run_dir, "report"))
    assert _files_with(run_dir, [b64, PASSWORD, f"{USER}:{PASSWORD}"]) == {}
    # the failures are still explained (the scrubbed echo is kept)
    with open(os.path.join(run_dir, "results.sqlite"), "rb") as fh:
        assert b"headers were" in fh.read() or _files_with(run_dir, ["headers were"])


def test_userinfo_and_a_key_in_the_environment_is_refused(monkeypatch):
    from vreason.judge.spec import make_judge

    monkeypatch.setenv("VLLM_API_KEY", "sk-from-the-environment")
    with pytest.raises(ConfigError, match="user:password@ and VLLM_API_KEY is set"):
        make_judge(f"vllm:judge@http://{USER}:{PASSWORD}@127.0.0.1:9/v1")


def test_redact_text_scrubs_registered_values_and_their_base64():
    from vreason.store import redact_text, register_secret

    register_secret("tok-0123456789")
    b64 = base64.b64encode(b"tok-0123456789").decode()
    assert redact_text(f"echo: tok-0123456789 / {b64}") == "echo: *** / ***"
