"""Connect colours: join every pair of same-coloured dots with a line, without crossings.

Lines are drawn progressively from one dot to its partner along grid cells. The verifier
reads each colour's HSV mask in every frame. End state: in the last frame each pair's two
dots lie in one connected component of their colour, all dots are intact and each colour
has no stray blobs. On an opaque drawing a crossing interrupts one of the two lines, so
"every pair connected" is also the no-crossing test. Process: frame 0 shows dots only,
lines grow gradually (no single frame adds more than 40% of a line: a cut or a fade
does), never shrink, and always grow out of a dot (no floating segments).
Score = fraction of pairs connected, halved when the process fails (0 when frame 0 is
not the task); pass = every check holds.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from vreason.synth import draw
from vreason.synth.base import RenderConfig, TaskFamily, TaskInstance, VerifyResult, family

_LEVELS = {"easy": (5, 2, 3), "medium": (6, 3, 4), "hard": (7, 4, 4)}  # grid, pairs, min moves
_PALETTE = ("red", "yellow", "green", "blue", "purple", "cyan")
DOT_R = 0.32
LINE_W = 0.28
MAX_GROWTH_PER_FRAME = 0.4
_STEPS = [(-1, 0), (1, 0), (0, -1), (0, 1)]


def _walk(rng, n: int, start: tuple[int, int], length: int, blocked: set) -> list[tuple[int, int]]:
    path = [start]
    seen = {start}
    for _ in range(length):
        r, c = path[-1]
        opts = [(r + dr, c + dc) for dr, dc in _STEPS
                if 0 <= r + dr < n and 0 <= c + dc < n and (r + dr, c + dc) not in seen
                and (r + dr, c + dc) not in blocked]
        if not opts:
            break
        nxt = opts[int(rng.integers(len(opts)))]
        path.append(nxt)
        seen.add(nxt)
    return path


def _timeline(n: int) -> tuple[int, int]:
    hold_a = max(1, n // 16)
    hold_b = max(1, n // 10)
    return hold_a, max(1, n - hold_a - hold_b)


@family
class Connect(TaskFamily):
    name = "connect"
    version = "1"
    directional = True
    process_rule = True
    decode_scale = 0.5
    """Verification works at this fraction of the canvas; the scorer may decode at that size."""

    def make(self, rng, difficulty, index, seed, cfg: RenderConfig) -> TaskInstance:
        n, pairs, min_len = _LEVELS[difficulty]
        for _ in range(500):
            used: set = set()
            paths = []
            for _k in range(pairs):
                free = [(r, c) for r in range(n) for c in range(n) if (r, c) not in used]
                ok = False
                for _t in range(30):
                    st = free[int(rng.integers(len(free)))]
                    p = _walk(rng, n, st, int(rng.integers(min_len, min_len + 4)), used)
                    a, b = p[0], p[-1]
                    if len(p) - 1 >= min_len and abs(a[0] - b[0]) + abs(a[1] - b[1]) >= 2:
                        ok = True
                        break
                if not ok:
                    break
                paths.append(p)
                used |= set(p)
            if len(paths) == pairs:
                break
        else:  # pragma: no cover
            raise RuntimeError("could not place the colour pairs")
        colours = [str(c) for c in rng.choice(_PALETTE, size=pairs, replace=False)]
        grid = draw.GridLayout.fit(n, n, cfg.width, cfg.height)
        state: dict[str, Any] = {
            "n": n, "grid": grid.to_json(), "canvas": [cfg.width, cfg.height],
            "pairs": [{"colour": col, "a": list(p[0]), "b": list(p[-1])}
                      for col, p in zip(colours, paths, strict=True)],
            "solution": [[list(x) for x in p] for p in paths],
        }
        frames = self.render(state, state["solution"], cfg.n_frames)
        prompt = (
            "A board with pairs of coloured dots. Draw a line joining the two dots of each colour, one "
            "colour after another, the line growing steadily from one dot until it reaches its partner. "
            "Lines move along the board's squares, never cross or touch another line or dot, and nothing "
            "else on the board changes."
        )
        return TaskInstance(self.name, difficulty, index, seed, prompt, frames[0], frames[-1], frames,
                            state, self.directional, self.process_rule)

    def render(self, state: dict, paths: list, n_frames: int) -> list[np.ndarray]:
        w, h = state["canvas"]
        grid = draw.GridLayout.from_json(state["grid"])
        base = draw.canvas(w, h)
        draw.grid_lines(base, grid)
        for pr in state["pairs"]:
            for end in ("a", "b"):
                draw.disc(base, grid.centre(*pr[end]), DOT_R * grid.cell, draw.rgb(pr["colour"]))
        segs = []  # (colour, from xy, to xy)
        for pr, p in zip(state["pairs"], paths, strict=False):
            for u, v in zip(p, p[1:], strict=False):
                segs.append((draw.rgb(pr["colour"]), grid.centre(*u), grid.centre(*v)))
        hold_a, moving = _timeline(n_frames)
        cur = base.copy()
        done = 0.0
        out = []
        lw = LINE_W * grid.cell
        for k in range(n_frames):
            want = min(len(segs), max(0, k - hold_a + 1) / moving * len(segs))
            if want > done:
                cur = cur.copy()
                i = int(np.floor(done))
                while i < want and i < len(segs):
                    col, a, b = segs[i]
                    t0, t1 = max(0.0, done - i), min(1.0, want - i)
                    pa = (a[0] + (b[0] - a[0]) * t0, a[1] + (b[1] - a[1]) * t0)
                    pb = (a[0] + (b[0] - a[0]) * t1, a[1] + (b[1] - a[1]) * t1)
                    draw.thick_line(cur, pa, pb, lw, col)
                    i += 1
                done = want
            out.append(cur)
        return out

    def random_motion(self, inst: TaskInstance, rng, cfg: RenderConfig) -> list[np.ndarray]:
        """Lines wander out of one dot of each pair but never reach the partner."""
        st = inst.state
        n = st["n"]
        dots = {tuple(p[e]) for p in st["pairs"] for e in ("a", "b")}
        used: set = set(dots)
        paths = []
        for pr, sol in zip(st["pairs"], st["solution"], strict=False):
            b = tuple(pr["b"])
            near_b = {(b[0] + dr, b[1] + dc) for dr, dc in _STEPS}
            blocked = (used | near_b) - {tuple(pr["a"])}
            p = _walk(rng, n, tuple(pr["a"]), len(sol) - 1, blocked)
            paths.append([list(x) for x in p])
            used |= set(p)
        return self.render(st, paths, cfg.n_frames)

    # ----------------------------------------------------------------- verification
    def verify(self, frames, state, cfg: RenderConfig) -> VerifyResult:
        import cv2

        w0, h0 = state["canvas"]
        s = 0.5
        w, h = max(2, int(round(w0 * s))), max(2, int(round(h0 * s)))
        grid = draw.GridLayout.from_json(state["grid"]).scaled(s)
        ev: dict[str, Any] = {"n_frames": len(frames)}
        if not frames:
            return VerifyResult(0.0, False, {**ev, "reasons": ["no frames"]})
        f = draw.stack(frames, w, h)
        T = len(f)
        # work on the board only (plus half a cell of margin): the rest of the canvas is blank
        pad = grid.cell * 0.5
        cx0, cy0 = max(0, int(grid.x0 - pad)), max(0, int(grid.y0 - pad))
        cx1 = min(w, int(np.ceil(grid.x0 + grid.cols * grid.cell + pad)))
        cy1 = min(h, int(np.ceil(grid.y0 + grid.rows * grid.cell + pad)))
        full_last = f[-1]
        f = np.ascontiguousarray(f[:, cy0:cy1, cx0:cx1])
        grid = draw.GridLayout(grid.rows, grid.cols, grid.x0 - cx0, grid.y0 - cy0, grid.cell)
        h, w = f.shape[1], f.shape[2]
        labels = draw.hue_labels(draw.to_hsv(f))
        dot_area = np.pi * (DOT_R * grid.cell) ** 2
        line_px = LINE_W * grid.cell
        reasons: list[str] = []
        per_pair: list[dict[str, Any]] = []
        start_ok, dots_ok, connected, clean, gradual, monotone, rooted = True, True, True, True, True, True, True
        tol = max(1, int(0.05 * T))
        kernel = np.ones((3, 3), np.uint8)
        for pr in state["pairs"]:
            m = (labels == draw.COLOUR_INDEX[pr["colour"]]).astype(np.uint8)
            m = cv2.morphologyEx(m.reshape(T * h, w), cv2.MORPH_CLOSE, kernel).reshape(T, h, w)
            ends = [grid.centre(*pr["a"]), grid.centre(*pr["b"])]
            pts = [(int(np.clip(round(x), 0, w - 1)), int(np.clip(round(y), 0, h - 1))) for x, y in ends]
            # dots present: the centre patch of each dot is that colour (frame 0 and last frame)
            r = max(1, int(DOT_R * grid.cell * 0.5))

            def dot_there(t: int, m=m, r=r, pts=pts) -> bool:
                return all(m[t, max(0, y - r):y + r + 1, max(0, x - r):x + r + 1].mean() > 0.6 for x, y in pts)

            area = m.reshape(T, -1).sum(axis=1).astype(np.float64)
            first_ok = dot_there(0) and area[0] <= 2 * dot_area * 1.35
            last_dots = dot_there(T - 1)
            # connectivity per frame (one labelling for the whole stack)
            padded = np.zeros((T, h + 1, w), np.uint8)
            padded[:, :h] = m
            _, lab = cv2.connectedComponents(padded.reshape(T * (h + 1), w), connectivity=8)
            sizes = np.bincount(lab.ravel())
            sizes[0] = 0  # background
            lab = lab.reshape(T, h + 1, w)
            la = lab[:, pts[0][1], pts[0][0]]
            lb = lab[:, pts[1][1], pts[1][0]]
            joined = bool(la[-1] != 0 and la[-1] == lb[-1])
            stray_last = 1 - sizes[la[-1]] / max(area[-1], 1) if joined else 1.0
            rooted_area = sizes[la] + np.where(lb != la, sizes[lb], 0)
            rooted_frac = rooted_area / np.maximum(area, 1)
            line = area - area[0]
            total = max(line[-1], 1.0)
            run_max = np.maximum.accumulate(line)
            growth = np.diff(run_max, prepend=run_max[0]) / total if T > 1 else np.zeros(1)
            drops = (run_max - line) / total
            p_gradual = line[-1] < 2 * line_px * line_px or float(growth.max()) <= MAX_GROWTH_PER_FRAME
            p_monotone = int((drops > 0.15).sum()) <= tol
            p_rooted = int((rooted_frac < 0.9).sum()) <= tol
            start_ok &= first_ok
            dots_ok &= last_dots
            connected &= joined
            clean &= stray_last <= 0.1
            gradual &= p_gradual
            monotone &= p_monotone
            rooted &= p_rooted
            per_pair.append({"colour": pr["colour"], "connected": joined, "dots_intact": last_dots,
                             "stray_fraction": round(float(stray_last), 3),
                             "max_growth_per_frame": round(float(growth.max()), 3),
                             "line_area": [int(x) for x in line]})
        checks = {"start": start_ok and T >= 2, "dots_intact": dots_ok, "all_connected": connected,
                  "no_stray": clean, "gradual": gradual, "never_shrinks": monotone, "grows_from_dots": rooted}
        names = {"start": "frame 0 is not the task (dots only)", "dots_intact": "a dot is missing in the last frame",
                 "all_connected": "a pair is not joined in the last frame (or lines cross)",
                 "no_stray": "stray colour outside the joining lines",
                 "gradual": f"a frame adds more than {MAX_GROWTH_PER_FRAME:.0%} of a line (cut or fade)",
                 "never_shrinks": "a line shrinks or vanishes", "grows_from_dots": "a line floats free of its dots"}
        reasons += [names[k] for k, v in checks.items() if not v]
        frac = sum(p["connected"] and p["dots_intact"] for p in per_pair) / max(1, len(per_pair))
        if not checks["start"]:
            score = 0.0
        elif all(checks[k] for k in ("gradual", "never_shrinks", "grows_from_dots", "no_stray")):
            score = frac
        else:
            score = 0.5 * frac
        passed = all(checks.values())
        ev.update({"checks": checks, "reasons": reasons, "pairs": per_pair, "connected_fraction": round(frac, 4)})
        dbg = full_last.copy()
        for p, pr in zip(per_pair, state["pairs"], strict=False):
            for end in ("a", "b"):
                x, y = grid.centre(*pr[end])
                x, y = x + cx0, y + cy0
                cv2.circle(dbg, (int(x), int(y)), int(DOT_R * grid.cell) + 2, (0, 0, 0) if p["connected"] else
                           (255, 0, 255), 1)
        return VerifyResult(float(score), bool(passed), ev, dbg)
