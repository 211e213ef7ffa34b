"""`cmd:` models through `vreason run`: a good script generates and is scored; one that exits 1, one that
hangs and one that writes garbage each yield a failed video with the reason, and the run goes on."""

import json
import os
import sys
import time

import pytest

from conftest import SMALL_SYNTH
from vreason.core.records import VideoStatus
from vreason.runner.run import RunConfig, Runner
from vreason.store import RunStore

GOOD = """
import json, sys
import numpy as np
from PIL import Image
from vreason.frames.write import write_video
req = json.load(open(sys.argv[1]))
assert req["mode"] == "ti2v" and req["input_image"], req
img = np.asarray(Image.open(req["input_image"]).convert("RGB").resize((160, 90)))
open(req["output"] + ".seen.json", "w").write(json.dumps(req))
write_video(req["output"], [img] * 6, fps=req.get("fps") or 8)
"""
EXIT1 = """
import sys
sys.stderr.write("loading weights...\\nRuntimeError: CUDA out of memory (pretend)\\n")
sys.exit(1)
"""
HANG = """
import json, os, subprocess, sys, time
req = json.load(open(sys.argv[1]))
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
open(os.path.join(os.path.dirname(req["output"]), "child.pid"), "w").write(str(child.pid))
time.sleep(600)
"""
GARBAGE = """
import json, os, sys
req = json.load(open(sys.argv[1]))
open(req["output"], "wb").write(os.urandom(4096))
"""


def _script(folder, name, body):
    path = os.path.join(folder, name)
    with open(path, "w") as fh:
        fh.write(f"#!{sys.executable}\n{body}")
    os.chmod(path, 0o755)
    return path


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


@pytest.fixture()
def scripts(tmp_path):
    d = tmp_path / "bin"
    d.mkdir()
    return {k: _script(str(d), f"{k}.py", body) for k, body in
            (("good", GOOD), ("exit1", EXIT1), ("hang", HANG), ("garbage", GARBAGE))}


def test_cmd_models_generate_fail_with_reasons_and_the_run_goes_on(tmp_path, scripts):
    run_dir = tmp_path / "run"
    models = [f"cmd:{scripts['good']}", f"crash=cmd:{scripts['exit1']}", f"cmd:{scripts['hang']}",
              f"cmd:{scripts['garbage']}"]
    cfg = RunConfig(protocol="synth", run_dir=str(run_dir), models=models, seeds=[0],
                    options={"per_task": 1, "families": ["maze"], **SMALL_SYNTH}, limit=1, workers=1, gen_timeout=8.0)
    t0 = time.monotonic()
    summary = Runner(cfg).run()
    assert time.monotonic() - t0 < 60
    with RunStore(run_dir) as st:
        videos = {v.model: v for v in st.videos()}
        units = st.unit_status()
        man = st.read_manifest()
    assert set(videos) == {"good", "crash", "hang", "garbage"}  # names derived from the script, or given
    good = videos["good"]
    assert good.status == VideoStatus.ok and good.path == os.path.join(str(run_dir), "videos", "good",
                                                                         f"{good.sample_id}__0.mp4")
    req = json.load(open(good.manifest.params["request"]))
    assert req["seed"] == 0 and req["prompt"] and os.path.isabs(req["input_image"])
    assert req["output"].startswith(good.path[:-4] + ".part-")  # written under a temporary name, renamed
    assert not os.path.exists(req["output"])  # the temporary name is gone once renamed
    crash = videos["crash"]
    assert crash.status == VideoStatus.failed and "exited with code 1" in crash.reason
    assert "CUDA out of memory" in crash.reason  # the stderr tail
    hang = videos["hang"]
    assert hang.status == VideoStatus.failed and "timed out after 8 s" in hang.reason
    pid = int(open(run_dir / "videos" / "hang" / "child.pid").read())
    deadline = time.monotonic() + 5
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(pid), "the hanging command's child survived: the process group was not killed"
    junk = videos["garbage"]
    assert junk.status == VideoStatus.failed and "unreadable" in junk.reason and junk.path is None
    # every failed video's units are recorded not-ok with the reason, never scored
    by_model = {}
    for (_, model, _, _), status in units.items():
        by_model.setdefault(model, set()).add(status)
    assert by_model["good"] == {"ok"}
    for m in ("crash", "hang", "garbage"):
        assert "ok" not in by_model[m]
    assert summary.videos.get("failed") == 3 and summary.finished_with_errors
    assert any("exited with code 1" in r for r in summary.failure_reasons)
    # the manifest records each model's spec and resolved parameters
    resolved = man["config"]["models_resolved"]
    assert resolved["crash"]["kind"] == "cmd" and resolved["crash"]["spec"] == models[1]
    assert resolved["good"]["params"]["argv"] == [scripts["good"]]


def test_cmd_yaml_spec_with_params_timeout_and_protocol_override(tmp_path, scripts):
    spec = tmp_path / "mine.yaml"
    spec.write_text(f"kind: cmd\ntarget: {scripts['good']}\nname: my-model\ntimeout: 30\n"
                    "params: {fps: 8, num_frames: 6, env: {MY_TOKEN: secret-value}}\n"
                    "protocols: {synth: {fps: 12}}\n")
    run_dir = tmp_path / "run"
    cfg = RunConfig(protocol="synth", run_dir=str(run_dir), models=[str(spec)], seeds=[3],
                    options={"per_task": 1, "families": ["maze"], **SMALL_SYNTH}, limit=1, workers=1)
    summary = Runner(cfg).run()
    assert summary.videos == {"ok": 1}
    with RunStore(run_dir) as st:
        (v,) = st.videos()
        man = st.read_manifest()
    assert v.model == "my-model" and v.seed == 3
    req = json.load(open(v.manifest.params["request"]))  # the request (its output: a temporary name)
    assert req["fps"] == 12 and req["num_frames"] == 6 and req["seed"] == 3  # the synth override won
    entry = man["config"]["models_resolved"]["my-model"]
    assert entry["timeout_s"] == 30 and entry["protocol_overrides"] == {"fps": 12}
    assert "secret-value" not in json.dumps(man)  # secrets (env of the command) are redacted


def test_imported_videos_win_over_generating(tmp_path, scripts):
    from vreason.frames.write import write_video
    from vreason.runner.run import make_protocol

    proto = make_protocol("synth", {"per_task": 1, "families": ["maze"], **SMALL_SYNTH}, run_dir=str(tmp_path / "x"))
    sample = proto.load().samples[0]
    vids = tmp_path / "vids" / "exit1"
    vids.mkdir(parents=True)
    import numpy as np

    write_video(str(vids / f"{sample.id}__0.mp4"), [np.zeros((64, 64, 3), np.uint8)] * 4, fps=8)
    cfg = RunConfig(protocol="synth", run_dir=str(tmp_path / "run"), models=[f"cmd:{scripts['exit1']}"],
                    seeds=[0], options={"per_task": 1, "families": ["maze"], **SMALL_SYNTH}, limit=1, workers=1,
                    videos_dir=str(tmp_path / "vids"))
    summary = Runner(cfg).run()
    assert summary.videos == {"ok": 1}  # the failing command never ran: its video was imported
    with RunStore(tmp_path / "run") as st:
        (v,) = st.videos()
    assert v.manifest.source == "imported"
