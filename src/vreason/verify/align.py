"""Global alignment of a frame to a reference (issue 24, principle 5): camera geometry and exposure.

:func:`align` estimates a **similarity** transform (rotation, uniform zoom, shift) that maps the frame onto the
reference — the video's first frame or a re-rendering of the state the frame should show — and a per-channel
**gain/offset** (exposure, white balance), and returns the warp and the aligned, photometrically corrected frame.

Geometry, on a grey copy of at most 640 px: :func:`cv2.findTransformECC` (``MOTION_AFFINE``, Gaussian-smoothed,
coarse to fine at ¼ and ½ of the working size: :data:`SEARCH_LEVELS`) started from the phase-correlation shift (and
from the identity when that shift exceeds 2 px); ORB features matched with RANSAC
(:func:`cv2.estimateAffinePartial2D`) give another candidate. Each is projected onto the nearest similarity (a
camera does not shear); the candidate whose warped frame correlates best with the reference wins and is then refined
to sub-pixel precision by Gauss–Newton on a similarity + clipped exposure
(:func:`vreason.verify.refine.refine_similarity`). Estimates beyond :data:`MAX_ROT_DEG`, :data:`MAX_ZOOM` and
:data:`MAX_SHIFT` are not candidates (a scene turned by 10° is not a camera wobble); with none left (a blank or
featureless frame, or one correlating below :data:`MIN_CORR`) the identity is returned with ``ok`` False.
(:func:`cv2.phaseCorrelate` applies its window to its inputs in place: it is given copies. Before that fix every
later estimate ran on Hanning-windowed images, which is why ECC from a rendering stopped 2–4 px off.)

Photometry: a gain and offset per channel between the aligned frame and the reference over the flat pixels both
show (no reference edge within 1 px: edges carry the alignment's residual), fitted on the median observation of
each reference level (what the frame changed must not bend the fit); a channel with too few levels takes the
pooled fit; gains outside 0.6..1.6 or offsets beyond ±60 fall back to the identity. Clipped whites stay white.

Measured (a one-off script: start images of 13 families, rotations ≤ 2°, zooms ≤ 5%, shifts ≤ 8 px, a
3×3 blur, exposure ±10%, noise; seeds 5, 9, 13, 26 frames each): corner displacement error max 1.9 / median
0.65 px before the phase-correlation fix and the refinement, max 0.28 / median 0.02 px after.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np

from vreason.verify.exposure import flat_mask, gain_offset, undo_gain  # noqa: F401  (re-exported)
from vreason.verify.refine import refine_similarity

MAX_ROT_DEG = 3.0
MAX_ZOOM = 0.08
MAX_SHIFT = 0.1
"""Largest shift trusted, as a fraction of the reference's longer side."""
WORK = 640
MIN_CORR = 0.3
"""A candidate warp must leave the warped frame correlated with the reference at least this much."""
STRETCH = 0.015
"""``align(stretch=True)``: the largest stretch of the frame's axes (x by 1 + e, y by 1 − e, |e| ≤ this). A
letterbox crop keeps whole rows, the bars' blended edge rows included, so the crop enlarged back is scaled in x
and y differently (a 9:16 frame decoded at 360×640: the picture's 202.5 rows cropped as 204, y 0.7% off x)."""


@dataclass
class Alignment:
    """A frame brought onto its reference."""

    warp: np.ndarray
    """2×3 float matrix mapping frame pixel coordinates to reference pixel coordinates."""
    aligned: np.ndarray
    """The frame warped onto the reference's grid and photometrically corrected (uint8, reference's size)."""
    gain: np.ndarray = field(default_factory=lambda: np.ones(3, np.float32))
    offset: np.ndarray = field(default_factory=lambda: np.zeros(3, np.float32))
    """Per channel: frame ≈ gain · reference + offset (undone in ``aligned``)."""
    valid: np.ndarray | None = None
    """Bool mask of the reference's pixels the frame covers (False where the warp brought in the border)."""
    ok: bool = True
    method: str = "ecc"

    @property
    def rotation_deg(self) -> float:
        return float(np.degrees(np.arctan2(self.warp[1, 0], self.warp[0, 0])))

    @property
    def zoom(self) -> float:
        """Scale from frame to reference (1.05: the frame is 5% smaller than the reference)."""
        return float(np.hypot(self.warp[0, 0], self.warp[1, 0]))

    @property
    def stretch(self) -> float:
        """How much more the warp scales the frame's y axis than its x axis, relative (0 for a similarity)."""
        sx, sy = np.hypot(self.warp[0, 0], self.warp[1, 0]), np.hypot(self.warp[0, 1], self.warp[1, 1])
        return float(sy / sx - 1) if sx > 0 else 0.0

    def as_json(self) -> dict:
        out = {"ok": self.ok, "method": self.method, "rotation_deg": round(self.rotation_deg, 3),
               "zoom": round(self.zoom, 4), "shift": [round(float(v), 2) for v in self.warp[:, 2]],
               "gain": [round(float(g), 3) for g in self.gain], "offset": [round(float(o), 2) for o in self.offset]}
        if abs(self.stretch) >= 5e-5:
            out["stretch"] = round(self.stretch, 4)
        return out


def _grey(img: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    import cv2

    g = img if img.ndim == 2 else cv2.cvtColor(np.ascontiguousarray(img[..., :3]), cv2.COLOR_RGB2GRAY)
    if (g.shape[1], g.shape[0]) != size:
        g = cv2.resize(g, size, interpolation=cv2.INTER_AREA)
    return g.astype(np.float32)


def _similar(m: np.ndarray) -> np.ndarray:
    """The similarity nearest to a 2×3 affine (shear and anisotropic scale dropped)."""
    a = (m[0, 0] + m[1, 1]) / 2
    b = (m[1, 0] - m[0, 1]) / 2
    return np.array([[a, -b, m[0, 2]], [b, a, m[1, 2]]], dtype=np.float64)


def _scaled(m: np.ndarray, s: float) -> np.ndarray:
    """A 2×3 warp estimated on images scaled by ``s``, expressed at full size (and vice versa with 1/s)."""
    out = m.astype(np.float64).copy()
    out[:, 2] *= s
    return out


def _ecc(frame_g: np.ndarray, ref_g: np.ndarray, init: np.ndarray,
         mask: np.ndarray | None = None, levels: tuple[int, ...] = (4, 2, 1)) -> tuple[np.ndarray, float] | None:
    """ECC affine warp mapping ref coordinates to frame coordinates (OpenCV's convention), coarse to fine
    (``levels``: the downscale factors in turn); ``mask``: the reference's pixels to match (e.g. what never
    changes in the scene)."""
    import cv2

    warp = init.astype(np.float32)
    cc = -1.0
    crit = (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 80, 1e-5)
    for level in levels:
        h, w = ref_g.shape[0] // level, ref_g.shape[1] // level
        if min(h, w) < 16:
            continue
        r = cv2.resize(ref_g, (w, h), interpolation=cv2.INTER_AREA)
        f = cv2.resize(frame_g, (w, h), interpolation=cv2.INTER_AREA)
        wl = _scaled(warp, 1 / level).astype(np.float32)
        m = None if mask is None else cv2.resize(mask.astype(np.uint8), (w, h), interpolation=cv2.INTER_NEAREST)
        try:
            cc, wl = cv2.findTransformECC(r, f, wl, cv2.MOTION_AFFINE, crit, m, 5)
        except cv2.error:
            return None
        warp = _scaled(wl, level).astype(np.float32)
    return warp.astype(np.float64), float(cc)


def _orb(frame_u8: np.ndarray, ref_u8: np.ndarray) -> np.ndarray | None:
    """ORB + RANSAC partial affine mapping ref coordinates to frame coordinates, or None."""
    import cv2

    cv2.setRNGSeed(20261127)  # RANSAC draws from OpenCV's global generator: the same frames, the same warp
    orb = cv2.ORB_create(1500)
    k1, d1 = orb.detectAndCompute(ref_u8, None)
    k2, d2 = orb.detectAndCompute(frame_u8, None)
    if d1 is None or d2 is None or len(k1) < 8 or len(k2) < 8:
        return None
    matches = cv2.BFMatcher(cv2.NORM_HAMMING, crossCheck=True).match(d1, d2)
    if len(matches) < 8:
        return None
    src = np.float32([k1[m.queryIdx].pt for m in matches])
    dst = np.float32([k2[m.trainIdx].pt for m in matches])
    m, inl = cv2.estimateAffinePartial2D(src, dst, method=cv2.RANSAC, ransacReprojThreshold=2.0)
    if m is None or inl is None or int(inl.sum()) < 8:
        return None
    return m.astype(np.float64)


def _score(frame_g: np.ndarray, ref_g: np.ndarray, ref_to_frame: np.ndarray) -> float:
    """Correlation of the reference with the frame warped onto it (similarity part of the warp), over the
    pixels the frame covers (unsmoothed: thin lines a few px off must cost): how well a candidate explains it."""
    import cv2

    h, w = ref_g.shape
    m = _similar(ref_to_frame)
    warped = cv2.warpAffine(frame_g, m, (w, h), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP)
    valid = cv2.warpAffine(np.ones((h, w), np.float32), m, (w, h), flags=cv2.INTER_NEAREST | cv2.WARP_INVERSE_MAP) > 0
    valid = cv2.erode(valid.astype(np.uint8), np.ones((3, 3), np.uint8)) > 0
    a, b = warped[valid], ref_g[valid]
    if a.size < 100 or a.std() < 1e-6 or b.std() < 1e-6:
        return -1.0
    return float(np.corrcoef(a, b)[0, 1])


def _invert(m: np.ndarray) -> np.ndarray:
    import cv2

    return cv2.invertAffineTransform(m.astype(np.float64))


def _plausible(m_frame_to_ref: np.ndarray, size: tuple[int, int]) -> bool:
    rot = abs(np.degrees(np.arctan2(m_frame_to_ref[1, 0], m_frame_to_ref[0, 0])))
    zoom = float(np.hypot(m_frame_to_ref[0, 0], m_frame_to_ref[1, 0]))
    w, h = size
    c = m_frame_to_ref[:, :2] @ np.array([w / 2, h / 2]) + m_frame_to_ref[:, 2] - np.array([w / 2, h / 2])
    return rot <= MAX_ROT_DEG and abs(zoom - 1) <= MAX_ZOOM and float(np.hypot(*c)) <= MAX_SHIFT * max(w, h)


SEARCH_LEVELS = (4, 2)
""":func:`align`'s ECC candidates: the downscale factors fitted in turn. The full working size is left to
:func:`vreason.verify.refine.refine_similarity`, which polishes the winner there anyway; the full-size ECC level
cost three quarters of the search's ECC time (16× the pixels of the quarter level) and moved no camera
(``benchmarks/bench_align.py``)."""

FAR_GAIN = 0.05
"""A refinement that moves the picture's corners farther than :data:`vreason.verify.refine.MAX_STEP_PX` is kept
when the frame warped by it correlates with the reference at least this much better than by the candidate it
started from (:func:`_score`). On a page holding one line of text, ORB's few matches gave a camera 2.8% short in
zoom and 0.8° off in rotation (correlation 0.84), ECC locked on nothing, and Gauss–Newton from ORB's camera
found the true one (0.98) 17 px away at a corner: rejected as a divergence, the camera left a glyph 39 px
unexplained (``tests/test_verify_scene.py``, an honest 0.66° turn and 3.7% zoom, VREASON_ADV_SEED=198598768)."""

QUICK_CORR = 0.995
"""``align(quick=True)``: a frame correlating this well with the reference unmoved, compared at half the
working size (:func:`_quick_score`), is taken as unmoved."""


def _quick_score(fr: np.ndarray, ref: np.ndarray, size: tuple[int, int]) -> float:
    """The unmoved frame's correlation with the reference at half the working size. A frame decoded at half
    size and enlarged back (the families that decode at 0.5) correlates 0.9999–1.0 there with the sharp start,
    but only 0.84–0.97 at the full size, which sent every such frame through the full search (≈ 0.4 s). A
    1-px shift still scores ≤ 0.993 at half size, a 2-px shift ≤ 0.98, a 0.5° turn or a 1% zoom ≤ 0.993
    (measured on the oracle's first frames of 6 families × 3 difficulties, seed 11)."""
    half = (max(16, size[0] // 2), max(16, size[1] // 2))
    return _score(_grey(fr, half), _grey(ref, half), np.array([[1, 0, 0], [0, 1, 0]], np.float64))


MEMO = 8
"""How many camera searches :func:`align` remembers (by the frame's and the reference's content), and as many
candidate searches: a family's own camera undoing (:func:`vreason.synth.camera.camera_undone`) aligns the first
frame to the start picture as the every-frame explanation did a moment before (the second search is then a
lookup), and ``stretch=True`` after a plain search of the same frame only refines again (the ECC / ORB
candidates and their scores do not depend on it)."""
_memo: OrderedDict = OrderedDict()
_memo_lock = threading.Lock()


def _remember(key: tuple, make):  # noqa: ANN001, ANN202
    """``make()``, or what it returned for ``key`` among the last :data:`MEMO` × 2 results."""
    with _memo_lock:
        if key in _memo:
            _memo.move_to_end(key)
            return _memo[key]
    got = make()
    with _memo_lock:
        _memo[key] = got
        while len(_memo) > 2 * MEMO:
            _memo.popitem(last=False)
    return got


def _digest(a: np.ndarray) -> bytes:
    return hashlib.blake2b(memoryview(np.ascontiguousarray(a)).cast("B"), digest_size=16).digest() + \
        repr(a.shape).encode()


def align(frame: np.ndarray, ref: np.ndarray, *, photometric: bool = True, quick: bool = False,
          stretch: bool = False) -> Alignment:
    """Align an RGB ``frame`` to an RGB ``ref`` (any sizes: the frame is first resized to the reference's).

    ``quick``: when the unmoved frame already correlates ≥ :data:`QUICK_CORR` with the reference, skip the
    search and return the identity (method ``identity``); a caller that then finds the frame unexplained
    should align it again without ``quick``. ``stretch``: the refinement also fits different x and y scales
    (within :data:`STRETCH`: a letterbox crop enlarged back; method ``…+st``) instead of one zoom. The last
    :data:`MEMO` camera searches are remembered by content (the exposure is fitted on every call)."""
    import cv2

    ref = np.ascontiguousarray(ref[..., :3])
    h, w = ref.shape[:2]
    fr = np.ascontiguousarray(frame[..., :3])
    if fr.shape[:2] != (h, w):
        fr = cv2.resize(fr, (w, h), interpolation=cv2.INTER_AREA)
    key = (_digest(fr), _digest(ref))
    found = _remember((*key, quick, stretch), lambda: _camera(fr, ref, quick, stretch, key))
    ref_to_frame, ok, method = found
    if method == "identity":
        gain, off = gain_offset(fr, ref) if photometric else (np.ones(3, np.float32), np.zeros(3, np.float32))
        return Alignment(warp=ref_to_frame.copy(), aligned=undo_gain(fr, gain, off) if photometric else fr,
                         gain=gain, offset=off, valid=np.ones((h, w), bool), ok=True, method=method)
    warp = _invert(ref_to_frame)  # frame → reference
    flags = cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP
    aligned = cv2.warpAffine(fr, ref_to_frame, (w, h), flags=flags, borderMode=cv2.BORDER_REPLICATE)
    valid = cv2.warpAffine(np.full((h, w), 255, np.uint8), ref_to_frame, (w, h), flags=flags,
                           borderMode=cv2.BORDER_CONSTANT, borderValue=0) > 254
    gain, off = np.ones(3, np.float32), np.zeros(3, np.float32)
    if photometric:
        gain, off = gain_offset(aligned, ref, valid)
        aligned = undo_gain(aligned, gain, off)
    return Alignment(warp=warp, aligned=aligned, gain=gain, offset=off, valid=valid, ok=ok, method=method)


def _camera(fr: np.ndarray, ref: np.ndarray, quick: bool, stretch: bool,
            key: tuple) -> tuple[np.ndarray, bool, str]:
    """:func:`align`'s camera search on a frame already at the reference's size: (reference → frame warp, ok,
    method). ``key``: the frame's and the reference's digests (the candidate search is remembered by them)."""
    h, w = ref.shape[:2]
    s = min(1.0, WORK / max(w, h))
    size = (max(16, int(round(w * s))), max(16, int(round(h * s))))
    rg, fg = _grey(ref, size), _grey(fr, size)
    blank = float(fg.std()) < 2.0 or float(rg.std()) < 2.0  # a blank frame (or reference): nothing to align on
    ident = np.array([[1, 0, 0], [0, 1, 0]], np.float64)
    if quick and not blank and _quick_score(fr, ref, size) >= QUICK_CORR:
        return ident, True, "identity"
    best = None if blank else _remember((*key, "candidates", SEARCH_LEVELS, WORK),
                                               lambda: _candidates(fg, rg, s, (w, h)))
    if best is None:
        return ident, False, "none"
    m, method = best
    start = _similar(m)
    fine = refine_similarity(fg, rg, start, STRETCH if stretch else 0.0,
                             far=lambda f: _score(fg, rg, f) >= _score(fg, rg, start) + FAR_GAIN)
    if fine is not None and _plausible(_invert(_scaled(fine, 1 / s)), (w, h)):
        m, method = fine, method + ("+gn+st" if stretch else "+gn")
    ref_to_frame = _scaled(m, 1 / s) if stretch and method.endswith("+st") else _similar(_scaled(m, 1 / s))
    if not _plausible(_invert(ref_to_frame), (w, h)):
        return ident, False, method
    return ref_to_frame, True, method


def _candidates(fg: np.ndarray, rg: np.ndarray, s: float, size: tuple[int, int]) -> tuple[np.ndarray, str] | None:
    """The best-correlating plausible candidate (working-size warp, method) of ECC from the phase-correlation
    shift (and from the identity when that shift exceeds 2 px) and ORB + RANSAC, or None."""
    import cv2

    ident = np.array([[1, 0, 0], [0, 1, 0]], np.float64)
    win = cv2.createHanningWindow((fg.shape[1], fg.shape[0]), cv2.CV_32F)
    (dx, dy), _ = cv2.phaseCorrelate(rg.copy(), fg.copy(), win)  # it applies the window in place
    init = np.array([[1, 0, dx], [0, 1, dy]], np.float64)
    inits = [init] + ([ident] if np.hypot(dx, dy) > 2 else [])  # from the identity too when they differ
    cands = [(t[0], "ecc") for t in (_ecc(fg.copy(), rg.copy(), i, levels=SEARCH_LEVELS) for i in inits)
             if t is not None]
    orb = _orb(np.clip(fg, 0, 255).astype(np.uint8), np.clip(rg, 0, 255).astype(np.uint8))
    if orb is not None:  # (ECC from ORB's estimate is left to the final refinement)
        cands.append((orb, "orb"))
    scored = [(c, m, how) for m, how in cands if _plausible(_invert(_similar(_scaled(m, 1 / s))), size)
              and (c := _score(fg, rg, m)) >= MIN_CORR]
    if not scored:
        return None
    _, m, method = max(scored, key=lambda t: t[0])
    return m, method
