"""Data paths confined to the dataset's root: no absolute path, no ``../``, no symlink leading out.

A dataset or manifest is input from elsewhere: a record naming ``/etc/passwd``, ``../../.ssh/id_rsa`` or a
symlink to ``/proc/self/environ`` as its image would have that file read, linked into the report (and served
by ``vreason view``) and sent to a remote judge. Every path a loader takes from a record goes through
:func:`confine_path` (one rule for all loaders); a record whose path leaves the root is a per-record error
naming the field. ``allow_outside=True`` (``vreason run --allow-outside-data``) opts out, for a dataset that
deliberately points at files elsewhere.
"""

from __future__ import annotations

import os
from typing import Any

PATH_FIELDS = ("input_image", "input_video", "reference_image", "reference_video")
"""The Sample fields holding a data file."""
PATH_METADATA = ("ref_path", "video_path", "frame_path", "sam2_pkl", "mask_path", "depth_path", "image_path")
"""Metadata keys that hold a data file (when they are strings)."""


ALLOW_KEY = "allow_outside_data"
"""Set in a sample's metadata when the user opted out of the confinement."""


class OutsideDataRoot(ValueError):
    """A data path that leaves the dataset's root."""


def confine_path(root: str, path: str, *, allow_outside: bool = False, what: str = "path") -> str:
    """``path`` (relative to ``root``) resolved; :class:`OutsideDataRoot` when it is absolute outside the
    root, climbs out with ``..``, or reaches outside through a symlink — unless ``allow_outside``."""
    joined = path if os.path.isabs(path) else os.path.join(root, path)
    if allow_outside:
        return joined
    if "\x00" in path:
        raise OutsideDataRoot(f"{what} {path!r} holds a NUL byte")
    root_real = os.path.realpath(root)
    lexical = os.path.normpath(os.path.abspath(joined))
    if os.path.commonpath([os.path.abspath(root_real), lexical]) != root_real and \
            os.path.commonpath([os.path.normpath(os.path.abspath(root)), lexical]) != os.path.normpath(
                os.path.abspath(root)):
        raise OutsideDataRoot(f"{what} {path!r} is outside the dataset's root {root} "
                              "(pass --allow-outside-data to allow it)")
    real = os.path.realpath(joined)
    if os.path.commonpath([root_real, real]) != root_real:
        raise OutsideDataRoot(f"{what} {path!r} leads outside the dataset's root {root} through a symlink "
                              f"(to {real}; pass --allow-outside-data to allow it)")
    return joined


def sample_outside_root(sample: Any, *, allow_outside: bool = False) -> tuple[str, str] | None:
    """``(field, reason)`` for the first data path of ``sample`` that leaves its root, else None."""
    if allow_outside or not getattr(sample, "root", None):
        return None
    checks = [(f, getattr(sample, f, None)) for f in PATH_FIELDS]
    meta = getattr(sample, "metadata", {}) or {}
    checks += [(f"metadata.{k}", meta.get(k)) for k in PATH_METADATA]
    for field, value in checks:
        if isinstance(value, str) and value:
            try:
                confine_path(sample.root, value, what=field)
            except OutsideDataRoot as exc:
                return field, str(exc)
    return None


def confine_samples(samples: list, errors: list, *, allow_outside: bool = False) -> list:
    """``samples`` without those whose data paths leave their root; each one refused is appended to
    ``errors`` as a loader error (``where`` = the sample's id and its record's place when known)."""
    from vreason.data.loaderrors import load_error

    if allow_outside:
        for s in samples:  # the judges' inputs (protocols/judge_inputs.py) honour the same opt-out
            s.metadata[ALLOW_KEY] = True
        return samples
    kept = []
    for s in samples:
        bad = sample_outside_root(s)
        if bad is None:
            kept.append(s)
            continue
        where = (s.metadata or {}).get("where") or f"sample {s.id}"
        errors.append(load_error(str(where), bad[0], bad[1], sample_id=s.id))
    return kept


def sample_file(sample: Any, value: str | None) -> str | None:
    """The path of one of ``sample``'s data files, confined to its root (unless the user opted out):
    what a judge may be sent. Raises :class:`OutsideDataRoot`."""
    if not value:
        return None
    meta = getattr(sample, "metadata", {}) or {}
    if not getattr(sample, "root", None) or meta.get(ALLOW_KEY):
        return sample.resolve(value)
    return confine_path(sample.root, value, what="data file")


__all__ = ["ALLOW_KEY", "PATH_FIELDS", "OutsideDataRoot", "confine_path", "confine_samples", "sample_file",
           "sample_outside_root"]
