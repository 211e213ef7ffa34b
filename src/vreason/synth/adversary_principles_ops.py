"""Generic image operations for the principle generators (:mod:`vreason.synth.adversary_principles`).

Everything here reads only a family's oracle video: the background colour, where the content is, the
*free* region (every pixel the oracle ever changes, dilated — where the answer or the process happens,
so a cheat placed outside it is unexplained content in any family), and the objects (connected
components of non-background pixels)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vreason.synth.adversary_principles import NotApplicable

CHANGE = 25
"""A pixel differs when any channel moves by more than this (0..255)."""
FREE_MARGIN = 10
"""Pixels of dilation around what the oracle changes (the free region)."""
VISIBLE = 20.0
"""A cheat's mean visible change over its pixels (largest channel, 0..255) must reach this."""


def diff_mask(a: np.ndarray, b: np.ndarray, thr: int = CHANGE) -> np.ndarray:
    return np.abs(a.astype(np.int16) - b.astype(np.int16)).max(axis=2) > thr


def dilate(mask: np.ndarray, px: int) -> np.ndarray:
    import cv2

    if px <= 0:
        return mask
    k = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * px + 1, 2 * px + 1))
    return cv2.dilate(mask.astype(np.uint8), k) > 0


def background(frame: np.ndarray) -> np.ndarray:
    """The most common colour of the frame."""
    flat = frame.reshape(-1, 3)
    keys = (flat[:, 0].astype(np.int64) << 16) | (flat[:, 1].astype(np.int64) << 8) | flat[:, 2]
    vals, counts = np.unique(keys, return_counts=True)
    k = int(vals[np.argmax(counts)])
    return np.array([(k >> 16) & 255, (k >> 8) & 255, k & 255], np.uint8)


@dataclass
class Scene:
    """What the generators know about an instance, from its oracle video alone."""

    frames: list[np.ndarray]
    bg: np.ndarray
    free: np.ndarray
    """Pixels the oracle changes at some frame (dilated): the answer's / process's region."""
    changed: np.ndarray
    """Pixels the oracle changes at some frame (not dilated)."""
    content: tuple[int, int, int, int]
    """x0, y0, x1, y1 of the first frame's non-background pixels."""

    @property
    def shape(self) -> tuple[int, int]:
        return self.frames[0].shape[:2]


_SCENES: dict[int, tuple[list[np.ndarray], Scene]] = {}


def scene(frames: list[np.ndarray]) -> Scene:
    """The scene of an oracle video (cached for the last few videos: a kind's redraws reuse it)."""
    hit = _SCENES.get(id(frames))
    if hit is not None and hit[0] is frames:
        return hit[1]
    sc = _scene(frames)
    if len(_SCENES) > 8:
        _SCENES.clear()
    _SCENES[id(frames)] = (frames, sc)
    return sc


def _scene(frames: list[np.ndarray]) -> Scene:
    first = frames[0]
    bg = background(first)
    stack = np.stack(frames)
    changed = (stack.max(axis=0) - stack.min(axis=0)).max(axis=2) > CHANGE  # uint8: max ≥ min
    fg = np.abs(first.astype(np.int16) - bg.astype(np.int16)).max(axis=2) > CHANGE
    ys, xs = np.nonzero(fg | changed)
    if len(xs) == 0:
        h, w = first.shape[:2]
        box = (0, 0, w, h)
    else:
        box = (int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1)
    return Scene(list(frames), bg, dilate(changed, FREE_MARGIN), changed, box)


@dataclass
class Obj:
    mask: np.ndarray
    box: tuple[int, int, int, int]
    area: int


def objects(frame: np.ndarray, bg: np.ndarray, *, min_area: int = 30, max_frac: float = 0.35) -> list[Obj]:
    """Connected components of non-background pixels, not larger than ``max_frac`` of the frame's sides."""
    import cv2

    fg = (np.abs(frame.astype(np.int16) - bg.astype(np.int16)).max(axis=2) > CHANGE).astype(np.uint8)
    n, lab, stats, _ = cv2.connectedComponentsWithStats(fg, connectivity=8)
    h, w = frame.shape[:2]
    out = []
    for i in range(1, n):
        x, y, bw, bh, area = (int(v) for v in stats[i])
        if area < min_area or bw > max_frac * w or bh > max_frac * h:
            continue
        out.append(Obj(lab == i, (x, y, x + bw, y + bh), area))
    return out


def static_objects(sc: Scene, **kw) -> list[Obj]:
    """Objects of the first frame that the oracle never changes and that are not the scene's main
    structure (each under 30% of the first frame's non-background pixels: moving the whole board is a
    camera move, not a changed element)."""
    fg = int((np.abs(sc.frames[0].astype(np.int16) - sc.bg.astype(np.int16)).max(axis=2) > CHANGE).sum())
    kw.setdefault("max_frac", 1.0)
    return [o for o in objects(sc.frames[0], sc.bg, **kw)
            if not (o.mask & sc.changed).any() and o.area < 0.3 * max(fg, 1)]


def place(sc: Scene, rng: np.random.Generator, w: int, h: int, *, avoid: np.ndarray | None = None,
          tries: int = 200) -> tuple[int, int]:
    """Top-left of a ``w``×``h`` box inside the content, not touching the free region (nor ``avoid``)."""
    x0, y0, x1, y1 = sc.content
    H, W = sc.shape
    bad = sc.free if avoid is None else (sc.free | avoid)
    for _ in range(tries):
        if x1 - x0 <= w + 2 or y1 - y0 <= h + 2:
            break
        x = int(rng.integers(x0, x1 - w))
        y = int(rng.integers(y0, y1 - h))
        if x < 0 or y < 0 or x + w > W or y + h > H:
            continue
        if not bad[y:y + h, x:x + w].any():
            return x, y
    raise NotApplicable("no room outside the free region")


def ring_colour(frame: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Median colour of the 3-px ring around ``mask`` (what lies under an object)."""
    ring = dilate(mask, 3) & ~dilate(mask, 1)
    if not ring.any():
        return background(frame)
    return np.median(frame[ring], axis=0).astype(np.uint8)


def blend(frame: np.ndarray, mask: np.ndarray, colour: np.ndarray, alpha: float) -> np.ndarray:
    out = frame.copy()
    src = out[mask].astype(np.float32)
    out[mask] = np.clip(src * (1 - alpha) + np.asarray(colour, np.float32) * alpha + 0.5, 0, 255).astype(np.uint8)
    return out


def visible(before: np.ndarray, after: np.ndarray, mask: np.ndarray) -> float:
    """Mean largest-channel change over ``mask``."""
    if not mask.any():
        return 0.0
    d = np.abs(after.astype(np.int16) - before.astype(np.int16)).max(axis=2)
    return float(d[mask].mean())


FAINT_FLOOR = 12.0
"""A mark's or copy's mean change over its pixels in luma or chroma (:func:`visible_ycc`) must reach this: the
verifiers' most sensitive rule holds a 5×5 mean to 9 levels against the first frame (the honest codec noise,
``frame_check.TOL_PATCH_TEMPORAL``), so a mark fainter than that is no picture any rule could tell from the page.
The largest-RGB-channel measure (:func:`visible`, :data:`VISIBLE`) passed such marks: a light cyan blob at 0.27 on
a light grey page changed red by 20 and luma by 8 (odd-one-out, bench seed 22002), a cyan dot at 0.19 luma by 10
(sorting)."""


def visible_ycc(before: np.ndarray, after: np.ndarray, mask: np.ndarray) -> float:
    """Mean over ``mask`` of the larger change in luma (Y) or chroma (Cr, Cb; BT.601 as the residual measures)."""
    import cv2

    if not mask.any():
        return 0.0
    a, b = (cv2.cvtColor(np.ascontiguousarray(x[..., :3]), cv2.COLOR_RGB2YCrCb).astype(np.int16)
            for x in (before, after))
    return float(np.abs(b - a).max(axis=2)[mask].mean())


def random_colour(rng: np.random.Generator) -> np.ndarray:
    return rng.integers(0, 256, 3).astype(np.uint8)


def shift_mask(mask: np.ndarray, dx: int, dy: int) -> np.ndarray:
    out = np.zeros_like(mask)
    h, w = mask.shape
    ys, xs = np.nonzero(mask)
    ys, xs = ys + dy, xs + dx
    keep = (ys >= 0) & (ys < h) & (xs >= 0) & (xs < w)
    out[ys[keep], xs[keep]] = True
    return out


def paste(frame: np.ndarray, src: np.ndarray, mask: np.ndarray, dx: int, dy: int, alpha: float = 1.0) -> np.ndarray:
    """``src``'s pixels under ``mask`` pasted at an offset, blended with ``alpha``."""
    out = frame.copy()
    h, w = mask.shape
    ys, xs = np.nonzero(mask)
    ty, tx = ys + dy, xs + dx
    keep = (ty >= 0) & (ty < h) & (tx >= 0) & (tx < w)
    ys, xs, ty, tx = ys[keep], xs[keep], ty[keep], tx[keep]
    a = src[ys, xs].astype(np.float32)
    b = out[ty, tx].astype(np.float32)
    out[ty, tx] = np.clip(a * alpha + b * (1 - alpha) + 0.5, 0, 255).astype(np.uint8)
    return out


def same_picture(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether the rendering residual explains picture ``a`` by ``b`` (:func:`vreason.verify.residual.residual`,
    its default tolerances) as it is or once a camera move brings it onto ``b`` (:func:`vreason.verify.align.align`,
    the picture's outer 4 px not judged): the rule a verifier's scene holds a frame of the task's picture to
    (principle 3: the start image within the honest tolerances), so no verifier can tell the two apart as pictures
    of the task. A board that is its own mirror image but sits off the middle mirrors to the same board shifted:
    odd-one-out upside down, bench seed 22004, passed as a camera move."""
    from vreason.verify.align import align
    from vreason.verify.residual import residual

    if residual(a, b).explained():
        return True
    al = align(a, b)
    if not al.ok:
        return False
    h, w = b.shape[:2]
    inner = np.zeros((h, w), bool)
    inner[4:h - 4, 4:w - 4] = True
    valid = inner if al.valid is None else (inner & al.valid)
    return residual(al.aligned, b, valid=valid).explained()


def differs(a: list[np.ndarray], b: list[np.ndarray], min_px: int = 40) -> bool:
    """Some frame of ``a`` has ≥ ``min_px`` pixels changed against the same frame of ``b``."""
    return any(int(diff_mask(x, y, 40).sum()) >= min_px for x, y in zip(a, b, strict=False))
