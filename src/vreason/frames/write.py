"""Writing videos with PyAV: mp4 (H.264, else mpeg4) and webm (VP9)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Sequence
from fractions import Fraction

import numpy as np

from vreason.core.errors import VideoError


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
    faststart: bool = False,
    reproducible: bool = False,
) -> str:
    """Write RGB uint8 frames to ``path``; returns the codec used.

    ``.mp4``: H.264 (libx264) where available, else mpeg4. ``.webm``: VP9. Odd sizes are
    padded by one pixel (yuv420p needs even sizes). ``crf`` / ``bitrate`` control quality.
    ``faststart`` puts an mp4's index (moov) before the data, as files meant for streaming have it.
    ``reproducible``: the same frames always give the same file. x264's macroblock-tree rate control does
    not: for a short clip (5 frames, shorter than the ``veryfast`` lookahead) the bytes written depend on
    the process's heap contents — 12 writes of one array between unrelated allocations gave two different
    files (decoded pixels up to 16 apart) in each of 3 processes; with ``mbtree=0``, which this sets
    (libx264 only), all 36 were identical."""

    path = str(path)
    ext = os.path.splitext(path)[1].lower()
    if codec is None:
        codec = available_encoder(["libvpx-vp9", "libvpx"] if ext == ".webm" else ["libx264", "h264", "mpeg4"])
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".part" + ext
    rate = Fraction(fps).limit_denominator(1001)
    options = {"movflags": "faststart"} if faststart and ext in (".mp4", ".mov", ".m4v") else {}
    try:
        codec = _encode(tmp, frames, codec, rate, options, crf, bitrate, gop, preset, path, reproducible)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)  # no partial file left behind (a full disk, a bad frame, an interrupt)
        raise
    os.replace(tmp, path)
    return codec


def _encode(tmp: str, frames: Iterable[np.ndarray], codec: str, rate: Fraction, options: dict[str, str],
            crf: int | None, bitrate: int | None, gop: int | None, preset: str, path: str,
            reproducible: bool = False) -> str:
    import av

    n = 0
    with av.open(tmp, "w", options=options) as container:
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
                    if reproducible and codec == "libx264":
                        opts["x264-params"] = "mbtree=0"
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
    return codec


def write_image(path: str, bgr: np.ndarray) -> bool:
    """``cv2.imwrite``'s bytes (same encoder, by the suffix of ``path``), written by Python: ``False`` when
    the image cannot be encoded, but a failed write (a full disk) raises ``OSError`` — ``cv2.imwrite``
    only returns ``False`` then, and the run would record a unit without its debug image — and leaves no
    partial file."""
    import cv2

    ok, buf = cv2.imencode(os.path.splitext(path)[1] or ".png", bgr)
    if not ok:
        return False
    tmp = path + ".part"
    try:
        with open(tmp, "wb") as fh:
            fh.write(buf.tobytes())
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        if isinstance(exc, OSError) and not exc.filename:  # a failed write names no file: name it
            raise OSError(exc.errno, exc.strerror, path) from exc
        raise
    return True
