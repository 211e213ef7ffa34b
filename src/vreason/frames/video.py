"""Video I/O on PyAV: probe, decode chosen frames (writing lives in :mod:`vreason.frames.write`).

Frame ``i`` means the i-th frame in presentation order, counted from 0 (as OpenCV and
decord count). Decoding picks between one sequential pass and per-frame seeking by an
estimated cost computed from the packet index (keyframe positions), which demuxing gives
without decoding anything.

A count a container declares is a hint, not a fact: the frames that decode are what a video has
(OpenCV's ``box.mp4`` declares 456 and 455 decode; ``tree.avi`` declares 444 and 68 decode — PyAV,
OpenCV and decord agree). Where the two differ the count is measured by decoding without
converting (cached per path, mtime and size) and both are recorded.

A damaged file is an error: a demuxer or decoder error or a frame the decoder marks corrupt raise
:class:`~vreason.core.errors.VideoUnreadableError` naming the file and what was found. A stream that
ends before the frames its container declares is an error in ``strict`` decode mode (the built-in
suite's default); in ``released`` mode (the seed protocols' default, as their released readers do)
the frames that decode are used. The mode is an argument, or the ambient :data:`DECODE_MODE`
(set per scored unit from the protocol's ``decode`` option).
Frames are reduced to ``max_side`` while converting from the decoder's format, so a full-size
RGB copy of a large frame is never made.
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from vreason.core.decoding import (
    DECODE_MODE,
    DecodeMode,
    _known,
    _remember,
    decode_facts,
    decode_mode,
    frame_times,
)
from vreason.core.errors import (
    VideoEmptyError,
    VideoError,
    VideoMissingError,
    VideoNoFramesError,
    VideoUnreadableError,
)
from vreason.frames.write import available_encoder, write_video

__all__ = [
    "DECODE_MODE", "DecodeMode", "VideoInfo", "available_encoder", "check_complete", "choose_method",
    "count_decoded", "decode_check", "decode_facts", "decode_mode", "frame_times", "probe",
    "read_all", "read_frames", "resize_max_side",
    "write_video",
]

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
    declared_frames: int | None = None
    """Frames the container's index declares (e.g. an mp4's sample table), when it has one."""
    covered_seconds: float | None = None
    """Time the counted packets cover (first timestamp to the end of the last; only from a packet scan)."""
    discarded: int = 0
    """Packets the demuxer flags as discarded (an edit list drops them): declared, never shown."""
    decoded_frames: int | None = None
    """Frames that decode, when counted by decoding (the declared count and the packets disagreed)."""

    @property
    def short_decoded(self) -> bool:
        """Fewer frames (counted) than the container declares (``box.mp4``: 455 of 456; ``tree.avi``: 68 of
        444) — used as they are in ``released`` decode mode, recorded in the evidence."""
        return bool(self.frames_exact and self.declared_frames and self.n_frames < self.declared_frames)

    @property
    def truncated(self) -> bool:
        """A cut-off file: the counted frames fall short of the frames the container declares (less the
        packets an edit list discards), or (without a declared count) well short of what the header's
        duration implies. An error in ``strict`` decode mode."""
        if not self.frames_exact:
            return False
        if self.declared_frames:
            return self.n_frames < self.declared_frames - self.discarded
        if self.covered_seconds is None or not self.expected_frames:
            return False
        return _short_of_duration(self.covered_seconds, self.n_frames, self.expected_frames / self.fps)

    def truncation_reason(self) -> str:
        if self.declared_frames:
            return (f"truncated or damaged: decoded {self.n_frames} frames, the container declares "
                    f"{self.declared_frames - self.discarded}")
        return (f"truncated: {self.n_frames} frames covering {self.covered_seconds or 0:.2f} s, the header's "
                f"duration is {self.expected_frames / self.fps:.2f} s (~{self.expected_frames} frames)")


def _short_of_duration(covered: float, n: int, duration: float) -> bool:
    """The frames' timestamps end well before the header's duration (a cut-off file).

    Time, not a count, is compared: a variable-frame-rate stream has fewer frames than its
    nominal rate × duration. Slack: 10 % and two mean frame intervals (header durations are
    rounded, the last frame's own duration is often unknown)."""
    return covered < 0.9 * duration - 2 * covered / max(n, 1)


def check_complete(info: VideoInfo, mode: str | None = None) -> None:
    """In ``strict`` decode mode (argument, else the ambient :data:`DECODE_MODE`), raise for a cut-off
    file (fewer frames than its container declares or its duration implies); ``released`` mode accepts
    the frames that decode."""
    if decode_mode(mode) == "strict" and info.truncated:
        raise VideoUnreadableError(info.path, info.truncation_reason())


def _check_file(path: str) -> None:
    if not os.path.exists(path):
        raise VideoMissingError(path, "file does not exist")
    if os.path.isdir(path):
        raise VideoUnreadableError(path, "is a directory, not a video file")
    if os.path.getsize(path) == 0:
        raise VideoEmptyError(path, "file is empty (0 bytes)")


def _mp4_head(path: str) -> bool:
    """The file starts with an ISO-BMFF ``ftyp`` box (MP4 / MOV / 3GP: FFmpeg's one ``mov`` demuxer)."""
    with open(path, "rb") as fh:
        return fh.read(8)[4:8] == b"ftyp"


def _open(path: str, *, quick: bool = False):
    import av

    _check_file(path)
    try:
        if quick:  # no format probing of an MP4 (its demuxer named), stream parameters read on one thread
            container = av.open(path, format="mp4" if _mp4_head(path) else None, stream_options=[{"threads": "1"}])
        else:
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


def _header_duration(container, stream) -> float:
    if stream.duration is not None and stream.time_base:
        return float(stream.duration * stream.time_base)
    if container.duration:
        return container.duration / 1_000_000
    return 0.0


def _stream_fps(stream) -> float:
    for rate in (stream.average_rate, stream.guessed_rate, stream.base_rate):
        if rate:
            val = float(rate)
            if val > 0 and math.isfinite(val):
                return val
    return 0.0


def _scan_packets(container, stream) -> tuple[int, list[int], float, int]:
    """Count frames, locate keyframes and measure the time the packets cover, by demuxing (no decoding).
    Empty packets (an AVI's "no change" entries) and packets an edit list discards are not frames; the
    discarded ones are counted apart."""
    pts_key: list[tuple[int, bool]] = []
    end = None
    discarded = 0
    for pkt in container.demux(stream):
        if pkt.size == 0 or pkt.pts is None and pkt.dts is None:
            continue
        if pkt.is_discard:
            discarded += 1
            continue
        ts = pkt.pts if pkt.pts is not None else pkt.dts
        pts_key.append((ts, bool(pkt.is_keyframe)))
        stop = ts + (pkt.duration or 0)
        end = stop if end is None else max(end, stop)
    pts_key.sort(key=lambda t: t[0])
    keyframes = [i for i, (_, k) in enumerate(pts_key) if k]
    span = 0.0
    if pts_key and stream.time_base:
        span = float((end - pts_key[0][0]) * stream.time_base)
    return len(pts_key), keyframes, span, discarded


def probe(path: str | os.PathLike, *, exact: bool = False, quick: bool = False) -> VideoInfo:
    """Read fps, frame count, size and duration.

    The count a container declares is a hint (``frames_exact`` False). When it reports none (e.g. VP9
    in webm) or ``exact`` is set, the packets are counted by demuxing (no decoding); when that count
    and the declared one disagree, the frames are counted by decoding them without conversion
    (cached per file version), so ``n_frames`` is the frames that decode. Raises a
    :class:`VideoError` subclass naming the file and the reason. ``quick``: an MP4's demuxer is named
    from its ``ftyp`` box instead of probed and the stream parameters are read on one decoder thread (the
    same facts; measured 1.10 -> 0.83 ms of CPU per probe of a small MP4: for the downloads of the video APIs).
    """
    path = str(path)
    container = _open(path, quick=quick)
    try:
        stream = container.streams.video[0]
        fps = _stream_fps(stream)
        width, height = int(stream.codec_context.width or 0), int(stream.codec_context.height or 0)
        duration = header_duration = _header_duration(container, stream)
        declared = int(stream.frames or 0)
        n = declared
        exact_count = False  # a declared count is a hint until counted
        keyframes: list[int] = []
        span = None
        discarded = 0
        decoded: int | None = None
        known = _known(path)
        if n <= 0 or exact:
            try:
                n, keyframes, span, discarded = _scan_packets(container, stream)
                exact_count = True
            except Exception as exc:
                raise VideoUnreadableError(path, f"cannot read packets: {type(exc).__name__}: {exc}") from exc
            if known is not None:
                decoded = known[0]
            elif declared and n != declared:  # the hint and the packets disagree: decode to count
                try:
                    decoded = count_decoded(path)
                except VideoError:  # damage: found again (and reported) by whoever decodes the frames
                    decoded = None
            n = decoded if decoded is not None else n
        elif known is not None:  # decoded earlier in this process: the count is a fact
            n, decoded, exact_count = known[0], known[0], True
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
            declared_frames=declared or None,
            covered_seconds=span,
            discarded=discarded,
            decoded_frames=decoded,
        )
    finally:
        container.close()


def _target_size(w: int, h: int, max_side: int | None) -> tuple[int, int]:
    if not max_side or max(w, h) <= max_side:
        return w, h
    scale = max_side / max(h, w)
    return max(1, round(w * scale)), max(1, round(h * scale))


def resize_max_side(img: np.ndarray, max_side: int | None) -> np.ndarray:
    """Shrink so the longest side is at most ``max_side`` (never enlarges); INTER_AREA."""
    h, w = img.shape[:2]
    tw, th = _target_size(w, h, max_side)
    if (tw, th) == (w, h):
        return img
    import cv2

    return cv2.resize(img, (tw, th), interpolation=cv2.INTER_AREA)


_REFORMAT = threading.local()


def _reformatter() -> Any:
    """This thread's PyAV reformatter: one swscale context reused across the frames of a stream
    (``frame.reformat`` builds a new one per frame, which cost half of a scaled decode; same pixels)."""
    rf = getattr(_REFORMAT, "rf", None)
    if rf is None:
        from av.video.reformatter import VideoReformatter

        rf = _REFORMAT.rf = VideoReformatter()
    return rf


def frame_rgb(frame: Any, max_side: int | None = None) -> np.ndarray:
    """A decoded frame as RGB uint8, reduced to ``max_side`` in the same conversion (area
    averaging): the decoder's frame is read once and no full-size RGB copy is made."""
    from av.video.reformatter import Interpolation

    tw, th = _target_size(frame.width, frame.height, max_side)
    if (tw, th) == (frame.width, frame.height):
        return _reformatter().reformat(frame, format="rgb24").to_ndarray()
    return _reformatter().reformat(frame, width=tw, height=th, format="rgb24",
                                   interpolation=Interpolation.AREA).to_ndarray()


def _decoded(path: str, container: Any, stream: Any, mode: str | None = None) -> Iterator[Any]:
    """Every frame of ``stream`` in decoder output order (presentation order), checked.

    Raises :class:`VideoUnreadableError` for a demuxer/decoder error and for a frame the decoder
    marks corrupt (concealed errors). Once the stream has ended its decoded count is remembered
    (:func:`decode_facts`), and in ``strict`` mode fewer frames than the container declares (packets
    the demuxer flags as discarded by an edit list excepted) or, without a declared count, far fewer
    than the header's duration implies, raise too.
    """
    n = discarded = 0
    first = end = None
    try:
        for packet in container.demux(stream):
            if packet.size and packet.is_discard:
                discarded += 1
            for frame in packet.decode():
                if frame.is_corrupt:
                    raise VideoUnreadableError(path, f"damaged: frame {n} decodes with errors (marked corrupt)")
                n += 1
                if frame.pts is not None:
                    first = frame.pts if first is None else min(first, frame.pts)
                    end = max(end or frame.pts, frame.pts + (frame.duration or 0))
                yield frame
    except VideoError:
        raise
    except Exception as exc:  # av raises many classes (InvalidDataError, EOFError, …)
        raise VideoUnreadableError(path, f"damaged: decoding failed after {n} frames: "
                                         f"{type(exc).__name__}: {exc}") from exc
    declared = int(stream.frames or 0)
    _remember(path, n, declared or None, discarded)
    if decode_mode(mode) != "strict":
        return
    if declared:
        if n < declared - discarded:
            raise VideoUnreadableError(path, f"truncated or damaged: decoded {n} frames, the container declares "
                                             f"{declared - discarded}")
        return
    duration = _header_duration(container, stream)
    if duration > 0 and first is not None and stream.time_base:
        covered = float((end - first) * stream.time_base)
        if _short_of_duration(covered, n, duration):
            raise VideoUnreadableError(path, f"truncated: decoded {n} frames covering {covered:.2f} s, the "
                                             f"header's duration is {duration:.2f} s")


def count_decoded(path: str | os.PathLike) -> int:
    """The frames that decode, counted by decoding without converting (cached per path, mtime and size).
    Damage (decoder errors, corrupt frames) raises; a count short of the declared one does not."""
    path = str(path)
    known = _known(path)
    if known is not None:
        return known[0]
    container = _open(path)
    try:
        return sum(1 for _ in _decoded(path, container, container.streams.video[0], "released"))
    finally:
        container.close()


def decode_check(path: str | os.PathLike, mode: str | None = "strict") -> int:
    """Decode every frame without converting it (a full integrity check); returns the count.

    Raises a :class:`VideoError` subclass for a missing/unreadable/damaged file or one with 0 frames,
    and (``strict``, the default here) for a truncated one.
    """
    path = str(path)
    container = _open(path)
    try:
        n = sum(1 for _ in _decoded(path, container, container.streams.video[0], mode))
    finally:
        container.close()
    if not n:
        raise VideoNoFramesError(path, "decoded 0 frames")
    return n


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


def _decode_sequential(path: str, wanted: set[int], max_side: int | None, to_end: bool = False,
                       ) -> dict[int, np.ndarray]:
    out: dict[int, np.ndarray] = {}
    last = max(wanted)
    container = _open(path)
    try:
        for i, frame in enumerate(_decoded(path, container, container.streams.video[0])):
            if i in wanted:
                out[i] = frame_rgb(frame, max_side)
            if i >= last and not to_end:
                break
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
                if frame.is_corrupt:
                    raise VideoUnreadableError(path, f"damaged: frame near {idx} decodes with errors (marked corrupt)")
                if frame.pts >= target - 0.5 / float(rate) / float(tb):
                    out[idx] = frame_rgb(frame, max_side)
                    break
    except VideoError:
        raise
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
    whole: bool = False,
) -> list[np.ndarray]:
    """Decode frames at ``indices`` (RGB uint8, H×W×3), returned in the order asked.

    Repeated indices are decoded once. ``method`` is ``auto`` (by estimated cost),
    ``sequential`` or ``seek``. Indices past the end raise :class:`VideoError`.
    ``whole`` decodes the whole stream in one pass (converting only the frames asked), so
    damage anywhere in the file is found, not only near the chosen frames.
    """
    path = str(path)
    idx = [int(i) for i in indices]
    if not idx:
        return []
    if min(idx) < 0:
        raise ValueError(f"{path}: negative frame index in {idx}")
    if whole:
        method = "sequential"
    if method == "auto":
        info = info if info is not None and info.keyframes else probe(path, exact=True)
        method = choose_method(idx, info)
    if info is not None:
        check_complete(info)
    if method == "seek":
        if info is None:
            info = probe(path)
        got = _decode_seek(path, idx, info.fps, max_side)
    elif method == "sequential":
        got = _decode_sequential(path, set(idx), max_side, to_end=whole)
    else:
        raise ValueError(f"unknown decode method {method!r}")
    missing = sorted(set(idx) - set(got))
    if missing:
        if not got and method == "sequential":
            raise VideoNoFramesError(path, "decoded 0 frames")
        raise VideoError(path, f"frames {missing[:5]}{'…' if len(missing) > 5 else ''} could not be decoded")
    return [got[i] for i in idx]


def iter_frames(path: str | os.PathLike, *, max_side: int | None = None,
                limit: int | None = None, mode: str | None = None) -> Iterator[np.ndarray]:
    """Every frame (or the first ``limit``) as RGB uint8, decoded and converted one at a time, so memory
    holds one frame, not the video. Damage anywhere raises a :class:`VideoError` (after the frames before
    it were yielded: a caller must not keep a partial result as the video's), and so do 0 frames and (in
    ``strict`` decode mode) a truncated stream."""
    path = str(path)
    container = _open(path)
    n = 0
    try:
        for frame in _decoded(path, container, container.streams.video[0], mode):
            n += 1
            yield frame_rgb(frame, max_side)
            if limit and n >= limit:
                break
    finally:
        container.close()
    if not n:
        raise VideoNoFramesError(path, "decoded 0 frames")


def read_all(path: str | os.PathLike, *, max_side: int | None = None, limit: int | None = None,
             mode: str | None = None) -> list[np.ndarray]:
    """Decode every frame (or the first ``limit``), each reduced to ``max_side`` while converting.

    Raises on 0 frames and on a damaged (or, ``strict``, truncated) file (see the module docstring),
    also when some frames decoded before the damage: a damaged video is never returned as a shorter one.
    """
    return list(iter_frames(path, max_side=max_side, limit=limit, mode=mode))
