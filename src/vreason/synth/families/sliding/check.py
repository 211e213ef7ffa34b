"""Reading a sliding-puzzle video: per-frame board readings, move legality and gliding checks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from vreason.synth import frametools as ft
from vreason.verify.frame_check import BORDER_PX

if TYPE_CHECKING:
    from vreason.synth.families.sliding.board import Painter

C = 12
"""Feature pixels per cell side (area-downsampled)."""
MARK_LEVEL = 40
"""A pixel of a read (stable) frame differs from the render of its reading when its corrected colour leaves
the render's 2-px neighbourhood range by more than this, measured as the shared residual measures it
(:func:`vreason.verify.residual.excess_map`: luma, and chroma averaged over 4×4 blocks as 4:2:0 codecs and JPEG
keep it; its per-pixel tolerance ``TOL``). The largest RGB channel (60 levels before) read MJPEG q 9–10's chroma
subsampling as 34 px over 60 — up to 127 — scattered along tile edges of a hard board (seed 11, frame 15), where
the luma/chroma excess was ≤ 41 (mostly < 12)."""
MARK_RANGE_PX = 2
"""The render's neighbourhood (px) a pixel may take its value from (a residual shake after stabilisation)."""
GLIDE_STEP = 0.55
"""Most of a cell a gliding tile may cover from one decoded frame to the next (its progress read on a 0.1 grid):
the oracle steps ≤ 0.2, its honest renderings at 8 fps, twice as fast or with frames dropped ≤ 0.4; a glide cut
short by a jump to the target (0.3 → 1.0 in one frame) is no glide."""
MARKS_PX_MAX = 24
"""Most such pixels a read frame may have (honest variants: 0; a 6-px stroke: hundreds)."""


def _max_marks(fixed: list[np.ndarray], arrs: list[tuple[int, ...] | None], painter: Painter) -> tuple[int, int]:
    """Largest count of pixels, over the settled frames, that the render of the reading does not explain
    (marks, scribbles, a changed background or inset). A frame is settled when the two frames on each side
    (those that exist) have its reading: the first frames of a glide, still read as the old board, are not."""
    # the picture's outer BORDER_PX px are not read (the shared layer's rule): a letterbox crop of a picture
    # decoded smaller (2.39:1 at 640 px wide) blends the bars' colour into the edge columns
    inner = np.zeros(fixed[0].shape[:2], bool)
    inner[BORDER_PX:-BORDER_PX, BORDER_PX:-BORDER_PX] = True
    cache: dict[tuple[int, ...], np.ndarray] = {}
    worst, where = 0, 0
    n = len(arrs)
    for i, a in enumerate(arrs):
        if a is None or any(arrs[j] != a for j in range(max(0, i - 2), min(n, i + 3))):
            continue
        if a not in cache:
            cache[a] = painter.board(a)
        v = int(_marked(fixed[i], cache[a], inner).sum())
        if v > worst:
            worst, where = v, i
    return worst, where


def _marked(frame: np.ndarray, board: np.ndarray, inner: np.ndarray) -> np.ndarray:
    """Bool mask of the pixels (inside ``inner``) that leave the ``board`` render's range by more than
    :data:`MARK_LEVEL` (:data:`MARK_RANGE_PX`), isolated specks removed (a 2×2 opening)."""
    import cv2

    from vreason.verify.residual import excess_map

    m = ((excess_map(frame, board, MARK_RANGE_PX) > MARK_LEVEL) & inner).astype(np.uint8)
    return cv2.morphologyEx(m, cv2.MORPH_OPEN, np.ones((2, 2), np.uint8)) > 0


class Reader:
    def __init__(self, state: dict[str, Any], painter: Painter):
        self.s, self.p = state, painter
        n, t = state["n"], state["tile"]
        self.n = n
        blank = np.empty((t, t, 3), np.uint8)
        blank[:] = painter.bg[state["by"], state["bx"]]
        cells = [blank] + [painter.sprites[k] for k in range(1, n * n)]
        self.templates = np.stack([ft.small(c, (C, C)) for c in cells])  # (K, C, C, 3)
        k = len(cells)
        d = np.array([[np.abs(self.templates[i] - self.templates[j]).mean() for j in range(k)] for i in range(k)])
        self.dmin = float(d[~np.eye(k, dtype=bool)].min())
        self.thr = min(30.0, 0.42 * self.dmin)
        h, w = painter.bg.shape[:2]
        self.ref_small = ft.small(painter.bg, (w // 8, h // 8))
        mask = np.ones(self.ref_small.shape[:2], bool)
        bx, by, side = state["bx"] // 8, state["by"] // 8, n * t // 8
        mask[max(0, by - 1):by + side + 2, max(0, bx - 1):bx + side + 2] = False
        self.mask = mask

    def correct(self, frame: np.ndarray) -> np.ndarray:
        """The frame colour-corrected against the static area (background and target inset, which holds
        every tile colour): a global hue rotation is undone first, then an affine colour map."""
        return ft.correct(frame, self.ref_small, self.mask, affine=True)

    def cells(self, frame: np.ndarray) -> np.ndarray:
        """Distances (cells, templates) of one (colour-corrected) frame."""
        n, t, bx, by = self.n, self.s["tile"], self.s["bx"], self.s["by"]
        feat = ft.small(frame[by:by + n * t, bx:bx + n * t], (n * C, n * C))
        feat = feat.reshape(n, C, n, C, 3).transpose(0, 2, 1, 3, 4).reshape(n * n, 1, C, C, 3)
        return np.abs(feat - self.templates[None]).mean(axis=(2, 3, 4))

    def region(self, a: int, b: int) -> tuple[int, int, int, int]:
        (xa, ya), (xb, yb) = self.p.cell_xy(a), self.p.cell_xy(b)
        t = self.s["tile"]
        return min(xa, xb), min(ya, yb), max(xa, xb) + t, max(ya, yb) + t

    def region_feat(self, img: np.ndarray, rect: tuple[int, int, int, int]) -> np.ndarray:
        x0, y0, x1, y1 = rect
        t = self.s["tile"]
        return ft.small(img[y0:y1, x0:x1], ((x1 - x0) // t * C, (y1 - y0) // t * C))


def _legal(a_arr: tuple[int, ...], b_arr: tuple[int, ...], n: int) -> tuple[int, int] | None:
    from vreason.synth.families.sliding.board import neighbors

    diff = [i for i in range(n * n) if a_arr[i] != b_arr[i]]
    if len(diff) != 2:
        return None
    i, j = diff
    src, dst = (i, j) if a_arr[j] == 0 else (j, i)
    if a_arr[dst] == 0 and b_arr[src] == 0 and a_arr[src] == b_arr[dst] and dst in neighbors(n, src):
        return src, dst
    return None


def check_video(frames: list[np.ndarray], state: dict[str, Any], painter: Painter,
                end: Sequence[int] = ()) -> tuple[dict[str, bool], dict[str, Any]]:
    """The checks of a sliding video (frames with the camera undone). ``end``: the frames of the suite's end window
    (:func:`vreason.synth.draw.end_window`; default the last): each must read as the target, and the last must show
    the target board as rendered (no more of any pixel than a settled frame may leave: a tile 5% short of its cell
    still reads as the target)."""
    rd = Reader(state, painter)
    n = rd.n
    it, m = n * state["itile"], 12  # register on the target inset (static, textured), not the moving board
    inset = (state["ix"] - m, state["iy"] - m - 16, state["ix"] + it + m, state["iy"] + it + m)
    frames, shifts = ft.stabilise(frames, painter.bg, box=inset)
    fixed = [rd.correct(f) for f in frames]
    dists = np.stack([rd.cells(f) for f in fixed])  # (F, cells, K)
    best = dists.min(axis=2)
    stable = (best <= rd.thr).all(axis=1)
    arrs = [tuple(int(v) for v in dists[i].argmin(axis=1)) if stable[i] else None for i in range(len(frames))]
    runs: list[list[Any]] = []  # [arrangement, first, last]
    for i, a in enumerate(arrs):
        if a is None:
            continue
        if runs and runs[-1][0] == a and runs[-1][2] == i - 1:
            runs[-1][2] = i
        else:
            runs.append([a, i, i])
    start, target = tuple(state["start"]), tuple(state["target"])
    moves: list[dict[str, Any]] = []
    legal_all, glide_all, others_all = True, True, True
    for (a_arr, _, la), (b_arr, fb, _) in zip(runs, runs[1:], strict=False):
        gap = list(range(la + 1, fb))
        if a_arr == b_arr:  # a wobble that came back: every cell must stay close to the arrangement
            ok = all(dists[g, c, a_arr[c]] <= 2 * rd.thr for g in gap for c in range(n * n))
            others_all &= ok
            moves.append({"frames": [la, fb], "kind": "no change", "ok": ok})
            continue
        mv = _legal(a_arr, b_arr, n)
        if mv is None:
            legal_all = False
            moves.append({"frames": [la, fb], "kind": "illegal", "changed_cells": int(sum(
                x != y for x, y in zip(a_arr, b_arr, strict=True)))})
            continue
        src, dst = mv
        rect = rd.region(src, dst)
        ps = np.linspace(0, 1, 11)
        hyps = np.stack([rd.region_feat(painter.board(a_arr, (src, dst, float(p))), rect) for p in ps])
        seq, worst = [], 0.0
        for g in [la, *gap, fb]:
            d = np.abs(hyps - rd.region_feat(fixed[g], rect)[None]).mean(axis=(1, 2, 3))
            k = int(d.argmin())
            seq.append(float(ps[k]))
            if g in gap:
                worst = max(worst, float(d[k]))
        mids = [p for p in seq[1:-1] if 0.15 <= p <= 0.85]
        monotone = all(y >= x - 0.2 for x, y in zip(seq, seq[1:], strict=False))
        step = max(abs(y - x) for x, y in zip(seq, seq[1:], strict=False))
        glide = bool(gap) and bool(mids) and monotone and step <= GLIDE_STEP and worst <= 1.3 * rd.thr
        rest = [c for c in range(n * n) if c not in (src, dst)]
        others = all(dists[g, c, a_arr[c]] <= rd.thr for g in gap for c in rest)
        glide_all &= glide
        others_all &= others
        moves.append({"frames": [la, fb], "tile": int(a_arr[src]), "from": src, "to": dst, "progress": seq,
                      "largest_step": round(step, 2),
                      "worst_match": round(worst, 2), "glides": glide, "others_unchanged": others})
    transitions = [m for m in moves if m.get("kind") != "no change"]
    marks, marks_frame = _max_marks(fixed, arrs, painter)
    inner = np.zeros(fixed[-1].shape[:2], bool)
    inner[BORDER_PX:-BORDER_PX, BORDER_PX:-BORDER_PX] = True
    end_px = int(_marked(fixed[-1], painter.board(target), inner).sum())
    window = [int(i) for i in end] or [len(arrs) - 1]
    checks = {
        "starts_at_start": arrs[0] == start,
        "reaches_target": all(arrs[i] == target for i in window) and end_px <= MARKS_PX_MAX,
        "legal_moves": bool(transitions) and legal_all,
        "continuous_motion": bool(transitions) and legal_all and glide_all,
        "others_unchanged": others_all,
        "nothing_else_drawn": marks <= MARKS_PX_MAX,
    }
    evidence = {
        "moves": moves, "first_reading": list(arrs[0]) if arrs[0] else None,
        "final_reading": list(arrs[-1]) if arrs[-1] else None, "start": list(start), "target": list(target),
        "stable_frames": int(stable.sum()), "n_frames": len(frames), "match_threshold": round(rd.thr, 2),
        "template_min_distance": round(rd.dmin, 2), "changed_px": marks, "changed_px_frame": marks_frame,
        "changed_px_limit": MARKS_PX_MAX,
        "end_window": [window[0], window[-1]], "end_px_off_target": end_px, "change_level": MARK_LEVEL,
        "camera_shift_max_px": float(np.abs(np.array(shifts)).max()),
    }
    if arrs[-1] is None:
        evidence["reason"] = "the board cannot be read in the last frame"
    return checks, evidence
