import numpy as np
import pytest

from conftest import gradient_frames
from vreason.core.errors import (
    VideoEmptyError,
    VideoError,
    VideoMissingError,
    VideoNoFramesError,
    VideoTooShortError,
    VideoUnreadableError,
)
from vreason.frames import probe, read_all, read_frames, sample_frames, write_video
from vreason.frames.video import available_encoder, choose_method

N = 40


def _mad(a, b):
    return float(np.mean(np.abs(a.astype(np.int16) - b.astype(np.int16))))


def _best_match(frame, frames):
    return int(np.argmin([_mad(frame, f) for f in frames]))


CODECS = [("mp4", "libx264"), ("mp4", "mpeg4"), ("webm", "libvpx-vp9")]


@pytest.mark.parametrize("ext,codec", CODECS)
@pytest.mark.parametrize("method", ["sequential", "seek"])
def test_decode_exactness(tmp_path, ext, codec, method):
    if codec == "libvpx-vp9":  # webm only "where PyAV writes it"; H.264 and mpeg4 must always work
        try:
            available_encoder([codec])
        except VideoError:
            pytest.skip(f"{codec} not in this PyAV build")
    frames = gradient_frames(N)
    path = str(tmp_path / f"v.{ext}")
    used = write_video(path, frames, fps=12, codec=codec, gop=10)
    assert used == codec
    idx = [0, 1, 7, 19, 20, 33, N - 1]
    got = read_frames(path, idx, method=method)
    for i, img in zip(idx, got, strict=True):
        assert img.shape == frames[i].shape
        assert _best_match(img, frames) == i, f"frame {i} decoded as another frame"
        assert _mad(img, frames[i]) < 12, "beyond codec tolerance"


def test_auto_method_picks_by_cost(tmp_path):
    path = str(tmp_path / "long.mp4")
    write_video(path, gradient_frames(200, 32, 32), fps=25, gop=20)
    info = probe(path, exact=True)
    assert info.keyframes[0] == 0 and len(info.keyframes) >= 9  # a keyframe at least every 20 frames
    assert choose_method([190], info) == "seek"  # one late frame: seek
    assert choose_method(list(range(0, 200, 2)), info) == "sequential"  # many frames: one pass
    a = read_frames(path, [3, 190, 3], method="auto", info=info)
    b = read_frames(path, [3, 190, 3], method="sequential")
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))


def test_probe_reports_and_webm_fallback(tmp_path):
    frames = gradient_frames(30)
    mp4 = str(tmp_path / "a.mp4")
    write_video(mp4, frames, fps=10)
    info = probe(mp4)
    assert (info.n_frames, info.width, info.height) == (30, 64, 48)
    assert info.fps == pytest.approx(10.0) and info.duration == pytest.approx(3.0, abs=0.15)
    webm = str(tmp_path / "a.webm")
    write_video(webm, frames, fps=10)
    import av

    with av.open(webm) as c:
        reported = c.streams.video[0].frames
    info = probe(webm)
    assert info.n_frames == 30 and info.frames_exact
    assert reported in (0, 30)  # containers may not report it; probe counts then


def test_non_integer_fps_and_odd_size(tmp_path):
    path = str(tmp_path / "ntsc.mp4")
    write_video(path, gradient_frames(20, 33, 47), fps=30000 / 1001)
    info = probe(path)
    assert info.fps == pytest.approx(29.97, abs=0.01)
    assert (info.width, info.height) == (48, 34)  # padded to even
    assert len(read_all(path)) == 20


def test_typed_errors(tmp_path):
    with pytest.raises(VideoMissingError, match="does not exist"):
        probe(str(tmp_path / "nope.mp4"))
    empty = tmp_path / "empty.mp4"
    empty.write_bytes(b"")
    with pytest.raises(VideoEmptyError, match="0 bytes"):
        probe(str(empty))
    junk = tmp_path / "junk.mp4"
    junk.write_bytes(b"this is not a video at all" * 100)
    with pytest.raises(VideoUnreadableError) as exc:
        read_frames(str(junk), [0])
    assert str(junk) in str(exc.value)
    with pytest.raises(VideoUnreadableError, match="directory"):
        probe(str(tmp_path))
    # a truncated file: header kept, data cut
    good = str(tmp_path / "good.mp4")
    write_video(good, gradient_frames(30), fps=10)
    data = open(good, "rb").read()
    trunc = tmp_path / "trunc.mp4"
    trunc.write_bytes(data[: len(data) // 3])
    with pytest.raises(VideoError):
        read_all(str(trunc))


def test_audio_only_container_is_empty_error(tmp_path):
    import av

    path = str(tmp_path / "audio.mp4")
    with av.open(path, "w") as c:
        s = c.add_stream("aac", rate=8000)
        frame = av.AudioFrame.from_ndarray(np.zeros((1, 1024), np.float32), format="fltp", layout="mono")
        frame.sample_rate = 8000
        for p in s.encode(frame):
            c.mux(p)
        for p in s.encode():
            c.mux(p)
    with pytest.raises(VideoEmptyError, match="no video stream"):
        probe(path)


def test_one_frame_video_and_past_end(tmp_path):
    path = str(tmp_path / "one.mp4")
    write_video(path, gradient_frames(1), fps=8)
    assert probe(path).n_frames == 1
    # a policy that looks at several frames cannot use a still image: an error, never a score
    with pytest.raises(VideoTooShortError, match="1 frame; frame policy uniform:16 needs at least 2"):
        sample_frames(path, "uniform:16")
    got = sample_frames(path, "last")  # a single-frame policy can
    assert got.indices == [0] and len(got.frames) == 1
    with pytest.raises(VideoError, match="could not be decoded"):
        read_frames(path, [0, 5], method="sequential")


def test_write_nothing_is_an_error(tmp_path):
    with pytest.raises(VideoError, match="no frames"):
        write_video(str(tmp_path / "x.mp4"), [], fps=8)
    assert not list(tmp_path.iterdir())


def test_max_side_resize(tmp_path):
    path = str(tmp_path / "big.mp4")
    write_video(path, gradient_frames(4, 360, 640), fps=8)
    got = sample_frames(path, "all+max_side=128")
    assert got.frames[0].shape == (72, 128, 3)
    assert got.policy == "all+max_side=128"


@pytest.mark.parametrize("ext", ["mp4", "mkv"])
def test_zero_frame_video(tmp_path, ext):
    import av

    path = str(tmp_path / f"zero.{ext}")
    with av.open(path, "w") as c:
        s = c.add_stream("mpeg4", rate=8)
        s.width, s.height, s.pix_fmt = 32, 32, "yuv420p"
        c.start_encoding()  # header written, no frame
    with pytest.raises((VideoNoFramesError, VideoUnreadableError, VideoEmptyError)) as exc:
        read_frames(path, [0])
    assert path in str(exc.value)


@pytest.mark.parametrize("ext", ["mkv", "webm"])
def test_truncated_streamable_file_is_an_error_not_a_shorter_video(tmp_path, ext):
    from vreason.core.records import Sample, Video
    from vreason.data.preflight import preflight

    path = str(tmp_path / f"v.{ext}")
    write_video(path, gradient_frames(60), fps=10, codec="libx264" if ext == "mkv" else None)
    assert not probe(path).truncated
    data = open(path, "rb").read()
    cut = tmp_path / f"cut.{ext}"
    cut.write_bytes(data[: len(data) // 2])
    info = probe(str(cut))
    assert info.truncated and info.n_frames < 40 and info.expected_frames == 60
    with pytest.raises(VideoUnreadableError, match="truncated"):
        sample_frames(str(cut), "uniform:8", mode="strict")
    rep = preflight([Sample(id="a", benchmark="b")], [Video(sample_id="a", model="m", seed=0, path=str(cut))],
                    decode="strict")
    assert rep.models[0].ok == 0 and "truncated" in rep.models[0].undecodable[0]["reason"]
