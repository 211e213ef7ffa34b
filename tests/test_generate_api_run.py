"""`vreason run synth --models sora:… / veo:…` end to end against the fake video API (127.0.0.1): the
videos are generated and scored, a refusal is blocked and counted per model in the report, the cost
ledger lands in the summary, a dry run estimates without a key, a `kill -9` during polling resumes
without creating any job again, and no API key reaches any file of the run."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time

import pytest
import yaml

from conftest import SMALL_SYNTH, SMALL_SYNTH_ARGS
from vreason.core.records import VideoStatus
from vreason.generate.job_ledger import LEDGER_FILE, ledger_totals
from vreason.generate.sora import SoraGenerator
from vreason.runner.run import RunConfig, Runner
from vreason.store import RunStore
from vreason.testing.fake_video_api import Behavior, FakeVideoAPI

OPENAI_KEY = "sk-fake-SECRET-e2e-openai-55"
GEMINI_KEY = "AIza-fake-SECRET-e2e-gemini-66"
OPTS = {"per_task": 1, "families": ["maze"], **SMALL_SYNTH}


@pytest.fixture(scope="module")
def oracle(tmp_path_factory):
    """The suite's samples and the oracle's video for each (what an honest provider would return)."""
    run_dir = tmp_path_factory.mktemp("oracle") / "run"
    Runner(RunConfig(protocol="synth", run_dir=str(run_dir), models=["oracle"], seeds=[0], options=OPTS,
                     workers=1, aggregate=False)).run()
    store = RunStore(str(run_dir), create=False)
    samples = store.samples()
    vids = {v.sample_id: v.path for v in store.videos()}
    store.close()
    assert len(samples) >= 3  # one refused, the others generated
    by_image = {}
    for s in samples:  # the bytes each generator sends for the sample → the oracle's video
        for png in (SoraGenerator("sora-2", None).input_png(s), _veo_png(s)):
            by_image[hashlib.sha256(png[0]).hexdigest()] = vids[s.id]
    return samples, by_image


def _veo_png(sample):
    from vreason.generate.veo import VeoGenerator

    return VeoGenerator("veo-3.1-generate-preview", None).input_png(sample)


def _render(by_image):
    def video(req):
        with open(by_image[hashlib.sha256(req["image"]).hexdigest()], "rb") as f:
            return f.read()

    return video


def _spec(tmp_path, kind, target, name, **params):
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump({"kind": kind, "target": target, "name": name,
                                    "params": {"poll_s": 0.05, "retry_base_s": 0.01, **params}}))
    return str(path)


def _all_text(run_dir) -> bytes:
    out = b""
    for root, _, files in os.walk(run_dir):
        for f in files:
            if not f.endswith((".mp4", ".png", ".jpg", ".gif", ".webp")):
                with open(os.path.join(root, f), "rb") as fh:
                    out += fh.read()
    return out


def test_sora_and_veo_generate_and_score_with_a_refusal(tmp_path, oracle, monkeypatch):
    samples, by_image = oracle
    refused_sample = samples[1]
    refused_png = {hashlib.sha256(SoraGenerator("sora-2", None).input_png(refused_sample)[0]).hexdigest(),
                   hashlib.sha256(_veo_png(refused_sample)[0]).hexdigest()}

    def policy(req):
        if hashlib.sha256(req["image"]).hexdigest() in refused_png:
            return Behavior(refuse="violates our content policy (fake)")
        return None

    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("GEMINI_API_KEY", GEMINI_KEY)
    with FakeVideoAPI(latency=0.1, video=_render(by_image), policy=policy,
                      transient={"create": [429], "poll": [503]}) as api:  # a 5xx create is ambiguous
        monkeypatch.setenv("VREASON_SORA_BASE_URL", api.openai_url)  # Sora: base URL from the environment
        models = [_spec(tmp_path, "sora", "sora-2", "sora-2"),
                  _spec(tmp_path, "veo", "veo-3.1-generate-preview", "veo", base_url=api.veo_url)]
        run_dir = tmp_path / "run"
        cfg = RunConfig(protocol="synth", run_dir=str(run_dir), models=models, seeds=[0], options=OPTS, workers=1)
        summary = Runner(cfg).run()
        assert api.total_creates == 2 * len(samples)
    store = RunStore(str(run_dir), create=False)
    vids = {(v.sample_id, v.model): v for v in store.videos()}
    scores = store.scores_frame()
    store.close()
    for model in ("sora-2", "veo"):
        assert vids[(refused_sample.id, model)].status == VideoStatus.blocked
        assert "content policy" in vids[(refused_sample.id, model)].reason
        ok = [s for s in samples if s.id != refused_sample.id]
        assert all(vids[(s.id, model)].status == VideoStatus.ok for s in ok)
        mine = scores[(scores["model"] == model) & (scores["status"] == "ok")]
        assert set(mine["sample_id"]) == {s.id for s in ok}
        assert mine["value"].min() >= 0.99  # the provider returned the right answer: it passes
        assert refused_sample.id not in set(mine["sample_id"])  # blocked is never a 0
    cost = summary.generation_cost
    assert cost["sora-2"]["usd"] == pytest.approx(0.4 * (len(samples) - 1))
    assert cost["veo"]["usd"] == pytest.approx(3.2 * (len(samples) - 1))
    assert cost["veo"]["by_status"] == {"done": len(samples) - 1, "blocked": 1}
    report = (run_dir / "report" / "report.md").read_text()
    assert "videos by model" in report and '"blocked": 1' in report
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert "generation_cost" in json.dumps(manifest)
    text = _all_text(run_dir)
    assert OPENAI_KEY.encode() not in text and GEMINI_KEY.encode() not in text


def test_dry_run_estimates_without_a_key(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("VREASON_SORA_BASE_URL", "http://127.0.0.1:9")  # nothing listens: nothing may be sent
    cfg = RunConfig(protocol="synth", run_dir=str(tmp_path / "run"), models=["sora:sora-2"], seeds=[0, 1],
                    options=OPTS, workers=1, dry_run=True)
    summary = Runner(cfg).run()
    row = summary.plan["videos"]["sora-2"]
    n = 2 * summary.samples  # two seeds; sora-2 default 4 s at $0.10/s
    assert n > 0 and row["to generate"] == n and row["estimated usd"] == pytest.approx(0.4 * n)
    assert not os.path.exists(tmp_path / "run" / LEDGER_FILE)


def _cli(run_dir, spec, env):
    return subprocess.Popen([sys.executable, "-m", "vreason.cli.main", "run", "synth", "--name", "api",
                             "--runs", str(run_dir), "--models", spec, "--seeds", "0", "--per-task", "1",
                             "--opt", "families=maze", *SMALL_SYNTH_ARGS, "--workers", "1", "--no-report"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


# slow; `make test` kills API generation in test_api_create_idempotency.py::test_kill_9_while_creates_hang…[lookup]
@pytest.mark.slow
def test_kill_9_during_polling_then_resume_creates_nothing_again(tmp_path, oracle):
    samples, by_image = oracle
    slow = {hashlib.sha256(SoraGenerator("sora-2", None).input_png(s)[0]).hexdigest() for s in samples[1:]}
    with FakeVideoAPI(latency=0.05, video=_render(by_image),
                      policy=lambda r: Behavior(latency=600) if hashlib.sha256(r["image"]).hexdigest() in slow
                      else None) as api:
        env = {**os.environ, "OPENAI_API_KEY": OPENAI_KEY, "VREASON_SORA_BASE_URL": api.openai_url}
        spec = _spec(tmp_path, "sora", "sora-2", "sora-2")
        proc = _cli(tmp_path / "runs", spec, env)
        ledger = tmp_path / "runs" / "api" / LEDGER_FILE
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # every job created, the fast one downloaded, the others polled
            totals = ledger_totals(str(ledger.parent)) if ledger.exists() else {}
            by = totals.get("sora-2", {}).get("by_status", {})
            if by.get("done") == 1 and by.get("running") == len(samples) - 1 and api.calls["poll"] > len(samples):
                break
            time.sleep(0.05)
        else:
            proc.kill()
            pytest.fail(f"run never reached polling: {proc.communicate()[0].decode()[-2000:]}")
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        assert api.total_creates == len(samples)
        api.release()  # the provider finishes the jobs while nobody is watching
        proc = _cli(tmp_path / "runs", spec, env)
        out = proc.communicate(timeout=120)[0].decode()
        assert proc.returncode == 0, out[-3000:]
        assert api.total_creates == len(samples) and max(api.creates.values()) == 1  # no job paid twice
    store = RunStore(str(tmp_path / "runs" / "api"), create=False)
    vids = store.videos()
    scores = store.scores_frame()
    store.close()
    assert len(vids) == len(samples) and all(v.status == VideoStatus.ok for v in vids)
    assert sum(bool(v.manifest.params.get("resumed")) for v in vids) >= len(samples) - 1
    assert (scores["status"] == "ok").all() and scores["value"].min() >= 0.99
    assert OPENAI_KEY.encode() not in _all_text(tmp_path / "runs" / "api")


def test_real_run_without_a_key_stops_before_sending(tmp_path, monkeypatch):
    from vreason.core.errors import ConfigError

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FakeVideoAPI() as api:
        monkeypatch.setenv("VREASON_SORA_BASE_URL", api.openai_url)
        cfg = RunConfig(protocol="synth", run_dir=str(tmp_path / "run"), models=["sora:sora-2"], seeds=[0],
                        options=OPTS, workers=1)
        with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
            Runner(cfg).run()
        assert sum(api.calls.values()) == 0


@pytest.mark.parametrize("create_s", [0.0, 0.95])
def test_job_that_never_finishes_fails_at_the_run_timeout_with_the_reason(tmp_path, monkeypatch, create_s):
    """The job loop stops itself before the run's timeout and names the job; a create that takes 0.95 s of the
    1-s timeout (a loaded machine) leaves it no margin, and the reason is still the job's (the runner's own cut
    comes ``timeout_grace_s`` later: else 'generation timed out after 1 s (cancelled)', no job id)."""
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    with FakeVideoAPI(policy=lambda r: Behavior(hang=True), create_delay_s=create_s) as api:
        monkeypatch.setenv("VREASON_SORA_BASE_URL", api.openai_url)
        cfg = RunConfig(protocol="synth", run_dir=str(tmp_path / "run"), models=[_spec(tmp_path, "sora", "sora-2",
                        "sora-2")], seeds=[0], options=OPTS, workers=1, gen_timeout=1.0, aggregate=False)
        t0 = time.monotonic()
        summary = Runner(cfg).run()
        assert time.monotonic() - t0 < 30
    store = RunStore(str(tmp_path / "run"), create=False)
    vids = store.videos()
    store.close()
    assert vids and all(v.status == VideoStatus.failed and "timed out after 1 s waiting for job video_" in v.reason
                        for v in vids)
    assert summary.finished_with_errors and summary.generation_cost["sora-2"]["by_status"] == {"timeout": len(vids)}


def test_a_generator_stuck_in_its_own_code_is_cut_after_its_grace(tmp_path, monkeypatch):
    """The job loop keeps the run's timeout itself (its reason names the job, above); the runner cuts an ``io``
    generator only ``timeout_grace_s`` later, a backstop for one that never returns, and says so."""
    import asyncio

    async def stuck(self, sample, seed, out_path):  # noqa: ANN001, ANN202
        await asyncio.sleep(3600)

    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setattr(SoraGenerator, "agenerate", stuck)
    monkeypatch.setattr(SoraGenerator, "timeout_grace_s", 0.5)
    cfg = RunConfig(protocol="synth", run_dir=str(tmp_path / "run"), models=[_spec(tmp_path, "sora", "sora-2",
                    "sora-2")], seeds=[0], options=OPTS, workers=1, gen_timeout=1.0, aggregate=False)
    t0 = time.monotonic()
    Runner(cfg).run()
    assert time.monotonic() - t0 < 30
    store = RunStore(str(tmp_path / "run"), create=False)
    vids = store.videos()
    store.close()
    assert vids and all(v.status == VideoStatus.failed and v.reason == "generation timed out after 1 s and did "
                        "not stop within 0.5 s more (cancelled)" for v in vids)
