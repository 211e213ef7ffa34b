"""Honest camera, encoder and timing variants shared by the part-A families, and frame transforms.

Honest variants re-render the ground-truth motion natively at another frame rate or speed (never by
dropping frames of the 16 fps video) or transform the rendered frames the way a camera or an encoder
would: half/double size, exposure ±15%, hue ±6°, a 2-px shake, letterboxing, a pause before starting.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from vreason.synth.adversary import Clip, variant
from vreason.synth.base import RenderConfig, TaskInstance

Solve = Callable[[TaskInstance, int], list[np.ndarray]]
"""The ground-truth motion of an instance rendered natively in ``n`` frames."""


# ------------------------------------------------------------------ frame transforms (honest cameras)
def resize(frames: list[np.ndarray], s: float) -> list[np.ndarray]:
    import cv2

    h, w = frames[0].shape[:2]
    size = (int(round(w * s)) // 2 * 2, int(round(h * s)) // 2 * 2)
    interp = cv2.INTER_AREA if s < 1 else cv2.INTER_LINEAR
    return [cv2.resize(f, size, interpolation=interp) for f in frames]


def exposure(frames: list[np.ndarray], k: float) -> list[np.ndarray]:
    lut = np.clip(np.arange(256) * k, 0, 255).astype(np.uint8)
    return [lut[f] for f in frames]


def hue_shift(frames: list[np.ndarray], degrees: float) -> list[np.ndarray]:
    import cv2

    d = int(round(degrees / 2))  # OpenCV hue units are 2°
    out = []
    for f in frames:
        hsv = cv2.cvtColor(f, cv2.COLOR_RGB2HSV)
        hsv[..., 0] = ((hsv[..., 0].astype(np.int32) + d) % 180).astype(np.uint8)
        out.append(cv2.cvtColor(hsv, cv2.COLOR_HSV2RGB))
    return out


def shake(frames: list[np.ndarray], rng: np.random.Generator, px: int = 2, *,
          first_too: bool = False) -> list[np.ndarray]:
    """Every frame but the first (``first_too``: every frame) moved by a random whole-pixel offset of up
    to ``px`` (edges replicated): a hand-held camera."""
    import cv2

    out = [] if first_too else [frames[0]]
    for f in (frames if first_too else frames[1:]):
        dx, dy = (int(v) for v in rng.integers(-px, px + 1, 2))
        m = np.float32([[1, 0, dx], [0, 1, dy]])
        out.append(cv2.warpAffine(f, m, (f.shape[1], f.shape[0]), borderMode=cv2.BORDER_REPLICATE))
    return out


def letterbox(frames: list[np.ndarray], aspect: float = 4 / 3) -> list[np.ndarray]:
    """Black bars above and below, as a 4:3 player shows a 16:9 picture."""
    h, w = frames[0].shape[:2]
    H = int(round(w / aspect)) // 2 * 2
    top = (H - h) // 2
    out = []
    for f in frames:
        img = np.zeros((H, w, 3), np.uint8)
        img[top:top + h] = f
        out.append(img)
    return out


def pause(solve: Solve, inst: TaskInstance, n: int, hold: int) -> list[np.ndarray]:
    return [inst.first_frame] * hold + solve(inst, n - hold)


# ------------------------------------------------------------------ shared registration
def register_honest(family: str, solve: Solve) -> None:
    """The camera/encoder/timing variants every part-A family must pass."""

    def add(name: str, fn: Callable[[TaskInstance, RenderConfig, np.random.Generator], Clip], doc: str,
            difficulties: tuple[str, ...] = ("easy", "medium", "hard")) -> None:
        variant(family, name, honest=True, difficulties=difficulties, doc=doc)(fn)

    add("fps8", lambda i, c, r: Clip(solve(i, int(round(8 * c.seconds))), 8.0),
        "the solution rendered at 8 fps (same motion in seconds)")
    add("fps24", lambda i, c, r: Clip(solve(i, int(round(24 * c.seconds))), 24.0),
        "the solution rendered at 24 fps", ("medium",))
    add("fps60_fast", lambda i, c, r: Clip(solve(i, int(round(60 * c.seconds / 2))), 60.0),
        "twice as fast at 60 fps (2 s)", ("hard",))
    add("speed2x", lambda i, c, r: Clip(solve(i, c.n_frames // 2), float(c.fps)),
        "the solution twice as fast (half the frames at the suite's rate)", ("easy", "hard"))
    add("half_size", lambda i, c, r: Clip(resize(solve(i, c.n_frames), 0.5), float(c.fps)),
        "rendered at half size", ("easy",))
    add("double_size", lambda i, c, r: Clip(resize(solve(i, c.n_frames), 2.0), float(c.fps)),
        "rendered at double size", ("medium",))
    add("dark15", lambda i, c, r: Clip(exposure(solve(i, c.n_frames), 0.85), float(c.fps)),
        "exposure −15%", ("hard",))
    add("bright15", lambda i, c, r: Clip(exposure(solve(i, c.n_frames), 1.15), float(c.fps)),
        "exposure +15%", ("easy",))
    add("hue_plus6", lambda i, c, r: Clip(hue_shift(solve(i, c.n_frames), 6), float(c.fps)),
        "hue +6°", ("medium",))
    add("hue_minus6", lambda i, c, r: Clip(hue_shift(solve(i, c.n_frames), -6), float(c.fps)),
        "hue −6°", ("hard",))
    add("shake2px", lambda i, c, r: Clip(shake(solve(i, c.n_frames), r), float(c.fps)),
        "a 2-px camera shake on every frame")
    add("letterbox", lambda i, c, r: Clip(letterbox(solve(i, c.n_frames)), float(c.fps)),
        "letterboxed into 4:3 with black bars", ("easy",))
    add("pause_first", lambda i, c, r: Clip(pause(solve, i, c.n_frames, c.fps), float(c.fps)),
        "one second of stillness before the solution starts", ("medium",))


def cut(inst: TaskInstance, n: int) -> list[np.ndarray]:
    return [inst.first_frame] * (n // 2) + [inst.final_frame] * (n - n // 2)
