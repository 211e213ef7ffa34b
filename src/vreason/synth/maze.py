"""Maze navigation: a green agent walks the open corridors of a maze to a red goal.

Colours follow RISE-Video's conventions (green agent, black walls, red goal). The
verifier tracks the green blob in every frame (HSV), then checks the process — start at
the start cell, never vanish, no teleport (at most one cell per frame, or twice the mean
speed the solution needs in a short video), no crossing of
frame 0's walls — and the end state: the last frame's agent sits on the goal.
Score = progress along the maze (1 − remaining graph distance / initial distance), halved
when a process check fails; pass = every check holds.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import numpy as np

from vreason.synth import draw
from vreason.synth.base import RenderConfig, TaskFamily, TaskInstance, VerifyResult, family

# N, E, S, W as (dr, dc) and bit
_DIRS = [(-1, 0, 1), (0, 1, 2), (1, 0, 4), (0, -1, 8)]
_OPP = {1: 4, 2: 8, 4: 1, 8: 2}

_LEVELS = {
    # rows, cols, minimum shortest-path length (moves)
    "easy": (4, 7, 5),
    "medium": (5, 9, 9),
    "hard": (7, 12, 14),
}
MAX_CELLS_PER_FRAME = 1.0
AGENT_R = 0.28
GOAL_HALF = 0.34


def carve(rows: int, cols: int, rng: np.random.Generator) -> list[list[int]]:
    """A perfect maze by randomised depth-first search: per cell a bitmask of open sides."""
    open_ = [[0] * cols for _ in range(rows)]
    seen = [[False] * cols for _ in range(rows)]
    r, c = int(rng.integers(rows)), int(rng.integers(cols))
    seen[r][c] = True
    stack = [(r, c)]
    while stack:
        r, c = stack[-1]
        nbrs = [(r + dr, c + dc, b) for dr, dc, b in _DIRS
                if 0 <= r + dr < rows and 0 <= c + dc < cols and not seen[r + dr][c + dc]]
        if not nbrs:
            stack.pop()
            continue
        nr, nc, b = nbrs[int(rng.integers(len(nbrs)))]
        open_[r][c] |= b
        open_[nr][nc] |= _OPP[b]
        seen[nr][nc] = True
        stack.append((nr, nc))
    return open_


def neighbours(open_: list[list[int]], r: int, c: int) -> list[tuple[int, int]]:
    return [(r + dr, c + dc) for dr, dc, b in _DIRS if open_[r][c] & b]


def bfs(open_: list[list[int]], src: tuple[int, int]) -> dict[tuple[int, int], tuple[int, int] | None]:
    prev: dict[tuple[int, int], tuple[int, int] | None] = {src: None}
    q = deque([src])
    while q:
        cur = q.popleft()
        for nb in neighbours(open_, *cur):
            if nb not in prev:
                prev[nb] = cur
                q.append(nb)
    return prev


def path_to(prev: dict, dst: tuple[int, int]) -> list[tuple[int, int]]:
    out = [dst]
    while prev[out[-1]] is not None:
        out.append(prev[out[-1]])
    return out[::-1]


def graph_distances(open_: list[list[int]], src: tuple[int, int]) -> dict[tuple[int, int], int]:
    dist = {src: 0}
    q = deque([src])
    while q:
        cur = q.popleft()
        for nb in neighbours(open_, *cur):
            if nb not in dist:
                dist[nb] = dist[cur] + 1
                q.append(nb)
    return dist


def _timeline(n: int) -> tuple[int, int, int]:
    hold_a = max(1, n // 16)
    hold_b = max(1, n // 10)
    return hold_a, max(1, n - hold_a - hold_b), hold_b


def _positions(path: list[tuple[int, int]], n: int) -> list[tuple[float, float]]:
    """Fractional (r, c) per frame moving linearly along ``path`` (held at both ends)."""
    hold_a, moving, _ = _timeline(n)
    steps = len(path) - 1
    out = []
    for k in range(n):
        u = min(max(k - hold_a + 1, 0) / moving, 1.0) * steps if steps > 0 else 0.0
        i = min(int(np.floor(u)), max(steps - 1, 0))
        f = u - i if steps > 0 else 0.0
        a, b = path[i], path[min(i + 1, len(path) - 1)]
        out.append((a[0] + (b[0] - a[0]) * f, a[1] + (b[1] - a[1]) * f))
    return out


@family
class Maze(TaskFamily):
    name = "maze"
    version = "1"
    directional = True
    process_rule = True
    decode_scale = 0.5
    """Verification works at this fraction of the canvas; the scorer may decode at that size."""

    # ----------------------------------------------------------------- generation
    def make(self, rng, difficulty, index, seed, cfg: RenderConfig) -> TaskInstance:
        rows, cols, min_len = _LEVELS[difficulty]
        _, moving, _ = _timeline(cfg.n_frames)
        max_len = max(min_len, int(moving * 0.6))
        for _ in range(200):
            open_ = carve(rows, cols, rng)
            start = (int(rng.integers(rows)), int(rng.integers(cols)))
            dist = graph_distances(open_, start)
            cands = sorted(k for k, d in dist.items() if min_len <= d <= max_len)
            if cands:
                goal = cands[int(rng.integers(len(cands)))]
                break
        else:  # pragma: no cover - the loop above always finds one for these sizes
            raise RuntimeError("could not place start and goal")
        path = path_to(bfs(open_, start), goal)
        grid = draw.GridLayout.fit(rows, cols, cfg.width, cfg.height)
        state: dict[str, Any] = {
            "rows": rows, "cols": cols, "open": open_, "start": list(start), "goal": list(goal),
            "solution": [list(p) for p in path], "grid": grid.to_json(), "canvas": [cfg.width, cfg.height],
        }
        frames = self.render(state, _positions(path, cfg.n_frames))
        prompt = (
            "A maze seen from above: the black lines are walls, the green dot is a small robot and the "
            "red square marks the exit. Animate the green dot finding its way through the open corridors "
            "until it stops on the red square. It can only travel along corridors, never through or over "
            "a wall, and it moves smoothly without jumping. The maze and the camera stay still."
        )
        return TaskInstance(self.name, difficulty, index, seed, prompt, frames[0], frames[-1], frames,
                            state, self.directional, self.process_rule)

    def background(self, state: dict) -> np.ndarray:
        import cv2

        w, h = state["canvas"]
        grid = draw.GridLayout.from_json(state["grid"])
        img = draw.canvas(w, h)
        gr, gc = state["goal"]
        gx, gy = grid.centre(gr, gc)
        d = GOAL_HALF * grid.cell
        draw.rect(img, gx - d, gy - d, gx + d, gy + d, draw.rgb("red"))
        wt = max(2, int(round(grid.cell * 0.12)))
        open_ = state["open"]

        def pt(r: float, c: float) -> tuple[int, int]:
            return int(round(grid.x0 + c * grid.cell)), int(round(grid.y0 + r * grid.cell))

        for r in range(state["rows"]):
            for c in range(state["cols"]):
                o = open_[r][c]
                if not o & 1:
                    cv2.line(img, pt(r, c), pt(r, c + 1), draw.BLACK, wt)
                if not o & 8:
                    cv2.line(img, pt(r, c), pt(r + 1, c), draw.BLACK, wt)
                if r == state["rows"] - 1 and not o & 4:
                    cv2.line(img, pt(r + 1, c), pt(r + 1, c + 1), draw.BLACK, wt)
                if c == state["cols"] - 1 and not o & 2:
                    cv2.line(img, pt(r, c + 1), pt(r + 1, c + 1), draw.BLACK, wt)
        return img

    def render(self, state: dict, positions: list[tuple[float, float]]) -> list[np.ndarray]:
        bg = self.background(state)
        grid = draw.GridLayout.from_json(state["grid"])
        out = []
        for r, c in positions:
            img = bg.copy()
            draw.disc(img, grid.centre(r, c), AGENT_R * grid.cell, draw.rgb("green"))
            out.append(img)
        return out

    def random_motion(self, inst: TaskInstance, rng, cfg: RenderConfig) -> list[np.ndarray]:
        """A random walk along corridors that never enters the goal cell."""
        state = inst.state
        goal = tuple(state["goal"])
        cur = tuple(state["start"])
        walk = [cur]
        prev = None
        for _ in range(max(2, len(state["solution"]) - 1)):
            nbs = [nb for nb in neighbours(state["open"], *cur) if nb != goal]
            if not nbs:
                break
            fresh = [nb for nb in nbs if nb != prev] or nbs
            prev, cur = cur, fresh[int(rng.integers(len(fresh)))]
            walk.append(cur)
        return self.render(state, _positions(walk, cfg.n_frames))

    # ----------------------------------------------------------------- verification
    def verify(self, frames, state, cfg: RenderConfig) -> VerifyResult:
        w0, h0 = state["canvas"]
        s = 0.5
        w, h = max(2, int(round(w0 * s))), max(2, int(round(h0 * s)))
        grid = draw.GridLayout.from_json(state["grid"]).scaled(s)
        ev: dict[str, Any] = {"n_frames": len(frames), "work_size": [w, h]}
        if not frames:
            return VerifyResult(0.0, False, {**ev, "reasons": ["no frames"]})
        f = draw.stack(frames, w, h)
        hsv = draw.to_hsv(f)
        walls = draw.hsv_mask(hsv[0], "black")
        green = draw.hsv_mask(hsv, "green")
        min_area = 0.35 * np.pi * (AGENT_R * grid.cell) ** 2
        traj: list[tuple[float, float] | None] = []
        for t in range(len(f)):
            b = draw.largest_blob(draw.open_mask(green[t]), min_area)
            traj.append(None if b is None else (b[0], b[1]))
        cell = grid.cell
        start_xy = grid.centre(*state["start"])
        goal_xy = grid.centre(*state["goal"])
        reasons: list[str] = []
        tracked = [i for i, p in enumerate(traj) if p is not None]
        frac = len(tracked) / len(traj)
        checks: dict[str, bool] = {}
        checks["start"] = traj[0] is not None and _dist(traj[0], start_xy) <= 0.5 * cell
        if not checks["start"]:
            reasons.append("the agent is not on the start cell in frame 0")
        checks["tracked"] = frac >= 0.85 and len(traj) >= 2
        if not checks["tracked"]:
            reasons.append(f"agent visible in {frac:.0%} of frames (need 85%, and ≥ 2 frames)")
        jumps, crossings = [], []
        # a short video may need a faster agent: allow twice the mean speed the solution needs
        max_step = max(MAX_CELLS_PER_FRAME, 2.0 * (len(state["solution"]) - 1) / max(len(traj) - 1, 1))
        for a, b in zip(tracked, tracked[1:], strict=False):
            pa, pb = traj[a], traj[b]
            d = _dist(pa, pb) / cell
            if d > max_step * (b - a):
                jumps.append({"from": a, "to": b, "cells": round(d, 2)})
            if _crosses(walls, pa, pb):
                crossings.append({"from": a, "to": b})
        checks["no_teleport"] = not jumps
        checks["no_wall_crossing"] = not crossings
        if jumps:
            reasons.append(f"{len(jumps)} jump(s) over {max_step:.2f} cell per frame")
        if crossings:
            reasons.append(f"{len(crossings)} wall crossing(s) against frame 0's walls")
        end = next((traj[i] for i in range(len(traj) - 1, max(-1, len(traj) - 4), -1) if traj[i] is not None),
                   None)
        checks["reached_goal"] = end is not None and _dist(end, goal_xy) <= 0.5 * cell
        if not checks["reached_goal"]:
            reasons.append("the agent does not end on the goal")
        progress = 0.0
        if end is not None:
            r, c = grid.cell_of(*end)
            dist = graph_distances(state["open"], tuple(state["goal"]))
            d0 = dist.get(tuple(state["start"]), 1)
            if 0 <= r < state["rows"] and 0 <= c < state["cols"]:
                progress = max(0.0, 1.0 - dist.get((r, c), d0) / max(d0, 1))
        # no credit unless the agent was found where the task starts and followed throughout;
        # half credit for the right end reached by a forbidden process (jump, wall crossing)
        if not (checks["start"] and checks["tracked"]):
            score = 0.0
        elif checks["no_teleport"] and checks["no_wall_crossing"]:
            score = progress
        else:
            score = 0.5 * progress
        passed = all(checks.values())
        inv = 1 / s
        ev.update({
            "checks": checks, "reasons": reasons, "progress": round(progress, 4), "tracked_fraction": round(frac, 4),
            "jumps": jumps[:20], "crossings": crossings[:20], "max_cells_per_frame": round(max_step, 3),
            "trajectory": [None if p is None else [round(p[0] * inv, 1), round(p[1] * inv, 1)] for p in traj],
        })
        dbg = f[0].copy()
        draw.polyline(dbg, [p for p in traj if p is not None], (0, 0, 255), 2)
        if end is not None:
            draw.disc(dbg, end, 4, draw.rgb("yellow"))
        return VerifyResult(float(score), bool(passed), ev, dbg)


def _dist(a, b) -> float:
    return float(np.hypot(a[0] - b[0], a[1] - b[1]))


def _crosses(walls: np.ndarray, a, b) -> bool:
    n = max(2, int(np.ceil(_dist(a, b))) + 1)
    xs = np.clip(np.round(np.linspace(a[0], b[0], n)).astype(int), 0, walls.shape[1] - 1)
    ys = np.clip(np.round(np.linspace(a[1], b[1], n)).astype(int), 0, walls.shape[0] - 1)
    return bool(walls[ys, xs].any())
