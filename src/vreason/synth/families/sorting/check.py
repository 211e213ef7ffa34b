"""Checks of the sorting family: bars are solid, move at plausible speeds and swap one neighbour pair at a time.

Everything is measured at the verifier's working size in slots, canvas heights and seconds:

* solid — every bar is seen *whole* in every frame (its colour's largest component has the bar's
  width and height within a pixel or two and fills its box): a bar hidden behind another, cut in
  two or gone is a violation, never forgiven as "missing";
* no overlap — two bars' boxes never intersect (1 px of codec bleeding allowed);
* no pass-through — two bars exchange their left/right order only while one is lifted clear of the
  other (vertical extents disjoint) in one of the two frames around the exchange: bars sliding
  through each other on the shelf, and cuts or fades between arrangements, fail;
* speed — sideways ≤ ``V_SLOT`` slots/s and vertically ≤ ``V_LIFT`` canvas heights/s (+ tracking
  tolerance), from the frames' own times;
* one move at a time — at most one bar off the shelf per frame, each change between rest
  arrangements is one swap of neighbours, and the number of swaps is between the inversions and
  twice that + 4;
* nothing else — no second blob of a bar's colour, no object of a colour no bar has;
* dense enough — consecutive frames at most 0.25 s apart (a sparser video cannot show a swap);
* end state — every frame of the last 0.15 s shows all bars at rest, sorted.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from vreason.synth import draw
from vreason.synth import frametools as ft

V_SLOT = 12.0
"""Fastest plausible sideways speed, slots per second (the ground truth carries ≤ 4 slots/s)."""
V_LIFT = 10.0
"""Fastest plausible vertical speed, canvas heights per second (the ground truth lifts ≤ 3.2 h/s)."""
TOL_SLOT = 0.15
TOL_LIFT = 0.05
WHOLE_W, WHOLE_H, WHOLE_FILL = 0.8, 0.85, 0.75
"""A bar is whole when its box is ≥ 80% of its width and ≥ 85% of its height (−1 px) and ≥ 75% filled."""
MAX_FRAME_GAP_S = 0.25
"""Consecutive frames further apart than this (under 4 fps) cannot show a swap (2× the ground truth's
speed swaps neighbours in ~0.4 s): an explicit verdict, never a pass."""
EXTRA_AREA = 0.25
"""A second blob (of a bar's colour, or of a colour no bar has) counts from this fraction of the smallest bar."""


def observe(f: np.ndarray, bars: list[dict], g: dict[str, float]) -> tuple[list[list[Any]], np.ndarray]:
    """Per bar per frame ``(cx, bottom, top, x0, x1, whole)`` or None; and per frame whether an extra blob shows."""
    T, h, w = f.shape[:3]
    labels = draw.hue_labels(draw.to_hsv(f))
    ids = [draw.COLOUR_INDEX[b["colour"]] for b in bars]
    smallest = min(b["h"] for b in bars) * h * g["bar_w"]
    extra = np.zeros(T, bool)
    obs: list[list[Any]] = []
    for b, k in zip(bars, ids, strict=True):
        comps = draw.frame_components(ft.open_stack((labels == k).astype(np.uint8)), connectivity=4)
        exp_h = b["h"] * h
        track: list[Any] = []
        for i, c in enumerate(comps):
            if len(c) == 0:
                track.append(None)
                continue
            x0, y0, bw, bh, area = (int(v) for v in c[0])
            if len(c) > 1 and c[1, 4] >= EXTRA_AREA * smallest:
                extra[i] = True
            if area < 0.2 * exp_h * g["bar_w"]:
                track.append(None)
                continue
            whole = (bw >= WHOLE_W * g["bar_w"] - 1 and bh >= WHOLE_H * exp_h - 1 and bw <= 1.5 * g["bar_w"] + 2
                     and bh <= 1.4 * exp_h + 2 and area >= WHOLE_FILL * bw * bh)
            track.append((x0 + bw / 2.0, float(y0 + bh), float(y0), float(x0), float(x0 + bw), bool(whole)))
        obs.append(track)
    other = (labels > 0) & ~np.isin(labels, ids)
    for i, c in enumerate(draw.frame_components(ft.open_stack(other.astype(np.uint8)))):
        if len(c) and c[0, 4] >= EXTRA_AREA * smallest:
            extra[i] = True
    return obs, extra


def analyse(obs: list[list[Any]], extra: np.ndarray, t: np.ndarray, bars: list[dict], g: dict[str, float],
            h: int, initial: list[int]) -> dict[str, Any]:
    """Checks, reasons and the measurements behind them (see the module docstring)."""
    n, T = len(bars), len(t)
    slot, base = g["slot"], g["base"]
    slot_x = np.array([g["x0"] + (i + 0.5) * slot for i in range(n)])
    checks: dict[str, bool] = {}
    reasons: list[str] = []
    gap = float(np.diff(t).max()) if T > 1 else float("inf")
    checks["dense_enough"] = gap <= MAX_FRAME_GAP_S
    if not checks["dense_enough"]:
        reasons.append("a single frame cannot show the bars move" if T < 2 else
                       f"frames {gap:.2f} s apart: too sparse to show the bars move (at most {MAX_FRAME_GAP_S} s)")
    not_whole = sum(1 for tr in obs for p in tr if p is None or not p[5])
    checks["solid"] = not_whole == 0 and T >= 2
    if not_whole:
        reasons.append(f"a bar is missing or partly hidden {not_whole} time(s) (bars are solid and never vanish)")
    overlaps = pass_through = 0
    for a in range(n):
        for b in range(a + 1, n):
            prev = None
            for i in range(T):
                pa, pb = obs[a][i], obs[b][i]
                if pa is None or pb is None:
                    continue
                xo = min(pa[4], pb[4]) - max(pa[3], pb[3])
                yo = min(pa[1], pb[1]) - max(pa[2], pb[2])
                overlaps += int(xo > 1 and yo > 1)
                side = np.sign(pa[0] - pb[0]) if abs(pa[0] - pb[0]) > 0.05 * slot else 0
                level = yo > 0  # the two bars share a height band: neither is clear of the other
                if prev is not None and side and prev[0] and side != prev[0] and level and prev[1]:
                    pass_through += 1
                if side:
                    prev = (side, level)
    checks["no_overlap"] = overlaps == 0
    if overlaps:
        reasons.append(f"bars overlap {overlaps} time(s) (they are solid)")
    checks["no_pass_through"] = pass_through == 0
    if pass_through:
        reasons.append(f"{pass_through} time(s) two bars change places without one lifted clear over the other "
                       "(passing through each other, a cut or a fade)")
    jumps, worst = 0, 0.0
    for tr in obs:
        seen = [(i, p) for i, p in enumerate(tr) if p is not None]
        for (ia, pa), (ib, pb) in zip(seen, seen[1:], strict=False):
            dt = float(t[ib] - t[ia])
            r = max(abs(pa[0] - pb[0]) / ((V_SLOT * dt + TOL_SLOT) * slot),
                    abs(pa[1] - pb[1]) / ((V_LIFT * dt + TOL_LIFT) * h))
            worst = max(worst, r)
            jumps += int(r > 1)
    checks["no_teleport"] = jumps == 0
    if jumps:
        reasons.append(f"{jumps} jump(s) faster than {V_SLOT:g} slots/s sideways or {V_LIFT:g} heights/s up/down")
    lifted = np.array([[p is not None and base - p[1] > 0.05 * h for p in tr] for tr in obs]).reshape(n, T)
    multi = int((lifted.sum(axis=0) > 1).sum())
    # rest arrangements: frames where every bar stands on the shelf at its own slot
    rest: list[tuple[int, ...] | None] = []
    for i in range(T):
        arr = [-1] * n
        for b in range(n):
            p = obs[b][i]
            if p is None or abs(p[1] - base) > 0.04 * h:
                break
            s = int(np.argmin(np.abs(slot_x - p[0])))
            if abs(slot_x[s] - p[0]) > 0.15 * slot or arr[s] != -1:
                break
            arr[s] = b
        else:
            rest.append(tuple(arr))
            continue
        rest.append(None)
    seq: list[tuple[int, ...]] = []
    for a in rest:
        if a is not None and (not seq or seq[-1] != a):
            seq.append(a)
    checks["start"] = rest[0] == tuple(initial)
    if not checks["start"]:
        reasons.append("frame 0 does not show the task's arrangement")
    bad_moves = 0
    for a, b in zip(seq, seq[1:], strict=False):
        diff = [i for i in range(n) if a[i] != b[i]]
        if len(diff) != 2 or diff[1] != diff[0] + 1 or a[diff[0]] != b[diff[1]] or a[diff[1]] != b[diff[0]]:
            bad_moves += 1
    moves = max(0, len(seq) - 1)
    checks["one_move_at_a_time"] = bad_moves == 0 and multi == 0
    if bad_moves:
        reasons.append(f"{bad_moves} change(s) between arrangements are not one swap of neighbours")
    if multi:
        reasons.append(f"more than one bar off the shelf in {multi} frame(s)")
    k0 = sum(1 for i in range(n) for j in range(i + 1, n) if initial[i] > initial[j])
    checks["plausible_moves"] = k0 <= moves <= 2 * k0 + 4
    if not checks["plausible_moves"]:
        reasons.append(f"{moves} swap(s) for a task needing {k0}")
    checks["nothing_else"] = not extra.any()
    if extra.any():
        reasons.append(f"an extra object or a second blob of a bar's colour in {int(extra.sum())} frame(s)")
    fin = draw.end_window(t)
    ends = {rest[i] for i in fin}
    final = rest[-1]
    checks["sorted"] = None not in ends and len(ends) == 1 and list(final) == sorted(final)
    if not checks["sorted"]:
        reasons.append(f"the bars are not at rest and sorted in every frame of the last {draw.END_HOLD_S} s")
    return {"checks": checks, "reasons": reasons, "final": final, "moves": moves, "jumps": jumps,
            "overlaps": overlaps, "pass_through": pass_through, "not_whole": not_whole,
            "max_hop_ratio": round(worst, 3),
            "arrangements": [list(a) for a in seq[:50]]}
