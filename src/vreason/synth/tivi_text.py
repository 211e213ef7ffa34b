"""Shared pieces of the suite's text families (sudoku, arithmetic, choice, numseq): text drawn with PIL's
scalable built-in font (``ImageFont.load_default(size=…)``, bundled in Pillow: offline and deterministic),
answers revealed one region at a time, and verification through TiViBench's checks.

:func:`verify_by_check` is the common verifier: the frames are checked and brought to the suite's size
(letterbox bars cropped, :func:`vreason.synth.frametools.usable`), then the family's TiViBench check
(:mod:`vreason.verify.checks`, the record in ``state["tivibench"]``) runs on the **last frame** and — unless
the end is still — on the first frame of the last 0.15 s, so an answer that vanishes or changes at the end
fails. When the check cannot score (no OCR engine), the result carries ``evidence["unscored"]`` with the
reason and the suite's scorer records the unit as *unscored*, never 0.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from vreason.synth import draw
from vreason.synth import end_hold as eh
from vreason.synth import frametools as ft
from vreason.synth.base import RenderConfig, VerifyResult, frame_times

INK = (25, 25, 25)
ANSWER_INK = (30, 60, 170)
"""Written answers: dark blue (read as ink by OCR, told apart from the givens in the debug image)."""
HOLD_STILL = 2.0
"""Mean absolute difference (grey levels) under which the end-window frame equals the last frame."""


@functools.lru_cache(maxsize=16)
def font(size: int):
    from PIL import ImageFont

    return ImageFont.load_default(size=size)


def text_box(text: str, size: int) -> tuple[int, int, int, int]:
    """(x0, y0, x1, y1) of ``text`` drawn at (0, 0) in the built-in font of ``size`` px."""
    return font(size).getbbox(text)


def put_text(img: np.ndarray, text: str, xy: tuple[float, float], size: int, colour=INK,
             anchor: str = "mm") -> None:
    """Draw ``text`` into ``img`` (in place) with its ``anchor`` (PIL anchors: ``mm`` centre, ``lm`` left
    middle) at ``xy``."""
    from PIL import Image, ImageDraw

    pil = Image.fromarray(img)
    ImageDraw.Draw(pil).text((float(xy[0]), float(xy[1])), text, font=font(size), fill=tuple(colour), anchor=anchor)
    img[:] = np.asarray(pil)


def outline(img: np.ndarray, rect: Sequence[float], colour, thickness: int) -> None:
    import cv2

    x0, y0, x1, y1 = (int(round(v)) for v in rect)
    cv2.rectangle(img, (x0, y0), (x1, y1), tuple(int(c) for c in colour), thickness)


def norm_box(rect: Sequence[float], cfg: RenderConfig, pad: float = 0.0) -> dict[str, float]:
    """A pixel rectangle as a normalised TiViBench box (``pad`` px added on each side, clipped)."""
    x0, y0, x1, y1 = rect
    return {"x0": round(max(0.0, (x0 - pad) / cfg.width), 5), "y0": round(max(0.0, (y0 - pad) / cfg.height), 5),
            "x1": round(min(1.0, (x1 + pad) / cfg.width), 5), "y1": round(min(1.0, (y1 + pad) / cfg.height), 5)}


def reveal(first: np.ndarray, final: np.ndarray, rects: Sequence[Sequence[int]], n: int,
           start: float = 0.15, end: float = 0.8) -> list[np.ndarray]:
    """``n`` frames from ``first`` to ``final``: the regions ``rects`` change one after another, each fading
    in over its share of the time between ``start`` and ``end`` (fractions of the video)."""
    k = max(1, len(rects))
    out = []
    a32, b32 = first.astype(np.float32), final.astype(np.float32)
    for f in range(n):
        u = f / max(1, n - 1)
        img = first.copy()
        for i, (x0, y0, x1, y1) in enumerate(rects):
            t0 = start + (end - start) * i / k
            a = float(np.clip((u - t0) / ((end - start) / k), 0.0, 1.0))
            if a >= 1:
                img[y0:y1, x0:x1] = final[y0:y1, x0:x1]
            elif a > 0:
                img[y0:y1, x0:x1] = (a32[y0:y1, x0:x1] * (1 - a) + b32[y0:y1, x0:x1] * a).astype(np.uint8)
        out.append(img)
    out[-1] = final.copy()
    return out


def tivi_record(dimension: str, task_type: str, metric: dict[str, Any]) -> dict[str, Any]:
    """The TiViBench annotation of a suite instance (validated against the schema)."""
    from pydantic import TypeAdapter

    from vreason.verify.annotations import MetricParams

    params = TypeAdapter(MetricParams).validate_python(metric)
    return {"dimension": dimension, "task_type": task_type, "metric": params.model_dump(mode="json")}


Extra = Callable[[np.ndarray, Any], tuple[dict[str, bool], dict[str, Any]]]
"""A family's own checks on the last frame: ``fn(frame, check_result) -> (checks, evidence)``."""


ANSWER_HOLD_S = 0.35
"""How long the written or marked answer must stand without fading at the end of a text family's video (its scene's
``held`` check, :func:`end_hold.end_fade`; the picture itself must not change over the suite's 0.15 s, and the
TiViBench read stays on the last frame and the one 0.15 s before). A video cut while the answer still fades in
reads as the answer (a 40% red outline is red to TiViBench's rule; OCR reads a 9 showing through a fading "?") and
changes too little in 0.15 s to be seen, but 20–60% of its contrast in 0.35 s. The suite's oracles hold their
answers for the last 20–30% of the clip: ≥ 0.4 s at twice their speed."""
ANSWER_PAD = 6
"""Px around the rendered answer a fade is looked for in (:func:`_answer_region`): a slow zoom's or a turn's
realignment leaves the grid lines' 4×4 block means of a Sudoku moving towards the last frame (no fade: the camera)."""
MAX_FADE_PX = 32
"""Largest group of fading 4×4 blocks (px) a held answer may show: two blocks."""


def _answer_region(family: Any, state: dict[str, Any], cfg: RenderConfig) -> np.ndarray | None:
    """Where the family's scene draws the answer: its start and final renderings differ, grown by
    :data:`ANSWER_PAD` px (an honest camera's small turn or zoom, another hand's strokes); None without a scene."""
    import cv2

    from vreason.verify.residual import chan_max

    sc = family.scene(state, cfg)
    if sc is None or sc.final is None:
        return None
    changed = (chan_max(cv2.absdiff(sc.start, sc.final)) > 0).astype(np.uint8)
    k = 2 * ANSWER_PAD + 1
    return cv2.dilate(changed, np.ones((k, k), np.uint8)) > 0


def verify_by_check(frames: list[np.ndarray], state: dict[str, Any], cfg: RenderConfig,
                    times: Sequence[float] | None = None, extra: Extra | None = None,
                    family: Any = None) -> VerifyResult:
    """Score a suite video with the TiViBench check of its ``state["tivibench"]`` record (see the module);
    with ``family``, every frame must also be explained by its scene (:func:`frametools.explain_check`)."""
    from pydantic import TypeAdapter

    from vreason.verify.annotations import MetricParams
    from vreason.verify.checks import CheckEnv, get_check
    from vreason.verify.ocr import get_ocr

    frames, bad = ft.usable(frames, cfg)
    if bad is not None:
        return bad
    try:
        t = frame_times(len(frames), cfg, times)
    except ValueError as exc:
        return ft.zero(str(exc))
    params = TypeAdapter(MetricParams).validate_python(state["tivibench"]["metric"])
    entry = get_check(params.family)
    env = CheckEnv(ocr=get_ocr() if "ocr" in entry.needs else None)
    last = entry.fn([frames[-1]], [float(t[-1])], state.get("gt_end"), params, env)
    if last.passed is None:
        return VerifyResult(float("nan"), False, {"unscored": last.reason, "reason": last.reason,
                                                  "backend": last.backend})
    ev: dict[str, Any] = {"backend": last.backend, "check": params.family, "read": last.details,
                          "check_score": None if last.score is None else round(float(last.score), 4)}
    checks = {"answer": bool(last.passed)}
    if last.reason:
        ev["check_reason"] = last.reason
    window = draw.end_window(t)
    hold_i = int(window[0])
    diff = ft.mad(frames[hold_i], frames[-1]) if hold_i < len(frames) - 1 else 0.0
    ev.update({"hold_frame": hold_i, "hold_diff": round(diff, 2)})
    if last.passed and diff > HOLD_STILL:
        held = entry.fn([frames[hold_i]], [float(t[hold_i])], state.get("gt_end"), params, env)
        checks["held"] = bool(held.passed)
        ev["hold_read"] = held.details
    else:
        checks["held"] = bool(last.passed)
    if family is not None and family.scene_check and checks["held"]:  # the window shows one picture
        moved = eh.end_changes(frames, t)
        region = _answer_region(family, state, cfg)
        early, fade = eh.end_fade(frames, t, ANSWER_HOLD_S, region)
        growth = (eh.end_ink_growth(frames, t, ANSWER_HOLD_S, region)
                  if region is not None and region.shape == frames[-1].shape[:2] else 0.0)
        checks["held"] = not moved and fade <= MAX_FADE_PX and growth <= eh.MAX_INK_GROWTH
        if moved:
            ev["hold_changed"] = {"frames": [j for j, _ in moved][:10], "largest_blob": max(b for _, b in moved)}
        if fade > MAX_FADE_PX:
            ev["hold_fading"] = {"from_frame": early, "px": fade}
        if growth > eh.MAX_INK_GROWTH:
            ev["hold_growing"] = {"from_frame": early, "share": round(growth, 4)}
    if extra is not None:
        more, more_ev = extra(frames[-1], last)
        checks.update(more)
        ev.update(more_ev)
    if family is not None:
        ft.explain_check(family, frames, t, state, cfg, checks, ev)
    dbg = last.overlay if last.overlay is not None else frames[-1]
    return ft.finish(checks, ev, np.ascontiguousarray(dbg), goal=("answer",))
