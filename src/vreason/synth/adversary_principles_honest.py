"""P5 of :mod:`vreason.synth.adversary_principles`: honest renderings drawn at random (they must pass).

The oracle's frames seen through another camera, player or encoder: a letterbox of a random colour and
aspect (portrait included), a constant rotation ≤ 2°, a slow zoom ≤ 5%, per-frame exposure flicker
±3%, a heavier codec (MJPEG, H.264 at a low bitrate, MPEG-4), and a variable frame rate with true
timestamps (frames of the oracle dropped at random, each kept frame stamped with its own time)."""

from __future__ import annotations

import numpy as np

from vreason.synth.adversary import Clip
from vreason.synth.adversary_principles import Made, kind
from vreason.synth.base import RenderConfig, TaskInstance

ASPECTS = {"4:3": 4 / 3, "1:1": 1.0, "9:16": 9 / 16, "21:9": 21 / 9, "2.39:1": 2.39}
MARGIN_BARS = 0.25
"""Share of letterboxes drawn in the picture's own margin colour (a bar with no edge: only the task's aspect says
where the picture is, :func:`vreason.verify.letterbox.aspect_box`)."""


@kind("P5", "letterbox", honest=True)
def letterbox(inst: TaskInstance, cfg: RenderConfig, rng: np.random.Generator) -> Made:
    """The picture at its own size inside a frame of another aspect (bars of a random colour; one time in
    :data:`MARGIN_BARS`, of the picture's own margin colour within 6 levels: bars nobody can see)."""
    name = str(rng.choice(list(ASPECTS)))
    aspect = ASPECTS[name]
    colour = rng.integers(0, 256, 3).astype(np.uint8)
    f0 = inst.solution[0]
    margin = rng.random() < MARGIN_BARS
    if margin:
        ring = np.concatenate([f0[0], f0[-1], f0[:, 0], f0[:, -1]])
        colour = np.clip(np.median(ring, axis=0) + rng.integers(-6, 7, 3), 0, 255).astype(np.uint8)
    h, w = inst.solution[0].shape[:2]
    if aspect < w / h:  # taller frame: bars above and below
        H, W = int(round(w / aspect)) // 2 * 2, w
    else:  # wider frame: bars left and right
        H, W = h, int(round(h * aspect)) // 2 * 2
    top, left = (H - h) // 2, (W - w) // 2
    out = []
    for f in inst.solution:
        g = np.empty((H, W, 3), np.uint8)
        g[:] = colour
        g[top:top + h, left:left + w] = f
        out.append(g)
    return Made(Clip(out, float(cfg.fps)), {"aspect": name, "colour": colour.tolist(), "size": [W, H],
                                            "margin_colour": bool(margin)})


def _warp(frames: list[np.ndarray], mats: list[np.ndarray]) -> list[np.ndarray]:
    import cv2

    h, w = frames[0].shape[:2]
    return [cv2.warpAffine(f, m, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
            for f, m in zip(frames, mats, strict=True)]


@kind("P5", "rotate", honest=True)
def rotate(inst: TaskInstance, cfg: RenderConfig, rng: np.random.Generator) -> Made:
    """A camera rotated by a constant 0.3–2° (either way) about a point near the centre."""
    import cv2

    h, w = inst.solution[0].shape[:2]
    deg = float(rng.uniform(0.3, 2.0) * rng.choice([-1, 1]))
    c = (w / 2 + rng.uniform(-0.1, 0.1) * w, h / 2 + rng.uniform(-0.1, 0.1) * h)
    m = cv2.getRotationMatrix2D(c, deg, 1.0)
    return Made(Clip(_warp(list(inst.solution), [m] * len(inst.solution)), float(cfg.fps)),
                {"degrees": round(deg, 2)})


@kind("P5", "zoom", honest=True)
def zoom(inst: TaskInstance, cfg: RenderConfig, rng: np.random.Generator) -> Made:
    """A slow zoom in or out (to 1–5% by the end) about a point near the centre."""
    import cv2

    h, w = inst.solution[0].shape[:2]
    z = float(rng.uniform(0.01, 0.05) * rng.choice([-1, 1]))
    c = (w / 2 + rng.uniform(-0.1, 0.1) * w, h / 2 + rng.uniform(-0.1, 0.1) * h)
    n = len(inst.solution)
    mats = [cv2.getRotationMatrix2D(c, 0.0, 1.0 + z * i / max(1, n - 1)) for i in range(n)]
    return Made(Clip(_warp(list(inst.solution), mats), float(cfg.fps)), {"zoom": round(z, 3)})


@kind("P5", "flicker", honest=True)
def flicker(inst: TaskInstance, cfg: RenderConfig, rng: np.random.Generator) -> Made:
    """Each frame's exposure multiplied by its own random gain in 1 ± 3%."""
    amp = float(rng.uniform(0.01, 0.03))
    gains = rng.uniform(1 - amp, 1 + amp, len(inst.solution))
    out = [np.clip(f.astype(np.float32) * g + 0.5, 0, 255).astype(np.uint8) for f, g in zip(inst.solution, gains,
                                                                                             strict=True)]
    return Made(Clip(out, float(cfg.fps)), {"amplitude": round(amp, 3)})


@kind("P5", "codec", honest=True)
def codec(inst: TaskInstance, cfg: RenderConfig, rng: np.random.Generator) -> Made:
    """Heavier compression: MJPEG (quality 2–10), H.264 at 250–600 kbit/s or MPEG-4 at 400–900 kbit/s."""
    which = str(rng.choice(["mjpeg", "h264_low", "mpeg4"]))
    clip = Clip(list(inst.solution), float(cfg.fps))
    if which == "mjpeg":
        q = int(rng.integers(2, 11))
        return Made(clip, {"codec": which, "q": q}, codec="mjpeg")
    if which == "h264_low":
        br = int(rng.integers(250, 601)) * 1000
        return Made(clip, {"codec": which, "bitrate": br}, bitrate=br)
    br = int(rng.integers(400, 901)) * 1000
    return Made(clip, {"codec": which, "bitrate": br}, codec="mpeg4", bitrate=br)


@kind("P5", "vfr", honest=True)
def vfr(inst: TaskInstance, cfg: RenderConfig, rng: np.random.Generator) -> Made:
    """Variable frame rate with true timestamps: 10–35% of the oracle's frames dropped at random (never the
    first or the last three, never two in a row), every kept frame stamped with its own time."""
    n = len(inst.solution)
    frac = float(rng.uniform(0.1, 0.35))
    drop: set[int] = set()
    for i in range(1, n - 3):
        if i - 1 not in drop and rng.random() < frac:
            drop.add(i)
    keep = [i for i in range(n) if i not in drop]
    fps = float(cfg.fps)
    return Made(Clip([inst.solution[i] for i in keep], fps), {"dropped": len(drop)},
                times=[i / fps for i in keep])
