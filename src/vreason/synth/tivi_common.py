"""Shared pieces of the suite families that are verified by TiViBench's checks (match3, counting, graph,
toolqa): the instance's TiViBench annotation, running the registered check on a video's frames exactly as
the ``tivibench`` protocol does, and turning its result into the suite's :class:`VerifyResult`.

A family's ``verify`` = the TiViBench check of ``state["tivibench"]["metric"]`` (same code, same
parameters) plus the suite-only checks the family adds (named in its docstring); it passes only when all
pass. The frames a check sees are chosen by its declared need: the last frame, or ``n_samples`` frames
spread uniformly over the video (:func:`vreason.verify.tracking.uniform_indices`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from vreason.synth.base import VerifyResult
from vreason.verify.checks import CheckEnv, CheckResult, get_check


def annotation(dimension: str, task_type: str, metric: Any) -> dict[str, Any]:
    """``state["tivibench"]``: the dimension, task type and the metric's parameters (validated, as JSON)."""
    return {"dimension": dimension, "task_type": task_type, "metric": metric.model_dump(mode="json")}


def colour_json(name: str) -> dict[str, Any]:
    from vreason.verify.colour import named_spec

    return named_spec(name).model_dump(mode="json")


def params_of(state: dict[str, Any]) -> Any:
    from pydantic import TypeAdapter

    from vreason.verify.annotations import MetricParams

    return TypeAdapter(MetricParams).validate_python(state["tivibench"]["metric"])


def pick(frames: Sequence[np.ndarray], need: str, params: Any) -> list[np.ndarray]:
    """The frames a check declares it needs (``last``, ``uniform:N``, ``all``)."""
    from vreason.verify.tracking import uniform_indices

    if not len(frames):
        return []
    if need == "last":
        return [frames[-1]]
    if need.startswith("uniform:"):
        n = getattr(params, "n_samples", None) or int(need.split(":", 1)[1].replace("N", "16") or 16)
        return [frames[i] for i in uniform_indices(len(frames), int(n))]
    return list(frames)


def run_metric(frames: Sequence[np.ndarray], state: dict[str, Any], gt_end: np.ndarray | None = None,
               env: CheckEnv | None = None, aspect: float | None = None) -> CheckResult:
    """The instance's TiViBench check on a video's frames (colour detector, no models). ``aspect``: the task's
    picture (width / height): the frames the check reads are cut out of bars found from it first — a white page
    in a 4:3 frame with bars of its own white is not a letterbox the check can see (graph, principle 5, case seed
    1573803471: the route read off the nodes)."""
    from vreason.verify.colour import content

    params = params_of(state)
    entry = get_check(params.family)
    picked = pick(frames, entry.frames, params)
    if aspect is not None:
        picked = content(picked, aspect=aspect)
    env = env or CheckEnv()
    if aspect is not None and "aspect" not in env.options:  # (the bars reader cuts bars knowing it)
        env = dataclasses.replace(env, options={**env.options, "aspect": aspect})
    return entry.fn(picked, np.zeros(len(picked)), gt_end, params, env)


def result(metric: CheckResult, extra: dict[str, bool] | None = None, evidence: dict[str, Any] | None = None,
           reasons: Sequence[str] = ()) -> VerifyResult:
    """The suite's verdict: the TiViBench check (``tivibench_metric``) and the family's own checks all pass.
    Score: the check's graded score, halved when a suite-only check fails."""
    checks = {"tivibench_metric": bool(metric.passed)}
    checks.update({k: bool(v) for k, v in (extra or {}).items()})
    failed = [k for k, v in checks.items() if not v]
    base = float(metric.score) if metric.score is not None else float(bool(metric.passed))
    score = base if all(checks[k] for k in checks if k != "tivibench_metric") else 0.5 * base
    if not metric.passed:  # the check's graded score already halves a broken process: cap, do not halve again
        score = min(base, 0.5)  # (a cut fails the graph's metric and its scene alike: 0.5, not 0.25)
    why = [metric.reason] if metric.reason and not metric.passed else []
    why += list(reasons)
    ev: dict[str, Any] = {"checks": checks, "metric": {"backend": metric.backend, "passed": metric.passed,
                                                        "score": metric.score, "details": metric.details},
                          **(evidence or {})}
    if failed:
        ev["reason"] = "; ".join(why) if why else "failed checks: " + ", ".join(failed)
    return VerifyResult(float(np.clip(score, 0.0, 1.0)), not failed, ev, metric.overlay)


def unusable(frames: Sequence[np.ndarray]) -> str | None:
    """Why a video cannot be verified at all (no frames, bad shape, blank), or None."""
    from vreason.synth import frametools as ft
    from vreason.verify.colour import content, valid_frame

    if not len(frames):
        return "the video has no frames"
    for f in frames:
        bad = valid_frame(f)
        if bad:
            return bad
    return ft.blank_reason(content(list(frames[:: max(1, len(frames) // 8)]) + [frames[-1]]), min_frames=1)


def start(frames: Sequence[np.ndarray], state: dict[str, Any], cfg: Any,
          times: Sequence[float] | None) -> tuple[Any, Any, list[np.ndarray]] | VerifyResult:
    """The first steps of a final-state family's ``verify``: a failing result for an unusable video or bad
    frame times, else ``(metric, params, end)``: the TiViBench check's result, its parameters and the frames
    of the end window (the last 0.15 s, letterbox cut) on which the family checks that the answer holds."""
    from vreason.synth import draw
    from vreason.synth.base import frame_times
    from vreason.verify.colour import content

    bad = unusable(frames)
    if bad:
        return VerifyResult(0.0, False, {"reason": bad})
    try:
        t = frame_times(len(frames), cfg, times)
    except ValueError as exc:
        return VerifyResult(0.0, False, {"reason": str(exc)})
    aspect = cfg.width / cfg.height
    end = content([frames[i] for i in draw.end_window(t)], aspect=aspect)
    return run_metric(frames, state, aspect=aspect), params_of(state), end


def moving(n: int, start: float, end: float, k: int, count: int) -> np.ndarray:
    """Per-frame progress (0..1) of the ``k``-th of ``count`` sequential moves spread over the fraction
    [start, end] of ``n`` frames (each move eased; moves follow one another without overlap)."""
    t = np.arange(n) / max(1, n - 1)
    span = (end - start) / max(1, count)
    a = start + k * span
    p = np.clip((t - a) / max(1e-6, span * 0.85), 0.0, 1.0)
    return p * p * (3 - 2 * p)
