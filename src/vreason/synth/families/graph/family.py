"""Graph traversal (TiViBench SS / graph): a blue token travels along the lines of a graph, node by node,
from its node to the red-ringed node by the route with the fewest hops (unique by construction). The route
bends: the straight chord from the token to the destination leaves it by at least ``BEND`` node spacings, so
gliding straight across the board is never the route.

Nodes are grey discs on a jittered grid (3×3 easy, 3×4 medium, 4×5 hard) joined by a random spanning
tree plus extra edges; the shortest route is at least 2 / 3 / 4 hops and the only one of its length.

Verifier: TiViBench's **tracking** check (:mod:`vreason.verify.tracking`, colour detector, 16 uniformly
sampled frames): waypoints = the route's node centres; walls = boxes around the nodes off the route (the
token may never stop on or cross one); ``path_tol`` = 0.3 × the smallest node spacing (over the frame
diagonal: a wrong route runs ≥ 0.5 spacing away from the right one); ``max_step`` = 0.35 of the route
(the ground truth advances ≤ 0.12 per sample even after a one-second pause; a cut advances 1.0). Suite-only
check: *one_token* — never more than one token-sized blue blob in a sampled frame.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import Any

import numpy as np

from vreason.synth import draw
from vreason.synth import tivi_common as tc
from vreason.synth.base import RenderConfig, TaskFamily, TaskInstance, VerifyResult, family
from vreason.verify.annotations import Box, TrackingParams

LEVELS = {"easy": (3, 3, 2, 2), "medium": (3, 4, 3, 3), "hard": (4, 5, 4, 5)}
"""rows, cols, minimum route length (hops), extra edges beyond the spanning tree."""
NODE_R, TOKEN_R, WALL_R = 0.2, 0.13, 0.22
"""Node, token and off-route wall half-size, in node spacings."""
NODE_FILL, NODE_EDGE, EDGE = (205, 205, 205), (90, 90, 90), (150, 150, 150)
BEND = 0.5
"""Least distance (node spacings) between the route and the straight chord from its start to its end: the
verifier's path tolerance is 0.3 spacing, so a straight glide fails by a margin (version 1 had no such rule and
about one easy instance in ten had a near-straight route, which a straight glide followed honestly)."""
MOVE = (0.1, 0.85)
"""The walk happens over this fraction of the video (held before and after)."""


def _layout(rng: np.random.Generator, rows: int, cols: int, cfg: RenderConfig) -> tuple[list[list[float]], float]:
    sp = min((cfg.width - 120) / max(1, cols - 1), (cfg.height - 110) / max(1, rows - 1))
    x0 = (cfg.width - sp * (cols - 1)) / 2
    y0 = (cfg.height - sp * (rows - 1)) / 2
    pts = []
    for r in range(rows):
        for c in range(cols):
            jx, jy = rng.uniform(-0.12, 0.12, 2) * sp
            pts.append([float(x0 + c * sp + jx), float(y0 + r * sp + jy)])
    return pts, float(sp)


def _edges(rng: np.random.Generator, rows: int, cols: int, extra: int) -> list[tuple[int, int]]:
    cand = [(r * cols + c, r * cols + c + 1) for r in range(rows) for c in range(cols - 1)]
    cand += [(r * cols + c, (r + 1) * cols + c) for r in range(rows - 1) for c in range(cols)]
    order = [cand[i] for i in rng.permutation(len(cand))]
    parent = list(range(rows * cols))

    def root(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    tree, rest = [], []
    for a, b in order:
        ra, rb = root(a), root(b)
        if ra != rb:
            parent[ra] = rb
            tree.append((a, b))
        else:
            rest.append((a, b))
    return tree + rest[:extra]


def _bfs(n: int, edges: list[tuple[int, int]], src: int) -> tuple[list[int], list[int]]:
    """Distances and number of shortest routes from ``src``."""
    adj: list[list[int]] = [[] for _ in range(n)]
    for a, b in edges:
        adj[a].append(b)
        adj[b].append(a)
    dist, ways = [-1] * n, [0] * n
    dist[src], ways[src] = 0, 1
    q = deque([src])
    while q:
        u = q.popleft()
        for v in adj[u]:
            if dist[v] < 0:
                dist[v] = dist[u] + 1
                q.append(v)
            if dist[v] == dist[u] + 1:
                ways[v] += ways[u]
    return dist, ways


def _route(n: int, edges: list[tuple[int, int]], src: int, dst: int) -> list[int]:
    dist, _ = _bfs(n, edges, src)
    adj = {i: [b for a, b in edges if a == i] + [a for a, b in edges if b == i] for i in range(n)}
    path = [dst]
    while path[-1] != src:
        path.append(next(v for v in adj[path[-1]] if dist[v] == dist[path[-1]] - 1))
    return path[::-1]


def _bend(pts: Sequence[Sequence[float]], route: Sequence[int]) -> float:
    """Largest distance (pixels) of the route's nodes from the straight chord joining its ends."""
    p = np.array([pts[i] for i in route], dtype=np.float64)
    d = p[-1] - p[0]
    normal = np.array([-d[1], d[0]]) / max(float(np.hypot(*d)), 1e-9)
    return float(np.abs((p - p[0]) @ normal).max())


def render(state: dict[str, Any], positions: Sequence[tuple[float, float]]) -> list[np.ndarray]:
    """Frames with the token at each (x, y) pixel position."""
    import cv2

    w, h = state["canvas"]
    sp = state["spacing"]
    bg = draw.canvas(w, h)
    pts = state["nodes"]
    for a, b in state["edges"]:
        cv2.line(bg, tuple(int(round(v)) for v in pts[a]), tuple(int(round(v)) for v in pts[b]), EDGE, 3,
                 lineType=cv2.LINE_AA)
    goal = pts[state["route"][-1]]
    draw.disc(bg, goal, (NODE_R + 0.07) * sp, draw.rgb("red"))
    for p in pts:
        draw.disc(bg, p, NODE_R * sp, NODE_EDGE)
        draw.disc(bg, p, NODE_R * sp - 2, NODE_FILL)
    out = []
    for xy in positions:
        img = bg.copy()
        draw.disc(img, xy, TOKEN_R * sp, draw.rgb("blue"))
        out.append(img)
    return out


def walk(state: dict[str, Any], route: Sequence[int], n: int, span: tuple[float, float] = MOVE
         ) -> list[tuple[float, float]]:
    """Token positions over ``n`` frames moving at constant speed along the nodes ``route``."""
    pts = np.array([state["nodes"][i] for i in route], dtype=np.float64)
    seg = np.hypot(*np.diff(pts, axis=0).T) if len(pts) > 1 else np.zeros(0)
    total = float(seg.sum())
    cum = np.concatenate([[0.0], np.cumsum(seg)])
    t = np.arange(n) / max(1, n - 1)
    u = np.clip((t - span[0]) / (span[1] - span[0]), 0, 1)
    out = []
    for s in u * total:
        k = int(np.clip(np.searchsorted(cum, s, side="right") - 1, 0, max(0, len(seg) - 1)))
        f = (s - cum[k]) / seg[k] if len(seg) and seg[k] > 0 else 0.0
        p = pts[k] + (pts[min(k + 1, len(pts) - 1)] - pts[k]) * f
        out.append((float(p[0]), float(p[1])))
    return out


@family
class Graph(TaskFamily):
    name = "graph"
    scene_check = True
    """The every-frame scene (issue 24, :mod:`.scene`) is part of the verdict: every honest variant and P5 draw
    passes on suite seeds 101 and 202 (78 of 78 with the shared layer's clipped-exposure fix; the +15% exposure
    was the one failure before). Version 3: the end state is held over the suite's end window."""
    version = "4"  # 4: the TiViBench check reads frames cut at the task's aspect (bars of the page's colour)
    directional = True
    process_rule = True

    def make(self, rng: np.random.Generator, difficulty: str, index: int, seed: int,
             cfg: RenderConfig) -> TaskInstance:
        rows, cols, min_hops, extra = LEVELS[difficulty]
        n = rows * cols
        for _ in range(500):
            pts, sp = _layout(rng, rows, cols, cfg)
            edges = _edges(rng, rows, cols, extra)
            src = int(rng.integers(n))
            dist, ways = _bfs(n, edges, src)
            cands = [v for v in range(n) if dist[v] >= min_hops and ways[v] == 1
                     and _bend(pts, _route(n, edges, src, v)) >= BEND * sp]
            if cands:
                dst = int(cands[int(rng.integers(len(cands)))])
                break
        else:  # pragma: no cover - always found for these sizes
            raise RuntimeError("could not place a unique, bending route")
        route = _route(n, edges, src, dst)
        state: dict[str, Any] = {"nodes": pts, "edges": [list(e) for e in edges], "route": route, "spacing": sp,
                                 "canvas": [cfg.width, cfg.height]}
        state["tivibench"] = tc.annotation("SS", "graph", self.params(state))
        frames = render(state, walk(state, route, cfg.n_frames))
        prompt = ("A network of grey circles joined by lines. A blue token sits on one circle; the circle with the "
                  "red ring is its destination. Move the token along the lines, one circle at a time, to the "
                  "destination by the route with the fewest hops, and leave it there. The token slides smoothly "
                  "along the lines and never cuts across; the network and the camera stay still.")
        return TaskInstance(self.name, difficulty, index, seed, prompt, frames[0], frames[-1], frames, state,
                            self.directional, self.process_rule)

    @staticmethod
    def params(state: dict[str, Any]) -> TrackingParams:
        w, h = state["canvas"]
        sp = state["spacing"]
        diag = float(np.hypot(w, h))
        on = set(state["route"])
        walls = [Box(x0=max(0.0, (x - WALL_R * sp) / w), y0=max(0.0, (y - WALL_R * sp) / h),
                     x1=min(1.0, (x + WALL_R * sp) / w), y1=min(1.0, (y + WALL_R * sp) / h))
                 for i, (x, y) in enumerate(state["nodes"]) if i not in on]
        return TrackingParams(label="blue token", colour=tc.colour_json("blue"),
                              waypoints=[(x / w, y / h) for x, y in (state["nodes"][i] for i in state["route"])],
                              walls=walls, path_tol=round(0.3 * sp / diag, 4), n_samples=16, max_step=0.35)

    def random_motion(self, inst: TaskInstance, rng: np.random.Generator, cfg: RenderConfig) -> list[np.ndarray]:
        """A walk along the lines that avoids the destination (a wrong route of random hops)."""
        st = inst.state
        dst = st["route"][-1]
        adj = {i: [b for a, b in st["edges"] if a == i] + [a for a, b in st["edges"] if b == i]
               for i in range(len(st["nodes"]))}
        cur, prev, route = st["route"][0], None, [st["route"][0]]
        for _ in range(len(st["route"]) - 1):
            opts = [v for v in adj[cur] if v != dst and v != prev] or [v for v in adj[cur] if v != dst]
            if not opts:
                break
            prev, cur = cur, int(opts[int(rng.integers(len(opts)))])
            route.append(cur)
        return render(st, walk(st, route, cfg.n_frames))

    def scene(self, state: dict[str, Any], cfg: RenderConfig) -> Any:
        """Every frame parsed into the token's position and re-rendered (:mod:`.scene`)."""
        from vreason.synth.families.graph.scene import scene

        return scene(state, cfg)

    def verify(self, frames: list[np.ndarray], state: dict[str, Any], cfg: RenderConfig,
               times: Sequence[float] | None = None) -> VerifyResult:
        from vreason.synth import frametools as ft
        from vreason.synth.base import frame_times
        from vreason.synth.end_hold import end_changes
        from vreason.verify.colour import content, find, named_spec
        from vreason.verify.tracking import uniform_indices

        bad = tc.unusable(frames)
        if bad:
            return VerifyResult(0.0, False, {"reason": bad})
        metric = tc.run_metric(frames, state, aspect=cfg.width / cfg.height)
        sampled = content([frames[i] for i in uniform_indices(len(frames), 16)], aspect=cfg.width / cfg.height)
        w, h = sampled[0].shape[1], sampled[0].shape[0]
        token = np.pi * (TOKEN_R * state["spacing"] * w / state["canvas"][0]) ** 2 / (w * h)
        many = [i for i, f in enumerate(sampled) if len([b for b in find(f, named_spec("blue"))
                                                          if b.area >= 0.4 * token]) > 1]
        checks: dict[str, bool] = {"one_token": not many}
        evidence: dict[str, Any] = {"second_token_samples": many}
        why = [f"a second token in {len(many)} sampled frame(s)"] if many else []
        prepared = ft.scene_verdict(self, frames, times, state, cfg, checks, evidence, why)
        if prepared is not None and checks.get("scene", True):
            # the token rests at the destination over the suite's end window (draw.END_HOLD_S), as the other
            # families' end states: TiViBench's holds_goal reads two of 16 samples, and a video cut as the token
            # arrives passed it (P3 end_early, case seed 2082167906: 5 px short of the node in the last frame)
            moved = [j for j, _ in end_changes(prepared, frame_times(len(prepared), cfg, times))]
            checks["held"] = not moved
            if moved:
                evidence["hold_changed"] = moved[:10]
                why.append(f"the token does not rest over the last {draw.END_HOLD_S} s (frames {moved[:10]} "
                           "differ from the last)")
        return tc.result(metric, checks, evidence, why)
