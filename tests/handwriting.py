"""Real handwriting and hand-drawn marks composed into the readers' inputs (issue 24, principle 6).

The ink comes from OpenCV's ``digits.png`` (Debian's opencv-doc, fetched by the test set-up, never
committed): 5000 handwritten digits of 20×20 px, white on black, 50 rows of 100, rows ``5k .. 5k+4`` holding
digit ``k``. A digit is cut out of its tile (tight to its ink), scaled, and laid on the picture as dark ink on
paper (the tile's brightness is the ink's opacity; the ink multiplies the paper, so the photo's light and
shading stay on it), so its strokes, slant and stroke width are a real
writer's. Marks (a circle drawn round an option) are drawn as a wobbly closed stroke of varying width, and bars
filled in with a felt marker as overlapping strokes of varying density inside a wobbling, leaning outline.
"""

from __future__ import annotations

import numpy as np

TILE = 20


class Digits:
    """The handwritten digits of ``digits.png``: ``glyph(k, rng)`` → one real sample of digit ``k`` as an
    opacity map in [0, 1] (float32), tight to its ink."""

    def __init__(self, path: str):
        import cv2

        img = cv2.imread(path, cv2.IMREAD_GRAYSCALE)
        assert img is not None and img.shape == (1000, 2000), path
        self.tiles = img.reshape(50, TILE, 100, TILE).transpose(0, 2, 1, 3)

    def glyph(self, k: int, rng: np.random.Generator) -> np.ndarray:
        t = self.tiles[5 * k + int(rng.integers(5)), int(rng.integers(100))].astype(np.float32) / 255
        ys, xs = np.nonzero(t > 0.2)
        return t[ys.min():ys.max() + 1, xs.min():xs.max() + 1]


def write(img: np.ndarray, alpha: np.ndarray, centre: tuple[float, float], height: int,
          ink: tuple[int, int, int]) -> tuple[int, int, int, int]:
    """Lay the opacity map ``alpha`` on ``img`` (in place) as ``ink``, scaled to ``height`` px (aspect kept)
    and centred at ``centre`` (x, y); returns the written box (x0, y0, x1, y1)."""
    import cv2

    s = height / alpha.shape[0]
    w = max(2, int(round(alpha.shape[1] * s)))
    a = np.clip(cv2.resize(alpha, (w, height), interpolation=cv2.INTER_CUBIC), 0, 1)
    x0, y0 = int(round(centre[0] - w / 2)), int(round(centre[1] - height / 2))
    x0, y0 = max(0, x0), max(0, y0)
    x1, y1 = min(img.shape[1], x0 + w), min(img.shape[0], y0 + height)
    a = a[:y1 - y0, :x1 - x0, None]
    region = img[y0:y1, x0:x1].astype(np.float32)  # ink multiplies the paper: the scene's light stays on it
    img[y0:y1, x0:x1] = np.clip(region * (1 - a * (1 - np.asarray(ink, np.float32) / 255)), 0, 255).astype(np.uint8)
    return x0, y0, x1, y1


def write_number(img: np.ndarray, digits: Digits, number: str, rng: np.random.Generator, x: float,
                 mid_y: float, height: int, ink: tuple[int, int, int],
                 align: str = "left", max_width: float | None = None) -> tuple[int, int, int, int]:
    """A number in handwriting: one real sample per digit, each of ``height`` ± 10% px, a little apart and
    off the line, starting at ``x`` (``align="left"``) or centred on it (``"centre"``); returns the box
    around all of it. With ``max_width`` the writer fits the space it has (a cell): the whole number is
    drawn smaller when it would be wider."""
    glyphs = [digits.glyph(int(ch), rng) for ch in number]
    hs = [height * rng.uniform(0.9, 1.1) for _ in glyphs]
    ws = [g.shape[1] * h / g.shape[0] for g, h in zip(glyphs, hs, strict=True)]
    gaps = [rng.uniform(0.12, 0.3) * height for _ in glyphs[1:]] + [0.0]
    fit = 1.0 if max_width is None else min(1.0, max_width / (sum(ws) + sum(gaps)))
    hs, ws, gaps = [int(round(h * fit)) for h in hs], [w * fit for w in ws], [g * fit for g in gaps]
    if align == "centre":
        x -= (sum(ws) + sum(gaps)) / 2
    box = [10 ** 9, 10 ** 9, 0, 0]
    for g, h, w, gap in zip(glyphs, hs, ws, gaps, strict=True):
        b = write(img, g, (x + w / 2, mid_y + rng.uniform(-0.06, 0.06) * height), h, ink)
        box = [min(box[0], b[0]), min(box[1], b[1]), max(box[2], b[2]), max(box[3], b[3])]
        x += w + gap
    return box[0], box[1], box[2], box[3]


def hand_loop(img: np.ndarray, box, rng: np.random.Generator, colour: tuple[int, int, int], width: float,
              kind: str = "ellipse") -> None:
    """A hand-drawn closed mark round ``box`` (x0, y0, x1, y1) in place: an ``ellipse`` (a circled option)
    or a ``box`` (rounded rectangle), its outline wobbling by a few % of its size, its start and end
    overlapping, its stroke width varying ±30%."""
    import cv2

    x0, y0, x1, y1 = box
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    rx, ry = (x1 - x0) / 2, (y1 - y0) / 2
    n = 160
    turn = 2 * np.pi * rng.uniform(1.05, 1.2)
    t = rng.uniform(0, 2 * np.pi) + np.linspace(0, turn, n)
    wob = 1 + sum(rng.uniform(-0.04, 0.04) * np.sin(k * t + rng.uniform(0, 6.3)) for k in (1, 2, 3, 5))
    if kind == "ellipse":
        px, py = cx + 1.3 * rx * np.cos(t) * wob, cy + 1.35 * ry * np.sin(t) * wob
    else:  # a squarish loop: superellipse
        c, s = np.cos(t), np.sin(t)
        px = cx + 1.1 * rx * np.sign(c) * np.abs(c) ** 0.25 * wob
        py = cy + 1.2 * ry * np.sign(s) * np.abs(s) ** 0.25 * wob
    widths = width * (1 + 0.3 * np.sin(t * rng.uniform(1, 3)))
    pts = np.stack([px, py], axis=1)
    for i in range(n - 1):
        p, q = pts[i].round().astype(int), pts[i + 1].round().astype(int)
        cv2.line(img, tuple(int(v) for v in p), tuple(int(v) for v in q), colour,
                 max(1, int(round(widths[i]))), cv2.LINE_AA)


def marker_bar(img: np.ndarray, box, rng: np.random.Generator, ink: tuple[int, int, int]) -> None:
    """A bar filled in by hand with a felt marker over ``box`` (x0, y0, x1, y1; y1 the baseline), in place: its
    sides wobble and lean by up to ~4% of its width, its top by ~3% of its height with the ends rounded by the
    nib; it is filled in overlapping strokes (each stroke's ink a little denser or lighter, ±15%), and the ink
    multiplies the paper, so the photo's light and whatever is printed under it show through."""
    import cv2

    x0, y0, x1, y1 = (float(v) for v in box)
    bw, bh = x1 - x0, y1 - y0
    h, w = img.shape[:2]
    alpha = np.zeros((h, w), np.float32)
    n_strokes = max(3, int(min(bw / 3.0, rng.uniform(4, 9))))  # 4-8 strokes, none under 3 px
    lean = rng.uniform(-0.04, 0.04) * bw
    for k in range(n_strokes):
        t = (k + 0.5) / n_strokes
        x = x0 + t * bw + rng.normal(0, bw * 0.01)
        top = y0 + abs(rng.normal(0, bh * 0.01)) + (abs(t - 0.5) > 0.4) * rng.uniform(0, bh * 0.03)
        nib = bw / n_strokes * rng.uniform(1.3, 1.8)
        stroke = np.zeros((h, w), np.float32)  # a chisel nib: the stroke's ends are cut square
        quad = np.array([[x + lean - nib / 2, top], [x + lean + nib / 2, top], [x + nib / 2, y1], [x - nib / 2, y1]])
        cv2.fillConvexPoly(stroke, np.round(quad * 4).astype(np.int32), 1.0, cv2.LINE_AA, shift=2)
        np.maximum(alpha, stroke * rng.uniform(0.85, 1.0), out=alpha)
    # the pen's edge: clip the strokes to the bar's wobbling outline
    ys = np.arange(h, dtype=np.float32)[:, None]
    xs = np.arange(w, dtype=np.float32)[None, :]
    frac = np.clip((ys - y0) / max(bh, 1.0), 0, 1)
    wob_l = x0 + lean * (1 - frac) + bw * 0.02 * np.sin(ys / max(bh, 1) * rng.uniform(3, 8) + rng.uniform(0, 6))
    wob_r = x1 + lean * (1 - frac) + bw * 0.02 * np.sin(ys / max(bh, 1) * rng.uniform(3, 8) + rng.uniform(0, 6))
    alpha *= np.clip(xs - wob_l + 1, 0, 1) * np.clip(wob_r - xs + 1, 0, 1)
    a = alpha[:, :, None]
    region = img.astype(np.float32)
    img[:] = np.clip(region * (1 - a * (1 - np.asarray(ink, np.float32) / 255)), 0, 255).astype(np.uint8)
