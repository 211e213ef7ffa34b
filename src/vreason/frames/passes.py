"""One decoding pass over a whole stream: chosen frames converted, every frame timed by its timestamp,
indices past the decodable end mapped to the last decodable frame (split from :mod:`vreason.frames.video`)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from vreason.core.decoding import frame_times
from vreason.core.errors import VideoNoFramesError
from vreason.frames.video import _decoded, _open, _stream_fps, frame_rgb

__all__ = ["Decoded", "decode_pass"]


@dataclass
class Decoded:
    """Frames decoded in one pass, with their presentation times and what the stream really held."""

    frames: list[np.ndarray]
    indices: list[int]
    """The frame index each returned frame is (a requested index past the decodable end → the last one)."""
    times: list[float]
    """Seconds of each returned frame from its presentation timestamp (see :func:`frame_times`)."""
    time_source: str
    decoded: int
    """Frames decoded (all of them, unless the pass stopped at ``limit``)."""
    declared: int | None
    mapped: dict[int, int] = field(default_factory=dict)
    """Requested index → the last decodable frame used instead (the index was past the end)."""

    def details(self) -> dict[str, Any]:
        """Evidence: declared vs decoded counts when they differ, indices mapped, the frames' times."""
        out: dict[str, Any] = {"frame_times": [round(t, 6) for t in self.times], "frame_times_from": self.time_source}
        if self.declared and self.decoded < self.declared:
            out.update(frames_declared=self.declared, frames_decoded=self.decoded)
        if self.mapped:
            out["frames_mapped"] = {str(k): v for k, v in sorted(self.mapped.items())}
        return out


def decode_pass(path: str | os.PathLike, indices: Iterable[int] | None = None, *, max_side: int | None = None,
                mode: str | None = None, limit: int | None = None, fps: float = 0.0) -> Decoded:
    """Decode the whole stream once (or its first ``limit`` frames), converting only the frames asked
    (``None``: every frame), in the order asked; each frame timed by its presentation timestamp.

    A requested index past the frames that decode maps to the last decodable frame (recorded in
    :attr:`Decoded.mapped`). Damage raises; so does a truncated stream in ``strict`` mode; 0 frames
    raise :class:`VideoNoFramesError`."""
    path = str(path)
    want = None if indices is None else [int(i) for i in indices]
    if want is not None and want and min(want) < 0:
        raise ValueError(f"{path}: negative frame index in {want}")
    wanted = None if want is None else set(want)
    got: dict[int, np.ndarray] = {}
    pts: list[int | None] = []
    last_raw = None
    container = _open(path)
    try:
        stream = container.streams.video[0]
        tb, declared = stream.time_base, int(stream.frames or 0) or None
        fps = fps or _stream_fps(stream)
        for i, frame in enumerate(_decoded(path, container, stream, mode)):
            pts.append(frame.pts)
            if wanted is None or i in wanted:
                got[i] = frame_rgb(frame, max_side)
            last_raw = frame
            if limit and i + 1 >= limit:
                break
    finally:
        container.close()
    n = len(pts)
    if not n:
        raise VideoNoFramesError(path, "decoded 0 frames")
    want = list(range(n)) if want is None else want
    mapped = {i: n - 1 for i in sorted(set(want)) if i >= n}
    if mapped and n - 1 not in got:
        got[n - 1] = frame_rgb(last_raw, max_side)
    used = [mapped.get(i, i) for i in want]
    all_times, source = frame_times(pts, tb, fps)
    return Decoded(frames=[got[i] for i in used], indices=used, times=[all_times[i] for i in used],
                   time_source=source, decoded=n, declared=declared, mapped=mapped)
