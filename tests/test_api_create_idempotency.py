"""Issue 22.2: a create that failed ambiguously (the provider made the job, then answered 500, dropped the
connection or stalled past the timeout) is never blindly sent again. 18 videos (3 samples × 6 seeds) with
injected faults, then a resume, make exactly 18 provider jobs whose cost the ledger holds, and the ledger
lists every create attempt — by look-up (the provider lists its jobs) or by idempotency key. A run killed
while its creates hang resumes by looking the jobs up, creating none again. An API with neither mechanism
(Veo) leaves the row ``unknown`` (the job may be billed) instead of paying twice."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter

import pytest
import yaml

from conftest import SMALL_SYNTH, SMALL_SYNTH_ARGS
from vreason.core.records import VideoStatus
from vreason.generate.job_ledger import JobLedger, ledger_totals
from vreason.runner.run import RunConfig, Runner
from vreason.store import RunStore
from vreason.testing.fake_video_api import FakeVideoAPI

KEY = "sk-fake-SECRET-idem-77"
OPTS = {"per_task": 1, "families": ["maze"], **SMALL_SYNTH}
SEEDS = [0, 1, 2, 3, 4, 5]
FAULTS = ["500", None, "drop", "stall", None, "500", "drop", None, "stall", "500"]


def _spec(tmp_path, kind, target, name, **params):
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump({"kind": kind, "target": target, "name": name, "params": {
        "poll_s": 0.05, "retry_base_s": 0.01, "retry_cap_s": 0.05, "lookup_wait_s": 0.1, "request_timeout_s": 1.0,
        **params}}))
    return str(path)


def _run(tmp_path, run_dir, spec, seeds=SEEDS, opts=OPTS, **kw):
    cfg = RunConfig(protocol="synth", run_dir=str(run_dir), models=[spec], seeds=seeds, options=opts, workers=1,
                    aggregate=False, **kw)
    return Runner(cfg).run()


def _videos(run_dir):
    store = RunStore(str(run_dir), create=False)
    try:
        return store.videos()
    finally:
        store.close()


def _attempts(run_dir):
    led = JobLedger(str(run_dir))
    try:
        return led.attempts(), led.rows()
    finally:
        led.close()


@pytest.mark.parametrize("mechanism", ["lookup", "idempotency_key"])
def test_ambiguous_create_faults_then_resume_make_one_job_per_video(tmp_path, monkeypatch, mechanism):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    idem = mechanism == "idempotency_key"
    # Sora's list shows prompt and size, not the input image, and the maze samples share one prompt: the
    # look-up only takes a job among requests it can tell apart (see the test below), so that variant makes
    # its 18 videos from one sample (18 seeds: interchangeable jobs), the key variant from 3 samples × 6 seeds
    seeds, opts = (SEEDS, OPTS) if idem else (list(range(18)), {**OPTS, "difficulties": ["easy"]})
    n_videos, n_faults = 18, len(FAULTS) - FAULTS.count(None)
    # the job list is down for the first 3 look-ups: those 3 creates stay unresolved in the first run (so
    # do all 7 with the idempotency key, as no resend is allowed: retries 0); the resume resolves them
    unresolved = n_faults if idem else 3
    with FakeVideoAPI(latency=0.05, after_create=list(FAULTS), stall_s=3.0, idempotency=idem,
                      transient={"list": [503] * unresolved}) as api:
        monkeypatch.setenv("VREASON_SORA_BASE_URL", api.openai_url)
        run_dir = tmp_path / "run"
        spec = _spec(tmp_path, "sora", "sora-2", "sora-2", idempotent_creates=idem, retries=0)
        _run(tmp_path, run_dir, spec, seeds, opts)
        assert sum(api.faults_fired.values()) == n_faults and len(api.jobs) == n_videos
        first = ledger_totals(str(run_dir))["sora-2"]
        assert first["by_status"] == {"done": n_videos - unresolved, "unknown": unresolved}
        assert first["usd_may_bill"] == pytest.approx(0.4 * n_videos)  # the unknown ones may be billed
        _run(tmp_path, run_dir, spec, seeds, opts, retry_failed=True)  # the resume resolves them before creating
        assert len(api.jobs) == n_videos and api.total_creates == n_videos  # exactly one provider job each
    vids = _videos(run_dir)
    assert len(vids) == n_videos and all(v.status == VideoStatus.ok for v in vids), [v.reason for v in vids]
    assert len({v.manifest.params["job_id"] for v in vids}) == n_videos  # no job serves two videos
    cost = ledger_totals(str(run_dir))["sora-2"]
    assert cost["usd"] == pytest.approx(0.4 * n_videos) and cost["usd_may_bill"] == pytest.approx(0.4 * n_videos)
    assert cost["by_status"] == {"done": n_videos}
    attempts, rows = _attempts(run_dir)
    creates = [a for a in attempts if a["kind"] == "create"]
    outcomes = Counter(a["outcome"] for a in creates)
    n_faults = sum(api.faults_fired.values())
    assert outcomes["ambiguous"] == n_faults  # every faulted attempt is listed as such
    assert sum(r["creates"] for r in rows) == len(creates)  # the per-row count agrees with the list
    assert all(a["outcome"] != "sending" and a["ended_at"] for a in attempts)
    assert all(a["client_ref"] == next(r["client_ref"] for r in rows if r["key"] == a["key"]) for a in attempts)
    if idem:  # the resend with the same key got the first job back
        assert outcomes["replayed"] == n_faults and outcomes["created"] == n_videos - n_faults
    else:  # the look-up found the job the faulted create made (4 in the first run, 3 in the resume)
        lookups = Counter(a["outcome"] for a in attempts if a["kind"] == "lookup")
        assert lookups == {"found": n_faults, "lookup_failed": unresolved}
        assert outcomes["created"] == n_videos - n_faults
    by_key = {r["key"]: r["job_id"] for r in rows}
    for a in attempts:  # each attempt that names a job names the row's own job
        if a["job_id"] and a["outcome"] in ("created", "replayed", "found"):
            assert a["job_id"] == by_key[a["key"]]


def test_veo_without_any_mechanism_keeps_the_row_unknown_and_does_not_pay_twice(tmp_path, monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    with FakeVideoAPI(latency=0.05, after_create=["500", "drop"]) as api:
        spec = _spec(tmp_path, "veo", "veo-3.1-fast-generate-preview", "veo", base_url=api.veo_url)
        run_dir = tmp_path / "run"
        summary = _run(tmp_path, run_dir, spec, seeds=[0])
        assert api.total_creates == 3  # two of them answered with a fault: not created again
        _run(tmp_path, run_dir, spec, seeds=[0], retry_failed=True)  # still unresolved: still not created
        assert api.total_creates == 3
    vids = _videos(run_dir)
    bad = [v for v in vids if v.status != VideoStatus.ok]
    assert len(bad) == 2 and all("may have made (and bill) this job" in v.reason for v in bad)
    cost = ledger_totals(str(run_dir))["veo"]
    assert cost["by_status"] == {"done": 1, "unknown": 2}
    assert cost["usd_may_bill"] == pytest.approx(3 * 0.15 * 8) and cost["usd"] == pytest.approx(0.15 * 8)
    assert summary.finished_with_errors


def _cli(run_dir, spec, env, *extra):
    return subprocess.Popen([sys.executable, "-m", "vreason.cli.main", "run", "synth", "--name", "api",
                             "--runs", str(run_dir), "--models", spec, "--per-task", "1", "--opt",
                             "families=maze", *SMALL_SYNTH_ARGS, "--workers", "1", "--no-report", *extra],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


# the lookup path in `make test`; the idempotency-key path in `make test-all` / `make bench` (slow)
@pytest.mark.parametrize("mechanism", ["lookup", pytest.param("idempotency_key", marks=pytest.mark.slow)])
def test_kill_9_while_creates_hang_then_resume_resolves_before_creating(tmp_path, mechanism):
    idem = mechanism == "idempotency_key"
    # look-up: one sample, 6 seeds (interchangeable jobs); key: 3 samples × 2 seeds
    extra = ("--seeds", "0,1") if idem else ("--seeds", "0,1,2,3,4,5", "--opt", "difficulties=easy")
    with FakeVideoAPI(latency=0.05, after_create=["stall"] * 6, stall_s=600, idempotency=idem) as api:
        env = {**os.environ, "OPENAI_API_KEY": KEY, "VREASON_SORA_BASE_URL": api.openai_url}
        spec = _spec(tmp_path, "sora", "sora-2", "sora-2", request_timeout_s=300, idempotent_creates=idem)
        proc = _cli(tmp_path / "runs", spec, env, *extra)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and api.total_creates < 6:  # every job made, no reply sent
            time.sleep(0.05)
        if api.total_creates < 6:
            proc.kill()
            pytest.fail(f"the run never created its jobs: {proc.communicate()[0].decode()[-2000:]}")
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        rows = _attempts(tmp_path / "runs" / "api")[1]
        assert [r["status"] for r in rows] == ["creating"] * 6 and not any(r["job_id"] for r in rows)
        proc = _cli(tmp_path / "runs", spec, env, *extra)
        out = proc.communicate(timeout=120)[0].decode()
        assert proc.returncode == 0, out[-3000:]
        assert api.total_creates == 6 and len(api.jobs) == 6  # resolved, not created again
    run_dir = tmp_path / "runs" / "api"
    vids = _videos(run_dir)
    assert len(vids) == 6 and all(v.status == VideoStatus.ok for v in vids)
    attempts, rows = _attempts(run_dir)
    assert sorted(r["job_id"] for r in rows) == sorted(api.jobs)
    resolved = ("create", "replayed") if idem else ("lookup", "found")
    assert Counter((a["kind"], a["outcome"]) for a in attempts) == {("create", "no_reply"): 6, resolved: 6}
    assert ledger_totals(str(run_dir))["sora-2"]["usd"] == pytest.approx(6 * 0.4)


def test_http_job_api_finds_the_job_by_client_reference(tmp_path):
    """The generic ``http:`` adapter: the client reference goes out as ``Idempotency-Key`` on every create
    and the ``lookup`` call lists jobs by it; a create answered 500 / dropped / stalled is found, not resent;
    a connection refused (nothing sent) is simply sent again."""
    import asyncio

    from vreason.core.records import Mode, Sample
    from vreason.generate.base import GenContext
    from vreason.generate.http_job import HttpJobGenerator

    with FakeVideoAPI(latency=0.03, after_create=["500", "drop", "stall"], stall_s=3.0,
                      transient={"create": [429]}) as api:
        cfg = tmp_path / "my_api.yaml"
        cfg.write_text(yaml.safe_dump({
            "model": "m", "base_url": api.openai_url, "create": {"method": "POST", "url": "{base_url}/videos",
                                                                 "body": {"model": "{model}", "prompt": "{prompt}"}},
            "id_path": "id", "poll": {"url": "{base_url}/videos/{job_id}"}, "status_path": "status",
            "done_values": ["completed"], "download_url": "{base_url}/videos/{job_id}/content",
            "video_seconds": 4, "lookup": {"url": "{base_url}/videos?client_reference={client_ref}"}}))
        g = HttpJobGenerator(str(cfg), None, poll_s=0.02, retry_base_s=0.01, lookup_wait_s=0.05,
                             request_timeout_s=1.0, usd_per_video=1.0)
        g.bind(GenContext(run_dir=str(tmp_path)))
        vids = [asyncio.run(g._generate_and_close(Sample(id=f"s{i}", benchmark="t", prompt=f"p{i}", mode=Mode.t2v),
                                                  0, str(tmp_path / f"v{i}.mp4"))) for i in range(4)]
        assert all(v.status == VideoStatus.ok for v in vids), [v.reason for v in vids]
        assert api.total_creates == 4 and sum(api.faults_fired.values()) == 3
        refs = {j.extra["client_reference"] for j in api.jobs.values()}
        assert len(refs) == 4 and all(r and r.startswith("vr-") for r in refs)
    attempts, rows = _attempts(tmp_path)
    assert Counter(a["outcome"] for a in attempts) == {"created": 1, "ambiguous": 3, "found": 3, "not_sent": 1}
    assert ledger_totals(str(tmp_path))["my_api"]["usd"] == pytest.approx(4.0)


def test_a_create_that_never_connected_is_resent_and_counts_nothing(tmp_path, monkeypatch):
    """Connection refused: certainly not created, so resent (each attempt listed as ``not_sent``); when
    the attempts run out the row is ``failed`` (not ``unknown``) and nothing may be billed."""
    import socket

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    spec = _spec(tmp_path, "sora", "sora-2", "sora-2", retries=2, base_url=f"http://127.0.0.1:{port}/v1")
    _run(tmp_path, tmp_path / "run", spec, seeds=[0])
    vids = _videos(tmp_path / "run")
    assert vids and all(v.status == VideoStatus.failed and "create failed" in v.reason for v in vids)
    attempts, rows = _attempts(tmp_path / "run")
    assert Counter(a["outcome"] for a in attempts) == {"not_sent": 3 * len(vids)}
    cost = ledger_totals(str(tmp_path / "run"))["sora-2"]
    assert cost["by_status"] == {"failed": len(vids)} and cost["usd_may_bill"] == 0


def test_sora_lookup_does_not_guess_between_two_inputs_with_one_prompt(tmp_path, monkeypatch):
    """Sora's job list shows the prompt and size, not the input image: when two videos with one prompt and
    different images both fail ambiguously at once, a listed job cannot be told apart — neither takes one
    (both ``unknown``), nothing is created again; one at a time, each finds its own."""
    import asyncio

    from PIL import Image

    from vreason.core.records import Mode, Sample
    from vreason.generate.base import GenContext
    from vreason.generate.sora import SoraGenerator

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    samples = []
    for i, color in enumerate(((200, 0, 0), (0, 0, 200))):
        path = tmp_path / f"img{i}.png"
        Image.new("RGB", (96, 64), color).save(path)
        samples.append(Sample(id=f"s{i}", benchmark="t", prompt="solve the maze", mode=Mode.ti2v,
                              input_image=str(path)))

    async def both(g):
        try:
            return await asyncio.gather(*(g.agenerate(s, 0, str(tmp_path / f"{s.id}.mp4")) for s in samples))
        finally:
            await g.engine().aclose()

    for concurrent in (True, False):
        run_dir = tmp_path / f"run{int(concurrent)}"
        # concurrent: both creates held 0.3 s by the fake, so both are unresolved when either looks up
        with FakeVideoAPI(latency=0.05, after_create=["500", "500"], create_delay_s=0.3 * concurrent) as api:
            g = SoraGenerator("sora-2", None, base_url=api.openai_url, poll_s=0.02, retry_base_s=0.01,
                              lookup_wait_s=0.05)
            g.bind(GenContext(run_dir=str(run_dir)))
            if concurrent:
                vids = asyncio.run(both(g))
            else:
                vids = [asyncio.run(g._generate_and_close(s, 0, str(tmp_path / f"{s.id}.mp4"))) for s in samples]
            assert api.total_creates == 2
            jobs_by_image = {j.request["image"]: j.id for j in api.jobs.values()}
        _, rows = _attempts(run_dir)
        if concurrent:
            assert all(v.status == VideoStatus.failed and "cannot tell them apart" in v.reason for v in vids)
            assert sorted(r["status"] for r in rows) == ["unknown", "unknown"]
        else:  # each took the job its own create made (the one made from its image)
            assert all(v.status == VideoStatus.ok for v in vids), [v.reason for v in vids]
            for s, r in zip(samples, sorted(rows, key=lambda r: r["sample_id"]), strict=True):
                assert r["job_id"] == jobs_by_image[g.input_png(s)[0]]
