"""API generators (Sora, Veo, generic HTTP) against the loopback fake video API, called directly."""

from __future__ import annotations

import asyncio
import io
import json
import os
import sqlite3

import pytest
from PIL import Image

from vreason.core.errors import ConfigError
from vreason.core.records import Mode, Sample, VideoStatus
from vreason.generate.base import GenContext
from vreason.generate.http_job import HttpJobGenerator
from vreason.generate.job_ledger import LEDGER_FILE, ledger_totals
from vreason.generate.sora import SoraGenerator
from vreason.generate.veo import VeoGenerator
from vreason.testing.fake_video_api import Behavior, FakeVideoAPI

OPENAI_KEY = "sk-fake-SECRET-openai-0123456789"
GEMINI_KEY = "AIza-fake-SECRET-gemini-987654"
FAST = {"poll_s": 0.02, "retry_base_s": 0.01, "retry_cap_s": 0.2, "lookup_wait_s": 0.05}


@pytest.fixture(autouse=True)
def _keys(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("GEMINI_API_KEY", GEMINI_KEY)


def _sample(tmp_path, sid="s1", prompt="the ball rolls to the red goal", image=(96, 96)) -> Sample:
    path = None
    if image:
        path = str(tmp_path / f"{sid}.png")
        Image.new("RGB", image, (200, 30, 30)).save(path)
    return Sample(id=sid, benchmark="t", prompt=prompt, mode=Mode.ti2v if image else Mode.t2v, input_image=path)


def _gen(cls, target, url, run_dir, **params):
    g = cls(target, None, base_url=url, **{**FAST, **params})
    g.bind(GenContext(run_dir=str(run_dir)))
    return g


def _run(g, sample, seed, out):
    return asyncio.run(g._generate_and_close(sample, seed, str(out)))


def _ledger(run_dir):
    with sqlite3.connect(os.path.join(run_dir, LEDGER_FILE)) as db:
        db.row_factory = sqlite3.Row
        return [dict(r) for r in db.execute("SELECT * FROM jobs")]


def test_sora_transient_errors_retried_and_request_shape(tmp_path):
    with FakeVideoAPI(latency=0.05, transient={"create": [503, 429], "poll": [500], "download": [502]},
                      retry_after=0.05) as api:
        g = _gen(SoraGenerator, "sora-2", api.openai_url, tmp_path, seconds=8)
        s = _sample(tmp_path)
        v = _run(g, s, 0, tmp_path / "v.mp4")
        assert v.status == VideoStatus.ok, v.reason
        assert v.n_frames == 8 and os.path.getsize(v.path) > 0
        assert api.calls["create"] == 3 and api.total_creates == 1  # two transient errors, one job
        assert api.calls["download"] == 2
        job = next(iter(api.jobs.values()))
        assert job.request["model"] == "sora-2" and job.request["seconds"] == "8"
        assert job.request["size"] == "1280x720"  # a square image goes landscape, resized to the size sent
        assert Image.open(io.BytesIO(job.request["image"])).size == (1280, 720)
        assert v.manifest.params["job_id"] == job.id and v.manifest.params["usd"] == pytest.approx(0.8)
        assert api.auth_seen == {OPENAI_KEY}


def test_veo_image_to_video_and_key_only_to_own_host(tmp_path):
    with FakeVideoAPI(latency=0.05) as api:
        g = _gen(VeoGenerator, "veo-3.1-fast-generate-preview", api.veo_url, tmp_path, duration_seconds=4)
        v = _run(g, _sample(tmp_path, image=(64, 128)), 3, tmp_path / "v.mp4")
        assert v.status == VideoStatus.ok, v.reason
        job = next(iter(api.jobs.values()))
        assert job.request["parameters"] == {"durationSeconds": 4, "aspectRatio": "9:16"}
        assert Image.open(io.BytesIO(job.request["image"])).size == (720, 1280)
        assert job.request["seed"] is None  # the Gemini API gets no seed unless send_seed
        assert v.manifest.params["usd"] == pytest.approx(0.6)
    adapter = g.adapter(GEMINI_KEY)
    done = {"done": True, "response": {"generateVideoResponse": {"generatedSamples": [
        {"video": {"uri": "https://elsewhere.example/v.mp4"}}]}}}
    assert adapter.read_status("op", done).download.headers == {}  # never send the key to another host


@pytest.mark.parametrize("where", ["create", "end"])
def test_sora_refusal_is_blocked_with_reason(tmp_path, where):
    why = "Your request was blocked by our moderation system."
    beh = Behavior(refuse_at_create=why) if where == "create" else Behavior(refuse=why)
    with FakeVideoAPI(latency=0.02, policy=lambda req: beh) as api:
        v = _run(_gen(SoraGenerator, "sora-2", api.openai_url, tmp_path), _sample(tmp_path), 0, tmp_path / "v.mp4")
        assert v.status == VideoStatus.blocked and why in v.reason and v.path is None
        assert api.calls["create"] == 1  # a refusal is not retried
        # a second attempt (--retry-failed) keeps the refusal and does not pay again
        v2 = _run(_gen(SoraGenerator, "sora-2", api.openai_url, tmp_path), _sample(tmp_path), 0, tmp_path / "v.mp4")
        assert v2.status == VideoStatus.blocked and api.total_creates == 1
    assert ledger_totals(str(tmp_path))["sora-2"]["usd"] == 0.0


def test_veo_rai_filter_is_blocked_and_failure_is_failed(tmp_path):
    def policy(req):
        return Behavior(refuse="Unsafe content") if "knife" in req["prompt"] else Behavior(fail="backend exploded")

    with FakeVideoAPI(latency=0.02, policy=policy) as api:
        g = _gen(VeoGenerator, "veo-3.1-generate-preview", api.veo_url, tmp_path)
        v = _run(g, _sample(tmp_path, "a", prompt="a knife"), 0, tmp_path / "a.mp4")
        assert v.status == VideoStatus.blocked and "Unsafe content" in v.reason
        v = _run(g, _sample(tmp_path, "b", prompt="a ball"), 0, tmp_path / "b.mp4")
        assert v.status == VideoStatus.failed and "backend exploded" in v.reason


def test_timeout_then_retry_polls_the_same_job(tmp_path):
    with FakeVideoAPI(latency=0.02, policy=lambda req: Behavior(hang=True)) as api:
        g = _gen(SoraGenerator, "sora-2", api.openai_url, tmp_path, timeout_s=0.3)
        v = _run(g, _sample(tmp_path), 0, tmp_path / "v.mp4")
        assert v.status == VideoStatus.failed and "timed out after 0.3 s" in v.reason
        assert [r["status"] for r in _ledger(tmp_path)] == ["timeout"]
        job = next(iter(api.jobs.values()))
        job.behavior.hang, job.ready_at = False, 0.0  # the provider finishes it later
        v = _run(_gen(SoraGenerator, "sora-2", api.openai_url, tmp_path), _sample(tmp_path), 0, tmp_path / "v.mp4")
        assert v.status == VideoStatus.ok and v.manifest.params["resumed"] is True
        assert api.total_creates == 1


def test_finished_job_is_not_created_again(tmp_path):
    with FakeVideoAPI(latency=0.02) as api:
        s = _sample(tmp_path)
        assert _run(_gen(SoraGenerator, "sora-2", api.openai_url, tmp_path), s, 0, tmp_path / "v.mp4").status == "ok"
        os.remove(tmp_path / "v.mp4")  # even with the file gone, the paid job is downloaded again
        v = _run(_gen(SoraGenerator, "sora-2", api.openai_url, tmp_path), s, 0, tmp_path / "v.mp4")
        assert v.status == VideoStatus.ok and api.total_creates == 1
        # another seed or another prompt is another job
        _run(_gen(SoraGenerator, "sora-2", api.openai_url, tmp_path), s, 1, tmp_path / "v1.mp4")
        assert api.total_creates == 2
    tot = ledger_totals(str(tmp_path))["sora-2"]
    assert tot["jobs"] == 2 and tot["creates"] == 2 and tot["usd"] == pytest.approx(0.8)


def test_fatal_4xx_not_retried_and_persistent_5xx_gives_up(tmp_path, monkeypatch):
    with FakeVideoAPI(latency=0.02, api_key="the-right-key") as api:
        v = _run(_gen(SoraGenerator, "sora-2", api.openai_url, tmp_path), _sample(tmp_path), 0, tmp_path / "v.mp4")
        assert v.status == VideoStatus.failed and "HTTP 401" in v.reason and api.calls["create"] == 1
    with FakeVideoAPI(latency=0.02, transient={"create": [500] * 10}) as api:
        g = _gen(SoraGenerator, "sora-2", api.openai_url, tmp_path / "b", retries=2)
        v = _run(g, _sample(tmp_path), 0, tmp_path / "v.mp4")
        assert v.status == VideoStatus.failed and "HTTP 500" in v.reason and api.calls["create"] == 3


def test_no_key_anywhere(tmp_path):
    why = f"blocked: moderation (echo {OPENAI_KEY})"  # a provider echoing the key back is scrubbed too
    with FakeVideoAPI(latency=0.02, policy=lambda r: Behavior(refuse=why) if "x" in r["prompt"] else None) as api:
        g = _gen(SoraGenerator, "sora-2", api.openai_url, tmp_path)
        vids = [_run(g, _sample(tmp_path, sid, prompt=p), 0, tmp_path / f"{sid}.mp4")
                for sid, p in (("a", "ball"), ("b", "x marks"))]
        assert [v.status for v in vids] == [VideoStatus.ok, VideoStatus.blocked]
        assert api.auth_seen == {OPENAI_KEY}
    text = "".join(v.model_dump_json() for v in vids) + json.dumps(g.resolved_params())
    with open(tmp_path / LEDGER_FILE, "rb") as f:
        raw = f.read()
    for name in os.listdir(tmp_path):
        if name.startswith(LEDGER_FILE + "-"):
            with open(tmp_path / name, "rb") as f:
                raw += f.read()
    assert OPENAI_KEY not in text and OPENAI_KEY.encode() not in raw
    assert "***" in vids[1].reason


def test_options_keys_and_estimate(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="secondz"):
        SoraGenerator("sora-2", None, secondz=8)
    g = SoraGenerator("sora-2-pro", None, seconds=12, size="1792x1024")
    assert g.estimate(_sample(tmp_path), 0) == {"usd": 6.0, "video_seconds": 12.0}
    assert VeoGenerator("veo-3.1-generate-preview", None).estimate(_sample(tmp_path), 0)["usd"] == 3.2
    assert SoraGenerator("sora-2", None, usd_per_video=1.5).estimate(_sample(tmp_path), 0)["usd"] == 1.5
    monkeypatch.delenv("OPENAI_API_KEY")
    SoraGenerator("sora-2", None).bind(GenContext(run_dir=str(tmp_path), dry_run=True))  # a dry run needs no key
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        SoraGenerator("sora-2", None).bind(GenContext(run_dir=str(tmp_path)))


def test_generic_http_job_adapter(tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_JOB_KEY", "job-SECRET-42")
    with FakeVideoAPI(latency=0.03, api_key="job-SECRET-42", transient={"poll": [429]}) as api:
        monkeypatch.setenv("FAKE_JOB_BASE", api.openai_url)
        cfg = tmp_path / "my_api.yaml"
        cfg.write_text(
            "model: my-model\nbase_url: ${FAKE_JOB_BASE}\nkey_env: FAKE_JOB_KEY\n"
            "headers: {Authorization: 'Bearer ${FAKE_JOB_KEY}'}\n"
            "create: {method: POST, url: '{base_url}/videos', body: {model: '{model}', prompt: '{prompt}',"
            " seconds: 4, seed: '{seed}', image: '{image_b64}'}}\n"
            "id_path: id\npoll: {url: '{base_url}/videos/{job_id}'}\nstatus_path: status\n"
            "done_values: [completed]\nfailed_values: [failed]\nreason_path: error.message\n"
            "download_url: '{base_url}/videos/{job_id}/content'\nvideo_seconds: 4\n")
        g = HttpJobGenerator(str(cfg), None, poll_s=0.02, retry_base_s=0.01, usd_per_second=0.05)
        assert g.default_name(str(cfg)) == "my_api"
        g.bind(GenContext(run_dir=str(tmp_path)))
        v = _run(g, _sample(tmp_path, image=None), 0, tmp_path / "v.mp4")
        assert v.status == VideoStatus.ok, v.reason
        job = next(iter(api.jobs.values()))
        assert job.request["model"] == "my-model" and job.request["prompt"] == "the ball rolls to the red goal"
        assert api.calls["poll"] >= 2 and v.manifest.params["usd"] == pytest.approx(0.2)
    assert "job-SECRET-42" not in v.model_dump_json()
    bad = tmp_path / "bad.yaml"
    bad.write_text("create: {url: x}\nid_path: id\npoll: {url: y}\nstatus_path: s\ndone_values: [ok]\nbogus: 1\n")
    with pytest.raises(ValueError, match="bogus"):
        HttpJobGenerator(str(bad), None)


def test_quick_probe_of_a_download_reads_the_same_facts_and_rejects_damage(tmp_path):
    """The API generators check a download with ``probe(quick=True)`` (the MP4 demuxer named from its
    ``ftyp`` box, one decoder thread): the same facts as the plain probe, and damaged files still refused."""
    import dataclasses

    from vreason.core.errors import VideoError
    from vreason.frames.video import probe
    from vreason.testing.fake_video_api import tiny_mp4

    good = tiny_mp4()
    p = tmp_path / "v.mp4"
    p.write_bytes(good)
    plain, quick = probe(p), probe(p, quick=True)
    assert dataclasses.replace(quick, path="") == dataclasses.replace(plain, path="") and quick.n_frames > 0
    for bad in (good[:200], good[:12] + os.urandom(1500), os.urandom(1500), b"\0" * 1500):
        p.write_bytes(bad)
        with pytest.raises(VideoError):
            probe(p, quick=True)
        with pytest.raises(VideoError):
            probe(p)
