"""Decode modes, counts of the frames that decode (cached per file version) and frame times.

Split from :mod:`vreason.frames.video`, which uses them.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Literal

DecodeMode = Literal["released", "strict"]
DECODE_MODE: ContextVar[str] = ContextVar("vreason_decode_mode", default="released")
"""The ambient decode mode: ``released`` (use the frames that decode) or ``strict`` (fewer frames than
the container declares is an error). Scorers run with the protocol's ``decode`` option set here."""


def decode_mode(mode: str | None = None) -> str:
    """``mode`` if given, else the ambient :data:`DECODE_MODE`."""
    mode = mode or DECODE_MODE.get()
    if mode not in ("released", "strict"):
        raise ValueError(f"decode mode must be released or strict, not {mode!r}")
    return mode


# ---------------------------------------------------------------- decoded counts, cached per file version
_DECODED: OrderedDict[tuple[str, int, int], tuple[int, int | None, int]] = OrderedDict()
_DECODED_LOCK = threading.Lock()
_DECODED_MAX = 4096


def _file_key(path: str) -> tuple[str, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return os.path.abspath(path), st.st_mtime_ns, st.st_size


def _remember(path: str, decoded: int, declared: int | None, discarded: int) -> None:
    key = _file_key(path)
    if key is None:
        return
    with _DECODED_LOCK:
        _DECODED[key] = (decoded, declared, discarded)
        _DECODED.move_to_end(key)
        while len(_DECODED) > _DECODED_MAX:
            _DECODED.popitem(last=False)


def _known(path: str) -> tuple[int, int | None, int] | None:
    key = _file_key(path)
    if key is None:
        return None
    with _DECODED_LOCK:
        return _DECODED.get(key)


def decode_facts(path: str | os.PathLike | None) -> dict[str, int] | None:
    """``{"frames_declared": D, "frames_decoded": N}`` for a file known (from an earlier full decode in
    this process) to decode fewer frames than its container declares; else ``None``."""
    if not path:
        return None
    got = _known(str(path))
    if got is None:
        return None
    decoded, declared, _ = got
    if declared and decoded < declared:
        return {"frames_declared": declared, "frames_decoded": decoded}
    return None


def frame_times(pts: Sequence[int | None], time_base: Any, fps: float) -> tuple[list[float], str]:
    """Seconds of each frame (in output order) from its presentation timestamp: ``(pts - first) ×
    time_base``. The timestamps are sorted first (a stream muxed with pts = dts, like ``box.mp4``, hands
    them out of order: the i-th frame shown is at the i-th time). Without timestamps (or a time base),
    or with a timestamp repeated, ``index / fps``. Returns the times and their source (``"pts"`` or ``"index/fps"``)."""
    if pts and time_base and all(p is not None for p in pts):
        ordered = sorted(int(p) for p in pts)  # type: ignore[arg-type]
        if all(b > a for a, b in zip(ordered, ordered[1:], strict=False)):  # repeated timestamps time nothing
            t0 = ordered[0]
            return [float((p - t0) * time_base) for p in ordered], "pts"
    rate = fps if fps and fps > 0 else 1.0
    return [i / rate for i in range(len(pts))], "index/fps"


# ---------------------------------------------------------------- per scored unit: the mode and what reads found
_NOTES: ContextVar[list[dict[str, Any]] | None] = ContextVar("vreason_decode_notes", default=None)


def note_decode(details: dict[str, Any]) -> None:
    """Record what a read found (declared vs decoded counts, mapped indices) for the unit being scored."""
    notes = _NOTES.get()
    if notes is not None and details:
        notes.append(details)


@contextmanager
def decode_scope(mode: str | None = None) -> Iterator[list[dict[str, Any]]]:
    """Score one unit: the ambient decode mode set to ``mode`` (when given) and the reads' notes collected
    (shared with threads the unit starts: ``asyncio.to_thread`` copies the context, not the list)."""
    notes: list[dict[str, Any]] = []
    tok_notes = _NOTES.set(notes)
    tok_mode = DECODE_MODE.set(decode_mode(mode)) if mode else None
    try:
        yield notes
    finally:
        if tok_mode is not None:
            DECODE_MODE.reset(tok_mode)
        _NOTES.reset(tok_notes)


def unit_decode_evidence(notes: list[dict[str, Any]], path: str | os.PathLike | None) -> dict[str, Any]:
    """What a unit's evidence records about decoding: declared vs decoded counts of a video that decodes
    fewer frames than it declares, and policy indices mapped to the last decodable frame."""
    out: dict[str, Any] = {}
    for note in notes:
        for key, val in note.items():
            if key == "frames_mapped":
                out.setdefault(key, {}).update(val)
            else:
                out[key] = val
    out.update(decode_facts(path) or {})
    return out
