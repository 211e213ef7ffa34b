"""Honest renderings of the final-state and physics families (odd-one-out, sequence, gravity, sliding) made
by transforming the solution's frames (retimed, resized, re-exposed, hue-shifted, shaken, letterboxed,
paused), and the 2 s timeline of their static cheats (moved from the part-B module ``adversary_b``)."""

from __future__ import annotations

import math

import numpy as np

from vreason.synth.adversary import Clip, variant
from vreason.synth.adversary_honest import letterbox, shake
from vreason.synth.base import RenderConfig, TaskInstance


def retime(frames: list[np.ndarray], fps_from: float, fps_to: float) -> list[np.ndarray]:
    """The same video in seconds at another frame rate (nearest earlier frame)."""
    n = int(round(len(frames) * fps_to / fps_from))
    return [frames[min(len(frames) - 1, int(math.floor(j * fps_from / fps_to + 1e-9)))] for j in range(n)]


def resize(frames: list[np.ndarray], scale: float) -> list[np.ndarray]:
    import cv2

    h, w = frames[0].shape[:2]
    size = (int(round(w * scale)) // 2 * 2, int(round(h * scale)) // 2 * 2)
    return [cv2.resize(f, size, interpolation=cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR) for f in frames]


def exposure(frames: list[np.ndarray], k: float) -> list[np.ndarray]:
    return [np.clip(f.astype(np.float32) * k, 0, 255).astype(np.uint8) for f in frames]


def hue_shift(frames: list[np.ndarray], degrees: float) -> list[np.ndarray]:
    import cv2

    out = []
    for f in frames:
        hsv = cv2.cvtColor(f, cv2.COLOR_RGB2HSV_FULL).astype(np.int16)
        hsv[..., 0] = (hsv[..., 0] + int(round(degrees * 256 / 360))) % 256
        out.append(cv2.cvtColor(hsv.astype(np.uint8), cv2.COLOR_HSV2RGB_FULL))
    return out


def hold_first(frames: list[np.ndarray], seconds: float, fps: float) -> list[np.ndarray]:
    return [frames[0]] * int(round(seconds * fps)) + list(frames)


def cut(inst: TaskInstance, n: int) -> list[np.ndarray]:
    return [inst.first_frame] * (n // 2) + [inst.final_frame] * (n - n // 2)


def static_cheat(family: str, name: str):
    """Register a cheat of a final-state family on a 2 s timeline (every other frame of the clip): the
    verdict does not depend on the length there (a cut to the answer is valid), and it halves the cost."""

    def deco(fn):
        def brief(inst: TaskInstance, cfg: RenderConfig, rng: np.random.Generator) -> Clip:
            clip = fn(inst, cfg, rng)
            return Clip(clip.frames[::2], clip.fps)

        variant(family, name, honest=False, doc=(fn.__doc__ or "").strip())(brief)
        return fn

    return deco


def register_honest(family: str, skip: tuple[str, ...] = (), one_difficulty: tuple[str, ...] = ("double_size",)
                    ) -> None:
    """The honest renderings every part-B family must pass (frames → clip transforms of the solution)."""
    table = {
        "fps8": lambda i, c, r: Clip(retime(i.solution, c.fps, 8), 8),
        "fps24": lambda i, c, r: Clip(retime(i.solution, c.fps, 24), 24),
        "half_size_darker15_hue_minus6": lambda i, c, r: Clip(hue_shift(exposure(resize(i.solution, 0.5), 0.85),
                                                                         -6), c.fps),
        "brighter15_hue_plus6": lambda i, c, r: Clip(hue_shift(exposure(i.solution, 1.15), 6), c.fps),
        "shake2px": lambda i, c, r: Clip(shake(i.solution, r, first_too=True), c.fps),
        "letterbox": lambda i, c, r: Clip(letterbox(i.solution), c.fps),
        "pause_first": lambda i, c, r: Clip(hold_first(i.solution, 0.5, c.fps), c.fps),
        "double_size": lambda i, c, r: Clip(resize(i.solution, 2.0), c.fps),
    }
    for name, fn in table.items():
        if name not in skip:  # a double-size clip costs four times the encoding: one difficulty
            diffs = ("hard",) if name in one_difficulty else ("easy", "medium", "hard")
            variant(family, name, honest=True, difficulties=diffs, doc=f"honest: the solution, {name}")(fn)
