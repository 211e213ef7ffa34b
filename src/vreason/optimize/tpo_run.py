"""``vreason tpo``: run VideoTPO over a protocol's samples (resumable, one folder per run)."""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field
from typing import Any

from vreason.core.errors import ConfigError
from vreason.optimize.videotpo import StepRecord, TpoConfig, TpoLog, VideoTPO, write_prompts


@dataclass
class TpoSummary:
    run_dir: str
    samples: int = 0
    complete: int = 0
    failed: dict[str, str] = field(default_factory=dict)
    steps_run: int = 0
    steps_reused: int = 0
    prompts_file: str = ""
    judge_stats: dict[str, Any] = field(default_factory=dict)


def resolve_generator(protocol: Any, model: str, run_dir: str) -> tuple[str, Any]:
    """``(model name, Generator)`` for a built-in name or a ``kind:target`` / YAML spec."""
    from vreason.generate.base import GenContext

    gen = protocol.generator(model)
    name = model
    if gen is None:
        from vreason.generate import spec as gspec

        ms = gspec.parse_entry(model)
        name = ms.name
        gen = gspec.build(ms, protocol.name) if ms.kind else gspec.plugin_generator(ms.name)
        if gen is None:
            raise ConfigError(f"tpo --model {model!r}: not a model {protocol.name} can generate with (a built-in "
                              "model or a spec such as diffusers:DIR, cmd:SCRIPT, sora:MODEL)")
    gen.bind(GenContext(run_dir=run_dir))
    return name, gen


def run_tpo(cfg: TpoConfig) -> TpoSummary:
    from vreason.judge.spec import make_judge
    from vreason.runner.guard import RunLock
    from vreason.runner.run import make_protocol

    lock = RunLock(cfg.run_dir).acquire(f"vreason tpo {cfg.protocol} ({cfg.model})")
    try:
        protocol = make_protocol(cfg.protocol, cfg.options, run_dir=cfg.run_dir)
        res = protocol.load()
        samples = res.samples[: cfg.limit] if cfg.limit else res.samples
        if not samples:
            raise ConfigError(f"tpo: {cfg.protocol} yielded no samples ({len(res.errors)} records skipped)")
        name, gen = resolve_generator(protocol, cfg.model, cfg.run_dir)
        cfg.model = name
        log = TpoLog(cfg.run_dir)
        judge = make_judge(cfg.optimizer, cache_path=os.path.join(cfg.run_dir, "tpo", "judge_cache.sqlite"),
                           **cfg.judge_options)
        return asyncio.run(_run(cfg, samples, gen, judge, log))
    finally:
        lock.release()


async def _run(cfg: TpoConfig, samples: list, gen: Any, judge: Any, log: TpoLog) -> TpoSummary:
    summary = TpoSummary(run_dir=cfg.run_dir, samples=len(samples))
    earlier: dict[str, dict[int, StepRecord]] = {}
    for rec in log.records():  # the latest record of each (sample, step) wins
        if rec.model == cfg.model:
            earlier.setdefault(rec.sample_id, {})[rec.step] = rec
    tpo = VideoTPO(cfg, gen, judge, log)
    gate = asyncio.Semaphore(max(1, cfg.concurrency))
    before = sum(1 for _ in log.records())

    async def one(sample) -> dict[str, Any]:
        async with gate:
            return await tpo.optimise(sample, earlier.get(sample.id, {}))

    try:
        rows = await asyncio.gather(*(one(s) for s in samples))
    finally:
        summary.judge_stats = judge.stats() if hasattr(judge, "stats") else {}
        await judge.aclose()
    summary.steps_run = sum(1 for _ in log.records()) - before
    summary.steps_reused = sum(r["steps"] for r in rows) - sum(
        1 for r in log.records()[before:] if r.status == "ok")
    summary.complete = sum(1 for r in rows if r["complete"])
    summary.failed = {r["sample_id"]: r["failure"] for r in rows if not r["complete"]}
    summary.prompts_file = os.path.join(log.root, "optimized_prompts.jsonl")
    write_prompts(summary.prompts_file, rows)
    return summary
