"""Video I/O on PyAV: probe, decode chosen frames, write mp4/webm.

Frame ``i`` means the i-th frame in presentation order, counted from 0 (as OpenCV and
decord count). Decoding picks between one sequential pass and per-frame seeking by an
estimated cost computed from the packet index (keyframe positions), which demuxing gives
without decoding anything.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from vreason.errors import (
    VideoEmptyError,
    VideoError,
    VideoMissingError,
    VideoNoFramesError,
    VideoUnreadableError,
)


@dataclass
class VideoInfo:
    path: str
    fps: float
    n_frames: int
    width: int
    height: int
    duration: float
    codec: str
    frames_exact: bool = True
    """False when the count is an estimate (container reported none and it was not counted)."""
    keyframes: list[int] = field(default_factory=list, repr=False)
    """Frame indices of keyframes (only filled by a packet scan)."""
    expected_frames: int | None = None
    """Frames the container's header duration implies (duration × fps), when it states one."""

    @property
    def truncated(self) -> bool:
        """The counted frames fall well short of the header's duration: a cut-off file."""
        return bool(self.frames_exact and self.expected_frames and self.n_frames < 0.9 * self.expected_frames - 1)


def _check_file(path: str) -> None:
    if not os.path.exists(path):
        raise VideoMissingError(path, "file does not exist")
    if os.path.isdir(path):
        raise VideoUnreadableError(path, "is a directory, not a video file")
    if os.path.getsize(path) == 0:
        raise VideoEmptyError(path, "file is empty (0 bytes)")


def _open(path: str):
    import av

    _check_file(path)
    try:
        container = av.open(path)
    except Exception as exc:  # av raises many error classes (InvalidDataError, OSError, …)
        raise VideoUnreadableError(path, f"cannot open container: {type(exc).__name__}: {exc}") from exc
    if not container.streams.video:
        container.close()
        raise VideoEmptyError(path, "no video stream in the container")
    threads = os.environ.get("VREASON_CODEC_THREADS")
    if threads:  # worker processes that already fill every core decode single-threaded
        container.streams.video[0].codec_context.thread_count = int(threads)
    return container


def _stream_fps(stream) -> float:
    for rate in (stream.average_rate, stream.guessed_rate, stream.base_rate):
        if rate:
            val = float(rate)
            if val > 0 and math.isfinite(val):
                return val
    return 0.0


def _scan_packets(container, stream) -> tuple[int, list[int]]:
    """Count frames and locate keyframes by demuxing (no decoding)."""
    pts_key: list[tuple[int, bool]] = []
    for pkt in container.demux(stream):
        if pkt.size == 0 or pkt.pts is None and pkt.dts is None:
            continue
        pts_key.append((pkt.pts if pkt.pts is not None else pkt.dts, bool(pkt.is_keyframe)))
    pts_key.sort(key=lambda t: t[0])
    keyframes = [i for i, (_, k) in enumerate(pts_key) if k]
    return len(pts_key), keyframes


def probe(path: str | os.PathLike, *, exact: bool = False) -> VideoInfo:
    """Read fps, frame count, size and duration.

    When the container does not report a frame count (e.g. VP9 in webm) or ``exact`` is set,
    the packets are counted by demuxing, which is exact for every codec vreason writes and
    costs no decoding. Raises a :class:`VideoError` subclass naming the file and the reason.
    """
    path = str(path)
    container = _open(path)
    try:
        stream = container.streams.video[0]
        fps = _stream_fps(stream)
        width, height = int(stream.codec_context.width or 0), int(stream.codec_context.height or 0)
        if stream.duration is not None and stream.time_base:
            duration = float(stream.duration * stream.time_base)
        elif container.duration:
            duration = container.duration / 1_000_000
        else:
            duration = 0.0
        header_duration = duration
        n = int(stream.frames or 0)
        exact_count = n > 0
        keyframes: list[int] = []
        if n <= 0 or exact:
            try:
                n, keyframes = _scan_packets(container, stream)
                exact_count = True
            except Exception as exc:
                raise VideoUnreadableError(path, f"cannot read packets: {type(exc).__name__}: {exc}") from exc
        if n <= 0:
            raise VideoNoFramesError(path, "the video stream has 0 frames")
        if fps <= 0:
            fps = n / duration if duration > 0 else 0.0
        if duration <= 0 and fps > 0:
            duration = n / fps
        return VideoInfo(
            path=path,
            fps=fps,
            n_frames=n,
            width=width,
            height=height,
            duration=duration,
            codec=stream.codec_context.name,
            frames_exact=exact_count,
            keyframes=keyframes,
            expected_frames=int(round(header_duration * fps)) if header_duration > 0 and fps > 0 else None,
        )
    finally:
        container.close()


def resize_max_side(img: np.ndarray, max_side: int | None) -> np.ndarray:
    """Shrink so the longest side is at most ``max_side`` (never enlarges); INTER_AREA."""
    if not max_side:
        return img
    h, w = img.shape[:2]
    scale = max_side / max(h, w)
    if scale >= 1:
        return img
    import cv2

    return cv2.resize(img, (max(1, round(w * scale)), max(1, round(h * scale))), interpolation=cv2.INTER_AREA)


def _seek_cost(indices: Sequence[int], keyframes: list[int]) -> int:
    """Frames decoded when seeking to each index: from its preceding keyframe."""
    import bisect

    if not keyframes:
        return 1 << 60
    cost = 0
    for i in indices:
        k = keyframes[max(0, bisect.bisect_right(keyframes, i) - 1)]
        cost += i - k + 1 + 2  # + a small fixed overhead per seek (flush, demux restart)
    return cost


def choose_method(indices: Sequence[int], info: VideoInfo) -> str:
    """'sequential' or 'seek', whichever decodes fewer frames by the packet index."""
    if not indices:
        return "sequential"
    sequential_cost = max(indices) + 1
    return "seek" if _seek_cost(sorted(set(indices)), info.keyframes) < sequential_cost * 0.8 else "sequential"


def _decode_sequential(path: str, wanted: set[int], max_side: int | None) -> dict[int, np.ndarray]:
    out: dict[int, np.ndarray] = {}
    last = max(wanted)
    container = _open(path)
    try:
        stream = container.streams.video[0]
        for i, frame in enumerate(container.decode(stream)):
            if i in wanted:
                out[i] = resize_max_side(frame.to_ndarray(format="rgb24"), max_side)
            if i >= last:
                break
    except VideoError:
        raise
    except Exception as exc:
        if not out:
            raise VideoUnreadableError(path, f"decode failed: {type(exc).__name__}: {exc}") from exc
    finally:
        container.close()
    return out


def _decode_seek(path: str, wanted: Sequence[int], fps: float, max_side: int | None) -> dict[int, np.ndarray]:
    out: dict[int, np.ndarray] = {}
    container = _open(path)
    try:
        stream = container.streams.video[0]
        tb = stream.time_base
        start = stream.start_time or 0
        rate = Fraction(fps).limit_denominator(100000)
        for idx in sorted(set(wanted)):
            target = start + int(round(Fraction(idx) / rate / tb))
            container.seek(target, stream=stream, backward=True, any_frame=False)
            for frame in container.decode(stream):
                if frame.pts is None:
                    continue
                if frame.pts >= target - 0.5 / float(rate) / float(tb):
                    out[idx] = resize_max_side(frame.to_ndarray(format="rgb24"), max_side)
                    break
    except Exception as exc:
        raise VideoUnreadableError(path, f"seek/decode failed: {type(exc).__name__}: {exc}") from exc
    finally:
        container.close()
    return out


def read_frames(
    path: str | os.PathLike,
    indices: Iterable[int],
    *,
    max_side: int | None = None,
    method: str = "auto",
    info: VideoInfo | None = None,
) -> list[np.ndarray]:
    """Decode frames at ``indices`` (RGB uint8, H×W×3), returned in the order asked.

    Repeated indices are decoded once. ``method`` is ``auto`` (by estimated cost),
    ``sequential`` or ``seek``. Indices past the end raise :class:`VideoError`.
    """
    path = str(path)
    idx = [int(i) for i in indices]
    if not idx:
        return []
    if min(idx) < 0:
        raise ValueError(f"{path}: negative frame index in {idx}")
    if method == "auto":
        info = info if info is not None and info.keyframes else probe(path, exact=True)
        method = choose_method(idx, info)
    if method == "seek":
        if info is None:
            info = probe(path)
        got = _decode_seek(path, idx, info.fps, max_side)
    elif method == "sequential":
        got = _decode_sequential(path, set(idx), max_side)
    else:
        raise ValueError(f"unknown decode method {method!r}")
    missing = sorted(set(idx) - set(got))
    if missing:
        if not got and method == "sequential":
            raise VideoNoFramesError(path, "decoded 0 frames")
        raise VideoError(path, f"frames {missing[:5]}{'…' if len(missing) > 5 else ''} could not be decoded")
    return [got[i] for i in idx]


def read_all(path: str | os.PathLike, *, max_side: int | None = None, limit: int | None = None) -> list[np.ndarray]:
    """Decode every frame (or the first ``limit``); raises on 0 frames."""
    path = str(path)
    frames: list[np.ndarray] = []
    container = _open(path)
    try:
        for frame in container.decode(container.streams.video[0]):
            frames.append(resize_max_side(frame.to_ndarray(format="rgb24"), max_side))
            if limit and len(frames) >= limit:
                break
    except Exception as exc:
        if not frames:
            raise VideoUnreadableError(path, f"decode failed: {type(exc).__name__}: {exc}") from exc
    finally:
        container.close()
    if not frames:
        raise VideoNoFramesError(path, "decoded 0 frames")
    return frames


def _even(img: np.ndarray) -> np.ndarray:
    h, w = img.shape[:2]
    ph, pw = h % 2, w % 2
    if ph or pw:
        img = np.pad(img, ((0, ph), (0, pw), (0, 0)), mode="edge")
    return img


def available_encoder(preferred: Sequence[str]) -> str:
    import av

    for name in preferred:
        try:
            av.codec.Codec(name, "w")
            return name
        except Exception:
            continue
    raise VideoError("<encoder>", f"none of the encoders {list(preferred)} is available in this PyAV build")


def write_video(
    path: str | os.PathLike,
    frames: Iterable[np.ndarray],
    fps: float = 16,
    *,
    codec: str | None = None,
    crf: int | None = None,
    bitrate: int | None = None,
    gop: int | None = None,
    preset: str = "veryfast",
) -> str:
    """Write RGB uint8 frames to ``path``; returns the codec used.

    ``.mp4``: H.264 (libx264) where available, else mpeg4. ``.webm``: VP9. Odd sizes are
    padded by one pixel (yuv420p needs even sizes). ``crf`` / ``bitrate`` control quality.
    """
    import av

    path = str(path)
    ext = os.path.splitext(path)[1].lower()
    if codec is None:
        codec = available_encoder(["libvpx-vp9", "libvpx"] if ext == ".webm" else ["libx264", "h264", "mpeg4"])
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".part" + ext
    n = 0
    rate = Fraction(fps).limit_denominator(1001)
    with av.open(tmp, "w") as container:
        stream = None
        for img in frames:
            img = np.ascontiguousarray(_even(np.asarray(img, dtype=np.uint8)[..., :3]))
            if stream is None:
                stream = container.add_stream(codec, rate=rate)
                stream.width, stream.height = img.shape[1], img.shape[0]
                stream.pix_fmt = "yuv420p"
                opts: dict[str, str] = {}
                if codec in ("libx264", "h264"):
                    opts = {"crf": str(crf if crf is not None else 18), "preset": preset}
                elif codec.startswith("libvpx"):
                    opts = {"crf": str(crf if crf is not None else 30), "b": "0", "deadline": "realtime",
                            "cpu-used": "8"}
                if bitrate:
                    stream.bit_rate = int(bitrate)
                    opts.pop("crf", None)
                    opts.pop("b", None)
                elif codec == "mpeg4":
                    stream.bit_rate = 4_000_000
                if gop:
                    stream.codec_context.gop_size = int(gop)
                threads = os.environ.get("VREASON_CODEC_THREADS")
                if threads:  # e.g. 1 in worker processes that already fill every core
                    stream.codec_context.thread_count = int(threads)
                    if codec in ("libx264", "h264"):
                        opts["threads"] = threads
                stream.options = opts
            for pkt in stream.encode(av.VideoFrame.from_ndarray(img, format="rgb24")):
                container.mux(pkt)
            n += 1
        if stream is None:
            raise VideoError(path, "no frames to write")
        for pkt in stream.encode():
            container.mux(pkt)
    os.replace(tmp, path)
    return codec
