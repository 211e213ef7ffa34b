"""Run a protocol end to end: import-or-generate → score → aggregate, resumable.

The same command again skips finished units; ``retry_failed`` re-runs unscored/error ones.
Results are written to the store as they arrive, so a kill loses at most the units in flight.
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

from rich.console import Console
from rich.text import Text

from vreason.console import make_console
from vreason.core.errors import ConfigError, disk_full
from vreason.core.options import departures
from vreason.core.records import Sample, Score, Video, VideoStatus
from vreason.core.registry import benchmarks, load_builtins
from vreason.core.scoring import ScoreContext
from vreason.runner import checks, generation, outcome
from vreason.runner.config import RunConfig, RunSummary  # noqa: F401  (RunConfig is re-exported)
from vreason.runner.executor import Job, LocalExecutor
from vreason.runner.guard import RunLock, check_plan, check_samples, clear_run_dir, fingerprint, plan_of
from vreason.runner.progress import make_progress, unit_ok
from vreason.runner.work import _check_scores, _io_factory, _score_in_worker, load_error_text
from vreason.store import RunStore, redact


def make_protocol(name: str, options: dict[str, Any], run_dir: str | None = None):
    """Instantiate a protocol; its typed options model validates ``options`` (an
    :class:`~vreason.core.options.OptionsError` names a wrong key or value). ``run_dir`` is
    passed when the protocol declares it (every options model does) or takes ``**options``."""
    from vreason.runner.checks import known_option_keys

    load_builtins()
    cls = benchmarks.get(name)
    opts = dict(options)
    if run_dir is not None and "run_dir" not in opts:
        known = known_option_keys(cls)
        if known is None or "run_dir" in known:
            opts["run_dir"] = run_dir
    return cls(**opts)


class Runner:
    def __init__(self, cfg: RunConfig, console: Console | None = None):
        self.cfg = cfg
        self.console = console or make_console(stderr=True)
        load_builtins()  # a judged protocol without its judges is refused before the run folder is touched
        checks.check_judges(cfg.protocol, benchmarks.get(cfg.protocol), cfg.options, cfg.judges)
        self.lock = RunLock(cfg.run_dir).acquire(f"vreason run {cfg.protocol} ({', '.join(cfg.models)})")
        try:
            if cfg.force_new:
                clear_run_dir(self.lock.run_dir)
            self.store = RunStore(cfg.run_dir)
            try:
                self.protocol = make_protocol(cfg.protocol, cfg.options, run_dir=self.store.run_dir)
                self.models = generation.resolve_models(cfg.models, self.protocol, cfg.protocol)
                self.models = generation.with_variants(self.models, cfg.prompt_variants, cfg.prompts_file)
                self.names = [m.name for m in self.models]
                plan = plan_of(cfg, self.protocol.resolved_options())
                if cfg.prompt_variants:  # which prompts the videos come from is part of the plan
                    plan["prompt_variants"] = generation.variant_plan(cfg.prompt_variants, cfg.prompts_file)
                specs = generation.plan_entries(self.models, cfg.protocol)
                if specs:  # what a spec generates with is part of the plan (a YAML edited in place too)
                    plan["model_specs"] = specs
                self.plan = redact(plan)
                self.resuming = self.store.has_results()
                check_plan(self.store.get_meta("plan") if self.resuming else None, self.plan, self.store.run_dir)
            except BaseException:
                self.store.close()
                raise
        except BaseException:
            self.lock.release()
            raise
        self.summary = RunSummary(run_dir=self.store.run_dir)

    # ------------------------------------------------------------------ stages
    def load(self) -> list[Sample]:
        t0 = time.perf_counter()
        data = self.cfg.options.get("data")
        if isinstance(data, str) and data and not os.path.exists(data):
            raise ConfigError(f"--data {data}: no such file or folder")
        res = self.protocol.load()
        from vreason.data.confine import confine_samples  # data paths stay inside the dataset's root

        res.samples = confine_samples(res.samples, res.errors, allow_outside=self.cfg.allow_outside_data)
        samples = res.samples[: self.cfg.limit] if self.cfg.limit else res.samples
        generation.apply_prompt_file(samples, self.cfg.prompts_file, self.models, self.store)
        self.store.set_meta("load_errors", res.errors)
        self.summary.samples, self.summary.load_errors = len(samples), len(res.errors)
        for err in res.errors[:10]:
            self.console.print(Text.assemble(("record skipped", "yellow"), " ", load_error_text(err)), soft_wrap=True)
        if len(res.errors) > 10:
            self.console.print(f"[yellow]… {len(res.errors) - 10} more record errors (see manifest)[/]")
        if not samples:
            where = self.cfg.options.get("data") or "the protocol's built-in data"
            first = f"; first error: {load_error_text(res.errors[0])}" if res.errors else ""
            raise ConfigError(f"no samples to run: {where} yielded 0 samples ({len(res.errors)} records skipped"
                              f"{first})")
        # judges some samples only need (TiViBench's VLM QA): refused before any sample or plan is recorded
        checks.check_judges(self.cfg.protocol, type(self.protocol), self.cfg.options, self.cfg.judges, samples)
        if self.resuming:
            check_samples(self.store.get_meta("sample_ids"), [s.id for s in samples], self.store.run_dir)
        self.store.put_samples(samples)
        self.store.set_meta("plan", self.plan)
        self.store.set_meta("sample_ids", fingerprint({"ids": [s.id for s in samples]}))
        self.summary.seconds["load"] = time.perf_counter() - t0
        return samples

    def import_videos(self, samples: list[Sample]) -> None:
        """Bring in videos from --videos/--convention or --manifest (for the run's models); then check
        that every model is built in or has videos, before anything is scored."""
        from vreason.data.importer import read_manifest, scan

        results = []
        conv = self.cfg.convention or self.protocol.layout or "vreason"
        builtin = [m.name for m in self.models if m.generator is not None]
        example = {m: checks.expected_path(self.protocol, self.cfg.videos_dir or "<videos>", conv, m, samples[0],
                                           self.cfg.seeds[0]) for m in self.names}
        checks.check_videos_dir(self.cfg.videos_dir, example[self.names[0]])
        if self.cfg.manifest:
            results.append(read_manifest(self.cfg.manifest))
        if self.cfg.videos_dir:  # imported videos win over generating them (not for the built-in suite's)
            for m in self.models:
                if not m.builtin:
                    results.append(scan(self.cfg.videos_dir, conv, model=m.name))
        errors = [e for r in results for e in r.errors]
        vids = [v for r in results for v in r.videos if v.model in self.names]
        if self.cfg.videos_dir:
            errors += checks.outside_links(vids, self.cfg.videos_dir)
        if vids:
            self.store.put_videos(vids)
        if errors:
            self.store.set_meta("import_errors", errors)
            for e in errors[:10]:
                self.console.print(Text.assemble(("import", "yellow"), f" {e['where']}: {e['reason']}"), soft_wrap=True)
            if len(errors) > 10:
                self.console.print(f"[yellow]… {len(errors) - 10} more import errors (see the report)[/]")
        found: dict[str, int] = {}
        for v in self.store.videos():
            if v.status == VideoStatus.ok:
                found[v.model] = found.get(v.model, 0) + 1
        locate = self.protocol.locate_video
        for m in self.names:  # a protocol may find videos by itself (RISE's layout under its --videos)
            if not found.get(m) and m not in builtin:
                found[m] = next((1 for s in samples for seed in self.cfg.seeds
                                 if (p := locate(m, s, seed)) and os.path.exists(p)), 0)
        from vreason.core.registry import generators

        builtin += [n for n in generators.names() if n not in builtin and self.protocol.generator(n) is not None]
        checks.check_models(self.names, builtin, found, protocol=self.cfg.protocol,
                            videos_dir=self.cfg.videos_dir or self.cfg.options.get("videos"), example=example,
                            folder_names=checks.model_folders(self.cfg.videos_dir))

    def _video_path(self, model: str, sample: Sample, seed: int) -> str:
        return os.path.join(self.store.run_dir, "videos", model, f"{sample.id}__{seed}.mp4")

    async def videos(self, samples: list[Sample], executor: LocalExecutor) -> dict[tuple[str, str, int], Video]:
        """Import-or-generate: a video per (sample, model, seed), recorded in the store."""
        t0 = time.perf_counter()
        have = {v.key: v for v in self.store.videos()}
        jobs: list[Job] = []
        gens = {m.name: m.generator for m in self.models}
        maker = generation.GenerationJobs(self.store.run_dir, self.cfg.executor, self.cfg.gen_timeout, self.cfg.dry_run)
        maker.bind(self.models)
        locate = self.protocol.locate_video
        # sample-major order: consecutive jobs share a sample, so generators can reuse its instance
        for s in samples:
            for m in self.models:
                model, gen = m.name, m.generator
                for seed in self.cfg.seeds:
                    key = (s.id, model, seed)
                    old = have.get(key)
                    if old is not None and (old.status == VideoStatus.ok or not self.cfg.retry_failed):
                        if old.status == VideoStatus.ok and old.path and not os.path.exists(old.path):
                            have[key] = old.model_copy(update={"status": VideoStatus.missing, "reason":
                                                               f"file vanished: {old.path}"})
                        continue
                    located = None if m.builtin else locate(model, s, seed)
                    gs = generation.prompt_for(m, s)  # the sample as the generator sees it (prompt variant)
                    if gen is not None and gs is None and not (located and os.path.exists(located)):
                        have[key] = Video(sample_id=s.id, model=model, seed=seed, status=VideoStatus.missing,
                                          reason=f"no {m.variant!r} prompt for {s.id} in --prompts")
                        self.store.put_video(have[key])
                        continue
                    if gen is not None and not (located and os.path.exists(located)):
                        if self.cfg.dry_run:  # a dry run generates nothing
                            generation.estimate(self.summary.plan, model, gen, s, seed)
                            continue
                        out = self._video_path(model, s, seed)
                        os.makedirs(os.path.dirname(out), exist_ok=True)
                        jobs.append(maker.job(m, gs, seed, out))
                        continue
                    if located and os.path.exists(located):
                        have[key] = Video(sample_id=s.id, model=model, seed=seed, path=located)
                    else:
                        why = f"no video for {s.id} / {model} / seed {seed}"
                        why += f" (expected at {located})" if located else " (import it with `vreason import`)"
                        have[key] = Video(sample_id=s.id, model=model, seed=seed, path=None,
                                          status=VideoStatus.missing, reason=why)
                    self.store.put_video(have[key])
        if jobs:
            try:
                with make_progress(self.console) as prog:
                    task = prog.add_task("generate", total=len(jobs))

                    def done(job: Job, video: Video | None, err: BaseException | None) -> None:
                        s_id, model, seed = job.key
                        if disk_full(err):  # not the video's fault: stop, the same command resumes it
                            raise disk_full(err, self.store.run_dir) from err
                        if err is not None:
                            video = Video(sample_id=s_id, model=model, seed=seed, status=VideoStatus.failed,
                                          reason=f"generation failed: {type(err).__name__}: {err}")
                        video = generation.as_run_video(video, model, s_id, seed)
                        self.store.put_video(video)
                        have[job.key] = video
                        if video.status != VideoStatus.ok:
                            self.summary.note_failure(video.reason)
                        prog.advance(task, ok=video.status == VideoStatus.ok)

                    await executor.run(jobs, done)
            finally:
                maker.shutdown()
        from vreason.generate.job_ledger import ledger_totals

        self.summary.generation_cost = ledger_totals(self.store.run_dir)  # API jobs: cost and statuses
        imported = {m for m, g in gens.items() if g is None}
        have = {k: v for k, v in have.items() if k[1] in gens}
        popts = self.protocol.options if self.protocol.opts is not None else {}  # suite: strict
        self.summary.videos, unreadable = outcome.video_counts(have.values(), imported,
                                                               popts["decode"] if "decode" in popts else "strict")
        for u in unreadable[:10]:
            self.console.print(Text.assemble(("unreadable video", "yellow"), f" {u['where']}: {u['reason']}"),
                               soft_wrap=True)
        vplan = self.summary.plan.setdefault("videos", {})
        for (_, model, _), v in have.items():
            row = vplan.setdefault(model, {})
            src = "to generate" if v.status != VideoStatus.ok and gens[model] is not None else \
                ("found" if v.status == VideoStatus.ok else v.status.value)
            row[src] = row.get(src, 0) + 1
        self.summary.seconds["videos"] = time.perf_counter() - t0
        return have

    async def score(self, samples: list[Sample], videos: dict, executor: LocalExecutor, ctx: ScoreContext) -> None:
        t0 = time.perf_counter()
        scorers = self.protocol.scorers()
        by_id = {s.id: s for s in samples}
        wanted = [
            (s.id, m, seed, sc.name)
            for s in samples for m in self.names for seed in self.cfg.seeds
            for sc in scorers if sc.applies(s)
        ]
        todo = self.store.pending(wanted, retry_failed=self.cfg.retry_failed)
        uplan = self.summary.plan.setdefault("units", {})
        for keys, col in ((wanted, "total"), (todo, "to do")):
            for _, m, _, sname in keys:
                row = uplan.setdefault(f"{m} × {sname}", {"total": 0, "to do": 0})
                row[col] += 1
        self.summary.units_total, self.summary.units_skipped = len(wanted), len(wanted) - len(todo)
        if self.cfg.dry_run:  # only judged scorers matter for an estimate
            io_names = {sc.name for sc in scorers if sc.kind == "io"}
            scorers = [sc for sc in scorers if sc.name in io_names]
            todo = [k for k in todo if k[3] in io_names]
        scorer_by_name = {sc.name: sc for sc in scorers}
        worker_ctx = ctx.for_worker()
        jobs: list[Job] = []
        for key in todo:
            sid, model, seed, sname = key
            sample, scorer = by_id[sid], scorer_by_name[sname]
            video = videos.get((sid, model, seed)) or Video(
                sample_id=sid, model=model, seed=seed, status=VideoStatus.missing, reason="no video record")
            if video.status != VideoStatus.ok:
                if not self.cfg.dry_run:
                    self._record(key, scorer.fail(sample, video, f"video {video.status.value}: {video.reason}"))
                continue
            if scorer.kind == "cpu":
                jobs.append(Job(key=key, kind="cpu", fn=_score_in_worker, args=(scorer, sample, video, worker_ctx)))
            else:
                jobs.append(Job(key=key, kind="io", coro_factory=_io_factory(scorer, sample, video, ctx)))
        if jobs:
            with make_progress(self.console) as prog:
                task = prog.add_task("score", total=len(jobs))

                def done(job: Job, scores: Any, err: BaseException | None) -> None:
                    sid, model, seed, sname = job.key
                    scorer = scorer_by_name[sname]
                    video = videos[(sid, model, seed)]
                    if disk_full(err):  # not the unit's fault: stop, the same command resumes it
                        raise disk_full(err, self.store.run_dir) from err
                    if err is not None:
                        scores = scorer.fail(by_id[sid], video, f"scorer crashed: {type(err).__name__}: {err}")
                    if not self.cfg.dry_run:  # a dry run's "not sent" outcomes must not block a real run
                        scores = _check_scores(scorer, by_id[sid], video, scores)
                        self._record(job.key, scores)
                    prog.advance(task, ok=unit_ok(scores))

                await executor.run(jobs, done)
        final = {} if self.cfg.dry_run else self.store.unit_status()
        for key in wanted if not self.cfg.dry_run else ():
            st = final.get(key, "not run")
            self.summary.units_final[st] = self.summary.units_final.get(st, 0) + 1
        self.summary.seconds["score"] = time.perf_counter() - t0

    def _record(self, key, scores: list[Score]) -> None:
        st = self.store.put_unit(key, scores)
        self.summary.units_run[st] = self.summary.units_run.get(st, 0) + 1
        if st != "ok":
            self.summary.note_failure(next((s.reason for s in scores if s.reason), None))

    def aggregate(self) -> list[str]:
        from vreason.report.build import build_report

        t0 = time.perf_counter()
        paths = build_report(self.store, self.protocol, console=self.console)
        self.summary.seconds["aggregate"] = time.perf_counter() - t0
        return paths

    # ------------------------------------------------------------------ entry point
    def run(self) -> RunSummary:
        try:
            return self._run()
        finally:
            self.lock.release()

    def _run(self) -> RunSummary:
        self.store.start({**self.cfg.as_dict(), "plan_fingerprint": fingerprint(self.plan),
                          "resolved_options": self.protocol.resolved_options(),
                          # the options marked RELEASED whose value is not the released code's (or paper's)
                          "departures": {k: self.protocol.resolved_options().get(k, v)
                                         for k, v in departures(self.protocol.opts).items()},
                          "models_resolved": generation.manifest_entries(self.models, self.cfg.protocol)},
                         command=f"run {self.cfg.protocol}")
        executor = self._executor()
        status = "ok"
        try:
            samples = self.load()
            self.import_videos(samples)
            asyncio.run(self._run_async(samples, executor))
            if self.cfg.dry_run:
                status = "dry-run"
                return self.summary
            imported = [m.name for m in self.models if m.generator is None]
            self.summary.warnings += outcome.start_check_warnings(self.store.conn, imported)
            for w in self.summary.warnings:
                self.console.print(Text.assemble(("warning", "bold yellow"), f": {w}"), soft_wrap=True)
            self.summary.finished_with_errors = any(k != "ok" for k in self.summary.units_final) or any(
                k != "ok" for k in self.summary.videos)
            self.store.export()
            if self.cfg.aggregate:
                self.summary.report_paths = self.aggregate()
        except KeyboardInterrupt:
            status = "interrupted"
            self.summary.interrupted = True
            executor.shutdown(cancel=True)
            self.console.print(
                "[yellow]interrupted[/]: finished units are saved; run the same command again to resume"
            )
        except Exception as exc:
            full = disk_full(exc, self.store.db_path)
            status = f"failed: {type(exc).__name__}: {full or exc}"[:300]
            if full is not None and full is not exc:
                raise full from exc  # one line for the user (exit 4), the cause kept for debugging
            raise
        finally:
            executor.shutdown()
            if status == "ok" and self.summary.finished_with_errors:
                status = "finished with errors"
            try:  # the manifest write must not hide the error that ended the run (often the same full disk)
                self.store.finish(status, redact(self.summary.as_dict()))
            except Exception as exc:
                if status in ("ok", "finished with errors", "dry-run", "interrupted"):
                    full = disk_full(exc, self.store.manifest_path)
                    if full is not None:
                        raise full from exc
                    raise
            finally:
                self.store.close()
        return self.summary

    def _executor(self) -> Any:
        if self.cfg.executor == "local":
            return LocalExecutor(self.cfg.workers, self.cfg.io_concurrency)
        if self.cfg.executor == "ray":
            from vreason.runner.ray_executor import RayExecutor

            return RayExecutor(self.store.run_dir, self.cfg.ray_address, temp_dir=self.cfg.ray_temp_dir,
                               ship_videos=self.cfg.ray_ship_videos, workers=self.cfg.workers,
                               io_concurrency=self.cfg.io_concurrency)
        raise ConfigError(f"--executor {self.cfg.executor!r}: expected local or ray")

    async def _run_async(self, samples: list[Sample], executor: LocalExecutor) -> None:
        judges = await self._open_judges()
        # the scorers read the resolved options (defaults from the protocol's options model)
        opts = self.protocol.options if self.protocol.opts is not None else dict(self.cfg.options)
        ctx = ScoreContext(run_dir=self.store.run_dir, options=opts, judges=judges)
        try:
            videos = await self.videos(samples, executor)
            await self.score(samples, videos, executor, ctx)
        finally:
            for role, j in judges.items():
                stats = getattr(j, "stats", None)
                if stats is not None:
                    self.summary.judge_stats[role] = stats()
                close = getattr(j, "aclose", None)
                if close is not None:
                    await close()

    async def _open_judges(self) -> dict[str, Any]:
        if not self.cfg.judges:
            return {}
        from vreason.judge.spec import make_judge

        opts = dict(self.cfg.judge_options)
        if self.cfg.dry_run:
            opts["dry_run"] = True
        opts.setdefault("cache_path", os.path.join(self.store.run_dir, "judge_cache.sqlite"))
        out = {}
        for role, spec in self.cfg.judges.items():
            out[role] = make_judge(spec, **opts)  # a dry run needs no API key: it sends nothing
        return out
