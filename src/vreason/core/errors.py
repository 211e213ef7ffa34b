"""Typed errors. Each names the file (or record) and the reason, so a per-sample failure
can be recorded as-is and the run can continue."""

from __future__ import annotations

import errno


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


class UnknownNameError(ConfigError, KeyError):
    """A name the user gave (a protocol, generator, judge backend, prompt variant…) is not known. Also a
    ``KeyError``, so code that looks a name up keeps catching it."""

    def __str__(self) -> str:  # the message, not KeyError's quoted repr
        return str(self.args[0]) if self.args else ""


class MissingFileError(ConfigError, FileNotFoundError):
    """A file or folder the user named does not exist (or is not what it should be). Also a
    ``FileNotFoundError``."""


class MissingExtraError(ConfigError, ImportError):
    """An optional extra (or a package it needs) is not installed; the message names what to install. Also
    an ``ImportError``."""


EXIT_DISK_FULL = 4
"""Exit code of a command stopped by a full disk (or a filled quota): nothing computed is lost, and the same
command resumes once space is freed. (0 ok · 1 crash · 2 usage · 3 finished with errors · 4 disk full ·
130 interrupted.)"""

_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})


class DiskFullError(VReasonError):
    """A write failed because the filesystem (or the user's quota) is full. ``path``: what was written."""

    def __init__(self, path: str | None):
        self.path = str(path) if path else "the run folder"
        super().__init__(f"disk full while writing {self.path}; free space and run the same command to resume")


def _chain(exc: BaseException | None) -> list[BaseException]:
    seen: list[BaseException] = []
    todo = [exc]
    while todo:
        e = todo.pop(0)
        if e is None or any(e is s for s in seen):
            continue
        seen.append(e)
        todo += [e.__cause__, e.__context__, *getattr(e, "exceptions", ())]
    return seen


def disk_full(exc: BaseException | None, path: str | None = None) -> DiskFullError | None:
    """The :class:`DiskFullError` behind ``exc`` (itself, its cause or context, an exception group's
    member): an ``OSError`` with ``ENOSPC``/``EDQUOT``, or SQLite's "database or disk is full" (then
    ``path``, the database written, names it). ``None`` when the disk was not the reason."""
    for e in _chain(exc):
        if isinstance(e, DiskFullError):
            return e
        if isinstance(e, OSError) and e.errno in _FULL_ERRNOS:
            return DiskFullError(e.filename or path)
        if type(e).__module__ == "sqlite3" and (getattr(e, "sqlite_errorcode", None) == _SQLITE_FULL
                                                or "database or disk is full" in str(e)):
            return DiskFullError(path)
    return None


_SQLITE_FULL = 13
