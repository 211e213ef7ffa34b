"""The runner's models: which ``--models`` entries generate, and how each video job is run.

* a built-in suite model (``oracle``…) runs as a CPU job in the executor's pool, as before;
* a ``kind = "io"`` generator (APIs, ``cmd:``) is awaited on the run's event loop (Job kind ``io``, under
  the run's I/O concurrency and the model's own ``concurrency``), cut at its timeout;
* any other generator (``diffusers:``, a plugin) runs in a killable worker of its own
  (:mod:`vreason.runner.genpool`) that keeps the model loaded; past its timeout the worker is killed
  and replaced. Under ``--executor ray`` it is a Ray task instead (the timeout is then not enforced).

Every generated video that says ``ok`` is decoded before it counts; an unreadable file is ``failed``.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import Any

from vreason.core.errors import ConfigError, disk_full
from vreason.core.records import Sample, Video, VideoStatus
from vreason.generate.base import GenContext
from vreason.generate.spec import ModelSpec, build, describe, parse_models, plugin_generator
from vreason.runner.executor import Job
from vreason.runner.genpool import GenPool
from vreason.runner.work import _generate_in_worker, check_output


@dataclass
class RunModel:
    spec: ModelSpec
    generator: Any = None
    builtin: bool = False
    """A model the protocol itself provides (the built-in suite's): its videos are never imported."""
    variant: str = "default"
    """The prompt variant its videos are generated from (:mod:`vreason.data.prompt_variants`)."""
    base: str | None = None
    """The ``--models`` entry it is a variant of."""

    @property
    def name(self) -> str:
        return self.spec.name


def resolve_models(entries: list[str], protocol: Any, protocol_name: str) -> list[RunModel]:
    """Parse ``--models`` and build each generator (a ConfigError names a bad entry, before any work)."""
    out = []
    for spec in parse_models(entries):
        if spec.kind is not None:
            out.append(RunModel(spec, build(spec, protocol_name)))
            continue
        gen = protocol.generator(spec.name)
        if gen is not None:
            out.append(RunModel(spec, gen, builtin=True))
            continue
        try:
            gen = plugin_generator(spec.name)
        except ImportError as exc:
            raise ConfigError(f"model {spec.name}: {exc}") from None
        out.append(RunModel(spec, gen))
    return out


def with_variants(models: list[RunModel], variants: list[str], prompts_file: str | None) -> list[RunModel]:
    """Every model once per prompt variant (``default`` keeps the name; others run as ``<model>_<variant>``)."""
    from vreason.data.prompt_variants import DEFAULT, expand_models

    if prompts_file and not variants:
        raise ConfigError("--prompts needs --prompt-variants (e.g. default,videotpo)")
    if not variants or variants == [DEFAULT]:
        return models
    if any(v != DEFAULT for v in variants) and not prompts_file:
        raise ConfigError(f"--prompt-variants {','.join(variants)}: name the prompts with --prompts FILE")
    by_name = {m.name: m for m in models}
    out = []
    for vm in expand_models(list(by_name), variants):
        m = by_name[vm.base]
        spec = m.spec if vm.variant == DEFAULT else m.spec.model_copy(update={"name": vm.run_name})
        out.append(RunModel(spec, m.generator, m.builtin, vm.variant, vm.base))
    return out


def variant_plan(variants: list[str], prompts_file: str | None) -> dict[str, Any]:
    import hashlib

    digest = None
    if prompts_file:
        try:
            with open(prompts_file, "rb") as fh:
                digest = hashlib.sha256(fh.read()).hexdigest()[:16]
        except OSError as exc:
            raise ConfigError(f"--prompts {prompts_file}: {exc.strerror or exc}") from None
    return {"variants": list(variants), "prompts_sha256": digest}


def apply_prompt_file(samples: list[Sample], prompts_file: str | None, models: list[RunModel], store: Any) -> None:
    """Add the file's prompts to the samples and record which run model is which variant (for the report)."""
    if not prompts_file:
        return
    from vreason.data.prompt_variants import apply_prompts, read_prompts

    apply_prompts(samples, read_prompts(prompts_file))
    pairs = [{"run_name": m.name, "base": m.base or m.name, "variant": m.variant} for m in models
             if m.variant != "default"]
    store.set_meta("prompt_variants", pairs)


def prompt_for(m: RunModel, sample: Sample) -> Sample | None:
    from vreason.data.prompt_variants import prompt_sample

    return prompt_sample(sample, m.variant)


def plan_entries(models: list[RunModel], protocol_name: str) -> dict[str, Any]:
    """What of a spec decides the videos (part of the plan): kind, target, parameters."""
    return {m.name: {"kind": m.spec.kind, "target": m.spec.target, "params": m.spec.params_for(protocol_name)}
            for m in models if m.spec.kind is not None}


def manifest_entries(models: list[RunModel], protocol_name: str) -> dict[str, Any]:
    return {m.name: describe(m.spec, m.generator, protocol_name) for m in models}


@dataclass
class GenerationJobs:
    """Builds one executor Job per video to generate; holds the workers and per-model limits."""

    run_dir: str
    executor: str = "local"
    timeout_s: float | None = None
    dry_run: bool = False
    pools: dict[str, GenPool] = field(default_factory=dict)
    limits: dict[str, asyncio.Semaphore] = field(default_factory=dict)

    def bind(self, models: list[RunModel]) -> None:
        for m in models:
            if m.generator is not None:
                m.generator.bind(GenContext(run_dir=self.run_dir, dry_run=self.dry_run,
                                            timeout_s=m.spec.timeout_s or self.timeout_s))

    def job(self, m: RunModel, sample: Sample, seed: int, out: str) -> Job:
        gen, key = m.generator, (sample.id, m.name, seed)
        if m.builtin:
            return Job(key=key, kind="cpu", fn=_generate_in_worker, args=(gen, sample, seed, out))
        if getattr(gen, "kind", "cpu") == "io":
            return Job(key=key, kind="io", coro_factory=lambda: self._io(m, sample, seed, out))
        if self.executor != "local":
            return Job(key=key, kind="cpu", fn=_generate_in_worker, args=(gen, sample, seed, out, True))
        return Job(key=key, kind="io", coro_factory=lambda: self._pooled(m, sample, seed, out))

    async def _io(self, m: RunModel, sample: Sample, seed: int, out: str) -> Video:
        gen = m.generator
        limit = self.limits.setdefault(m.name, asyncio.Semaphore(max(1, int(getattr(gen, "concurrency", 0) or 1e6))))
        timeout = gen.ctx.timeout_s
        cut = None if timeout is None else timeout + float(getattr(gen, "timeout_grace_s", 0.0) or 0.0)
        async with limit:
            try:
                video = await asyncio.wait_for(gen.agenerate(sample, seed, out), timeout=cut)
            except asyncio.TimeoutError:
                more = f" and did not stop within {cut - timeout:g} s more" if cut != timeout else ""
                return gen.failed(sample, seed, f"generation timed out after {timeout:g} s{more} (cancelled)")
            except Exception as exc:  # noqa: BLE001 - a crash is a failed video with its reason
                if disk_full(exc):  # … but a full disk stops the run (exit 4; the same command resumes)
                    raise
                return gen.failed(sample, seed, f"generator crashed: {type(exc).__name__}: {exc}")
        return await asyncio.to_thread(check_output, video)

    async def _pooled(self, m: RunModel, sample: Sample, seed: int, out: str) -> Video:
        gen = m.generator
        pool = self.pools.get(m.name)
        if pool is None:
            pool = self.pools[m.name] = GenPool(getattr(gen, "workers", 1) or 1)
        return await pool.generate(m.name, gen, sample, seed, out, gen.ctx.timeout_s)

    def shutdown(self) -> None:
        for pool in self.pools.values():
            with contextlib.suppress(Exception):
                pool.shutdown()
        self.pools.clear()


def estimate(plan: dict[str, Any], model: str, gen: Any, sample: Sample, seed: int) -> None:
    """A dry run's row for a video to generate: the count and the generator's cost estimate."""
    row = plan.setdefault("videos", {}).setdefault(model, {})
    row["to generate"] = row.get("to generate", 0) + 1
    try:
        est = gen.estimate(sample, seed) or {}
    except Exception as exc:  # noqa: BLE001 - an estimate must not stop a dry run
        est = {}
        row["estimate error"] = f"{type(exc).__name__}: {exc}"[:120]
    for k, v in est.items():
        if isinstance(v, int | float):
            row[f"estimated {k}"] = round(row.get(f"estimated {k}", 0) + v, 4)


def as_run_video(video: Any, model: str, sample_id: str, seed: int) -> Video:
    """The job's result under the run's model name (a generator may name itself otherwise)."""
    if not isinstance(video, Video):
        return Video(sample_id=sample_id, model=model, seed=seed, status=VideoStatus.failed,
                     reason=f"generator returned {type(video).__name__}, not a Video")
    if video.model != model or video.sample_id != sample_id or video.seed != seed:
        video = video.model_copy(update={"model": model, "sample_id": sample_id, "seed": seed})
    return video
