"""OCR for the TiViBench checks: rapidocr (extra ``ocr``), recognition on crops, NFKC-normalised text.

Whole-image OCR is unreliable on isolated digits (``7`` or ``1`` missed or read as ``<``); recognition on
a crop holding one item or one line of text is reliable (docs/tivibench.md). The checks therefore locate
cells / boxes / lines with OpenCV first and ask the engine only to *recognise* each crop. Several crops of
single characters can be read in one call as a strip (:meth:`OcrEngine.read_strip`): the recogniser's input
is at least 320 px wide anyway, so a strip of nine 48-px cells costs about as much as one cell.

:func:`get_ocr` returns ``None`` when the extra is not installed: a check then returns ``passed=None`` with
:data:`NO_OCR` as the reason (the sample is *unscored*, never 0).
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

NO_OCR = ("OCR unavailable: the 'ocr' extra (rapidocr, onnxruntime) is not installed — "
          "install vreason[ocr] to score this sample")
CACHE_SIZE = 4096
"""Recognitions an engine remembers (by the digest of the prepared crop; oldest dropped first)."""
REC_HEIGHT = 48
"""Height crops are scaled to before recognition (the recogniser's input height)."""

_MINUS = {"\u2212": "-", "\u2013": "-", "\u2014": "-", "\u2012": "-", "\u2010": "-", "\u2011": "-"}


def normalise(text: str) -> str:
    """NFKC (full-width digits → ASCII), unicode dashes → ``-``, surrounding whitespace removed."""
    t = unicodedata.normalize("NFKC", text or "")
    for k, v in _MINUS.items():
        t = t.replace(k, v)
    return t.strip()


DIGIT_LOOKALIKES = {**dict.fromkeys("OoDQ", "0"), **dict.fromkeys("Il|/!", "1"), **dict.fromkeys("Zz", "2"),
                    **dict.fromkeys("Ss$", "5"), **dict.fromkeys("Gb", "6"), "T": "7", "B": "8",
                    **dict.fromkeys("gq", "9")}
"""Characters a recogniser gives for a handwritten digit (a slanted 1 read as "/", a 5 as "S", a 0 as "O"…),
the digit each stands for. Measured on real handwritten digits (OpenCV's ``digits.png``) written after "=" of
the suite's arithmetic lines, 40 seeds × 6 lines: 213 of 240 read right before, the misses "2S", "S0", "S2",
"9/", "/1", "/11", "2/", "5/" among them (issue 24, principle 6)."""


def digit_reading(text: str) -> str | None:
    """``text`` read as one whole number written in digits, each look-alike character taken for its digit
    (:data:`DIGIT_LOOKALIKES`): the digits, or None when anything else is left (a sign, a point, an operator
    between two numbers, another letter) or no digit was written at all."""
    t = re.sub(r"\s+", "", normalise(text))
    out = "".join(DIGIT_LOOKALIKES.get(c, c) for c in t)
    if not out.isascii() or not out.isdigit() or not any(c.isdigit() for c in t):
        return None
    return out


@dataclass
class OcrEngine:
    """A rapidocr engine; ``name``/``version`` go into every score's evidence."""

    engine: object
    version: str
    name: str = "rapidocr"
    _seen: dict[bytes, tuple[str, float]] = field(default_factory=dict, repr=False)
    """Recognitions by the digest of the prepared crop: the recogniser is deterministic, and a video's
    answer region is the same picture in most of its frames (checks read it in several frames)."""

    @property
    def backend(self) -> str:
        return f"{self.name}@{self.version}"

    def read(self, crop: np.ndarray) -> tuple[str, float]:
        """Recognise the text of one crop (RGB or grey, dark or light ink): ``(text, confidence)``."""
        return self._recognise(prepare_crop(crop))

    def _recognise(self, img: np.ndarray) -> tuple[str, float]:
        key = hashlib.blake2b(img.tobytes(), digest_size=16, person=repr(img.shape).encode()[:16]).digest()
        hit = self._seen.get(key)
        if hit is not None:
            return hit
        out = self.engine(img, use_det=False, use_cls=False, use_rec=True)
        txts = getattr(out, "txts", None) or ()
        scores = getattr(out, "scores", None) or ()
        text = normalise(" ".join(str(t) for t in txts))
        res = text, float(min(scores)) if scores else 0.0
        if len(self._seen) >= CACHE_SIZE:
            self._seen.pop(next(iter(self._seen)))
        self._seen[key] = res
        return res

    def read_strip(self, crops: Sequence[np.ndarray], gap: int = 24) -> list[str] | None:
        """Single characters of several crops read in one call (crops side by side, ``gap`` px apart):
        one character per crop, or ``None`` when the strip's text does not split into exactly one
        character per crop (the caller then reads the crops one by one)."""
        if not crops:
            return []
        parts = []
        for c in crops:
            p = prepare_crop(c)
            parts.append(p)
            parts.append(np.full((REC_HEIGHT, gap, 3), 255, np.uint8))
        text, _ = self._recognise(prepare_crop(np.concatenate(parts[:-1], axis=1)))
        chars = [ch for ch in text if not ch.isspace()]
        return chars if len(chars) == len(crops) else None

    def lines(self, img: np.ndarray) -> list[tuple[tuple[int, int, int, int], str, float]]:
        """Detection + recognition on a larger image: ``[((x0, y0, x1, y1), text, confidence)]`` in reading
        order (top to bottom, then left to right). Less reliable than :meth:`read` on isolated digits."""
        out = self.engine(np.ascontiguousarray(_rgb(img)), use_det=True, use_cls=False, use_rec=True)
        boxes = getattr(out, "boxes", None)
        if boxes is None:
            return []
        quads = [np.asarray(b, np.float64).reshape(4, 2) for b in boxes][:len(out.txts)]
        res = [((int(b[:, 0].min()), int(b[:, 1].min()), int(b[:, 0].max()), int(b[:, 1].max())),
                normalise(str(t)), float(s)) for b, t, s in zip(quads, out.txts, out.scores, strict=False)]
        if not res:
            return res
        # Reading order in the text's own frame: a page photographed at a slant has lines whose upright
        # boxes interleave (OpenCV's imageTextR.png, turned ~5°: its 2nd line's box centre lies below
        # the 3rd's left end). The slant is the median angle of the detected quads' top edges.
        q = np.stack(quads)
        top = q[:, 1] - q[:, 0]
        ang = float(np.median(np.arctan2(top[:, 1], np.maximum(top[:, 0], 1e-6))))
        ctr = q.mean(axis=1)
        along = ctr[:, 0] * np.cos(ang) + ctr[:, 1] * np.sin(ang)
        across = -ctr[:, 0] * np.sin(ang) + ctr[:, 1] * np.cos(ang)
        heights = np.linalg.norm(q[:, 3] - q[:, 0], axis=1)
        band = max(4.0, float(np.median(heights)) * 0.5)
        order = sorted(range(len(res)), key=lambda i: (int(across[i] // band), along[i]))
        return [res[i] for i in order]


@functools.lru_cache(maxsize=1)
def get_ocr() -> OcrEngine | None:
    """The shared OCR engine, or ``None`` when the ``ocr`` extra is missing (imported lazily)."""
    try:
        from rapidocr import RapidOCR
    except ImportError:
        return None
    from importlib.metadata import PackageNotFoundError, version

    try:
        ver = version("rapidocr")
    except PackageNotFoundError:
        ver = "unknown"
    logging.getLogger("RapidOCR").setLevel(logging.ERROR)
    params: dict[str, object] = {"Det.limit_type": "max", "Det.limit_side_len": 960, "Global.log_level": "error"}
    threads = os.environ.get("VREASON_CODEC_THREADS")
    if threads:  # a worker of a pool that fills the cores: one inference thread, not one per core each
        params["EngineConfig.onnxruntime.intra_op_num_threads"] = int(threads)
        params["EngineConfig.onnxruntime.inter_op_num_threads"] = 1
    eng = RapidOCR(params=params)
    return OcrEngine(engine=eng, version=ver)


# ------------------------------------------------------------------ crops
def _rgb(img: np.ndarray) -> np.ndarray:
    a = np.asarray(img)
    if a.ndim == 2:
        a = np.repeat(a[:, :, None], 3, axis=2)
    return a[:, :, :3].astype(np.uint8, copy=False)


def grey(img: np.ndarray) -> np.ndarray:
    import cv2

    a = np.asarray(img)
    return a if a.ndim == 2 else cv2.cvtColor(np.ascontiguousarray(a[:, :, :3]), cv2.COLOR_RGB2GRAY)


def ink_mask(img: np.ndarray, min_contrast: float = 40.0) -> np.ndarray:
    """Pixels of ink (the minority side of an Otsu threshold) in a crop; empty when the crop has no
    contrast of at least ``min_contrast`` grey levels (a blank cell, a flat area)."""
    import cv2

    g = grey(img)
    if g.size == 0 or float(np.percentile(g, 99)) - float(np.percentile(g, 1)) < min_contrast:
        return np.zeros(g.shape, bool)
    _, th = cv2.threshold(np.ascontiguousarray(g), 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    dark = th == 0
    return dark if dark.mean() <= 0.5 else ~dark


MAX_GLYPH_PARTS = 12
"""A crop whose ink splits into more 4-connected pieces than this is speckle (noise, texture), not text."""


def glyph_like(img: np.ndarray, min_frac: float = 0.01, max_frac: float = 0.5) -> bool:
    """Whether a crop's ink could be a few characters: between ``min_frac`` and ``max_frac`` of the crop
    and in at most :data:`MAX_GLYPH_PARTS` connected pieces (noise is read as unreadable without OCR)."""
    import cv2

    m = ink_mask(img)
    frac = float(m.mean()) if m.size else 0.0
    if not min_frac <= frac <= max_frac:
        return False
    n, _ = cv2.connectedComponents(m.astype(np.uint8), connectivity=4)
    return n - 1 <= MAX_GLYPH_PARTS


def ink_box(img: np.ndarray, min_px: int = 4) -> tuple[int, int, int, int] | None:
    """(x0, y0, x1, y1) around the ink of a crop, or ``None`` when it holds fewer than ``min_px`` ink pixels."""
    m = ink_mask(img)
    if int(m.sum()) < min_px:
        return None
    ys, xs = np.nonzero(m)
    return int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1


def prepare_crop(crop: np.ndarray, height: int = REC_HEIGHT) -> np.ndarray:
    """A crop as the recogniser likes it: RGB, dark ink on a light margin, scaled to ``height`` px."""
    import cv2

    a = _rgb(crop)
    if a.shape[0] < 2 or a.shape[1] < 2:
        return np.full((height, height, 3), 255, np.uint8)
    g = grey(a)
    m = ink_mask(a)
    if m.any() and float(g[m].mean()) > float(g[~m].mean()):  # light ink on a dark ground: invert
        a = 255 - a
    pad = max(2, a.shape[0] // 6)
    a = cv2.copyMakeBorder(np.ascontiguousarray(a), pad, pad, pad, pad, cv2.BORDER_REPLICATE)
    s = height / a.shape[0]
    w = max(8, int(round(a.shape[1] * s)))
    return cv2.resize(a, (w, height), interpolation=cv2.INTER_AREA if s < 1 else cv2.INTER_CUBIC)


def last_frame(frames, aspect: float | None = None) -> tuple[np.ndarray | None, str]:
    """The last frame as RGB uint8, cut out of letterbox bars (normalised boxes refer to the picture), or
    ``(None, why)`` when there is none or it is not an image. ``aspect``: the picture's width / height when known
    (:func:`vreason.verify.letterbox.content_box`; :func:`vreason.verify.letterbox.picture_aspect`)."""
    from vreason.verify import colour

    if frames is None or len(frames) == 0:
        return None, "no frame to check"
    err = colour.valid_frame(frames[-1])
    if err:
        return None, err
    return colour.content([frames[-1]], aspect=aspect)[0], ""


def crop(frame: np.ndarray, box) -> np.ndarray:
    """The part of ``frame`` inside a normalised :class:`~vreason.verify.annotations.Box` (or the frame)."""
    if box is None:
        return frame
    h, w = frame.shape[:2]
    x0, y0, x1, y1 = box.pixels(w, h)
    return frame[y0:y1, x0:x1]
