"""Sliding puzzle: numbered coloured tiles slide one at a time into the blank to reach a target.

Easy: 3×3, one move; medium: 3×3, 2–3 moves; hard: 4×4, 3–4 moves. The target arrangement is drawn
as a small inset on the right. The solution is a shortest move sequence (breadth-first search),
each tile gliding into the blank.

Verifier (:mod:`vreason.synth.families.sliding.check`): frames are letterbox-cropped, a shake is undone
(registered on the target inset, which never changes) and the colours are corrected (global hue
rotation undone, then an affine colour map fitted on the background and inset, which hold every tile
colour). Every frame's board is read cell by cell against the tile templates; stable readings form a
sequence of arrangements that must start at the start state, end at the target (in the last frame),
and change by single legal moves (a tile next to the blank slides into it; two tiles passing through
each other is not one). Between two arrangements the moving tile must be seen gliding (intermediate
positions matched against renders of the tile part-way), with no other tile changing: a cut or a
fade fails. Settled frames must show nothing the render of their reading does not (marks, scribbles).
Measured tolerances: docs/suite_validity.md.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import Any

import numpy as np

from vreason.synth import frametools as ft
from vreason.synth.base import RenderConfig, TaskFamily, TaskInstance, VerifyResult, family

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

    img = np.empty((size, size, 3), np.uint8)
    img[:] = BOARD
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


def _scramble(rng: np.random.Generator, target: tuple[int, ...], n: int, k: int) -> tuple[int, ...]:
    while True:
        seen, s = {target}, target
        for _ in range(k):
            opts = [apply_move(s, c) for c in neighbors(n, s.index(0))]
            opts = [o for o in opts if o not in seen]
            if not opts:
                break
            s = opts[int(rng.integers(len(opts)))]
            seen.add(s)
        if s != target and len(shortest_moves(s, target, n)) >= max(1, k - 1):
            return s


@family
class Sliding(TaskFamily):
    name = "sliding"
    version = "2"  # 2: checks in seconds and task units, nothing-else-changed, end state held, corrections (issue 11)
    directional = True
    process_rule = True

    def make(self, rng: np.random.Generator, difficulty: str, index: int, seed: int,
             cfg: RenderConfig) -> TaskInstance:
        n = SIZES[difficulty]
        target = tuple(int(v) for v in rng.permutation(n * n))
        k = int(rng.integers(MOVES[difficulty][0], MOVES[difficulty][1] + 1))
        start = _scramble(rng, target, n, k)
        cells = shortest_moves(start, target, n)
        state: dict[str, Any] = {**geometry(n, cfg), "colors": tile_colors(n * n - 1), "start": list(start),
                                 "target": list(target), "solution_moves": cells, "width": cfg.width,
                                 "height": cfg.height}
        frames = Painter(state, cfg).play(start, cells)
        prompt = (
            f"A {n}-by-{n} sliding puzzle of numbered coloured tiles lies flat, with one empty slot. The small "
            "board on the right labelled 'target' shows how the puzzle must end up. Tiles glide one at a time "
            "into the empty slot, never lifted, never jumping and never passing through each other, until the "
            "big board looks exactly like the target. The camera does not move."
        )
        return TaskInstance(family=self.name, difficulty=difficulty, index=index, seed=seed, prompt=prompt,
                            first_frame=frames[0], final_frame=frames[-1], solution=frames, state=state,
                            directional=self.directional, process_rule=self.process_rule)

    def random_motion(self, inst: TaskInstance, rng: np.random.Generator, cfg: RenderConfig) -> list[np.ndarray]:
        """Random legal slides that do not end at the target."""
        st = inst.state
        n, start, target = st["n"], tuple(st["start"]), tuple(st["target"])
        for _ in range(50):
            s, cells, seen = start, [], {start}
            for _ in range(int(rng.integers(1, 4))):
                opts = [c for c in neighbors(n, s.index(0)) if apply_move(s, c) not in seen]
                if not opts:
                    break
                c = opts[int(rng.integers(len(opts)))]
                cells.append(c)
                s = apply_move(s, c)
                seen.add(s)
            if cells and s != target:
                return Painter(st, cfg).play(start, cells)
        return [inst.first_frame] * cfg.n_frames

    def verify(self, frames: list[np.ndarray], state: dict[str, Any], cfg: RenderConfig,
               times: Sequence[float] | None = None) -> VerifyResult:
        from vreason.synth.families.sliding.check import check_video

        frames, bad = ft.usable(frames, cfg)
        if bad is not None:
            return bad
        checks, evidence = check_video(frames, state, Painter(state, cfg))
        dbg = _debug(frames[-1], state, evidence.get("final_reading"))
        return ft.finish(checks, evidence, dbg, goal=("reaches_target",))


def _debug(frame: np.ndarray, state: dict[str, Any], reading: list[int] | None) -> np.ndarray:
    """The last frame with the board reading per cell (green where it matches the target, red where not)."""
    import cv2

    img = frame.copy()
    n, t = state["n"], state["tile"]
    for cell in range(n * n):
        r, c = divmod(cell, n)
        x, y = state["bx"] + c * t, state["by"] + r * t
        got = "?" if reading is None else str(reading[cell])
        ok = reading is not None and reading[cell] == state["target"][cell]
        cv2.putText(img, got, (x + 4, y + 16), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (0, 200, 0) if ok else (230, 0, 0), 2,
                    cv2.LINE_AA)
    return img
