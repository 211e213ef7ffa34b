"""The sliding puzzle's board: colours, geometry, legal moves, the shortest solution and the painter of a
state (shared by the family's renderer and its verifier, which reads every frame against these renders)."""

from __future__ import annotations

from collections import deque
from typing import Any

import numpy as np

from vreason.synth.base import RenderConfig
from vreason.synth.draw import canvas

BG = (228, 224, 216)
BOARD = (52, 52, 62)
SIZES = {"easy": 3, "medium": 3, "hard": 4}
MOVES = {"easy": (1, 1), "medium": (2, 3), "hard": (3, 4)}


def tile_colors(count: int) -> list[list[int]]:
    """``count`` well separated colours (hue steps, alternating brightness)."""
    import cv2

    out = []
    for i in range(count):
        hue = int(round(180 * i / count)) % 180
        val = 235 if i % 2 == 0 else 165
        px = np.array([[[hue, 200, val]]], np.uint8)
        out.append([int(c) for c in cv2.cvtColor(px, cv2.COLOR_HSV2RGB)[0, 0]])
    return out


def geometry(n: int, cfg: RenderConfig) -> dict[str, Any]:
    side = int(round(0.83 * cfg.height)) // n * n
    bx, by = int(0.09 * cfg.width), (cfg.height - side) // 2
    iside = int(round(0.4 * cfg.height)) // n * n
    ix, iy = int(0.68 * cfg.width), (cfg.height - iside) // 2
    return {"n": n, "tile": side // n, "bx": bx, "by": by, "itile": iside // n, "ix": ix, "iy": iy}


def neighbors(n: int, cell: int) -> list[int]:
    r, c = divmod(cell, n)
    out = []
    for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1)):
        rr, cc = r + dr, c + dc
        if 0 <= rr < n and 0 <= cc < n:
            out.append(rr * n + cc)
    return out


def apply_move(arr: tuple[int, ...], cell: int) -> tuple[int, ...]:
    """Slide the tile at ``cell`` into the (adjacent) blank."""
    out = list(arr)
    b = out.index(0)
    out[b], out[cell] = out[cell], 0
    return tuple(out)


def shortest_moves(start: tuple[int, ...], target: tuple[int, ...], n: int, limit: int = 8) -> list[int]:
    """Cells whose tile moves, in order, along a shortest path (breadth-first)."""
    prev: dict[tuple[int, ...], tuple[tuple[int, ...], int] | None] = {start: None}
    q = deque([(start, 0)])
    while q:
        s, d = q.popleft()
        if s == target:
            path = []
            while prev[s] is not None:
                s0, cell = prev[s]  # type: ignore[misc]
                path.append(cell)
                s = s0
            return path[::-1]
        if d >= limit:
            continue
        for cell in neighbors(n, s.index(0)):
            t = apply_move(s, cell)
            if t not in prev:
                prev[t] = (s, cell)
                q.append((t, d + 1))
    raise ValueError("target not reachable within the move limit")


def _sprite(num: int, color: list[int], size: int) -> np.ndarray:
    import cv2

    img = canvas(size, size, BOARD)
    pad = max(2, size // 25)
    cv2.rectangle(img, (pad, pad), (size - pad - 1, size - pad - 1), tuple(color), -1)
    text = str(num)
    scale = size / 60
    thick = max(1, int(round(size / 30)))
    (tw, th), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, scale, thick)
    ink = (20, 20, 20) if sum(color) > 420 else (250, 250, 250)
    cv2.putText(img, text, ((size - tw) // 2, (size + th) // 2), cv2.FONT_HERSHEY_SIMPLEX, scale, ink, thick,
                cv2.LINE_AA)
    return img


class Painter:
    """Renders boards of one instance (sprites and the static background cached)."""

    def __init__(self, state: dict[str, Any], cfg: RenderConfig):
        import cv2

        self.s, self.cfg = state, cfg
        n, t = state["n"], state["tile"]
        colors = state["colors"]
        self.sprites = {k: _sprite(k, colors[k - 1], t) for k in range(1, n * n)}
        bg = np.empty((cfg.height, cfg.width, 3), np.uint8)
        bg[:] = BG
        bx, by = state["bx"], state["by"]
        bg[by:by + n * t, bx:bx + n * t] = BOARD
        it, ix, iy = state["itile"], state["ix"], state["iy"]
        bg[iy:iy + n * it, ix:ix + n * it] = BOARD
        for cell, k in enumerate(state["target"]):
            if k:
                r, c = divmod(cell, n)
                bg[iy + r * it:iy + (r + 1) * it, ix + c * it:ix + (c + 1) * it] = _sprite(k, colors[k - 1], it)
        cv2.putText(bg, "target", (ix, iy - 10), cv2.FONT_HERSHEY_SIMPLEX, 0.6, (60, 60, 60), 1, cv2.LINE_AA)
        self.bg = bg

    def cell_xy(self, cell: int) -> tuple[int, int]:
        r, c = divmod(cell, self.s["n"])
        return self.s["bx"] + c * self.s["tile"], self.s["by"] + r * self.s["tile"]

    def board(self, arr: tuple[int, ...] | list[int], moving: tuple[int, int, float] | None = None) -> np.ndarray:
        """The frame for arrangement ``arr``; ``moving`` = (from_cell, to_cell, progress) of one tile."""
        img = self.bg.copy()
        t = self.s["tile"]
        skip = moving[0] if moving else -1
        for cell, k in enumerate(arr):
            if k and cell != skip:
                x, y = self.cell_xy(cell)
                img[y:y + t, x:x + t] = self.sprites[k]
        if moving:
            a, b, p = moving
            (xa, ya), (xb, yb) = self.cell_xy(a), self.cell_xy(b)
            x, y = int(round(xa + (xb - xa) * p)), int(round(ya + (yb - ya) * p))
            img[y:y + t, x:x + t] = self.sprites[arr[a]]
        return img

    def play(self, start: tuple[int, ...], cells: list[int]) -> list[np.ndarray]:
        """Frames of the moves (tile at each cell of ``cells`` slides into the blank), holds around."""
        n_frames = self.cfg.n_frames
        m = max(1, len(cells))
        slide = int(min(10, max(4, (n_frames - 14) // m - 3)))
        frames = [self.board(start)] * 6
        arr = start
        for cell in cells:
            blank = arr.index(0)
            for j in range(1, slide):
                p = j / slide
                frames.append(self.board(arr, (cell, blank, p * p * (3 - 2 * p))))
            arr = apply_move(arr, cell)
            frames += [self.board(arr)] * 3
        frames += [frames[-1]] * max(0, n_frames - len(frames))
        return frames[:n_frames]
