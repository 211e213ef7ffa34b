"""Letterbox and pillarbox bars of any colour (issue 24, principle 5): the shared layer's one rule.

**Letterbox (one rule, :func:`content_box`).** A side's *band* is the run of border lines (rows for top and
bottom, columns for left and right) that are uniform in one colour: in every sampled frame (6, evenly spread,
first and last included) ≥ 98% of the line's pixels lie within :data:`BAR_TOL` (largest channel difference)
of the colour of that side's outermost line, and that colour is the same (within ``BAR_TOL``) in every sampled
frame. A band is a bar when it is ≥ 2 px and

* it is **dark** (largest channel < :data:`DARK_LEVEL`): no rendered scene has a dark border margin (encoded
  black decodes to 0..20; the darkest scene colour seen at an edge, the sliding board at −15% exposure, is
  about 44 and never at the edge) — a dark bar stands alone, on one side or several; or
* it is **paired and edged** (any other colour: grey, white, coloured): the opposite side has a band of the
  same colour whose width agrees within 2 px + 2% of the side, and on both sides the first line inside the
  band (or the next: H.264 blends the boundary line of a bar of odd width) differs from the bar colour by more
  than ``BAR_TOL`` on ≥ :data:`EDGE_FRAC` of its length in at least half of the sampled frames (a letterbox's picture
  starts along its whole edge; a canvas's own margin ends at a grid or a shape narrower than the frame).

The picture must keep ≥ :data:`MIN_KEEP` of each side (a 9:16 portrait picture pillarboxed in a 16:9 frame
keeps 31.6%; a uniform video has no picture to crop to). One box serves every frame. The rule replaces the
suite's two (``draw.content_box``: ≥ 98% of a line below 40 in every sampled frame; ``frametools.
letterbox_crop``: the 95th percentile below 40, bars ≥ 2 px). A bar of the canvas's own colour
(white bars around a white canvas) cannot be told from the margin. When the caller knows the picture's aspect
(the task's start image), :func:`aspect_box` then takes the centred box of that aspect if all that lies outside it
is uniform: a beige bar one level off numseq's beige page (honest 4:3 letterbox, principle-5 case 1461953407,
bench seed 2301) was taken for margin, the 4:3 frame squeezed into 16:9, and its first frame failed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

BAR_TOL = 30
"""A bar pixel lies within this many levels (largest channel difference) of its bar's colour: H.264 and
MJPEG ringing next to a bar's edge stays within it (measured ≤ 22 on the tests' bars)."""
TIGHT_TOL = 10
"""A second search with this tolerance when none is found with :data:`BAR_TOL`: a bar of a colour within 30
levels of the picture's own border (a lilac bar around a light page) merges with it at 30 and is then never
paired; the inside of an H.264 bar stays within ±4 of its colour (ringing only reaches the line or two next to
the picture, which stay in the crop; :data:`vreason.verify.explain.BORDER_PX` ignores them)."""
DARK_LEVEL = 40
"""A bar whose colour's largest channel is below this is dark: cropped on its own (see the module doc)."""
LINE_FRAC = 0.98
"""Share of a border line that must match the bar colour in every sampled frame."""
EDGE_FRAC = 0.95
"""Share of the first line inside a non-dark bar that must differ from the bar colour (in one sampled frame)."""
MIN_BAR = 2
MIN_KEEP = 0.25
SAMPLES = 6


@dataclass(frozen=True)
class Band:
    """A uniform border band of one side: its width in px and its colour (RGB, median of the outermost line)."""

    width: int
    colour: tuple[int, int, int]


def sample_indices(n: int, samples: int = SAMPLES) -> np.ndarray:
    """Up to ``samples`` frame indices evenly spread over ``n`` frames, first and last included."""
    if n <= 0:
        return np.zeros(0, dtype=int)
    return np.unique(np.linspace(0, n - 1, min(samples, n)).round().astype(int))


def _sides(f: np.ndarray) -> dict[str, np.ndarray]:
    """Each side's lines, outermost first, as (n_lines, line_length, 3) uint8 views (no copy)."""
    return {"top": f, "bottom": f[::-1], "left": f.transpose(1, 0, 2), "right": f.transpose(1, 0, 2)[::-1]}


CHUNK = 16
"""Lines compared per step: a band is searched from the edge inwards and the search stops two lines past the
first line that is not uniform (what :func:`_edged` reads), not at the frame's middle."""


def _matching(lines: np.ndarray, lo: tuple, hi: tuple) -> np.ndarray:
    """Per line of ``lines`` (a view of a frame's rows or columns, outermost first), how many of its pixels lie
    within ``lo``..``hi`` in every channel. Columns are copied as the frame's row blocks they are (a transposed
    copy is 2-3x slower) and counted down the block."""
    import cv2

    if abs(lines.strides[0]) < abs(lines.strides[1]):  # the frame's columns
        block = lines.transpose(1, 0, 2)
        flip = block.strides[1] < 0
        mask = cv2.inRange(np.ascontiguousarray(block[:, ::-1] if flip else block), lo, hi)
        counts = cv2.reduce(mask, 0, cv2.REDUCE_SUM, dtype=cv2.CV_32S).ravel() // 255
        return counts[::-1] if flip else counts
    mask = cv2.inRange(np.ascontiguousarray(lines), lo, hi)
    return cv2.reduce(mask, 1, cv2.REDUCE_SUM, dtype=cv2.CV_32S).ravel() // 255


def _shares(lines: np.ndarray, c: np.ndarray, tol: int, limit: int) -> np.ndarray:
    """The match share of the first lines (at most ``limit``), outermost first, up to two past the first line
    below :data:`LINE_FRAC`."""
    out: list[np.ndarray] = []
    # |x − c| ≤ tol for integer x, every channel (cv2.inRange; bounds saturate to 0..255, which keeps the
    # test exact: c is a median of uint8 values, so lo ≤ 225 and hi ≥ 10)
    lo = tuple(float(v) for v in np.ceil(c - tol))
    hi = tuple(float(v) for v in np.floor(c + tol))
    n = min(limit, lines.shape[0])
    length = lines.shape[1]
    i = 0
    stop = n
    while i < min(n, stop):
        inside = _matching(lines[i:min(n, i + CHUNK)], lo, hi) / length
        out.append(inside)
        bad = np.flatnonzero(inside < LINE_FRAC)
        if len(bad) and stop == n:
            stop = i + int(bad[0]) + 3
        i += CHUNK
    return np.concatenate(out)[:min(n, stop)] if out else np.zeros(0)


def _band(lines_per_frame: list[np.ndarray], tol: int) -> tuple[Band, list[np.ndarray]]:
    """The side's uniform band over all sampled frames, and per frame the match share of its lines (up to two
    past the band)."""
    colours = [np.median(lines[0], axis=0) for lines in lines_per_frame]
    ref = colours[0]
    if any(np.abs(c - ref).max() > tol for c in colours):
        return Band(0, tuple(int(v) for v in ref)), []
    width = lines_per_frame[0].shape[0]
    shares = []
    for lines, c in zip(lines_per_frame, colours, strict=True):
        share = _shares(lines, c, tol, width + 2)
        shares.append(share)
        ok = share >= LINE_FRAC
        width = min(width, int(np.argmin(ok)) if not ok.all() else len(ok))
    return Band(width, tuple(int(round(v)) for v in ref)), shares


def _edged(shares: list[np.ndarray], width: int) -> bool:
    """One of the first two lines inside the band (a codec blends the boundary line) differs from the bar colour
    on ≥ EDGE_FRAC of it in at least half of the sampled frames (a canvas's margin that a camera's slow zoom-in
    narrows ends at a shape spanning the frame only in the last frames: maze easy zoomed 5% decoded at 320 px,
    edged in 1 of 6 frames)."""
    edged = [any(1.0 - float(s[k]) >= EDGE_FRAC for k in (width, width + 1) if k < len(s)) for s in shares]
    return 2 * sum(edged) >= len(edged) > 0


def _found(frames: Sequence[np.ndarray], samples: int, tol: int
           ) -> tuple[int, int, dict[str, tuple[Band, list[np.ndarray]]]] | None:
    picked = [np.asarray(frames[i]) for i in sample_indices(len(frames), samples)]
    if not picked or any(f.ndim != 3 or f.shape[2] < 3 or f.shape[:2] != picked[0].shape[:2] for f in picked):
        return None
    h, w = picked[0].shape[:2]
    if min(h, w) < 4:
        return None
    per_side: dict[str, list[np.ndarray]] = {k: [] for k in ("top", "bottom", "left", "right")}
    for f in picked:
        for k, v in _sides(f[..., :3]).items():
            per_side[k].append(v)
    return h, w, {k: _band(v, tol) for k, v in per_side.items()}


def bands(frames: Sequence[np.ndarray], *, samples: int = SAMPLES, tol: int = BAR_TOL) -> dict[str, Band] | None:
    """The uniform border band of each side (``top``, ``bottom``, ``left``, ``right``) over the sampled
    frames, or None when the frames are not same-sized RGB images."""
    got = _found(frames, samples, tol)
    return None if got is None else {k: v[0] for k, v in got[2].items()}


def content_box(frames: Sequence[np.ndarray], *, samples: int = SAMPLES, tol: int = BAR_TOL,
                aspect: float | None = None) -> tuple[int, int, int, int] | None:
    """(x0, y0, x1, y1) of the picture inside letterbox/pillarbox bars of any colour (the module's rule),
    or None when there are none (or the frames cannot be read). ``aspect``: the picture's width / height when
    known; with no bar seen, :func:`aspect_box` is tried; and a box found not of that aspect is not the picture —
    a dark band on one side is the picture's own ground: a bar chart on black, whose empty rows above the bars
    were cut off as a letterbox, read its bars' heights against the cropped picture (the tallest 0.70 of the frame
    read 0.85). A box is kept when it is of that aspect and centred (letterbox, pillarbox and window bars are);
    else a frame of the picture's aspect has no bars and another takes :func:`aspect_box` when it finds one (the
    found box otherwise)."""
    got = _found(frames, samples, tol)
    if got is None:
        return None
    h, w = got[0], got[1]
    box = _box(*got, tol)
    if box is None and tol == BAR_TOL:
        got = _found(frames, samples, TIGHT_TOL)
        box = None if got is None else _box(*got, TIGHT_TOL)
    if box is not None and aspect is not None:
        x0, y0, x1, y1 = box
        if not (_near((x1 - x0) / max(1, y1 - y0), aspect) and _paired(x0, w - x1, w) and _paired(y0, h - y1, h)):
            # not a window of the picture's aspect centred in the frame: the bands took some of the picture's own
            # dark ground (see above) — no bars in a frame of the picture's aspect, else the centred box of that
            # aspect when all outside it is uniform
            return None if _near(w / h, aspect) else (aspect_box(frames, aspect, samples=samples) or box)
    if box is None and aspect is not None:
        box = aspect_box(frames, aspect, samples=samples)
    return box


def _near(a: float, aspect: float) -> bool:
    return abs(a - aspect) <= ASPECT_SLACK * aspect


def _paired(a: int, b: int, size: int) -> bool:
    """Two opposite bars of one window: the same width within 2 px + 2% of the side."""
    return abs(a - b) <= 2 + 0.02 * size


ASPECT_SLACK = 0.02
""":func:`aspect_box` leaves frames whose aspect is within this share of the picture's alone (a codec's even
sizes, a crop's rounding: the camera alignment absorbs those)."""
STRIP_EDGE = 2
"""Lines of a strip next to the picture that :func:`aspect_box` does not require uniform (a codec blends them)."""


def aspect_box(frames: Sequence[np.ndarray], aspect: float, *, samples: int = SAMPLES,
               tol: int = TIGHT_TOL) -> tuple[int, int, int, int] | None:
    """(x0, y0, x1, y1) of the centred box of ``aspect`` (width / height) in the frames, when their own aspect
    differs from it by more than :data:`ASPECT_SLACK` and what lies outside that box is uniform: each of the two
    strips (less :data:`STRIP_EDGE` lines next to the box) has ≥ :data:`LINE_FRAC` of its pixels within ``tol``
    of its median colour in every sampled frame, that colour the same within ``tol`` throughout. None when the
    aspects agree, a strip is thinner than :data:`MIN_BAR` or not uniform (content there: the frame is the picture
    stretched or cropped), or the frames cannot be read."""
    picked = [np.asarray(frames[i]) for i in sample_indices(len(frames), samples)]
    if not picked or aspect <= 0 or any(f.ndim != 3 or f.shape[2] < 3 or f.shape != picked[0].shape
                                        for f in picked):
        return None
    h, w = picked[0].shape[:2]
    if abs(w / h - aspect) <= ASPECT_SLACK * aspect:
        return None
    if w / h > aspect:  # a pillarbox: the picture is narrower
        pw = int(round(h * aspect))
        x0 = (w - pw) // 2
        box, strips = (x0, 0, x0 + pw, h), (np.s_[:, :x0 - STRIP_EDGE], np.s_[:, x0 + pw + STRIP_EDGE:])
    else:
        ph = int(round(w / aspect))
        y0 = (h - ph) // 2
        box, strips = (0, y0, w, y0 + ph), (np.s_[:y0 - STRIP_EDGE], np.s_[y0 + ph + STRIP_EDGE:])
    if max(box[0], box[1]) < MIN_BAR + STRIP_EDGE or box[2] - box[0] < MIN_KEEP * w or box[3] - box[1] < MIN_KEEP * h:
        return None
    for where in strips:
        first = None
        for f in picked:
            px = f[where][..., :3].reshape(-1, 3).astype(np.int16)
            if not len(px):
                return None
            c = np.median(px, axis=0)
            if first is None:
                first = c
            if np.abs(c - first).max() > tol or (np.abs(px - c).max(axis=1) <= tol).mean() < LINE_FRAC:
                return None
    return box


def _box(h: int, w: int, found: dict, tol: int) -> tuple[int, int, int, int] | None:
    bars = {k: 0 for k in found}
    for a, b, n in (("top", "bottom", h), ("left", "right", w)):
        for side, other in ((a, b), (b, a)):
            band, shares = found[side]
            if band.width < MIN_BAR:
                continue
            if max(band.colour) < DARK_LEVEL:
                bars[side] = band.width
                continue
            ob, oshares = found[other]
            paired = (ob.width >= MIN_BAR and _paired(ob.width, band.width, n)
                      and max(abs(x - y) for x, y in zip(band.colour, ob.colour, strict=True)) <= tol)
            if paired and _edged(shares, band.width) and _edged(oshares, ob.width):
                bars[side] = band.width
    x0, y0, x1, y1 = bars["left"], bars["top"], w - bars["right"], h - bars["bottom"]
    if y1 - y0 < MIN_KEEP * h or x1 - x0 < MIN_KEEP * w:
        return None
    if (x0, y0, x1, y1) == (0, 0, w, h):
        return None
    return x0, y0, x1, y1


def crop(frames: Sequence[np.ndarray], box: tuple[int, int, int, int] | None) -> list[np.ndarray]:
    """Every frame cut to ``box`` = (x0, y0, x1, y1) (unchanged when None)."""
    if box is None:
        return [np.asarray(f) for f in frames]
    x0, y0, x1, y1 = box
    return [np.asarray(f)[y0:y1, x0:x1] for f in frames]


def picture_aspect(gt_end, options: dict) -> float | None:  # noqa: ANN001
    """The task's picture aspect (width / height) a check knows: the caller's ``aspect`` option (the suite passes
    its render's), else the reference image's, else None."""
    if options.get("aspect"):
        return float(options["aspect"])
    shape = getattr(gt_end, "shape", None)
    return float(shape[1]) / float(shape[0]) if shape is not None and len(shape) >= 2 and shape[0] else None
