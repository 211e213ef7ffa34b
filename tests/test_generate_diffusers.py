"""`diffusers:` models end to end through `vreason run` on tiny random-init pipelines built on CPU (Wan 2.1 I2V,
CogVideoX T2V), deterministic per seed; and the killable generation workers (hang → killed and replaced)."""

import json
import os
import time

import numpy as np
import pytest
from typer.testing import CliRunner

from _hang_gen import HangingGenerator
from vreason.cli.main import app
from vreason.core.records import Sample, VideoStatus
from vreason.frames.video import read_all
from vreason.runner.genpool import GenPool
from vreason.store import RunStore

SMALL = "{num_frames: 5, width: 32, height: 32, num_inference_steps: 2, max_sequence_length: 16, device: cpu, fps: 8}"
SUITE = ["--per-task", "1", "--families", "maze", "--limit", "1", "--workers", "1"]


@pytest.fixture(scope="module")
def pipelines(tmp_path_factory):
    import _tiny_diffusers as tiny

    root = tmp_path_factory.mktemp("pipes")
    return {"wan": tiny.build_wan_i2v(str(root / "tiny-wan2.1-i2v")),
            "cog": tiny.build_cogvideox(str(root / "tiny-cogvideox"))}


def _run(*args):
    res = CliRunner().invoke(app, ["run", "synth", *args], catch_exceptions=False)
    return res.exit_code, res.output


def _frames(path):
    return np.stack(read_all(path))


def test_diffusers_wan_i2v_generates_scores_reports_deterministically(tmp_path, pipelines):
    spec = tmp_path / "wan.yaml"
    spec.write_text(f"kind: diffusers\ntarget: {pipelines['wan']}\nname: tinywan\nparams: {SMALL}\n")
    runs = str(tmp_path / "runs")
    code, out = _run("--models", str(spec), "--seeds", "0,1", "--runs", runs, "--name", "a", *SUITE)
    assert code == 0, out
    run_dir = os.path.join(runs, "a")
    with RunStore(run_dir) as st:
        videos = {v.seed: v for v in st.videos()}
        units = st.unit_status()
        man = st.read_manifest()
    assert set(videos) == {0, 1} and all(v.status == VideoStatus.ok for v in videos.values())
    v0 = videos[0]
    assert v0.path == os.path.join(os.path.abspath(run_dir), "videos", "tinywan", f"{v0.sample_id}__0.mp4")
    assert v0.manifest.source == "generated" and v0.manifest.params["pipeline"] == "WanImageToVideoPipeline"
    assert v0.manifest.params["input_image"].endswith(".png")  # ti2v: the sample's first frame was given
    # the input image (640×360) kept its aspect ratio within the 32×32 area, rounded to multiples of 16
    assert (v0.manifest.params["width"], v0.manifest.params["height"]) == (48, 32)
    a0, a1 = _frames(v0.path), _frames(videos[1].path)
    assert a0.shape == (5, 32, 48, 3)
    assert np.abs(a0.astype(int) - a1.astype(int)).mean() > 1.0  # another seed, another video
    assert units and set(units.values()) == {"ok"}  # generated → scored
    assert os.path.exists(os.path.join(run_dir, "report", "report.md"))
    entry = man["config"]["models_resolved"]["tinywan"]
    assert entry["kind"] == "diffusers" and entry["params"]["preset"] == "wan2.1"
    assert entry["params"]["num_frames"] == 5 and entry["params"]["guidance_scale"] == 5.0  # override + preset
    assert "diffusers" in entry["versions"] and "torch" in entry["versions"]
    # same seed for another run folder, in another process (this one, where the tiny pipelines were built, so no
    # second worker imports diffusers): the same frames
    from vreason.generate.base import GenContext
    from vreason.generate.spec import build, parse_models

    with RunStore(run_dir) as st:
        sample = next(s for s in st.samples() if s.id == v0.sample_id)
    gen = build(parse_models([str(spec)])[0], "synth")
    gen.bind(GenContext(run_dir=str(tmp_path / "b")))
    again = gen.generate(sample, 0, str(tmp_path / "b.mp4"))
    assert again.status == VideoStatus.ok and again.path != v0.path
    assert np.array_equal(_frames(again.path), a0)


def test_t2v_pipeline_on_an_image_sample_fails_or_falls_back_per_protocol_in_process(tmp_path, pipelines):
    """The generator's own decision, without a run: the spec's per-protocol override turns the fallback on for
    synth only; without it the image sample fails with the reason. (`make test`'s fast form of the slow run below:
    the run path itself is the Wan test's.)"""
    from vreason.generate.spec import build, parse_models
    from vreason.synth.suite import build_samples

    (sample,) = build_samples(["maze"], ["easy"], 1, 0, out_dir=str(tmp_path / "suite"))
    spec = tmp_path / "cog.yaml"
    spec.write_text(f"kind: diffusers\ntarget: {pipelines['cog']}\nname: cog\nparams: {SMALL}\n"
                    "protocols: {synth: {t2v_fallback: true}, rise: {t2v_fallback: false}}\n")
    (entry,) = parse_models([str(spec)])
    strict, loose = build(entry, "rise"), build(entry, "synth")
    bad = strict.generate(sample, 0, str(tmp_path / "bad.mp4"))
    assert bad.status == VideoStatus.failed and "CogVideoXPipeline cannot take an input image" in bad.reason
    assert not os.path.exists(tmp_path / "bad.mp4")
    good = loose.generate(sample, 0, str(tmp_path / "good.mp4"))
    assert good.status == VideoStatus.ok and good.manifest.params["pipeline"] == "CogVideoXPipeline"
    assert good.manifest.params["t2v_fallback"] and good.manifest.params["input_image"] is None
    assert _frames(good.path).shape[0] > 1  # a video was written (CogVideoX rounds the frame count to its latent steps)


# slow: two CLI runs, each starting a generation worker that imports diffusers (≈ 10 s each); make test keeps the
# in-process form above and the Wan run's path
@pytest.mark.slow
def test_diffusers_t2v_pipeline_on_image_samples_fails_or_falls_back_per_protocol(tmp_path, pipelines):
    strict = tmp_path / "strict.yaml"
    strict.write_text(f"kind: diffusers\ntarget: {pipelines['cog']}\nname: cog-strict\nparams: {SMALL}\n")
    loose = tmp_path / "loose.yaml"
    loose.write_text(f"kind: diffusers\ntarget: {pipelines['cog']}\nname: cog-loose\nparams: {SMALL}\n"
                     "protocols: {synth: {t2v_fallback: true}, rise: {t2v_fallback: false}}\n")
    runs = str(tmp_path / "runs")
    code, out = _run("--models", f"{strict},{loose}", "--runs", runs, "--name", "c", *SUITE)
    assert code == 3, out  # finished with errors: one model's video failed
    with RunStore(os.path.join(runs, "c")) as st:
        videos = {v.model: v for v in st.videos()}
        units = st.unit_status()
    bad, good = videos["cog-strict"], videos["cog-loose"]
    assert bad.status == VideoStatus.failed and "CogVideoXPipeline cannot take an input image" in bad.reason
    assert good.status == VideoStatus.ok and good.manifest.params["pipeline"] == "CogVideoXPipeline"
    assert good.manifest.params["t2v_fallback"]  # recorded per video
    assert {s for (_, m, _, _), s in units.items() if m == "cog-loose"} == {"ok"}
    assert "ok" not in {s for (_, m, _, _), s in units.items() if m == "cog-strict"}


def test_inline_spec_dry_run_uses_the_family_preset(tmp_path, pipelines):
    runs = str(tmp_path / "runs")
    code, out = _run("--models", f"diffusers:{pipelines['wan']}", "--runs", runs, "--name", "d", "--dry-run", *SUITE)
    assert code == 0, out
    assert "to generate: 1" in out
    man = json.load(open(os.path.join(runs, "d", "manifest.json")))
    entry = man["config"]["models_resolved"]["tiny-wan2.1-i2v"]  # name derived from the folder
    p = entry["params"]
    assert (p["num_frames"], p["fps"], p["width"], p["height"], p["guidance_scale"]) == (81, 16, 1280, 720, 5.0)
    assert "PAI-Bench Table 7" in p["preset_source"] and "VideoTPO" in p["preset_source"]
    assert not os.path.exists(os.path.join(runs, "d", "videos", "tiny-wan2.1-i2v"))


def _sample(tmp_path):
    return Sample(id="s1", benchmark="t", mode="t2v", prompt="x")


def _dead(pid, wait=5.0):
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


def test_pool_kills_a_hanging_worker_and_replaces_it(tmp_path):
    import asyncio

    gen = HangingGenerator(behaviour="hang")
    pool = GenPool(1)
    sample = _sample(tmp_path)

    async def go():
        # the worker is started by a first video, so the 2 s go to the hang, not to its start-up (a loaded machine
        # took longer than 2 s to start it: the hung call timed out before the worker had written its pid)
        warm = await pool.generate("h", gen, sample, 1, str(tmp_path / "w.mp4"), timeout=120.0)
        hung = await pool.generate("h", gen, sample, 0, str(tmp_path / "a.mp4"), timeout=2.0)
        fine = await pool.generate("h", gen, sample, 2, str(tmp_path / "b.mp4"), timeout=30.0)
        return warm, hung, fine

    try:
        warm, hung, fine = asyncio.run(go())
    finally:
        pool.shutdown()
    assert warm.status == VideoStatus.ok
    assert int(open(tmp_path / "w.mp4.pid").read()) == int(open(tmp_path / "a.mp4.pid").read())  # the same worker
    assert hung.status == VideoStatus.failed and "timed out after 2 s" in hung.reason
    assert _dead(int(open(tmp_path / "a.mp4.pid").read())), "the hanging worker still runs"
    assert fine.status == VideoStatus.ok and pool.replaced == 1
    assert int(open(tmp_path / "b.mp4.pid").read()) != int(open(tmp_path / "a.mp4.pid").read())


def test_pool_reports_a_dying_worker(tmp_path):
    import asyncio

    pool = GenPool(1)
    try:
        v = asyncio.run(pool.generate("d", HangingGenerator(behaviour="die"), _sample(tmp_path), 0,
                                      str(tmp_path / "a.mp4"), timeout=30.0))
    finally:
        pool.shutdown()
    assert v.status == VideoStatus.failed and "worker died (exit code 9)" in v.reason
