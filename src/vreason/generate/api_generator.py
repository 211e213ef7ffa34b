"""The base of API generators (``sora:``, ``veo:``, ``http:``): a Generator on the shared job engine.

Subclasses give the provider adapter, the key's environment variable, the default base URL and the
price; this class reads the key from the environment (never from a spec or a file), keeps one job
ledger per run folder, turns each job's outcome into a :class:`~vreason.core.records.Video` and gives the
dry-run estimate. Options are a typed model: an unknown key is refused with the accepted ones.
"""

from __future__ import annotations

import asyncio
import io
import os
import time
from abc import abstractmethod
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from vreason.core.errors import ConfigError
from vreason.core.records import GenerationManifest, Mode, Sample, Video, VideoStatus
from vreason.generate.api_jobs import EngineSettings, JobAdapter, JobEngine, JobRequest, RetrySettings
from vreason.generate.base import GenContext, Generator
from vreason.generate.job_ledger import JobLedger, job_key, request_hash
from vreason.generate.pricing import Price
from vreason.store import redact


class ApiOptions(BaseModel):
    """Options every API generator accepts (spec ``params``)."""

    model_config = ConfigDict(extra="forbid")

    base_url: str | None = None
    """API root; default: the provider's, or the environment variable the generator names."""
    api_key_env: str | None = None
    """Name of the environment variable holding the key (the key itself is never a parameter)."""
    poll_s: float = Field(10.0, gt=0)
    """The longest wait between two polls of one job."""
    poll_first_s: float | None = Field(None, ge=0)
    poll_min_s: float | None = Field(None, gt=0)
    """Backoff: after the first poll, wait this long, then double up to ``poll_s`` (default: ``poll_s``,
    every wait the same). A pending poll reply's ``Retry-After`` is honoured instead (up to ``poll_s``)."""
    http_client: Literal["auto", "aiohttp", "httpx"] = "auto"
    """``aiohttp`` (also ``auto``): one aiohttp session per model and event loop, keep-alive, proxies from the
    environment (~3x less CPU per video than httpx); ``httpx``."""
    timeout_s: float | None = Field(None, gt=0)
    """Give up waiting for one job after this long (default: the run's --gen-timeout, else 3600 s)."""
    max_in_flight: int | None = Field(None, ge=1)
    retries: int = Field(5, ge=0)
    retry_base_s: float = Field(1.0, ge=0)
    retry_cap_s: float = Field(60.0, ge=0)
    retry_blocked: bool = False
    usd_per_second: float | None = Field(None, ge=0)
    usd_per_video: float | None = Field(None, ge=0)
    request_timeout_s: float = Field(120.0, gt=0)
    """Read timeout of one HTTP call; a create that times out is ambiguous (resolved, not resent)."""
    idempotent_creates: bool = False
    """Declare that the API (or a proxy in front of it) answers a create repeated with the same
    ``Idempotency-Key`` with the first one's job: an ambiguous create is then simply resent."""
    lookup_wait_s: float = Field(2.0, ge=0)
    """After an ambiguous create, look the job up again this long later before creating again."""
    recreate_after_ambiguous: bool = False
    """Where the API has neither idempotency key nor job list: create again after an ambiguous failure
    (may pay for two jobs). Default: the video fails with the reason, the row stays ``unknown``."""
    image_fit: str = Field("stretch", pattern="^(stretch|pad)$")
    """How an input image is brought to the requested size: ``stretch`` keeps frame-normalised
    coordinates (what the verifiers use), ``pad`` keeps the aspect ratio with black bars."""


class ApiGenerator(Generator):
    kind: ClassVar[str] = "io"  # type: ignore[misc]
    resources: ClassVar[dict[str, Any]] = {"num_cpus": 0}
    timeout_grace_s: ClassVar[float] = 5.0  # the job loop stops itself before timeout_s, with the job id
    options_model: ClassVar[type[ApiOptions]] = ApiOptions
    provider: ClassVar[str] = ""
    key_envs: ClassVar[tuple[str, ...]] = ()
    base_url_env: ClassVar[str] = ""
    default_base_url: ClassVar[str] = ""

    def __init__(self, target: str, name: str | None = None, **params: Any):
        super().__init__(**params)
        self.target = target
        self._name = name or self.default_name(target)
        self.opts = self.options_model(**params)
        self._engine: JobEngine | None = None
        self._ledger: JobLedger | None = None

    # ------------------------------------------------------------------ identity
    @classmethod
    def default_name(cls, target: str) -> str:
        from vreason.core.records import safe_id_from

        return safe_id_from(target)

    def model_name(self) -> str:
        return self._name

    def model_id(self) -> str:
        return f"{self.provider}/{self.target}"

    def resolved_params(self) -> dict[str, Any]:
        return redact({**self.opts.model_dump(), "base_url": self.base_url(), "credential_env": self.key_env(),
                       "price": self.price().__dict__, "video_seconds": self.video_seconds()})

    def manifest(self, sample: Sample, prompt: str | None = None, **extra: Any) -> GenerationManifest:
        params = self.request_params()
        if getattr(self, "_redacted_for", None) != params:  # redacted once per generator, not per video
            self._redacted_for, self._redacted = params, redact(params)
        return GenerationManifest(model_id=self.model_id(), revision=None,
                                  params={**self._redacted, **redact(extra)},
                                  prompt=prompt if prompt is not None else sample.prompt, source="generated")

    # ------------------------------------------------------------------ what subclasses give
    @abstractmethod
    def adapter(self, key: str | None) -> JobAdapter: ...

    @abstractmethod
    def request_params(self) -> dict[str, Any]:
        """The generation parameters sent with every job (part of the ledger's request hash)."""

    def video_seconds(self) -> float:
        return 0.0

    def price(self) -> Price:
        return Price(self.opts.usd_per_second or 0.0, self.opts.usd_per_video or 0.0, source="spec parameters")

    def image_size(self, width: int, height: int) -> tuple[int, int] | None:
        """The size the input image must have (``None``: send it as it is)."""
        return None

    # ------------------------------------------------------------------ environment
    def base_url(self) -> str:
        env = os.environ.get(self.base_url_env) if self.base_url_env else None
        return (self.opts.base_url or env or self.default_base_url).rstrip("/")

    def key_env(self) -> str:
        if self.opts.api_key_env:
            return self.opts.api_key_env
        return next((e for e in self.key_envs if os.environ.get(e)), self.key_envs[0] if self.key_envs else "")

    def api_key(self) -> str | None:
        env = self.key_env()
        return os.environ.get(env) or None if env else None

    def bind(self, ctx: GenContext) -> None:
        super().bind(ctx)
        if not ctx.dry_run and self.key_envs and not self.api_key():
            raise ConfigError(f"model {self._name} ({self.provider}:{self.target}): set the API key in the "
                              f"environment variable {self.key_env()}")

    def engine(self) -> JobEngine:
        if self._engine is None:
            key = self.api_key()
            self._ledger = JobLedger(self.ctx.run_dir)
            s = self.opts
            settings = EngineSettings(
                poll_s=s.poll_s, poll_first_s=s.poll_first_s,
                timeout_s=s.timeout_s or self.ctx.timeout_s or 3600.0, max_in_flight=s.max_in_flight,
                retry=RetrySettings(attempts=s.retries + 1, base_s=s.retry_base_s, cap_s=s.retry_cap_s),
                retry_blocked=s.retry_blocked, request_timeout_s=s.request_timeout_s, lookup_wait_s=s.lookup_wait_s,
                recreate_after_ambiguous=s.recreate_after_ambiguous, poll_min_s=s.poll_min_s,
                http_client=s.http_client,
            )
            adapter = self.adapter(key)
            if s.idempotent_creates:
                adapter.honors_idempotency = True
                adapter.idempotency_header = adapter.idempotency_header or "Idempotency-Key"
            self._engine = JobEngine(adapter, self._ledger, settings, secrets=[key] if key else [])
        return self._engine

    # ------------------------------------------------------------------ one video
    def estimate(self, sample: Sample, seed: int) -> dict[str, float]:
        return {"usd": self.price().cost(self.video_seconds()), "video_seconds": self.video_seconds()}

    def input_png(self, sample: Sample) -> tuple[bytes, tuple[int, int]] | None:
        """The sample's input image as PNG at the size the provider needs, with that size."""
        if sample.mode == Mode.t2v or not sample.input_image:
            return None
        from PIL import Image

        with Image.open(sample.resolve(sample.input_image)) as im:
            img = im.convert("RGB")
        size = self.image_size(*img.size)
        if size and size != img.size:
            if self.opts.image_fit == "pad":
                s = min(size[0] / img.width, size[1] / img.height)
                inner = img.resize((max(1, round(img.width * s)), max(1, round(img.height * s))),
                                   Image.Resampling.LANCZOS)
                canvas = Image.new("RGB", size)
                canvas.paste(inner, ((size[0] - inner.width) // 2, (size[1] - inner.height) // 2))
                img = canvas
            else:
                img = img.resize(size, Image.Resampling.LANCZOS)
        buf = io.BytesIO()
        img.save(buf, format="PNG")
        return buf.getvalue(), img.size

    @staticmethod
    def _has_image(sample: Sample) -> bool:
        return sample.mode != Mode.t2v and bool(sample.input_image)

    def generate(self, sample: Sample, seed: int, out_path: str) -> Video:
        return asyncio.run(self._generate_and_close(sample, seed, out_path))

    async def _generate_and_close(self, sample: Sample, seed: int, out_path: str) -> Video:
        try:
            return await self.agenerate(sample, seed, out_path)
        finally:
            if self._engine is not None:
                await self._engine.aclose()

    async def agenerate(self, sample: Sample, seed: int, out_path: str) -> Video:
        started = time.monotonic()  # the runner's timeout clock starts with this call
        if not self.api_key() and self.key_envs:
            return self.failed(sample, seed, f"no API key: set the environment variable {self.key_env()}")
        try:  # an image is read and resized off the loop; a text-only sample costs no thread hop
            png = await asyncio.to_thread(self.input_png, sample) if self._has_image(sample) else None
        except Exception as exc:  # a bad input is this sample's error, the run goes on
            return self.failed(sample, seed, f"input image unreadable: {type(exc).__name__}: {exc}")
        image, image_size = png if png else (None, None)
        prompt = sample.prompt
        engine = self.engine()
        rh = request_hash(prompt, image, {"target": self.target, **self.request_params()})
        key = job_key(self._name, sample.id, seed, rh)
        secs, price = self.video_seconds(), self.price()
        meta = {"model": self._name, "sample_id": sample.id, "seed": seed, "request_hash": rh,
                "usd": price.cost(secs), "video_seconds": secs}
        out = await engine.run(key, JobRequest(prompt, seed, image, image_size), out_path, meta=meta,
                               started=started)
        extra = {"provider": self.provider, "job_id": out.job_id, "resumed": out.resumed,
                 "usd": meta["usd"] if out.status == "ok" else 0.0, "price_source": price.source}
        if out.status != "ok":
            status = VideoStatus.blocked if out.status == "blocked" else VideoStatus.failed
            return Video(sample_id=sample.id, model=self._name, seed=seed, path=None, status=status,
                         reason=out.reason, manifest=self.manifest(sample, prompt, **extra))
        return self._checked(sample, seed, out_path, self.manifest(sample, prompt, **extra))

    def _checked(self, sample: Sample, seed: int, path: str, manifest: GenerationManifest) -> Video:
        from vreason.core.errors import VideoError
        from vreason.frames.video import probe

        try:
            info = probe(path, quick=True)
        except VideoError as exc:
            return Video(sample_id=sample.id, model=self._name, seed=seed, path=None, status=VideoStatus.failed,
                         reason=f"the provider's video is unreadable: {exc}", manifest=manifest)
        return Video(sample_id=sample.id, model=self._name, seed=seed, path=path, manifest=manifest,
                     fps=info.fps, n_frames=info.n_frames, width=info.width, height=info.height)
