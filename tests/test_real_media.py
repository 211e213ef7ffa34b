"""Real files nobody on the project made (OpenCV's sample media, fetched by the test set-up): probe, preflight,
the frame policies, import and a mock-judged RISE run agree on the frames that actually decode; a
variable-frame-rate file is timed by its presentation timestamps."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
from fractions import Fraction

import numpy as np
import pytest
from typer.testing import CliRunner

from vreason.cli.main import app
from vreason.core.errors import VideoUnreadableError
from vreason.core.records import Sample, Video
from vreason.data.preflight import preflight
from vreason.frames import decode_facts, probe, read_all, sample_frames

VIDEOS = ("box.mp4", "cup.mp4", "Megamind.avi", "tree.avi", "vtest.avi")
DECODED = {"box.mp4": (456, 455), "tree.avi": (444, 68), "cup.mp4": (217, 217), "Megamind.avi": (270, 270),
           "vtest.avi": (795, 795)}
"""Declared and decoded frame counts (PyAV, OpenCV and decord agree on the decoded ones)."""


@pytest.mark.parametrize("name", VIDEOS)
def test_probe_counts_the_frames_that_decode(opencv_samples, name):
    declared, decoded = DECODED[name]
    path = opencv_samples[name]
    hint = probe(path)
    assert hint.declared_frames == declared
    info = probe(path, exact=True)
    assert info.n_frames == decoded and info.frames_exact and info.declared_frames == declared
    assert info.short_decoded == (decoded < declared)
    assert len(read_all(path, max_side=32)) == decoded  # what a full read yields: the same count


def test_box_mp4_first_last_uniform(opencv_samples):
    path = opencv_samples["box.mp4"]
    first = sample_frames(path, "first")
    last = sample_frames(path, "last")
    assert first.indices == [0] and last.indices == [454]
    assert last.details()["frames_declared"] == 456 and last.details()["frames_decoded"] == 455
    assert not np.array_equal(first.frames[0], last.frames[0])
    uni = sample_frames(path, "uniform:8")
    assert uni.indices[0] == 0 and uni.indices[-1] == 454 and len(uni.frames) == 8
    assert all(b > a for a, b in zip(uni.times, uni.times[1:], strict=False))  # box muxes pts = dts: sorted
    assert uni.times[-1] == pytest.approx(15.151, abs=1e-3)
    # the box's one edit-list-discarded packet is not a truncation: strict mode accepts it too
    assert sample_frames(path, "last", mode="strict").indices == [454]


def test_an_index_past_the_decodable_end_maps_to_the_last_decodable_frame(opencv_samples):
    """A count taken from the header (456) asks for frame 455: the last decodable one (454) is used, recorded."""
    path = opencv_samples["box.mp4"]
    hinted = dataclasses.replace(probe(path, exact=True), n_frames=456)
    got = sample_frames(path, "last", info=hinted)
    assert got.indices == [454]
    assert got.details()["frames_mapped"] == {"455": 454}
    ref = sample_frames(path, "indices:454")
    assert np.array_equal(got.frames[0], ref.frames[0])


def test_tree_avi_scores_what_decodes_and_strict_names_both_counts(opencv_samples):
    path = opencv_samples["tree.avi"]
    got = sample_frames(path, "uniform:16")
    assert got.indices[-1] == 67 and len(got.indices) == 16
    assert got.details()["frames_declared"] == 444 and got.details()["frames_decoded"] == 68
    # its 68 frames are spread over 444 declared slots: timed by their timestamps (~29.5 s), not 68 / 15 fps
    assert got.times[-1] == pytest.approx(443 * 0.066667, abs=0.01)
    assert decode_facts(path) == {"frames_declared": 444, "frames_decoded": 68}
    with pytest.raises(VideoUnreadableError, match="decoded 68 frames, the container declares 444"):
        sample_frames(path, "last", mode="strict")


def test_preflight_agrees_with_probe_and_the_policies(opencv_samples):
    samples = [Sample(id=os.path.splitext(n)[0], benchmark="b") for n in VIDEOS]
    videos = [Video(sample_id=os.path.splitext(n)[0], model="m", seed=0, path=opencv_samples[n]) for n in VIDEOS]
    rep = preflight(samples, videos, decode="released").models[0]
    assert rep.ok == 5 and not rep.undecodable
    assert sorted(d["video"] for d in rep.short_decoded) == ["box#0", "tree#0"]
    assert rep.frames["min"] == 68 and rep.frames["max"] == 795
    strict = preflight(samples, videos, decode="strict").models[0]
    assert [d["video"] for d in strict.undecodable] == ["tree#0"] and strict.ok == 4
    quick = preflight(samples, videos, decode="released", full_decode=False).models[0]
    assert quick.frames == rep.frames  # counting (packets, then decoding where they disagree) = decoding


def _rise_videos(root: str, opencv_samples: dict[str, str], only: set[str] | None = None) -> str:
    """Every RISE fixture task's video is one of the real files (cycled), under the RISE convention."""
    from fixtures_rise import CATEGORY_DIR, GENERIC

    for i, (tid, *_rest) in enumerate(GENERIC):
        if only is not None and tid not in only:
            continue
        name = VIDEOS[i % len(VIDEOS)]
        dst = os.path.join(root, "real", CATEGORY_DIR[tid[:3]], tid + os.path.splitext(name)[1])
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copyfile(opencv_samples[name], dst)
    return root


def test_import_and_preflight_a_folder_of_real_files(tmp_path, opencv_samples):
    from fixtures_rise import write_dataset

    data = write_dataset(str(tmp_path / "RISE"))
    videos = _rise_videos(str(tmp_path / "videos"), opencv_samples)
    runner = CliRunner()
    res = runner.invoke(app, ["import", str(tmp_path / "run"), "--root", videos, "--convention", "rise"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["preflight", "rise", "--data", data, "--root", videos, "--convention", "rise",
                              "--model", "real", "--json"])
    rep = json.loads(res.output[res.output.index("{"):])
    (m,) = rep["models"]
    assert not m["undecodable"] and m["ok"] == m["found"] == 15
    # box.mp4 (455 of 456) and tree.avi (68 of 444) are used as they decode, and listed
    assert {d["video"] for d in m["short_decoded"]} == {f"{t}#0" for t in ("com_1", "per_2", "spa_1", "dom_2",
                                                                          "exp_1", "tem_2")}


@pytest.mark.timeout(600)
def test_mock_judged_rise_run_over_real_files_scores_without_error(tmp_path, opencv_samples):
    from fixtures_rise import write_dataset
    from vreason.store import RunStore

    data = write_dataset(str(tmp_path / "RISE"))
    keep = {"com_1", "com_2", "dom_1", "dom_2", "per_1"}  # one task per real file (box, cup, Megamind, tree, vtest)
    with open(os.path.join(data, "v5.json"), encoding="utf-8") as fh:
        records = [r for r in json.load(fh) if r["task_id"] in keep]
    with open(os.path.join(data, "v5.json"), "w", encoding="utf-8") as fh:
        json.dump(records, fh)
    videos = _rise_videos(str(tmp_path / "videos"), opencv_samples, keep)
    runs = str(tmp_path / "runs")
    res = CliRunner().invoke(app, ["run", "rise", "--data", data, "--videos", videos, "--models", "real",
                                   "--runs", runs, "--name", "r", "--judge", "mock:quality=0.5,seed=1",
                                   "--opt", "n_boot=20"])
    assert res.exit_code == 0, res.output
    with RunStore(os.path.join(runs, "r"), create=False) as st:
        df = st.scores_frame()
    judged = df[df.judge.notna()]
    assert set(judged.sample_id) == keep and set(judged.scorer) >= {"rise_ra", "rise_tc", "rise_pr", "rise_vq"}
    assert (judged.status == "ok").all(), judged[judged.status != "ok"][["sample_id", "scorer", "reason"]]
    short = judged[judged.evidence.str.contains('"frames_declared"')]
    assert set(short.sample_id) == {"com_1", "dom_2"}  # box.mp4 and tree.avi
    ev = json.loads(short[short.sample_id == "dom_2"].evidence.iloc[0])["details"]["decode"]
    assert (ev["frames_declared"], ev["frames_decoded"]) == (444, 68)
    report = open(os.path.join(runs, "r", "report", "report.md"), encoding="utf-8").read()
    assert "- **videos_short_decoded**: 2" in report


# ---------------------------------------------------------------- variable frame rate: timed by timestamps
def _vfr_mp4(path: str, gaps_ms: list[int]) -> list[float]:
    """An mp4 whose frames carry explicit, irregular presentation timestamps (ms time base); returns the
    intended times in seconds."""
    import av

    with av.open(path, "w") as out:
        st = out.add_stream("libx264", rate=30)
        st.width, st.height, st.pix_fmt = 64, 48, "yuv420p"
        st.codec_context.time_base = Fraction(1, 1000)
        st.codec_context.options = {"bf": "0"}
        pts, times = 0, []
        for i, gap in enumerate([0, *gaps_ms]):
            pts += gap
            img = np.full((48, 64, 3), 20 + 12 * i, np.uint8)
            frame = av.VideoFrame.from_ndarray(img, format="rgb24")
            frame.pts, frame.time_base = pts, Fraction(1, 1000)
            times.append(pts / 1000)
            for pkt in st.encode(frame):
                out.mux(pkt)
        for pkt in st.encode():
            out.mux(pkt)
    return times


def test_vfr_file_is_timed_by_its_timestamps(tmp_path):
    gaps = [33, 200, 33, 500, 33, 33, 1000, 66, 33, 400, 33]
    path = str(tmp_path / "vfr.mp4")
    want = _vfr_mp4(path, gaps)
    got = sample_frames(path, "all")
    assert got.indices == list(range(len(want)))
    assert got.details()["frame_times_from"] == "pts"
    assert got.times == pytest.approx(want, abs=1e-3)
    info = probe(path, exact=True)
    naive = [i / info.fps for i in got.indices]  # what index / average_rate would claim
    assert max(abs(a - b) for a, b in zip(naive, want, strict=True)) > 0.25  # ~0.43 s off here


def test_suite_scorer_passes_the_timestamps_to_the_verifier(tmp_path, monkeypatch):
    from vreason.core.scoring import ScoreContext
    from vreason.synth import suite
    from vreason.synth.base import RenderConfig
    from vreason.synth.scorer import SynthVerifierScorer

    cfg = RenderConfig(width=64, height=48, fps=12, seconds=1.0)
    sample = suite.make_sample("maze", "easy", 0, 5, cfg, out_dir=str(tmp_path / "suite"))
    path = str(tmp_path / "vfr.mp4")
    want = _vfr_mp4(path, [40, 300, 40, 600, 40])
    seen = {}
    fam = suite.get_family("maze")

    def spy(frames, state, cfg, times=None):
        seen["times"] = list(times)
        return real(frames, state, cfg, times=times)

    real = fam.verify
    monkeypatch.setattr(fam, "verify", spy)
    monkeypatch.setattr(suite, "get_family", lambda name: fam)
    (score,) = SynthVerifierScorer().score(sample, Video(sample_id=sample.id, model="m", seed=0, path=path),
                                           ScoreContext(run_dir=str(tmp_path)))
    assert seen["times"] == pytest.approx(want, abs=1e-3)
    assert score.evidence.frame_policy.startswith("all+times=pts")


# ---------------------------------------------------------------- the decode option: declared once, reaches every read
def test_every_seed_protocol_declares_the_shared_decode_option_and_the_suite_does_not():
    from vreason.core.options import OptionsError, SeedOptions, resolve_options
    from vreason.protocols.mmecof.protocol import MmeCofOptions
    from vreason.protocols.pai.c.protocol import PaiCOptions
    from vreason.protocols.pai.g.protocol import PaiGOptions
    from vreason.protocols.pai.u.protocol import PaiUOptions
    from vreason.protocols.rise.protocol import RiseOptions
    from vreason.protocols.ruler.protocol import RulerOptions
    from vreason.protocols.synth.protocol import SynthOptions
    from vreason.protocols.tivibench.protocol import TiviOptions

    for model in (RiseOptions, RulerOptions, MmeCofOptions, TiviOptions, PaiGOptions, PaiCOptions, PaiUOptions):
        assert issubclass(model, SeedOptions), model
        assert model().decode == "released" and model(decode="strict").decode == "strict"
        with pytest.raises(OptionsError, match="decode must be one of"):
            resolve_options("p", model, {"decode": "lenient"})
    assert "decode" not in SynthOptions.model_fields  # the suite is always strict


def test_a_scorer_runs_in_its_protocols_decode_mode_and_records_both_counts(tmp_path, opencv_samples):
    from vreason.core.records import Evidence
    from vreason.core.scoring import ScoreContext, Scorer

    class LastFrame(Scorer):
        name = "test_last_frame"
        metrics = ("m",)

        def score(self, sample, video, ctx):
            try:
                got = sample_frames(video.path, "last")
            except VideoUnreadableError as exc:
                return self.fail(sample, video, str(exc))
            return [self.ok(sample, video, "m", 1.0, 1.0, evidence=Evidence(frame_indices=got.indices))]

    sample = Sample(id="tree", benchmark="b")
    video = Video(sample_id="tree", model="m", seed=0, path=opencv_samples["tree.avi"])
    (ok,) = LastFrame().score(sample, video, ScoreContext(run_dir=str(tmp_path), options={"decode": "released"}))
    assert ok.status.value == "ok" and ok.evidence.frame_indices == [67]
    assert ok.evidence.details["decode"] == {"frames_declared": 444, "frames_decoded": 68}
    (err,) = LastFrame().score(sample, video, ScoreContext(run_dir=str(tmp_path), options={"decode": "strict"}))
    assert err.status.value == "error" and "decoded 68 frames, the container declares 444" in err.reason


def test_frames_and_probe_commands_on_box_mp4(opencv_samples):
    runner = CliRunner()
    res = runner.invoke(app, ["frames", opencv_samples["box.mp4"], "--policy", "last"])
    assert res.exit_code == 0, res.output
    assert "→ [454]" in res.output and "decodes 455 of the 456 frames" in res.output
    res = runner.invoke(app, ["probe", opencv_samples["box.mp4"]])
    info = json.loads(res.output[res.output.index("{"):])
    assert (info["n_frames"], info["declared_frames"], info["frames_exact"]) == (455, 456, True)


def test_report_media_of_box_mp4_uses_the_last_decodable_frame(tmp_path, opencv_samples):
    """The report's thumbnail is the last frame: the one that decodes (454), not the declared count's (455)."""
    from vreason.core import decoding as counts
    from vreason.report.media import MediaJob, build_one

    with counts._DECODED_LOCK:
        counts._DECODED.clear()  # as in a fresh report process: nothing decoded yet
    res = build_one(MediaJob(video=opencv_samples["box.mp4"], thumb=str(tmp_path / "t.jpg"),
                             strips={"s": (str(tmp_path / "s.jpg"), [0, 200, 454])}))
    assert res.error is None and res.built == 2


def test_the_decoded_count_cache_follows_the_file_version(tmp_path, opencv_samples):
    path = str(tmp_path / "v.avi")
    shutil.copyfile(opencv_samples["tree.avi"], path)
    assert probe(path, exact=True).n_frames == 68 and decode_facts(path)["frames_decoded"] == 68
    shutil.copyfile(opencv_samples["vtest.avi"], path)  # another file at the same path (size and mtime change)
    os.utime(path, ns=(1, 1))
    assert decode_facts(path) is None
    info = probe(path, exact=True)
    assert info.n_frames == 795 and not info.short_decoded
