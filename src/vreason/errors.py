"""Typed errors. Each names the file (or record) and the reason, so a per-sample failure
can be recorded as-is and the run can continue."""

from __future__ import annotations


class VReasonError(Exception):
    """Base class for every error vreason raises on purpose."""


class VideoError(VReasonError):
    """A video could not be used. ``path`` and ``reason`` are always set."""

    def __init__(self, path: str, reason: str):
        self.path = str(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")


class VideoMissingError(VideoError):
    """The file does not exist."""


class VideoUnreadableError(VideoError):
    """The container or stream cannot be opened or decoded (corrupt, not a video)."""


class VideoEmptyError(VideoError):
    """The file exists but is empty (0 bytes) or has no video stream."""


class VideoNoFramesError(VideoError):
    """The video stream decodes to zero frames."""


class VideoTooShortError(VideoError):
    """The video decodes but has fewer frames than the protocol's frame policy needs."""


class RecordError(VReasonError):
    """A benchmark record is malformed. ``where`` names the file and record."""

    def __init__(self, where: str, reason: str):
        self.where = where
        self.reason = reason
        super().__init__(f"{where}: {reason}")


class ConfigError(VReasonError):
    """A command-line or config value is invalid."""
