"""Bar sorting: coloured bars of different heights are sorted shortest → tallest, one swap at a time.

Each bar has its own colour, so the verifier tracks every bar by colour in every frame
(HSV mask → bounding box). From the frames where all bars rest on the shelf at slot
positions it reads the sequence of arrangements and checks the process: frame 0 shows the
task's arrangement, bars never vanish, never jump (≤ 0.9 slot sideways per frame), every change
between arrangements is one swap of two bars, each swapped bar is seen in transit
(lifted or between slots — a cut or a cross-fade never shows that), and the number of
moves is plausible. End state: the last frame's arrangement is sorted.
Score = 1 − remaining inversions / initial inversions, halved when the process fails
(0 when the task's start is not recognised); pass = every check holds.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from vreason.synth import draw
from vreason.synth.base import RenderConfig, TaskFamily, TaskInstance, VerifyResult, family

_LEVELS = {"easy": (4, 2), "medium": (5, 3), "hard": (6, 4)}  # bars, adjacent swaps needed
_PALETTE = ("red", "orange", "yellow", "green", "cyan", "blue", "purple")
BASE_Y = 0.9
MAX_SLOTS_PER_FRAME = 0.9
MAX_LIFT_PER_FRAME = 0.6  # of the canvas height


def inversions(seq: list[float]) -> int:
    return sum(1 for i in range(len(seq)) for j in range(i + 1, len(seq)) if seq[i] > seq[j])


def min_swaps(perm: list[int]) -> int:
    """Fewest arbitrary swaps sorting ``perm`` (a permutation of 0..n-1): n − cycles."""
    seen, cycles = set(), 0
    for i in range(len(perm)):
        if i not in seen:
            cycles += 1
            j = i
            while j not in seen:
                seen.add(j)
                j = perm[j]
    return len(perm) - cycles


def _geometry(n: int, w: int, h: int) -> dict[str, float]:
    slot = w * 0.8 / n
    return {"slot": slot, "x0": w * 0.1, "bar_w": slot * 0.5, "base": h * BASE_Y, "gap": h * 0.05}


def _timeline(n: int, k: int) -> tuple[int, float]:
    hold_a = max(1, n // 16)
    hold_b = max(1, n // 10)
    return hold_a, max(1, n - hold_a - hold_b) / max(k, 1)


@family
class Sorting(TaskFamily):
    name = "sorting"
    version = "1"
    directional = True
    process_rule = True
    decode_scale = 0.25
    """Verification works at this fraction of the canvas; the scorer may decode at that size."""

    def make(self, rng, difficulty, index, seed, cfg: RenderConfig) -> TaskInstance:
        n, k = _LEVELS[difficulty]
        colours = [str(c) for c in rng.choice(_PALETTE, size=n, replace=False)]
        levels = np.linspace(0.13, 0.40, 8)
        heights = sorted(float(x) for x in rng.choice(levels, size=n, replace=False))  # rank i → height
        while True:
            perm = [int(x) for x in rng.permutation(n)]  # slot → rank
            if inversions(perm) == k and min_swaps(perm) >= 2:
                break
        bars = [{"colour": colours[r], "h": heights[r]} for r in range(n)]  # bar id = rank
        state: dict[str, Any] = {"bars": bars, "initial": perm, "canvas": [cfg.width, cfg.height]}
        swaps, cur = [], list(perm)
        for _ in range(k):  # bubble sort: adjacent swaps of out-of-order neighbours
            i = next(i for i in range(n - 1) if cur[i] > cur[i + 1])
            swaps.append(i)
            cur[i], cur[i + 1] = cur[i + 1], cur[i]
        state["solution"] = swaps
        frames = self.render(state, swaps, cfg.n_frames)
        prompt = (
            "Coloured bars of different heights stand in a row on a shelf. Rearrange them so that they "
            "end up ordered from the shortest on the left to the tallest on the right. Only one pair of "
            "bars changes places at a time: a bar is lifted, carried over its neighbour and set down "
            "again. Bars never disappear or pass through each other, and the camera stays still."
        )
        return TaskInstance(self.name, difficulty, index, seed, prompt, frames[0], frames[-1], frames,
                            state, self.directional, self.process_rule)

    def render(self, state: dict, swaps: list[int], n_frames: int) -> list[np.ndarray]:
        w, h = state["canvas"]
        bars = state["bars"]
        g = _geometry(len(bars), w, h)
        slot_x = [g["x0"] + (i + 0.5) * g["slot"] for i in range(len(bars))]
        hold_a, per = _timeline(n_frames, len(swaps))
        arrangement = list(state["initial"])
        # per swap: (start frame, i); arrangement before each swap
        befores = []
        cur = list(arrangement)
        for i in swaps:
            befores.append(list(cur))
            cur[i], cur[i + 1] = cur[i + 1], cur[i]
        final = cur
        bg = draw.canvas(w, h)
        draw.rect(bg, w * 0.05, g["base"], w * 0.95, g["base"] + max(2, h * 0.015), draw.GRID_GREY)
        out = []
        for f in range(n_frames):
            u = (f - hold_a + 1) / per if swaps else 0.0
            k = int(np.floor(u)) if u > 0 else -1
            pos: dict[int, tuple[float, float]] = {}  # bar → (x centre, bottom lift in px)
            if k < 0:
                for s, b in enumerate(arrangement):
                    pos[b] = (slot_x[s], 0.0)
            elif k >= len(swaps):
                for s, b in enumerate(final):
                    pos[b] = (slot_x[s], 0.0)
            else:
                before, i, t = befores[k], swaps[k], u - k
                for s, b in enumerate(before):
                    pos[b] = (slot_x[s], 0.0)
                tall, short = before[i], before[i + 1]
                lift = (bars[short]["h"] * h) + g["gap"]
                # rest, lift, carry over (the other bar slides under), set down, rest
                if t < 0.35:
                    pos[tall] = (slot_x[i], lift * draw.ease((t - 0.1) / 0.25))
                elif t < 0.65:
                    v = (t - 0.35) / 0.3
                    pos[tall] = (slot_x[i] + v * g["slot"], lift)
                    pos[short] = (slot_x[i + 1] - v * g["slot"], 0.0)
                else:
                    pos[tall] = (slot_x[i + 1], lift * (1 - draw.ease((t - 0.65) / 0.25)))
                    pos[short] = (slot_x[i], 0.0)
            img = bg.copy()
            for b, (x, lift) in pos.items():
                bh = bars[b]["h"] * h
                y1 = g["base"] - lift
                draw.rect(img, x - g["bar_w"] / 2, y1 - bh, x + g["bar_w"] / 2, y1, draw.rgb(bars[b]["colour"]))
            out.append(img)
        return out

    def random_motion(self, inst: TaskInstance, rng, cfg: RenderConfig) -> list[np.ndarray]:
        """As many neighbour swaps as the solution, chosen at random (never ending sorted)."""
        st = inst.state
        n = len(st["bars"])
        for _ in range(100):
            cur, swaps = list(st["initial"]), []
            for _ in range(len(st["solution"])):
                i = int(rng.integers(n - 1))
                swaps.append(i)
                cur[i], cur[i + 1] = cur[i + 1], cur[i]
            if cur != sorted(cur):
                break
        # the renderer lifts the left bar of each pair; fine for any pair
        return self.render(st, swaps, cfg.n_frames)

    # ----------------------------------------------------------------- verification
    def verify(self, frames, state, cfg: RenderConfig) -> VerifyResult:
        import cv2

        w0, h0 = state["canvas"]
        s = 0.25
        w, h = max(2, int(round(w0 * s))), max(2, int(round(h0 * s)))
        bars = state["bars"]
        n = len(bars)
        g = _geometry(n, w, h)
        slot_x = np.array([g["x0"] + (i + 0.5) * g["slot"] for i in range(n)])
        ev: dict[str, Any] = {"n_frames": len(frames)}
        if not frames:
            return VerifyResult(0.0, False, {**ev, "reasons": ["no frames"]})
        f = draw.stack(frames, w, h)
        labels = draw.hue_labels(draw.to_hsv(f))
        T = len(f)
        # per bar, per frame: (cx, bottom) or None
        obs: list[list[tuple[float, float] | None]] = []
        for b in bars:
            m = (labels == draw.COLOUR_INDEX[b["colour"]]).astype(np.uint8)
            # opening (on the stacked frames at once) strips thin colour fringes of codec edges
            m = cv2.morphologyEx(m.reshape(T * h, w), cv2.MORPH_OPEN, np.ones((3, 3), np.uint8)).reshape(T, h, w)
            exp_h, exp_area = b["h"] * h, b["h"] * h * g["bar_w"]
            comps = draw.frame_components(m, connectivity=4)
            obs.append([_bar_box(c, exp_h, g["bar_w"], exp_area) for c in comps])
        reasons: list[str] = []
        checks: dict[str, bool] = {}
        tol = max(1, int(0.05 * T))
        missing = [sum(1 for p in tr if p is None) for tr in obs]
        checks["visible"] = max(missing) <= tol and T >= 2
        if not checks["visible"]:
            reasons.append(f"a bar is missing in up to {max(missing)} frame(s) (tolerance {tol})")
        jumps = 0
        for tr in obs:
            seen = [(t, p) for t, p in enumerate(tr) if p is not None]
            for (ta, pa), (tb, pb) in zip(seen, seen[1:], strict=False):
                # sideways is where a cut or fade jumps; lifting is allowed to be quick
                if (abs(pa[0] - pb[0]) > MAX_SLOTS_PER_FRAME * g["slot"] * (tb - ta)
                        or abs(pa[1] - pb[1]) > MAX_LIFT_PER_FRAME * h * (tb - ta)):
                    jumps += 1
        checks["no_teleport"] = jumps == 0
        if jumps:
            reasons.append(f"{jumps} jump(s) of more than {MAX_SLOTS_PER_FRAME} slot in one frame")
        # arrangements: frames where every bar rests on the shelf at a distinct slot
        states: list[tuple[int, tuple[int, ...]]] = []
        for t in range(T):
            arr = [-1] * n
            ok = True
            for b in range(n):
                p = obs[b][t]
                if p is None or abs(p[1] - g["base"]) > 0.04 * h:
                    ok = False
                    break
                sidx = int(np.argmin(np.abs(slot_x - p[0])))
                if abs(slot_x[sidx] - p[0]) > 0.15 * g["slot"] or arr[sidx] != -1:
                    ok = False
                    break
                arr[sidx] = b
            if ok:
                states.append((t, tuple(arr)))
        seq: list[tuple[int, int, tuple[int, ...]]] = []  # (first frame, last frame, arrangement)
        for t, a in states:
            if seq and seq[-1][2] == a:
                seq[-1] = (seq[-1][0], t, a)
            else:
                seq.append((t, t, a))
        initial = tuple(state["initial"])
        checks["start"] = bool(states) and states[0][0] == 0 and states[0][1] == initial
        if not checks["start"]:
            reasons.append("frame 0 does not show the task's arrangement")
        bad_moves, no_transit = 0, 0
        for (_, end_a, a), (start_b, _, b_) in zip(seq, seq[1:], strict=False):
            diff = [i for i in range(n) if a[i] != b_[i]]
            if len(diff) != 2 or a[diff[0]] != b_[diff[1]] or a[diff[1]] != b_[diff[0]]:
                bad_moves += 1
                continue
            for i in diff:
                bar = a[i]
                lo_x, hi_x = sorted((slot_x[diff[0]], slot_x[diff[1]]))
                transit = [obs[bar][t] for t in range(end_a + 1, start_b) if obs[bar][t] is not None]
                if not any(g["base"] - p[1] > 0.05 * h or lo_x + 0.25 * g["slot"] < p[0] < hi_x - 0.25 * g["slot"]
                           for p in transit):
                    no_transit += 1
        moves = len(seq) - 1 if seq else 0
        checks["one_move_at_a_time"] = bad_moves == 0
        checks["continuous_moves"] = no_transit == 0
        if bad_moves:
            reasons.append(f"{bad_moves} change(s) between arrangements are not a single swap")
        if no_transit:
            reasons.append(f"{no_transit} swapped bar(s) never seen in transit (a cut or a fade)")
        k0 = inversions(list(initial))
        checks["plausible_moves"] = min_swaps(list(initial)) <= moves <= 2 * k0 + 4
        if not checks["plausible_moves"]:
            reasons.append(f"{moves} move(s) for a task needing {min_swaps(list(initial))}–{k0}")
        final = seq[-1][2] if seq and seq[-1][1] == T - 1 else None
        checks["sorted"] = final is not None and list(final) == sorted(final)
        if not checks["sorted"]:
            reasons.append("the last frame does not show the bars sorted at rest" if final is None
                           else "the last frame's bars are not sorted")
        progress = 0.0 if final is None else max(0.0, 1 - inversions(list(final)) / max(k0, 1))
        if not (checks["start"] and checks["visible"]):
            score = 0.0
        elif all(checks[c] for c in ("no_teleport", "one_move_at_a_time", "continuous_moves", "plausible_moves")):
            score = progress
        else:
            score = 0.5 * progress
        passed = all(checks.values())
        inv = 1 / s
        ev.update({"checks": checks, "reasons": reasons, "moves": moves, "progress": round(progress, 4),
                   "arrangements": [[a, b, list(c)] for a, b, c in seq[:50]],
                   "tracks": {bars[b]["colour"]: [None if p is None else [round(p[0] * inv, 1), round(p[1] * inv, 1)]
                                                  for p in obs[b]] for b in range(n)}})
        dbg = f[-1].copy()
        for b in range(n):
            pts = [(p[0], p[1]) for p in obs[b] if p is not None]
            draw.polyline(dbg, pts, (0, 0, 0), 1)
        return VerifyResult(float(score), bool(passed), ev, dbg)


def _bar_box(comps: np.ndarray, exp_h: float, bar_w: float, exp_area: float) -> tuple[float, float] | None:
    """(x centre, bottom y) of the largest component if it is a solid, bar-shaped one, else None."""
    if len(comps) == 0:
        return None
    x0, y0, bw, bh, area = (int(v) for v in comps[0])
    if bw > 1.5 * bar_w + 2 or bh > 1.4 * exp_h + 2 or bw < 0.5 * bar_w or bh < 0.5 * exp_h:
        return None
    if area < 0.5 * exp_area or area < 0.6 * bw * bh:
        return None
    return x0 + bw / 2.0, float(y0 + bh)
