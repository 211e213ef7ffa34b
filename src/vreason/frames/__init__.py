"""Frames: video I/O and frame policies (the one place frames are decoded and sampled)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vreason.errors import VideoTooShortError
from vreason.frames.policy import PRESETS, FramePolicy, policy
from vreason.frames.video import (
    VideoInfo,
    check_complete,
    decode_check,
    probe,
    read_all,
    read_frames,
    resize_max_side,
    write_video,
)

__all__ = [
    "PRESETS",
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


def sample_frames(path: str, spec: str | FramePolicy, info: VideoInfo | None = None) -> SampledFrames:
    """Probe ``path``, pick indices by the policy, decode them (resized by the policy).

    The whole stream is decoded once (only the chosen frames are converted), so a video
    damaged anywhere is an error rather than a sample of its intact part. Raises
    :class:`VideoTooShortError` when the video has fewer frames than the policy needs
    (:attr:`FramePolicy.min_frames`), and another :class:`~vreason.errors.VideoError` for a
    damaged or truncated file.
    """
    pol = policy(spec)
    info = info or probe(path, exact=True)
    check_complete(info)
    if info.n_frames < pol.min_frames:
        raise VideoTooShortError(path, f"{info.n_frames} frame{'s' if info.n_frames != 1 else ''}; frame policy "
                                       f"{pol.name} needs at least {pol.min_frames}")
    idx = pol.indices(info.n_frames, info.fps)
    frames = read_frames(path, idx, max_side=pol.max_side, info=info, whole=True)
    return SampledFrames(frames=frames, indices=idx, policy=pol.name, info=info)
