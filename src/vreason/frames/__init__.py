"""Frames: video I/O and frame policies (the one place frames are decoded and sampled)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vreason.frames.policy import PRESETS, FramePolicy, policy
from vreason.frames.video import VideoInfo, probe, read_all, read_frames, resize_max_side, write_video

__all__ = [
    "PRESETS",
    "FramePolicy",
    "SampledFrames",
    "check_complete",
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


def check_complete(info: VideoInfo) -> None:
    """Raise for a cut-off file (far fewer frames than its header's duration implies)."""
    if info.truncated:
        from vreason.errors import VideoUnreadableError

        raise VideoUnreadableError(info.path, f"truncated: {info.n_frames} frames, the header's duration "
                                              f"implies ~{info.expected_frames}")


def sample_frames(path: str, spec: str | FramePolicy, info: VideoInfo | None = None) -> SampledFrames:
    """Probe ``path``, pick indices by the policy, decode them (resized by the policy)."""
    pol = policy(spec)
    info = info or probe(path, exact=True)
    check_complete(info)
    idx = pol.indices(info.n_frames, info.fps)
    frames = read_frames(path, idx, max_side=pol.max_side, info=info)
    return SampledFrames(frames=frames, indices=idx, policy=pol.name, info=info)
