"""Counting (TiViBench SV / counting): move into the tray exactly as many blue coins as there are red stars.

A card at the top left shows k red stars (2–4 easy, 4–6 medium, 6–9 hard); a pool below it holds k + 1..3
blue coins; an empty tray (grey outline) sits on the right. The answer is digit-free: the right number of
coins in the tray. Coins slide into the tray one after another.

Verifier: TiViBench's **grounding** check (:mod:`vreason.verify.grounding`, colour detector, last frame):
label "blue coin", region = the tray, expected count = k. Suite-only checks, on every frame of the last
0.15 s: *conserved* — the number of coins in the whole picture is the pool's (no coins drawn into the
tray, none removed); *held* — the tray count is k in each of those frames. Coins are ≥ 2.3 radii apart in
the tray and pool (they never merge into one blob). The task has a direction (a reversed video ends with
an empty tray) but no process rule (a cut to the right tray is a right answer). Every frame explained (issue
24, :mod:`.scene`): the coins parsed from each frame and re-rendered, none added or vanished (the check
``scene`` when :attr:`Counting.scene_check` is on).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from vreason.synth import draw
from vreason.synth import tivi_common as tc
from vreason.synth.base import RenderConfig, TaskFamily, TaskInstance, VerifyResult, family
from vreason.synth.shapes import draw_shape
from vreason.verify.annotations import Box, GroundingParams

STARS = {"easy": (2, 4), "medium": (4, 6), "hard": (6, 9)}
COIN_R = 13
CARD = (20, 20, 300, 80)
POOL = (30, 110, 290, 340)
TRAY = (360, 70, 620, 330)
TRAY_EDGE, TRAY_FILL, CARD_FILL = (80, 80, 80), (236, 236, 236), (228, 228, 228)
MOVE = (0.1, 0.85)


def _slots(box: tuple[int, int, int, int], n: int, cols: int, gap: float) -> list[list[float]]:
    x0, y0, x1, y1 = box
    rows = -(-n // cols)
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    return [[float(cx + (c - (cols - 1) / 2) * gap), float(cy + (r - (rows - 1) / 2) * gap)]
            for r in range(rows) for c in range(cols)][:n]


def scale(cfg: RenderConfig) -> tuple[float, float]:
    return cfg.width / 640.0, cfg.height / 360.0


def background(state: dict[str, Any]) -> np.ndarray:
    import cv2

    w, h = state["canvas"]
    sx, sy = w / 640.0, h / 360.0
    img = draw.canvas(w, h)
    x0, y0, x1, y1 = CARD
    draw.rect(img, x0 * sx, y0 * sy, x1 * sx, y1 * sy, CARD_FILL)
    for x, y in state["stars"]:
        draw_shape(img, "star", x * sx, y * sy, 12 * min(sx, sy), draw.rgb("red"))
    x0, y0, x1, y1 = TRAY
    draw.rect(img, x0 * sx, y0 * sy, x1 * sx, y1 * sy, TRAY_FILL)
    cv2.rectangle(img, (int(x0 * sx), int(y0 * sy)), (int(x1 * sx), int(y1 * sy)), TRAY_EDGE, 3)
    return img


def render(state: dict[str, Any], coins_per_frame: Sequence[Sequence[Sequence[float]]]) -> list[np.ndarray]:
    """Frames with the coins at the given (x, y) positions (640×360 units)."""
    bg = background(state)
    w, h = state["canvas"]
    sx, sy = w / 640.0, h / 360.0
    out = []
    for coins in coins_per_frame:
        img = bg.copy()
        for x, y in coins:
            draw.disc(img, (x * sx, y * sy), COIN_R * min(sx, sy), draw.rgb("blue"))
        out.append(img)
    return out


def moves(state: dict[str, Any], which: Sequence[int], n: int, targets: Sequence[Sequence[float]] | None = None
          ) -> list[list[list[float]]]:
    """Coin positions per frame when the pool coins ``which`` slide, one after another, to ``targets``
    (the tray's slots by default)."""
    pool = np.array(state["pool"], dtype=np.float64)
    dest = np.array(targets if targets is not None else state["tray_slots"][:len(which)], dtype=np.float64)
    out = []
    prog = [tc.moving(n, MOVE[0], MOVE[1], k, len(which)) for k in range(len(which))]
    for i in range(n):
        pos = pool.copy()
        for k, c in enumerate(which):
            pos[c] = pool[c] + (dest[k] - pool[c]) * prog[k][i]
        out.append(pos.tolist())
    return out


@family
class Counting(TaskFamily):
    name = "counting"
    scene_check = True
    """The every-frame scene (issue 24, :mod:`.scene`) is part of the verdict. It was held off by the honest +15%
    exposure (the white canvas and the card's grey clip; the exposure fit gave green and blue gain 1.0 + offset
    12, leaving ~11,000 px unexplained), fixed in the shared layer (``exposure._clip_consistent``,
    ``clip.declip``), and by MJPEG's ringing around a coin (``frame_check.CODEC_RING``): every honest
    variant and P5 draw passes on suite seed 101 (34 of 34)."""
    version = "1"
    directional = True
    process_rule = False

    def make(self, rng: np.random.Generator, difficulty: str, index: int, seed: int,
             cfg: RenderConfig) -> TaskInstance:
        lo, hi = STARS[difficulty]
        k = int(rng.integers(lo, hi + 1))
        total = k + int(rng.integers(1, 4))
        gap = (CARD[2] - CARD[0] - 40) / max(1, 8)
        mid = (CARD[1] + CARD[3]) / 2
        stars = [[float(CARD[0] + 20 + i * gap + rng.uniform(-3, 3)), float(mid + rng.uniform(-8, 8))]
                 for i in range(k)]
        pool = _slots(POOL, total, 4, 52.0)
        order = [int(v) for v in rng.permutation(total)]
        state: dict[str, Any] = {"k": k, "total": total, "stars": stars, "pool": pool,
                                 "tray_slots": _slots(TRAY, 12, 4, 56.0), "order": order,
                                 "canvas": [cfg.width, cfg.height]}
        state["tivibench"] = tc.annotation("SV", "counting", self.params(state))
        frames = render(state, moves(state, order[:k], cfg.n_frames))
        prompt = ("A card at the top shows some red stars. Below it lies a pile of blue coins and on the right an "
                  "empty tray with a grey rim. Count the red stars, then slide exactly that many blue coins, one at "
                  "a time, from the pile into the tray, so that the tray ends up holding one coin per star. The "
                  "other coins stay in the pile; nothing else changes and the camera stays still.")
        return TaskInstance(self.name, difficulty, index, seed, prompt, frames[0], frames[-1], frames, state,
                            self.directional, self.process_rule)

    @staticmethod
    def params(state: dict[str, Any]) -> GroundingParams:
        x0, y0, x1, y1 = TRAY
        return GroundingParams(label="blue coin", colour=tc.colour_json("blue"), expected_count=state["k"],
                               region=Box(x0=x0 / 640, y0=y0 / 360, x1=x1 / 640, y1=y1 / 360), marker="present")

    def random_motion(self, inst: TaskInstance, rng: np.random.Generator, cfg: RenderConfig) -> list[np.ndarray]:
        """A wrong number of coins (one more or one fewer than the stars) slides into the tray."""
        st = inst.state
        m = st["k"] + (1 if rng.random() < 0.5 else -1)
        return render(st, moves(st, st["order"][:max(0, m)], cfg.n_frames))

    def scene(self, state: dict[str, Any], cfg: RenderConfig) -> Any:
        """Every frame parsed into the coins' positions and re-rendered (:mod:`.scene`)."""
        from vreason.synth.families.counting.scene import scene

        return scene(state, cfg)

    def verify(self, frames: list[np.ndarray], state: dict[str, Any], cfg: RenderConfig,
               times: Sequence[float] | None = None) -> VerifyResult:
        from vreason.synth import frametools as ft
        from vreason.verify.colour import find, named_spec
        from vreason.verify.grounding import in_region

        first = tc.start(frames, state, cfg, times)
        if isinstance(first, VerifyResult):
            return first
        metric, params, end = first
        totals, trays = [], []
        for f in end:
            blobs = find(f, named_spec("blue"))
            totals.append(len(blobs))
            trays.append(len(in_region(blobs, params.region)))
        extra = {"conserved": all(n == state["total"] for n in totals),
                 "held": all(n == state["k"] for n in trays)}
        reasons = []
        if not extra["conserved"]:
            reasons.append(f"{sorted(set(totals))} coins in the picture at the end, the pool had {state['total']}")
        if not extra["held"]:
            reasons.append(f"tray counts {trays} over the last {draw.END_HOLD_S} s, expected {state['k']}")
        evidence: dict[str, Any] = {"coins_total_end": totals, "tray_count_end": trays, "stars": state["k"]}
        ft.scene_verdict(self, frames, times, state, cfg, extra, evidence, reasons)
        res = tc.result(metric, extra, evidence, reasons)
        if not metric.passed:  # a wrong count is a wrong end state: 0 on the suite's scale, no partial credit
            res.score = 0.0
        return res
