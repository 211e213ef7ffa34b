"""Renderings softened like a video decoded below the render size (issue 24's scenes).

The scorer decodes some families at a fraction of the canvas (``decode_scale``) and a portrait letterbox
leaves the picture smaller than the canvas at any decode size; :func:`vreason.synth.frametools.prepare` then
enlarges the frames back to the render size. A family's scene passes the decoded content size
(:func:`decoded_size`) so its expected pictures go through the same reduction (area) and enlargement
(bilinear): the enlargement's soft edges are explained by the rendering rather than freed."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

SOFT_BELOW = 0.75
"""Frames decoded below this share of the render width are compared with equally softened renderings."""


def decoded_size(raw: Sequence[np.ndarray]) -> list[int] | None:
    """(w, h) of the picture inside the letterbox of the frames as decoded (before they are enlarged); None
    for frames that are not pictures (the verifier's own checks say why)."""
    if not len(raw) or any(np.ndim(f) not in (2, 3) for f in raw):
        return None
    from vreason.synth.frametools import letterbox_crop

    try:
        y0, y1, x0, x1 = letterbox_crop([np.repeat(np.asarray(f)[..., None], 3, 2) if np.ndim(f) == 2
                                         else np.asarray(f)[..., :3] for f in raw])
    except (ValueError, IndexError, TypeError):
        return None
    return [int(x1 - x0), int(y1 - y0)]


def soft_size(state: dict, width: int) -> tuple[int, int] | None:
    """The decoded size recorded in ``state`` when it is small enough to soften, else None."""
    size = state.get("decoded_size")
    if size is None or size[0] >= SOFT_BELOW * width:
        return None
    return int(size[0]), int(size[1])


def soften(img: np.ndarray, size: tuple[int, int] | None) -> np.ndarray:
    """``img`` reduced to ``size`` (w, h; INTER_AREA, as the decoder) and enlarged back (INTER_LINEAR, as
    :func:`~vreason.synth.frametools.prepare`); unchanged when ``size`` is None."""
    import cv2

    if size is None:
        return img
    h, w = img.shape[:2]
    small = cv2.resize(img, (max(2, size[0]), max(2, size[1])), interpolation=cv2.INTER_AREA)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)
