"""The Generator interface: anything that turns a Sample (+ seed) into a video file.

Built-in suite models (oracle, static, …), diffusers pipelines from a local checkpoint and
API clients all implement it. A generator writes to ``out_path`` and returns a
:class:`~vreason.records.Video` whose manifest says how it was made; when it cannot, it
returns a Video with status ``failed``/``blocked`` and the reason (the run goes on).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar, Literal

from vreason.records import GenerationManifest, Sample, Video, VideoStatus


class Generator(ABC):
    name: ClassVar[str] = ""
    version: ClassVar[str] = "1"
    kind: ClassVar[Literal["cpu", "io"]] = "cpu"
    resources: ClassVar[dict[str, Any]] = {"num_cpus": 1}
    """What one video needs under ``--executor ray``: ``num_cpus``, ``num_gpus``, ``memory`` (bytes); with
    ``actor: True`` (or any ``num_gpus``) the generator (its model) is loaded once per Ray actor
    (``actors: N``) and reused across videos. The local executor ignores it."""

    def __init__(self, **params: Any):
        self.params = params

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
