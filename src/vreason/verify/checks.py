"""The contract of a programmatic check (TiViBench's metric families, reused by the built-in suite).

A check is a function ``check(frames, times, gt_end, params, env) -> CheckResult`` registered under the
metric family name of :mod:`vreason.verify.annotations` with :func:`register_check`:

* ``frames`` — RGB uint8 arrays (H×W×3) as the check's ``frames`` need declares: ``"last"`` gives one
  frame (the video's last), ``"uniform:N"`` gives N frames spread evenly over the video (first and last
  included), ``"all"`` gives every frame; ``times`` are their presentation times in seconds;
* ``gt_end`` — the ground-truth end state (RGB, any size) or ``None`` when the sample has none;
* ``params`` — the family's validated parameter model (coordinates normalised to the frame);
* ``env`` — what the check may use: the OCR engine, the feature backbone, the detector.

A check never raises for a bad video: it returns ``passed=False`` with the reason (the content is wrong)
or ``passed=None`` with the reason when it **could not score** (no OCR engine installed, no detector
given): the scorer turns ``None`` into an ``unscored`` score, never into a 0.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class CheckResult:
    passed: bool | None
    """``None``: could not score (``reason`` says why)."""
    score: float | None = None
    """A graded value in [0, 1] when the family has one (similarity, fraction of cells), else 0/1."""
    reason: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    """JSON-able: what was read / found / compared (digits per cell, OCR text, trajectory…)."""
    backend: str = ""
    """What measured it, e.g. ``rapidocr``, ``classical:hog-hsv``, ``transformers:dinov2@/path``,
    ``colour-detector``: recorded in the score's evidence and shown in the report."""
    overlay: np.ndarray | None = None
    """An RGB debug image (e.g. the read grid drawn on the last frame)."""


@dataclass
class CheckEnv:
    """What checks may use. Every member is optional; a check that needs a missing one returns
    ``passed=None`` with the reason."""

    ocr: Any = None
    """An OCR engine (:func:`vreason.verify.ocr.get_ocr`), or ``None`` when the ``ocr`` extra is missing."""
    features: Any = None
    """An image embedder (:mod:`vreason.measure`), e.g. DINOv2 from a local folder or the classical one."""
    detector: Any = None
    """An open-vocabulary detector (:mod:`vreason.measure`), or ``None`` (rendered tasks use colour)."""
    options: dict[str, Any] = field(default_factory=dict)


CheckFn = Callable[[Sequence[np.ndarray], np.ndarray, "np.ndarray | None", Any, CheckEnv], CheckResult]


@dataclass
class CheckEntry:
    family: str
    fn: CheckFn
    frames: str = "last"
    """``last``, ``uniform:N`` (N from the params' ``n_samples`` when it has one) or ``all``."""
    needs: tuple[str, ...] = ()
    """Members of :class:`CheckEnv` it uses (``ocr``, ``features``, ``detector``)."""


CHECKS: dict[str, CheckEntry] = {}

_MODULES = ("vreason.verify.sudoku", "vreason.verify.math_answer", "vreason.verify.mcq",
            "vreason.verify.digit_sequence", "vreason.verify.bars", "vreason.verify.match3",
            "vreason.verify.region", "vreason.verify.grounding", "vreason.verify.tracking")
"""Modules that register checks on import (loaded lazily by :func:`get_check`)."""


def register_check(family: str, *, frames: str = "last", needs: tuple[str, ...] = ()) -> Callable[[CheckFn], CheckFn]:
    def deco(fn: CheckFn) -> CheckFn:
        CHECKS[family] = CheckEntry(family, fn, frames, needs)
        return fn

    return deco


def load_checks() -> dict[str, CheckEntry]:
    import importlib

    for mod in _MODULES:
        try:
            importlib.import_module(mod)
        except ModuleNotFoundError as exc:  # a module not written yet / an optional import missing
            if exc.name != mod:
                raise
    return CHECKS


def get_check(family: str) -> CheckEntry:
    entries = load_checks()
    if family not in entries:
        raise KeyError(f"no check registered for metric family {family!r} (known: {', '.join(sorted(entries))})")
    return entries[family]
