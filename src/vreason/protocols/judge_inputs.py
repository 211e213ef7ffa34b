"""Build interleaved judge requests from a template whose user text holds image markers.

A protocol template writes markers such as ``[[INPUT_IMAGE]]`` or ``[[VIDEO]]`` on their own in
the user text; :func:`interleave` splits the rendered text at the markers and puts the images
given for each marker there, so the released order of texts and images is kept while the
wording stays in an overridable template file.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from vreason.core.errors import VideoMissingError, VideoUnreadableError
from vreason.judge.scorer import judge_for  # noqa: F401 - re-exported (its old home)

_MARKER = re.compile(r"\[\[([A-Z_]+)\]\]")


def load_image(path: str) -> np.ndarray:
    """An RGB uint8 array; a missing or unreadable file raises a VideoError naming it."""
    import os

    from PIL import Image

    if not os.path.exists(path):
        raise VideoMissingError(path, "image file does not exist")
    try:
        with Image.open(path) as im:
            return np.asarray(im.convert("RGB"))
    except Exception as exc:  # noqa: BLE001 - any decoder failure is "unreadable"
        raise VideoUnreadableError(path, f"cannot read image: {type(exc).__name__}: {exc}") from exc


def load_image_part(path: str):
    """An :class:`~vreason.judge.base.ImagePart` carrying the file's original bytes (sent untouched,
    with the file's own MIME type) and its decoded pixels; a missing or unreadable file raises a
    VideoError naming it."""
    import os

    from vreason.judge.base import image_part_from_file

    if not os.path.exists(path):
        raise VideoMissingError(path, "image file does not exist")
    try:
        return image_part_from_file(path)
    except Exception as exc:  # noqa: BLE001 - any read or decoder failure is "unreadable"
        raise VideoUnreadableError(path, f"cannot read image: {type(exc).__name__}: {exc}") from exc


def sample_image_part(sample, value: str | None):
    """:func:`load_image_part` for one of ``sample``'s data files — only when it lies inside the dataset's
    root (:func:`vreason.data.confine.sample_file`): a hostile dataset cannot ship a local file such as
    ``/etc/passwd`` to a remote judge. A path outside raises a VideoMissingError naming it (a per-sample
    error)."""
    from vreason.data.confine import OutsideDataRoot, sample_file

    try:
        path = sample_file(sample, value)
    except OutsideDataRoot as exc:
        raise VideoMissingError(str(value), f"not sent to the judge: {exc}") from None
    return load_image_part(path)


def jpeg_parts(frames: Sequence[np.ndarray], quality: int | None) -> list:
    """Image parts for ``frames``, sent as JPEG at ``quality`` (``None``: the judge's default)."""
    from vreason.judge.base import ImagePart

    return [ImagePart(np.asarray(f), quality=quality) for f in frames]


def encodings_by_marker(images: dict[str, Sequence]) -> dict[str, str]:
    """``{marker in lower case: encoding}`` for every marker that has images (``jpeg:q95``,
    ``original-bytes:image/png``, ``judge-default``; several encodings under one marker are joined
    with ``+``)."""
    from vreason.judge.base import ImagePart

    out: dict[str, str] = {}
    for key, items in images.items():
        encs = dict.fromkeys(i.encoding() if isinstance(i, ImagePart) else "judge-default" for i in items)
        if encs:
            out[key.lower()] = "+".join(encs)
    return out


def interleave(user_text: str, images: dict[str, Sequence]) -> list:
    """Text and image parts in the order the markers appear. An unknown marker is an error;
    a marker whose image list is empty is dropped. Images are pixel arrays (sent at the judge's
    default encoding) or ready :class:`~vreason.judge.base.ImagePart` objects (kept as they are)."""
    from vreason.judge.base import ImagePart, TextPart

    parts: list = []
    pos = 0
    for m in _MARKER.finditer(user_text):
        text = user_text[pos:m.start()].strip("\n")
        if text.strip():
            parts.append(TextPart(text))
        key = m.group(1)
        if key not in images:
            raise ValueError(f"template marker [[{key}]] has no images (known: {', '.join(sorted(images))})")
        parts.extend(img if isinstance(img, ImagePart) else ImagePart(np.asarray(img)) for img in images[key])
        pos = m.end()
    tail = user_text[pos:].strip("\n")
    if tail.strip():
        parts.append(TextPart(tail))
    return parts
