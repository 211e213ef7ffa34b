"""Damaged videos are errors with the reason — in every reader, in the synth scorer and in
preflight — and honest videos (B-frames, VFR, webm without a frame count, mpeg4, a header
duration off by one frame) are not rejected. The damaged files are built here: a clip written
by ``write_video``, then its tail cut off (index at the front) or bytes in its mdat overwritten."""

from __future__ import annotations

import fractions

import numpy as np
import pytest

from conftest import gradient_frames
from vreason.core.errors import VideoError, VideoTooShortError, VideoUnreadableError
from vreason.core.records import Sample, ScoreStatus, Video
from vreason.data.preflight import preflight
from vreason.frames import decode_check, probe, read_all, read_frames, sample_frames, write_video

N = 48
CODECS = ["libx264", "mpeg4"]


def _clip(path: str, codec: str, n: int = N, *, faststart: bool = True) -> str:
    write_video(path, gradient_frames(n, 96, 128), fps=12, codec=codec, gop=12, faststart=faststart)
    return path


def _mdat(data: bytes) -> tuple[int, int]:
    """Start and end of the mdat payload."""
    at = data.find(b"mdat")
    size = int.from_bytes(data[at - 4:at], "big")
    assert size > 8, "mdat with an extended size: not what write_video produces"
    return at + 4, at - 4 + size


def truncated(src: str, dst: str, keep: float = 0.6) -> str:
    data = open(src, "rb").read()
    assert data.find(b"moov") < data.find(b"mdat"), "the index must be at the front (faststart)"
    open(dst, "wb").write(data[: int(len(data) * keep)])
    return dst


def corrupted(src: str, dst: str) -> str:
    """The middle third of the mdat payload overwritten with random bytes (the size is unchanged)."""
    data = bytearray(open(src, "rb").read())
    a, b = _mdat(bytes(data))
    lo, hi = a + (b - a) // 3, a + 2 * (b - a) // 3
    data[lo:hi] = np.random.default_rng(7).integers(0, 256, hi - lo, dtype=np.uint8).tobytes()
    open(dst, "wb").write(bytes(data))
    return dst


DAMAGE = {"truncated": truncated, "corrupted": corrupted}


@pytest.fixture(params=[(c, d) for c in CODECS for d in DAMAGE], ids=lambda p: f"{p[0]}-{p[1]}")
def damaged(request, tmp_path) -> str:
    codec, kind = request.param
    good = _clip(str(tmp_path / "good.mp4"), codec)
    assert len(read_all(good)) == N  # the same clip undamaged decodes whole
    return DAMAGE[kind](good, str(tmp_path / f"{kind}.mp4"))


def test_every_reader_raises_for_a_damaged_video(damaged):
    with pytest.raises(VideoUnreadableError, match="damaged|truncated") as exc:
        read_all(damaged)
    assert damaged in str(exc.value)
    with pytest.raises(VideoUnreadableError, match="damaged|truncated"):
        read_all(damaged, max_side=32)
    with pytest.raises(VideoUnreadableError, match="damaged|truncated"):
        read_frames(damaged, range(N), method="sequential")
    with pytest.raises(VideoUnreadableError, match="damaged|truncated"):
        decode_check(damaged)
    for spec in ("uniform:16", "all", "last"):
        with pytest.raises(VideoUnreadableError, match="damaged|truncated|could not be decoded"):
            sample_frames(damaged, spec)


def test_preflight_calls_a_damaged_video_undecodable(damaged, tmp_path):
    good = _clip(str(tmp_path / "other.mp4"), "libx264")
    samples = [Sample(id="a", benchmark="b"), Sample(id="c", benchmark="b")]
    videos = [Video(sample_id="a", model="m", seed=0, path=damaged),
              Video(sample_id="c", model="m", seed=0, path=good)]
    full = preflight(samples, videos, decode="strict")
    rep = full.models[0]
    assert rep.ok == 1 and not full.clean
    assert [u["video"] for u in rep.undecodable] == ["a#0"]
    assert damaged in rep.undecodable[0]["reason"]
    assert "damaged" in rep.undecodable[0]["reason"] or "truncated" in rep.undecodable[0]["reason"]
    # counting packets only still finds the cut-off file (not corrupted bytes: those need decoding)
    quick = preflight(samples, videos, full_decode=False, decode="strict").models[0]
    if "truncated" in damaged:
        assert [u["video"] for u in quick.undecodable] == ["a#0"]
    # released decode mode (the seed protocols'): a cut-off file is used as far as it decodes, and listed
    released = preflight(samples, videos, decode="released").models[0]
    if "truncated" in damaged and not released.undecodable:
        assert released.ok == 2 and [u["video"] for u in released.short_decoded] == ["a#0"]
    elif "corrupted" in damaged:  # damage inside the stream stays an error in either mode
        assert [u["video"] for u in released.undecodable] == ["a#0"]


def test_mp4_decoding_short_of_its_declared_count_names_both_counts(tmp_path):
    """Cut exactly between two packets: the decoder sees no error, it just runs out of packets."""
    import av

    good = _clip(str(tmp_path / "g.mp4"), "mpeg4")
    with av.open(good) as c:
        pos = sorted(p.pos for p in c.demux(c.streams.video[0]) if p.size)
    cut = str(tmp_path / "cut.mp4")
    open(cut, "wb").write(open(good, "rb").read()[: pos[30]])
    with pytest.raises(VideoUnreadableError, match=rf"decoded \d+ frames, the container declares {N}"):
        read_all(cut, mode="strict")
    with pytest.raises(VideoUnreadableError, match=rf"decoded \d+ frames, the container declares {N}"):
        sample_frames(cut, "last", mode="strict")
    info = probe(cut, exact=True)
    assert info.declared_frames == N and info.n_frames < N and info.truncated and info.short_decoded
    # released mode: the frames that decode, the same count probe gives, both counts in the evidence
    frames = read_all(cut, mode="released")
    assert len(frames) == info.n_frames
    got = sample_frames(cut, "last", mode="released")
    assert got.indices == [info.n_frames - 1]
    assert got.details()["frames_declared"] == N and got.details()["frames_decoded"] == info.n_frames


@pytest.mark.parametrize("kind", list(DAMAGE))
def test_synth_scorer_reports_a_damaged_video_as_an_error(tmp_path, kind):
    from vreason.core.scoring import ScoreContext
    from vreason.synth.base import RenderConfig
    from vreason.synth.scorer import SynthVerifierScorer
    from vreason.synth.suite import make_instance, make_sample

    cfg = RenderConfig(width=160, height=96, fps=12, seconds=3.0)
    sample = make_sample("maze", "easy", 0, 5, cfg, out_dir=str(tmp_path / "suite"))
    inst = make_instance("maze", "easy", 0, 5, cfg)
    good = str(tmp_path / "oracle.mp4")
    write_video(good, inst.solution, fps=cfg.fps, gop=12, faststart=True)
    scorer, ctx = SynthVerifierScorer(), ScoreContext(run_dir=str(tmp_path))
    (whole,) = scorer.score(sample, Video(sample_id=sample.id, model="m", seed=0, path=good), ctx)
    assert whole.status == ScoreStatus.ok and whole.value == 1.0  # the undamaged oracle solves it
    bad = DAMAGE[kind](good, str(tmp_path / f"{kind}.mp4"))
    (score,) = scorer.score(sample, Video(sample_id=sample.id, model="m", seed=0, path=bad), ctx)
    assert score.status == ScoreStatus.error and score.value is None
    assert "damaged" in score.reason or "truncated" in score.reason


# ---------------------------------------------------------------- too short for the policy
def test_policy_that_needs_more_frames_than_the_video_has_is_an_error(tmp_path):
    one = str(tmp_path / "one.mp4")
    write_video(one, gradient_frames(1), fps=8)
    two = str(tmp_path / "two.mp4")
    write_video(two, gradient_frames(2), fps=8)
    for spec in ("uniform:16", "fps:2", "every:10", "all", "last_fraction:3/0.4", "rise.tc"):
        with pytest.raises(VideoTooShortError, match="needs at least 2"):
            sample_frames(one, spec)
    with pytest.raises(VideoTooShortError, match="2 frames; frame policy uniform:6\\+drop_ends needs at least 3"):
        sample_frames(two, "rise.vq")
    assert sample_frames(one, "last").indices == [0] and sample_frames(one, "first").indices == [0]
    assert sample_frames(two, "uniform:16").indices == [0, 1]


# ---------------------------------------------------------------- honest videos stay whole
def _write_pts(path: str, frames: list[np.ndarray], pts: list[int], rate: int, codec: str) -> None:
    import av

    with av.open(path, "w") as c:
        s = c.add_stream(codec, rate=rate)
        s.width, s.height, s.pix_fmt = frames[0].shape[1], frames[0].shape[0], "yuv420p"
        s.codec_context.time_base = fractions.Fraction(1, rate)
        for img, p in zip(frames, pts, strict=True):
            f = av.VideoFrame.from_ndarray(img, format="rgb24")
            f.pts, f.time_base = p, fractions.Fraction(1, rate)
            for pkt in s.encode(f):
                c.mux(pkt)
        for pkt in s.encode():
            c.mux(pkt)


def _has_reordering(path: str) -> bool:
    import av

    with av.open(path) as c:
        pts = [p.pts for p in c.demux(c.streams.video[0]) if p.size]
    return pts != sorted(pts)


def _honest(tmp_path) -> dict[str, tuple[str, int]]:
    frames = gradient_frames(30, 96, 128)
    out: dict[str, tuple[str, int]] = {}
    p = str(tmp_path / "bframes.mp4")
    write_video(p, frames, fps=12, codec="libx264", preset="medium")
    assert _has_reordering(p), "expected B-frames (decode order differs from presentation order)"
    out["h264 B-frames"] = (p, 30)
    p = str(tmp_path / "faststart.mp4")
    out["h264 faststart"] = (write_video(p, frames, fps=12, faststart=True) and p, 30)
    p = str(tmp_path / "mpeg4.mp4")
    out["mpeg4"] = (write_video(p, frames, fps=12, codec="mpeg4") and p, 30)
    p = str(tmp_path / "vp9.webm")
    write_video(p, frames, fps=12)
    out["webm without a frame count"] = (p, 30)
    p = str(tmp_path / "ntsc.mp4")
    out["29.97 fps"] = (write_video(p, frames, fps=30000 / 1001) and p, 30)
    vfr = [0]
    for i in range(1, 30):
        vfr.append(vfr[-1] + (1 if i % 3 else 3))  # irregular frame durations
    for ext, codec in (("mp4", "libx264"), ("mkv", "libx264")):
        p = str(tmp_path / f"vfr.{ext}")
        _write_pts(p, frames, vfr, 24, codec)
        out[f"VFR {ext}"] = (p, 30)
        p = str(tmp_path / f"offbyone.{ext}")  # the last frame shown for two frame times
        _write_pts(p, frames, list(range(29)) + [30], 12, codec)
        out[f"duration off by one frame {ext}"] = (p, 30)
    return out


def test_honest_videos_are_not_called_damaged(tmp_path):
    cases = _honest(tmp_path)
    samples = [Sample(id=f"s{i}", benchmark="b") for i in range(len(cases))]
    videos = []
    for i, (name, (path, n)) in enumerate(cases.items()):
        assert len(read_all(path)) == n, name
        assert len(read_all(path, max_side=48)) == n, name
        assert decode_check(path) == n, name
        info = probe(path, exact=True)
        assert not info.truncated, (name, info)
        got = sample_frames(path, "uniform:8+max_side=64")
        assert len(got.frames) == 8 and max(got.frames[0].shape[:2]) == 64, name
        assert read_frames(path, [n - 1], method="sequential")[0].shape[:2] == (96, 128), name
        videos.append(Video(sample_id=f"s{i}", model="m", seed=0, path=path))
    rep = preflight(samples, videos).models[0]
    assert rep.ok == len(cases) and not rep.undecodable, rep.undecodable


def test_reduced_decode_matches_area_resize(tmp_path):
    """Frames reduced while converting look like the full frame resized (area), within codec noise."""
    from vreason.frames import resize_max_side

    path = str(tmp_path / "big.mp4")
    write_video(path, gradient_frames(6, 360, 640), fps=8)
    full = read_all(path)
    small = read_all(path, max_side=160)
    assert small[0].shape == (90, 160, 3)
    for a, b in zip(small, full, strict=True):
        ref = resize_max_side(b, 160)
        assert float(np.mean(np.abs(a.astype(np.int16) - ref.astype(np.int16)))) < 4.0


def test_a_frame_index_past_a_whole_video_is_still_a_plain_error(tmp_path):
    path = _clip(str(tmp_path / "g.mp4"), "libx264", 10)
    with pytest.raises(VideoError, match="could not be decoded"):
        read_frames(path, [3, 12], method="sequential")
