"""Sequence completion: a row of cells follows a rule; one cell (dashed outline) is empty.

Rules: the number of items grows, the colour cycles, the shape cycles, an arrow turns in steps, the
item grows. Easy: one rule, the last cell is missing; medium: one rule, any cell; hard: two rules at
once, any cell. The solution fades the right element into the empty cell.

Verifier: every frame is explained by the family's scene (issue 24, :mod:`.scene`): aligned to the start
image, parsed once (exposure; every other card's shape × count state, by analysis by synthesis on ink-coverage
maps, and its element's palette colour; the blank card's element and opacity) and re-rendered, with no
unexplained blob left. The same parse gives the rules: no other card reads as another state or colour in any
frame (``others_unchanged``); the blank card in the last three frames, as the scene aligned them, is compared
with renders of the right element, of distractors (one attribute changed, or a neighbour's element) and of
the empty card on 24×24 area-downsampled features: the right element must be the nearest, by a margin
(≤ 0.8 × the next) and within ``ANSWER_MAX``, and the last frame must show it at opacity ≥ ``ALPHA_MIN``.
Directional (a reversed video ends empty); no process rule (a cut to the completed row is a
valid answer). Measured tolerances: docs/suite_validity.md.
"""

from __future__ import annotations

from collections.abc import Sequence as TimeSeq
from typing import Any

import numpy as np

from vreason.synth import frametools as ft
from vreason.synth.base import RenderConfig, TaskFamily, TaskInstance, VerifyResult, family
from vreason.synth.draw import canvas
from vreason.synth.shapes import PALETTE, SHAPES, dashed_rect, draw_shape

BG = (238, 236, 230)
CELL_BG = (252, 252, 250)
EDGE = (120, 120, 120)
N_CELLS = {"easy": 4, "medium": 5, "hard": 6}
RULES = ("count", "colour", "shape", "rotation", "size")
LAYOUT = {1: [(0, 0)], 2: [(-1, 0), (1, 0)], 3: [(-1, 0.8), (1, 0.8), (0, -0.9)],
          4: [(-1, -1), (1, -1), (-1, 1), (1, 1)], 5: [(-1, -1), (1, -1), (0, 0), (-1, 1), (1, 1)],
          6: [(-1, -1.1), (1, -1.1), (-1, 0), (1, 0), (-1, 1.1), (1, 1.1)]}
FEAT = 24
ANSWER_MAX = 18.0
"""Largest feature distance (mean absolute difference, 0..255, 24×24 features of the corrected frame) of the
filled cell from the right element. Honest variants measured ≤ 5.1 (12.1 before saturated pixels were kept at
the top when undoing a brighter exposure); wrong elements are rejected by the margin to the next candidate."""
ALPHA_MIN = 0.9
"""The blank card's parsed opacity of the answer in the last frame must reach this (a video that ends while the
answer is still fading in has not shown it)."""


def geometry(n: int, cfg: RenderConfig) -> dict[str, int]:
    gap = 14
    cell = int(min(0.42 * cfg.height, (cfg.width - 40 - gap * (n - 1)) / n))
    x0 = (cfg.width - n * cell - (n - 1) * gap) // 2
    return {"cell": cell, "gap": gap, "x0": x0, "y0": (cfg.height - cell) // 2}


def cell_rect(state: dict[str, Any], i: int) -> tuple[int, int, int, int]:
    x = state["x0"] + i * (state["cell"] + state["gap"])
    return x, state["y0"], x + state["cell"], state["y0"] + state["cell"]


def draw_element(img: np.ndarray, spec: dict[str, Any], rect: tuple[int, int, int, int]) -> None:
    x0, y0, x1, y1 = rect
    size = x1 - x0
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    k = int(spec["count"])
    r = (0.36 if k == 1 else 0.13 if k > 2 else 0.17) * size * spec["scale"]
    step = 0.2 * size if k > 2 else 0.22 * size
    for dx, dy in LAYOUT[k]:
        draw_shape(img, spec["shape"], cx + dx * step, cy + dy * step, r, tuple(spec["color"]), spec["rotation"])


def render_row(state: dict[str, Any], cfg: RenderConfig, fill: dict[str, Any] | None = None,
               alpha: float = 1.0) -> np.ndarray:
    """The row with the missing cell empty, or holding ``fill`` blended in with ``alpha``."""
    import cv2

    img = canvas(cfg.width, cfg.height, BG)
    miss = state["missing"]
    for i, spec in enumerate(state["cells"]):
        x0, y0, x1, y1 = cell_rect(state, i)
        img[y0:y1, x0:x1] = CELL_BG
        if i == miss:
            dashed_rect(img, x0, y0, x1 - 1, y1 - 1, EDGE, dash=9, thickness=2)
        else:
            cv2.rectangle(img, (x0, y0), (x1 - 1, y1 - 1), EDGE, 2)
            draw_element(img, spec, (x0, y0, x1, y1))
    if fill is not None and alpha > 0:
        rect = cell_rect(state, miss)
        full = img.copy()
        draw_element(full, fill, rect)
        if alpha >= 1:
            return full
        x0, y0, x1, y1 = rect
        img[y0:y1, x0:x1] = (img[y0:y1, x0:x1] * (1 - alpha) + full[y0:y1, x0:x1] * alpha).astype(np.uint8)
    return img


CARD_FEAT = 2
"""Card features are the card's inside area-averaged over ``CARD_FEAT``×``CARD_FEAT`` px blocks."""
CARD_BLUR = 1.0
"""Gaussian blur (sigma, px) of the coverage map before averaging: scaling blur and codec ringing of an
honest video cost the expected state little more than its neighbours."""
CARD_INSET = 4
"""Pixels of the card's border (2 px) and its rim left out of the card features (a sub-pixel residual shift
of the border would otherwise dominate)."""
CARD_RATIO_MAX = 1.0
"""A card's content parses as its expected state when the expected state's render is the nearest candidate:
its distance is below the nearest other state's (ratio < 1). Measured (docs/suite_validity.md): honest videos
≤ 0.75 (hard, half size with −15% exposure and −6° hue: four small hexagons against four pentagons; 0.67
for +15% exposure with +6° hue: two circles against two hexagons), cheats that change another card's shape
≥ 5.2 (seeds 9, 19, 632551154, 477868634, every difficulty: 128 clips). The limit sits 1.33× above the
honest maximum and 5.2× below the smallest cheat."""


def _card_feat(img: np.ndarray, colour: TimeSeq[float]) -> np.ndarray:
    """How much of each ``CARD_FEAT``-px block of a card is covered by ink of ``colour``: every pixel's
    offset from the card's background projected on the ink's (0 background, 1 ink), then area-averaged. A
    small hue or exposure residual scales the coverage a little instead of adding to every candidate's
    distance; the colour itself is read by :func:`_recoloured_cards`."""
    import cv2

    d = np.asarray(CELL_BG, np.float32) - np.asarray(colour, np.float32)
    cover = ((np.asarray(CELL_BG, np.float32) - img.astype(np.float32)) @ d) / float(d @ d)
    cover = cv2.GaussianBlur(cover, (0, 0), CARD_BLUR)
    h, w = cover.shape
    size = (max(1, w // CARD_FEAT), max(1, h // CARD_FEAT))
    return cv2.resize(cover, size, interpolation=cv2.INTER_AREA).reshape(-1)


def _card_candidates(state: dict[str, Any], i: int) -> tuple[list[str], np.ndarray]:
    """Every state card ``i`` could show with its own colour, rotation and size: each shape × each count
    (the expected state first) and the bare card, rendered on a bare card and reduced to card features.
    States whose render equals the expected one's (e.g. a rotated circle) are left out."""
    import cv2

    spec = state["cells"][i]
    x0, y0, x1, y1 = cell_rect(state, i)
    w, h = x1 - x0, y1 - y0
    specs: list[tuple[str, dict[str, Any] | None]] = [("expected", spec)] + [
        (f"{k} {s}", {**spec, "shape": s, "count": k})
        for s in SHAPES for k in range(1, 7) if (s, k) != (spec["shape"], int(spec["count"]))] + [("empty", None)]
    labels, feats = [], []
    for label, sp in specs:
        img = np.empty((h, w, 3), np.uint8)
        img[:] = CELL_BG
        cv2.rectangle(img, (0, 0), (w - 1, h - 1), EDGE, 2)
        if sp is not None:
            draw_element(img, sp, (0, 0, w, h))
        f = _card_feat(img[CARD_INSET:h - CARD_INSET, CARD_INSET:w - CARD_INSET], spec["color"])
        if feats and float(np.abs(f - feats[0]).mean()) < 0.002:
            continue
        labels.append(label)
        feats.append(f)
    return labels, np.stack(feats)


def _static_box(state: dict[str, Any]) -> tuple[int, int, int, int]:
    """The cards on the longer side of the blank one (never changing): what a camera shake is measured on."""
    n, miss = state["n"], state["missing"]
    idx = range(0, miss) if miss >= n - 1 - miss else range(miss + 1, n)
    x0, y0, _, _ = cell_rect(state, min(idx))
    _, _, x1, y1 = cell_rect(state, max(idx))
    return x0 - 6, y0 - 6, x1 + 6, y1 + 6


def _sequence(rng: np.random.Generator, n: int, rules: list[str]) -> list[dict[str, Any]]:
    names = list(PALETTE)
    base_color = names[int(rng.integers(len(names)))]
    shape = str(rng.choice(["circle", "square", "star", "triangle", "hexagon", "diamond"]))
    spec = {"shape": shape, "color": list(PALETTE[base_color]), "count": 1, "rotation": 0.0, "scale": 1.0}
    if "rotation" in rules:
        spec["shape"] = "arrow"
    if "count" in rules and spec["shape"] == "arrow":
        spec["scale"] = 1.25
    cells = [dict(spec) for _ in range(n)]
    for rule in rules:
        if rule == "count":
            c0 = int(rng.integers(1, 7 - n + 1)) if n < 6 else 1
            for i in range(n):
                cells[i]["count"] = c0 + i
        elif rule == "colour":
            period = 2 if n < 6 else int(rng.integers(2, 4))  # two full periods stay visible
            cyc = [PALETTE[c] for c in rng.choice(names, size=period, replace=False)]
            for i in range(n):
                cells[i]["color"] = list(cyc[i % period])
        elif rule == "shape":
            period = 2 if n < 6 else int(rng.integers(2, 4))  # two full periods stay visible
            pool = ["circle", "square", "star", "triangle", "cross", "diamond"]
            cyc = [str(s) for s in rng.choice(pool, size=period, replace=False)]
            for i in range(n):
                cells[i]["shape"] = cyc[i % period]
        elif rule == "rotation":
            step = float(rng.choice([45.0, 90.0])) * float(rng.choice([-1, 1]))
            r0 = float(rng.choice([0.0, 90.0, 180.0, 270.0]))
            for i in range(n):
                cells[i]["rotation"] = (r0 + i * step) % 360
        elif rule == "size":
            lo = 0.45
            st = (1.0 - lo) / (n - 1)
            order = range(n) if rng.random() < 0.5 else range(n - 1, -1, -1)
            for j, i in enumerate(order):
                cells[i]["scale"] = round(lo + j * st, 3)
    return cells


def _distractors(rng: np.random.Generator, cells: list[dict[str, Any]], miss: int) -> list[dict[str, Any]]:
    right = cells[miss]
    out: list[dict[str, Any]] = []

    def add(spec: dict[str, Any]) -> None:
        if spec != right and spec not in out:
            out.append(spec)

    for i in (miss - 1, miss + 1):
        if 0 <= i < len(cells):
            add(dict(cells[i]))
    if right["count"] > 1 or any(c["count"] > 1 for c in cells):
        for d in (-1, 1):
            if 1 <= right["count"] + d <= 6:
                add({**right, "count": right["count"] + d})
    colours = [list(c) for c in PALETTE.values() if list(c) != right["color"]]
    add({**right, "color": colours[int(rng.integers(len(colours)))]})
    if right["shape"] == "arrow":
        add({**right, "rotation": (right["rotation"] + 90) % 360})
        add({**right, "rotation": (right["rotation"] + 180) % 360})
    else:
        add({**right, "shape": "circle" if right["shape"] != "circle" else "square"})
    if right["count"] == 1:
        add({**right, "scale": round(right["scale"] * 0.6, 3) if right["scale"] > 0.7 else 1.0})
    return out


def _fade_in(state: dict[str, Any], first: np.ndarray, full: np.ndarray, cfg: RenderConfig) -> list[np.ndarray]:
    x0, y0, x1, y1 = cell_rect(state, state["missing"])
    a_cell, b_cell = first[y0:y1, x0:x1].astype(np.float32), full[y0:y1, x0:x1].astype(np.float32)
    out = []
    for a in ft.ramp(cfg.n_frames, 0.25, 0.7):
        if a <= 0:
            out.append(first)
        elif a >= 1:
            out.append(full)
        else:
            fr = first.copy()
            fr[y0:y1, x0:x1] = (a_cell * (1 - a) + b_cell * a).astype(np.uint8)
            out.append(fr)
    return out


@family
class Sequence(TaskFamily):
    name = "sequence"
    version = "2"  # 2: checks in seconds and task units, nothing-else-changed, end state held, corrections (issue 11)
    directional = True
    process_rule = False

    def make(self, rng: np.random.Generator, difficulty: str, index: int, seed: int,
             cfg: RenderConfig) -> TaskInstance:
        n = N_CELLS[difficulty]
        if difficulty == "hard":
            rules = [str(r) for r in rng.choice(["count", "colour", "shape", "rotation"], size=2, replace=False)]
            if set(rules) == {"shape", "rotation"}:
                rules = ["rotation", "colour"]
        else:
            rules = [str(rng.choice(RULES))]
        cells = _sequence(rng, n, rules)
        miss = n - 1 if difficulty == "easy" else int(rng.integers(n))
        state: dict[str, Any] = {**geometry(n, cfg), "n": n, "rules": rules, "cells": cells, "missing": miss,
                                 "answer": cells[miss], "distractors": _distractors(rng, cells, miss),
                                 "width": cfg.width, "height": cfg.height}
        first = render_row(state, cfg)
        frames = _fade_in(state, first, render_row(state, cfg, cells[miss]), cfg)
        where = "at the end of the row" if miss == n - 1 else f"in position {miss + 1} of {n}"
        prompt = (
            f"A row of {n} cards lies on a table. Each card follows from its neighbours by a simple regular "
            f"pattern, but the card {where} is blank, marked only by a dashed border. The picture that belongs "
            "on the blank card slowly appears on it, continuing the pattern exactly. The other cards stay "
            "exactly as they are and the camera does not move."
        )
        return TaskInstance(family=self.name, difficulty=difficulty, index=index, seed=seed, prompt=prompt,
                            first_frame=first, final_frame=frames[-1], solution=frames, state=state,
                            directional=self.directional, process_rule=self.process_rule)

    def random_motion(self, inst: TaskInstance, rng: np.random.Generator, cfg: RenderConfig) -> list[np.ndarray]:
        """A wrong element (a distractor) fades into the empty cell."""
        st = inst.state
        wrong = st["distractors"][int(rng.integers(len(st["distractors"])))]
        return _fade_in(st, inst.first_frame, render_row(st, cfg, wrong), cfg)

    def scene(self, state: dict[str, Any], cfg: RenderConfig, records: dict[int, Any] | None = None) -> Any:
        """Every frame parsed (each card's state and colour, the blank card's element and opacity) and
        re-rendered: :mod:`vreason.synth.families.sequence.scene`. ``records`` collects each parsed frame."""
        from vreason.synth.families.sequence.scene import make_scene

        return make_scene(state, cfg, records, CARD_RATIO_MAX)

    def verify(self, frames: list[np.ndarray], state: dict[str, Any], cfg: RenderConfig,
               times: TimeSeq[float] | None = None) -> VerifyResult:
        from vreason.synth.base import frame_times
        from vreason.synth.families.sequence.scene import parse_frame, prepare

        frames, bad = ft.usable(frames, cfg)
        if bad is not None:
            return bad
        t = frame_times(len(frames), cfg, times)
        checks: dict[str, bool] = {}
        evidence: dict[str, Any] = {}
        # every frame explained; the same per-frame parse gives the other cards' states and colours
        rec = _Recording(self)
        ft.explain_check(rec, frames, t, state, cfg, checks, evidence)
        parsed = [rec.records[i] for i in sorted(rec.records)]
        wrong_colour, wrong_state, card_ratio = _card_verdicts(parsed, sorted(rec.records))
        ref = render_row(state, cfg)
        k = min(3, len(frames))
        # the blank card at the end: the last frames as the scene parsed them (the camera undone) when it
        # reached them, else the last frames stabilised (a shift only) and parsed here
        n = len(frames)
        have = sorted(rec.records)
        ends = [rec.records[max(j for j in have if j <= i)] for i in range(n - k, n)] if (
            rec.seen == n and have and have[0] <= n - k) else []
        # a last frame unchanged since an earlier parse shares that parse, whose frame may no longer be kept: the
        # parses that kept theirs (the last frame's always) — else the stabilised frames (a shift only) left a
        # 1° camera turn in the card and read the answer at 0.889 opacity, under ALPHA_MIN (case seed 345114942)
        ends = [p for p in ends if p.frame is not None]
        if not ends:
            last, _ = ft.stabilise(frames[-k:], ref, box=_static_box(state))
            pre = prepare(state, cfg)
            ends = []
            for fr in last:
                ends.append(parse_frame(pre, fr))
                ends[-1].frame = fr
        end = ends[-1]
        size = (cfg.width // 4, cfg.height // 4)
        ref_small = ft.small(ref, size)
        mx0, my0, mx1, my1 = cell_rect(state, state["missing"])
        mask = np.ones(ref_small.shape[:2], bool)
        mask[max(0, my0 // 4 - 1):my1 // 4 + 2, max(0, mx0 // 4 - 1):mx1 // 4 + 2] = False
        fixed = [ft.correct(p.frame, ref_small, mask) for p in ends]
        # the filled cell in the last frames, against the candidates
        names = ["answer", "empty"] + [f"distractor_{i}" for i in range(len(state["distractors"]))]
        cands = [render_row(state, cfg, state["answer"])[my0:my1, mx0:mx1], ref[my0:my1, mx0:mx1]] + [
            render_row(state, cfg, d)[my0:my1, mx0:mx1] for d in state["distractors"]]
        per_frame = []
        cand_feats = [ft.small(c, (FEAT, FEAT)) for c in cands]
        for fr in fixed:
            obs = ft.small(fr[my0:my1, mx0:mx1], (FEAT, FEAT))
            per_frame.append([float(np.abs(c - obs).mean()) for c in cand_feats])
        dist = [float(v) for v in np.median(np.array(per_frame), axis=0)]
        order = np.argsort(dist)
        d_ans = dist[0]
        d_other = min(dist[1:])
        sep = min(float(np.abs(cand_feats[0] - c).mean()) for c in cand_feats[1:])
        checks.update({
            "cell_filled": names[int(order[0])] != "empty",
            "right_element": int(order[0]) == 0 and d_ans <= 0.8 * d_other and d_ans <= ANSWER_MAX
                             and end.fill == "answer" and end.alpha >= ALPHA_MIN,
            "others_unchanged": not wrong_colour and not wrong_state,
        })
        evidence.update({
            "distances": {nm: round(d, 2) for nm, d in zip(names, dist, strict=True)},
            "nearest": names[int(order[0])], "answer_separation": round(sep, 2), "answer_limit": ANSWER_MAX,
            "end_fill": end.fill, "end_alpha": end.alpha, "end_alpha_min": ALPHA_MIN,
            "rules": state["rules"], "missing_cell": state["missing"], "frames_used": k,
            "frames_parsed": len(parsed), "recoloured_cards": wrong_colour,
            "changed_cards": wrong_state, "card_state_worst": card_ratio,
            "card_state_ratio_limit": CARD_RATIO_MAX,
        })
        import cv2

        dbg = frames[-1].copy()
        ok_color = (0, 200, 0) if checks["right_element"] else (230, 0, 0)
        cv2.rectangle(dbg, (mx0 - 3, my0 - 3), (mx1 + 2, my1 + 2), ok_color, 2)
        cv2.putText(dbg, f"nearest: {evidence['nearest']}", (mx0, max(12, my0 - 8)), cv2.FONT_HERSHEY_SIMPLEX,
                    0.45, ok_color, 1, cv2.LINE_AA)
        return ft.finish(checks, evidence, dbg, goal=("cell_filled", "right_element"))


class _Recording:
    """The family as :func:`frametools.explain_check` calls it, keeping every frame's parse (``records``)
    and how many frames the explanation reached (``seen``)."""

    def __init__(self, fam: Sequence) -> None:
        self.fam, self.records, self.seen = fam, {}, 0

    def explain(self, frames: list[np.ndarray], times: Any, state: dict[str, Any], cfg: RenderConfig) -> Any:
        from vreason.verify.explain import explain_scene

        ex = explain_scene(frames, times, self.fam.scene(state, cfg, self.records))
        self.seen = len(ex.frames)
        return ex


def _card_verdicts(parsed: list[Any], idx: list[int]) -> tuple[list[dict[str, Any]], list[dict[str, Any]],
                                                                  dict[str, Any]]:
    """From the parsed frames: the other cards read as another colour, as another state (the first such frame
    per card), and the largest ratio of a card's expected-state distance to the nearest other state's."""
    wrong_colour: dict[int, dict[str, Any]] = {}
    wrong_state: dict[int, dict[str, Any]] = {}
    worst: dict[str, Any] = {"ratio": 0.0}
    for fi, p in zip(idx, parsed, strict=True):
        for c in p.cards:
            if c["colour"] != c["own_colour"] and c["card"] not in wrong_colour:
                wrong_colour[c["card"]] = {"card": c["card"], "frame": fi, "expected": c["own_colour"],
                                           "read": c["colour"]}
            if c["ratio"] > CARD_RATIO_MAX and c["card"] not in wrong_state:
                wrong_state[c["card"]] = {"card": c["card"], "frame": fi, "read": c["read"], "ratio": c["ratio"]}
            if c["ratio"] > worst["ratio"]:
                worst = {"ratio": c["ratio"], "card": c["card"], "frame": fi, "nearest_other": c["nearest_other"]}
    return list(wrong_colour.values()), list(wrong_state.values()), worst
