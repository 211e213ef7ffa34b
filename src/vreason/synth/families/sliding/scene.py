"""The sliding puzzle's scene (issue 24): every frame is the board with every tile whole, at most one gliding.

Each aligned frame is colour-corrected and read cell by cell against the tile templates (the family's
:class:`~vreason.synth.families.sliding.check.Reader`). The frame's state is an arrangement (every tile once,
one blank) and, optionally, one tile next to the blank displaced toward it by ``e`` px (0 ≤ e ≤ tile): a glide
part-way, seen from either arrangement. Cells the templates do not match (at most the two cells of one glide)
are resolved by the tiles no other cell shows; the displacement is searched coarse (cells' features every
:data:`COARSE_PX`) then fine (whole pixels over the two cells). The state is re-rendered with the family's
:class:`~vreason.synth.families.sliding.board.Painter` (the renderer's integer glide positions); a frame whose
board cannot be read as such a state is unexplained with the reason, anything else is left to the residual. A
picture decoded smaller than the canvas (a portrait letterbox) is compared with equally softened renderings
(:mod:`vreason.synth.scene_soft`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from vreason.synth.base import RenderConfig
from vreason.synth.scene_soft import soft_size, soften

COARSE_PX = 3
"""Displacements tried on the cells' features (then ±COARSE_PX whole pixels at full size)."""
TRAIL = 2
"""Frames after a tile glided over a pixel that a low-bitrate codec's trail of it is allowed for (judged per pixel
only, ``explain_video(trail=...)``): the ground truth at CRF 35 decoded at half size left a 6×5-px smear of a
gliding tile's and its neighbour's colours in the dark gap two frames after the tile crossed it (hard, frame 9,
``tests/test_synth_families_b.py``)."""


class _Parser:
    def __init__(self, state: dict[str, Any], cfg: RenderConfig):
        from vreason.synth.families.sliding.board import Painter
        from vreason.synth.families.sliding.check import Reader

        self.s = state
        self.p = Painter(state, cfg)
        self.rd = Reader(state, self.p)
        self.n, self.t = int(state["n"]), int(state["tile"])
        self._coarse: dict[tuple[tuple[int, ...], int, int], tuple[np.ndarray, np.ndarray]] = {}

    def render(self, arr: tuple[int, ...], c: int | None, e: int) -> np.ndarray:
        if c is None or e == 0:
            return self.p.board(arr)
        return self.p.board(arr, (c, arr.index(0), e / self.t))

    def candidates(self, d: np.ndarray) -> list[tuple[tuple[int, ...], int | None]] | str:
        """(arrangement, moving cell or None) hypotheses for one frame's cell distances ``d`` (cells, K)."""
        from vreason.synth.families.sliding.board import neighbors

        n2 = self.n * self.n
        best = d.argmin(axis=1)
        matched = d.min(axis=1) <= self.rd.thr
        un = [c for c in range(n2) if not matched[c]]
        reading = [int(v) if matched[c] else -1 for c, v in enumerate(best)]
        seen = [v for v in reading if v >= 0]
        if len(seen) != len(set(seen)):
            return "a tile is seen twice on the board"
        out: list[tuple[tuple[int, ...], int | None]] = []
        if not un:
            arr = tuple(reading)
            out.append((arr, None))
            out += [(arr, c) for c in neighbors(self.n, arr.index(0))]
            return out
        left = sorted(set(range(n2)) - set(seen))
        if len(un) > 2 or len(left) != len(un) or 0 not in left + seen:
            return f"{len(un)} board cells show no tile and no blank"
        fills: list[list[int]] = []  # arrangements completing the reading
        if len(un) == 2 and un[1] in neighbors(self.n, un[0]) and 0 in left:
            k = max(left)
            for ta, tb in ((k, 0), (0, k)):
                arr = list(reading)
                arr[un[0]], arr[un[1]] = ta, tb
                fills.append(arr)
        elif len(un) == 1:
            arr = list(reading)
            arr[un[0]] = left[0]
            fills.append(arr)
        for arr in fills:
            blank = arr.index(0)
            for c in neighbors(self.n, blank):
                if len(un) == 1 and un[0] not in (c, blank):
                    continue  # the glide's two cells include the unread one
                out.append((tuple(arr), c))
        return out or f"board cells {un} cannot be read as one tile gliding"

    def coarse(self, arr: tuple[int, ...], c: int) -> tuple[np.ndarray, np.ndarray]:
        """Displacements and the two cells' features of the tile at ``c`` glided toward the blank."""
        key = (arr, c, 0)
        if key not in self._coarse:
            es = np.arange(0, self.t + 1, COARSE_PX)
            rect = self.rd.region(c, arr.index(0))
            feats = np.stack([self.rd.region_feat(self.render(arr, c, int(e)), rect) for e in es])
            self._coarse[key] = (es, feats)
        return self._coarse[key]

    def parse(self, frame: np.ndarray) -> tuple[np.ndarray, str]:
        """The best re-rendering of ``frame`` (or an empty array and the reason)."""
        fixed = self.rd.correct(frame)
        d = self.rd.cells(fixed)
        cands = self.candidates(d)
        if isinstance(cands, str):
            return np.empty(0), cands
        best: tuple[float, tuple[int, ...], int | None, int] | None = None
        for arr, c in cands:
            if c is None:
                score = 0.0 if len(cands) == 1 else self._full_err(fixed, arr, None, 0)
                if best is None or score < best[0]:
                    best = (score, arr, None, 0)
                continue
            es, feats = self.coarse(arr, c)
            rect = self.rd.region(c, arr.index(0))
            got = self.rd.region_feat(fixed, rect)
            dd = np.abs(feats - got[None]).mean(axis=(1, 2, 3))
            e0 = int(es[int(dd.argmin())])
            for e in range(max(0, e0 - COARSE_PX + 1), min(self.t, e0 + COARSE_PX - 1) + 1):
                score = self._full_err(fixed, arr, c, e)
                if best is None or score < best[0]:
                    best = (score, arr, c, e)
        assert best is not None
        _, arr, c, e = best
        return self.render(arr, c, e), ""

    def _full_err(self, fixed: np.ndarray, arr: tuple[int, ...], c: int | None, e: int) -> float:
        """Mean absolute difference over the board (whole pixels) between ``fixed`` and the rendering."""
        import cv2

        n, t, bx, by = self.n, self.t, self.s["bx"], self.s["by"]
        img = self.render(arr, c, e)
        sl = (slice(by, by + n * t), slice(bx, bx + n * t))
        return float(cv2.norm(fixed[sl], img[sl], cv2.NORM_L1))


def make_scene(state: dict[str, Any], cfg: RenderConfig):
    from vreason.verify.explain import Scene

    if (state.get("width"), state.get("height")) != (cfg.width, cfg.height):
        return None
    ps = _Parser(state, cfg)
    size = soft_size(state, cfg.width)
    start = soften(ps.p.board(tuple(state["start"])), size)
    final = soften(ps.p.board(tuple(state["target"])), size)

    def expect(i: int, frame: np.ndarray) -> tuple[np.ndarray, None] | str:
        img, why = ps.parse(frame)
        return why if why else (soften(img, size), None)

    return Scene(start, expect, final=final, trail=TRAIL)
