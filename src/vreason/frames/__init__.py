"""Frames: video I/O and frame policies (the one place frames are decoded and sampled)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from vreason.core.decoding import note_decode
from vreason.core.errors import VideoTooShortError
from vreason.frames.passes import Decoded, decode_pass
from vreason.frames.policy import PRESETS, FramePolicy, policy
from vreason.frames.video import (
    DECODE_MODE,
    VideoInfo,
    check_complete,
    decode_check,
    decode_facts,
    decode_mode,
    probe,
    read_all,
    read_frames,
    resize_max_side,
    write_video,
)

__all__ = [
    "DECODE_MODE",
    "Decoded",
    "PRESETS",
    "decode_facts",
    "decode_mode",
    "decode_pass",
    "FramePolicy",
    "SampledFrames",
    "check_complete",
    "decode_check",
    "VideoInfo",
    "policy",
    "probe",
    "read_all",
    "read_frames",
    "resize_max_side",
    "sample_frames",
    "write_video",
]


@dataclass
class SampledFrames:
    frames: list[np.ndarray]
    indices: list[int]
    policy: str
    info: VideoInfo
    times: list[float] = field(default_factory=list)
    """Seconds of each frame from its presentation timestamp (``frame_times_from`` in :meth:`details`)."""
    decoded: Decoded | None = None

    def details(self) -> dict:
        """Evidence of the decode: frame times, and declared vs decoded counts / mapped indices when the
        video decodes fewer frames than it declares or than the policy asked for."""
        return self.decoded.details() if self.decoded is not None else {}


def sample_frames(path: str, spec: str | FramePolicy, info: VideoInfo | None = None,
                  mode: str | None = None) -> SampledFrames:
    """Probe ``path``, pick indices by the policy, decode them (resized by the policy).

    The frame count is the frames that decode (a container's declared count is a hint, see
    :func:`~vreason.frames.video.probe`). The whole stream is decoded once (only the chosen frames are
    converted), so a video damaged anywhere is an error rather than a sample of its intact part; an
    index past the decodable end maps to the last decodable frame (recorded in :meth:`SampledFrames.details`).
    ``mode`` (else the ambient :data:`DECODE_MODE`): ``released`` uses the frames that decode, ``strict``
    raises for fewer frames than the container declares. Raises :class:`VideoTooShortError` when the
    video has fewer frames than the policy needs (:attr:`FramePolicy.min_frames`).
    """
    pol = policy(spec)
    mode = decode_mode(mode)
    info = info or probe(path, exact=True)
    check_complete(info, mode)
    if info.n_frames < pol.min_frames:
        raise VideoTooShortError(path, f"{info.n_frames} frame{'s' if info.n_frames != 1 else ''}; frame policy "
                                       f"{pol.name} needs at least {pol.min_frames}")
    idx = pol.indices(info.n_frames, info.fps)
    got = decode_pass(path, idx, max_side=pol.max_side, mode=mode, fps=info.fps)
    note_decode({k: v for k, v in got.details().items() if not k.startswith("frame_times")})
    if got.decoded < pol.min_frames:
        raise VideoTooShortError(path, f"{got.decoded} frame{'s' if got.decoded != 1 else ''} decode; frame "
                                       f"policy {pol.name} needs at least {pol.min_frames}")
    return SampledFrames(frames=got.frames, indices=got.indices, policy=pol.name, info=info, times=got.times,
                         decoded=got)
