"""The contract of a built-in task family.

A family generates task instances deterministically from a seed and verifies videos.

* :meth:`TaskFamily.make` returns a :class:`TaskInstance`: the first frame, the ground-truth
  final frame, the rendered ground-truth solution (all frames), a narrative prompt and a
  JSON-able ``state`` holding everything the verifier needs (positions, colours, solution).
* :meth:`TaskFamily.verify` scores a video's frames against the instance ``state`` and
  returns a :class:`VerifyResult` with a score in [0, 1], a pass flag and evidence.
* :meth:`TaskFamily.random_motion` renders "plausible random motion" for the ``random``
  baseline model (the agent wanders, bars swap at random, …).

Verifiers must never crash on black, white, 1-frame or re-encoded videos: they return a low
score with the reason in the evidence instead.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

DIFFICULTIES = ("easy", "medium", "hard")


@dataclass(frozen=True)
class RenderConfig:
    width: int = 640
    height: int = 360
    fps: int = 16
    seconds: float = 4.0

    @property
    def n_frames(self) -> int:
        return max(2, int(round(self.fps * self.seconds)))


@dataclass
class TaskInstance:
    family: str
    difficulty: str
    index: int
    seed: int
    prompt: str
    first_frame: np.ndarray
    final_frame: np.ndarray
    solution: list[np.ndarray]
    """The ground-truth video's frames (first = ``first_frame``, last = ``final_frame``)."""
    state: dict[str, Any] = field(default_factory=dict)
    directional: bool = True
    """Whether the task has a direction in time (the reversed oracle must fail)."""
    process_rule: bool = False
    """Whether the rule is about the process (a cut/fade to the final state must fail)."""

    @property
    def sample_id(self) -> str:
        return f"{self.family}-{self.difficulty}-{self.index:03d}"


@dataclass
class VerifyResult:
    score: float
    passed: bool
    evidence: dict[str, Any] = field(default_factory=dict)
    """JSON-able details: trajectory, per-check results, reasons."""
    debug_image: np.ndarray | None = None
    """An RGB overlay (e.g. the tracked trajectory drawn on frame 0)."""


class TaskFamily(ABC):
    name: ClassVar[str] = ""
    version: ClassVar[str] = "1"
    directional: ClassVar[bool] = True
    process_rule: ClassVar[bool] = False

    @abstractmethod
    def make(self, rng: np.random.Generator, difficulty: str, index: int, seed: int,
             cfg: RenderConfig) -> TaskInstance:
        """Build one instance; all randomness comes from ``rng``."""

    @abstractmethod
    def verify(self, frames: list[np.ndarray], state: dict[str, Any], cfg: RenderConfig,
               times: Sequence[float] | None = None) -> VerifyResult:
        """Score a video (all its frames, RGB uint8, any size) against ``state``.

        ``times[i]`` is the presentation time of ``frames[i]`` in seconds, from the video's own
        time base; ``None`` means the suite's rate (``i / cfg.fps``, see :func:`frame_times`).
        Frames are never resampled for the verifier: a process check reasons in the task's units
        (cells, pixels of the render config, seconds), so the same motion gets the same verdict at
        any frame rate and length."""

    scene_check: ClassVar[bool] = True
    """Whether the verdict includes the every-frame ``scene`` check (issue 24) when the family declares a
    scene; off where honest variants still fail it (the scene stays declared, tested and measurable)."""

    def scene(self, state: dict[str, Any], cfg: RenderConfig) -> Any:
        """The family's :class:`vreason.verify.explain.Scene` (start image, per-frame re-rendering, free
        regions) when its verifier explains every frame; None when it does not (yet)."""
        return None

    def explain(self, frames: list[np.ndarray], times: Sequence[float] | np.ndarray, state: dict[str, Any],
                cfg: RenderConfig) -> Any:
        """Every frame (prepared: the render size, letterbox cropped) explained by :meth:`scene`
        (:func:`vreason.verify.explain.explain_scene`); None when the family declares no scene."""
        from vreason.verify.explain import explain_scene

        sc = self.scene(state, cfg)
        scale = getattr(self, "decode_scale", None) or 1.0
        return None if sc is None else explain_scene(frames, times, sc, decode_scale=scale)

    def shortest_oracle(self, inst: TaskInstance, cfg: RenderConfig) -> int:
        """A count of the oracle's first frames that its shorter prefixes all fail by: by default all of them
        (the final state must be reached). A family whose rule is a duration (gravity: the motion for
        :data:`~vreason.synth.families.gravity.check.MIN_MOTION_FRACTION` of the clip) says where it surely is
        not met; the adversarial ``end_early`` cuts only there (a later cut is an honest, shorter video)."""
        return len(inst.solution)

    @abstractmethod
    def random_motion(self, inst: TaskInstance, rng: np.random.Generator, cfg: RenderConfig) -> list[np.ndarray]:
        """Frames of plausible but wrong motion for the ``random`` baseline."""


def frame_times(n: int, cfg: RenderConfig, times: Sequence[float] | None = None) -> np.ndarray:
    """Seconds of each of ``n`` frames: ``times`` when given (checked), else ``i / cfg.fps``."""
    if times is None:
        return np.arange(n, dtype=np.float64) / float(cfg.fps)
    t = np.asarray(times, dtype=np.float64)
    if t.shape != (n,) or not np.all(np.isfinite(t)) or np.any(np.diff(t) <= 0):
        raise ValueError(f"frame times must be {n} finite, strictly increasing seconds")
    return t - t[0]


FAMILIES: dict[str, type[TaskFamily]] = {}


def family(cls: type[TaskFamily]) -> type[TaskFamily]:
    """Class decorator registering a family under ``cls.name``."""
    FAMILIES[cls.name] = cls
    return cls


def instance_seed(base_seed: int, family_name: str, difficulty: str, index: int) -> int:
    """A stable per-instance seed (independent of which other families are generated)."""
    import zlib

    key = f"{base_seed}:{family_name}:{difficulty}:{index}".encode()
    return zlib.crc32(key) & 0x7FFFFFFF
