"""Symmetry completion: colour the mirror image of one half of a 10×16 grid.

Cells are classified as in RISE-Video's symmetry verifier: the mean colour of each cell's
central 80% is converted to HSV and the cell is *white* when S < 30 and V > 200, otherwise
coloured. The final frame must match the completed pattern cell for cell (the hard level
mixes two colours, which must also match). The process check: frame 0 is the task (the
other half still empty), the given half never changes and no cell outside the pattern is
ever coloured. Score = (correct new cells − wrong cells) / pattern cells, halved when the
process check fails (0 when frame 0 is not the task); pass = final state exact and process clean.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from vreason.synth import draw
from vreason.synth.base import RenderConfig, TaskFamily, TaskInstance, VerifyResult, family

ROWS, COLS = 10, 16
_LEVELS = {"easy": (5, 8, 1), "medium": (10, 16, 1), "hard": (18, 26, 2)}
_PALETTE = ("red", "yellow", "green", "blue", "purple", "orange")
BAD_FRAME_TOLERANCE = 0.05


def mirror(c: int) -> int:
    return COLS - 1 - c


def _timeline(n: int) -> tuple[int, int, int]:
    hold_a = max(1, n // 16)
    hold_b = max(1, n // 8)
    return hold_a, max(1, n - hold_a - hold_b), hold_b


@family
class Symmetry(TaskFamily):
    name = "symmetry"
    version = "1"
    directional = True
    process_rule = False
    decode_scale = 0.5
    """Verification works at this fraction of the canvas; the scorer may decode at that size."""

    def make(self, rng, difficulty, index, seed, cfg: RenderConfig) -> TaskInstance:
        lo, hi, n_col = _LEVELS[difficulty]
        side = "left" if rng.integers(2) == 0 else "right"
        half = range(COLS // 2) if side == "left" else range(COLS // 2, COLS)
        pool = [(r, c) for r in range(ROWS) for c in half]
        n = int(rng.integers(lo, hi + 1))
        picks = rng.choice(len(pool), size=n, replace=False)
        colours = [str(x) for x in rng.choice(_PALETTE, size=n_col, replace=False)]
        given = sorted([pool[int(i)][0], pool[int(i)][1], colours[int(rng.integers(n_col))]] for i in picks)
        targets = sorted([r, mirror(c), col] for r, c, col in given)
        # fill order: row by row, starting next to the mirror axis
        order = sorted(range(len(targets)), key=lambda k: (targets[k][0], abs(targets[k][1] - 7.5)))
        grid = draw.GridLayout.fit(ROWS, COLS, cfg.width, cfg.height)
        state: dict[str, Any] = {"side": side, "given": given, "targets": targets, "colours": colours,
                                 "grid": grid.to_json(), "canvas": [cfg.width, cfg.height]}
        frames = self.render(state, [targets[k] for k in order], cfg.n_frames)
        names = " and ".join(colours)
        other = "right" if side == "left" else "left"
        prompt = (
            f"A grid of white squares in which some squares on the {side} half are painted {names}. "
            f"Paint squares on the {other} half, one after another, so that the finished picture is "
            "perfectly symmetric about the vertical centre line. The painted squares already there and "
            "the grid itself must stay exactly as they are; nothing else changes."
        )
        return TaskInstance(self.name, difficulty, index, seed, prompt, frames[0], frames[-1], frames,
                            state, self.directional, self.process_rule)

    def _base(self, state: dict) -> np.ndarray:
        w, h = state["canvas"]
        grid = draw.GridLayout.from_json(state["grid"])
        img = draw.canvas(w, h)
        for r, c, col in state["given"]:
            draw.fill_cell(img, grid, r, c, draw.rgb(col))
        draw.grid_lines(img, grid)
        return img

    def render(self, state: dict, fills: list, n: int) -> list[np.ndarray]:
        grid = draw.GridLayout.from_json(state["grid"])
        cur = self._base(state)
        hold_a, moving, _ = _timeline(n)
        out = []
        done = 0
        for k in range(n):
            want = len(fills) if not fills else min(len(fills), int(np.ceil(max(0, k - hold_a + 1) / moving
                                                                            * len(fills))))
            if want > done:
                cur = cur.copy()
                for r, c, col in fills[done:want]:
                    draw.fill_cell(cur, grid, r, c, draw.rgb(col), inset=1)
                done = want
            out.append(cur)
        return out

    def random_motion(self, inst: TaskInstance, rng, cfg: RenderConfig) -> list[np.ndarray]:
        """Paints as many cells on the empty half, in the right colours, at random places."""
        st = inst.state
        tgt = {(r, c) for r, c, _ in st["targets"]}
        half = sorted({c for _, c, _ in st["targets"]} | set(range(COLS // 2) if st["side"] == "right"
                                                            else range(COLS // 2, COLS)))
        pool = [(r, c) for r in range(ROWS) for c in half]
        for _ in range(50):
            picks = [pool[int(i)] for i in rng.choice(len(pool), size=len(tgt), replace=False)]
            if len(set(picks) - tgt) >= max(2, len(tgt) // 3):
                break
        cols = [t[2] for t in st["targets"]]
        fills = [[r, c, cols[i % len(cols)]] for i, (r, c) in enumerate(picks)]
        return self.render(st, fills, cfg.n_frames)

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
        means = np.zeros((len(f), ROWS, COLS, 3), np.float32)
        for r in range(ROWS):
            for c in range(COLS):
                x0, y0, x1, y1 = grid.rect(r, c)
                dx, dy = (x1 - x0) * 0.1, (y1 - y0) * 0.1
                xa, xb = int(round(x0 + dx)), max(int(round(x1 - dx)), int(round(x0 + dx)) + 1)
                ya, yb = int(round(y0 + dy)), max(int(round(y1 - dy)), int(round(y0 + dy)) + 1)
                means[:, r, c] = f[:, ya:yb, xa:xb].reshape(len(f), -1, 3).mean(axis=1)
        hsv = cv2.cvtColor(np.round(means).astype(np.uint8).reshape(-1, COLS, 3),
                           cv2.COLOR_RGB2HSV).reshape(len(f), ROWS, COLS, 3).astype(np.int32)
        coloured = ~((hsv[..., 1] < 30) & (hsv[..., 2] > 200))
        given = np.zeros((ROWS, COLS), bool)
        target = np.zeros((ROWS, COLS), bool)
        want_col: dict[tuple[int, int], str] = {}
        for r, c, _col in state["given"]:
            given[r, c] = True
        for r, c, col in state["targets"]:
            target[r, c] = True
            want_col[(r, c)] = col
        given_half = np.zeros((ROWS, COLS), bool)
        given_half[:, : COLS // 2] = state["side"] == "left"
        given_half[:, COLS // 2:] = state["side"] != "left"
        expected = given | target
        reasons: list[str] = []
        checks: dict[str, bool] = {}
        checks["start"] = bool((coloured[0] == given).all())
        if not checks["start"]:
            reasons.append(f"frame 0 differs from the task in {int((coloured[0] != given).sum())} cell(s)")
        given_changed = ((coloured != given[None]) & given_half[None]).any(axis=(1, 2))
        spurious = (coloured & ~expected[None]).any(axis=(1, 2))
        tol = max(1, int(BAD_FRAME_TOLERANCE * len(f))) if len(f) > 1 else 0
        checks["given_unchanged"] = int(given_changed.sum()) <= tol
        checks["no_spurious"] = int(spurious.sum()) <= tol
        if not checks["given_unchanged"]:
            reasons.append(f"the given half changes in {int(given_changed.sum())} frame(s)")
        if not checks["no_spurious"]:
            reasons.append(f"cells outside the pattern are coloured in {int(spurious.sum())} frame(s)")
        last = coloured[-1]
        fn = int((expected & ~last).sum())
        fp = int((~expected & last).sum())
        acc = 1 - (fn + fp) / (ROWS * COLS)
        colour_errors = 0
        if len(state["colours"]) > 1:
            for (r, c), col in want_col.items():
                if last[r, c] and draw.classify_hue(hsv[-1, r, c]) != col:
                    colour_errors += 1
        rise = 0.0 if acc < 0.85 else (0.5 if acc < 1 else 1.0)
        checks["final_exact"] = fn == 0 and fp == 0 and colour_errors == 0
        if not checks["final_exact"]:
            reasons.append(f"final frame: {fn} missing, {fp} extra, {colour_errors} wrong-colour cell(s)")
        tp = int((target & last).sum()) - colour_errors
        wrong = int((~target & ~given & last).sum()) + int((given & ~last).sum())
        final_score = max(0.0, (tp - wrong) / max(1, int(target.sum())))
        process_ok = checks["start"] and checks["given_unchanged"] and checks["no_spurious"] and len(f) >= 2
        if not checks["start"]:
            score = 0.0  # the video does not start from the task: nothing to credit
        else:
            score = final_score if process_ok else 0.5 * final_score
        passed = all(checks.values()) and len(f) >= 2
        if len(f) < 2:
            reasons.append("a single frame shows no process")
        ev.update({"checks": checks, "reasons": reasons, "accuracy": round(acc, 4), "rise_score": rise,
                   "fn": fn, "fp": fp, "colour_errors": colour_errors,
                   "filled_per_frame": (coloured & target[None]).sum(axis=(1, 2)).tolist()})
        dbg = f[-1].copy()
        for r in range(ROWS):
            for c in range(COLS):
                if expected[r, c] != last[r, c]:
                    x0, y0, x1, y1 = grid.rect(r, c)
                    cv2.rectangle(dbg, (x0, y0), (x1 - 1, y1 - 1), (255, 0, 255), 2)
        return VerifyResult(float(score), bool(passed), ev, dbg)
