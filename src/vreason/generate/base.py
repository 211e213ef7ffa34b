"""The Generator interface: anything that turns a Sample (+ seed) into a video file.

Built-in suite models (oracle, static, …), diffusers pipelines from a local checkpoint and
API clients all implement it. A generator writes to ``out_path`` and returns a
:class:`~vreason.core.records.Video` whose manifest says how it was made; when it cannot, it
returns a Video with status ``failed``/``blocked`` and the reason (the run goes on).
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from vreason.core.records import GenerationManifest, Sample, Video, VideoStatus


@dataclass
class GenContext:
    """What a generator may know about the run it works for (given by :meth:`Generator.bind`)."""

    run_dir: str = "."
    dry_run: bool = False
    timeout_s: float | None = None
    """Wall-clock limit for one video; past it the video is ``failed`` with the reason."""


class Generator(ABC):
    name: ClassVar[str] = ""
    version: ClassVar[str] = "1"
    kind: ClassVar[Literal["cpu", "io"]] = "cpu"
    resources: ClassVar[dict[str, Any]] = {"num_cpus": 1}
    """What one video needs under ``--executor ray``: ``num_cpus``, ``num_gpus``, ``memory`` (bytes); with
    ``actor: True`` (or any ``num_gpus``) the generator (its model) is loaded once per Ray actor
    (``actors: N``) and reused across videos. The local executor ignores it."""
    timeout_grace_s: ClassVar[float] = 0.0
    """An ``io`` generator that keeps ``ctx.timeout_s`` itself (and says why it stopped) is cut by the runner only
    this much later: the runner's cut is then a backstop for a generator stuck in its own code, and its own
    reason (an API job's id, kept for ``--retry-failed``) is not lost when a slow request overran its margin."""

    def __init__(self, **params: Any):
        self.params = params
        self.ctx = GenContext()

    def bind(self, ctx: GenContext) -> None:
        """Called by the runner before the first video (run folder for job ledgers, dry run, timeout)."""
        self.ctx = ctx

    async def agenerate(self, sample: Sample, seed: int, out_path: str) -> Video:
        """``kind = "io"`` generators (APIs) override this; the runner awaits it on its event loop under
        the run's I/O concurrency. The default runs :meth:`generate` in a thread."""
        return await asyncio.to_thread(self.generate, sample, seed, out_path)

    def estimate(self, sample: Sample, seed: int) -> dict[str, float]:
        """A dry run's estimate for one video: e.g. ``{"usd": 0.4, "seconds": 90}`` (``{}``: unknown/free)."""
        return {}

    @abstractmethod
    def generate(self, sample: Sample, seed: int, out_path: str) -> Video:
        """Write the video for (sample, seed) to ``out_path``; return its record."""

    def model_name(self) -> str:
        return self.name

    def manifest(self, sample: Sample, prompt: str | None = None, **extra: Any) -> GenerationManifest:
        return GenerationManifest(
            model_id=f"vreason/{self.name}",
            revision=self.version,
            params={**self.params, **extra},
            prompt=prompt if prompt is not None else sample.prompt,
            source="generated",
        )

    def failed(self, sample: Sample, seed: int, reason: str, status: VideoStatus = VideoStatus.failed) -> Video:
        return Video(
            sample_id=sample.id,
            model=self.model_name(),
            seed=seed,
            path=None,
            status=status,
            reason=reason,
            manifest=self.manifest(sample),
        )
