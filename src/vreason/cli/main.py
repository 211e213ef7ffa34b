"""`vreason`: run protocols, import videos, preflight, report."""

from __future__ import annotations

import os
import sys
from typing import Any

import typer
from rich.table import Table
from rich.text import Text

from vreason import __version__
from vreason.cli.args import _csv, _fit_options, _ints, _parse_opts  # noqa: F401  (shared with tpo_cmd)
from vreason.console import make_console
from vreason.core.errors import EXIT_DISK_FULL, ConfigError, VReasonError, disk_full

app = typer.Typer(
    name="vreason",
    help="Evaluate reasoning in video generation models. Protocols: a built-in verifiable suite (synth, offline), "
    "RISE-Video (rise), RULER-Bench (ruler), MME-CoF-Pro (mmecof), TiViBench (tivibench) and PAI-Bench (pai-g, "
    "pai-c, pai-u). Models are built in, imported, or generated from a spec (diffusers:DIR, sora:…, veo:…, cmd:…); "
    "`vreason tpo` runs VideoTPO. Start with `vreason list`, then `vreason run synth` (offline) or "
    "`vreason run <benchmark> --data … --models … --judge …`.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="rich",
)
console = make_console(stderr=True)
out = make_console()


def _default_seeds(protocol: str) -> list[int]:
    """The protocol's own default seeds (``default_seeds``; 0 for an unknown name, refused later)."""
    from vreason.core.registry import benchmarks, load_builtins

    load_builtins()
    try:
        return list(benchmarks.get(protocol).default_seeds)
    except KeyError:
        return [0]


def version_cb(value: bool) -> None:
    if value:
        out.print(f"vreason {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=version_cb, is_eager=True,
                                 help="Print the version and exit."),
    plugin: list[str] = typer.Option([], "--plugin", envvar="VREASON_PLUGINS",
                                     help="Python file or module registering extra protocols/scorers."),
) -> None:
    """vreason command line."""
    for p in plugin:
        load_plugin(p)


def load_plugin(spec: str) -> None:
    """Import a plugin (see :func:`vreason.core.registry.load_plugin`)."""
    from vreason.core.registry import load_plugin as load

    load(spec)


@app.command("list")
def list_cmd(
    options: bool = typer.Option(False, "--options", help="Show each protocol's options (`--opt key=value`): "
                                 "type, default and what it does."),
    protocol: str = typer.Argument(None, help="With --options: only this protocol."),
) -> None:
    """Show the benchmarks, built-in models, judge backends, frame-policy presets and video layouts, with the
    extra each needs; `--options` shows each protocol's options with their defaults."""
    from vreason.core.registry import benchmarks, generators, judges, load_builtins, scorers
    from vreason.frames.policy import PRESETS

    load_builtins()
    if options:
        _list_options(benchmarks, protocol)
        return
    from vreason.catalog import benchmarks_table
    from vreason.generate.spec import generator_kinds

    out.print(benchmarks_table())
    kinds = set(generator_kinds())
    for title, reg, keep in (("built-in models", generators, False),
                             ("generator kinds (--models kind:target, name=kind:target or a YAML file)",
                              generators, True), ("scorers", scorers, None), ("judge backends", judges, None)):
        t = Table(title=title)
        t.add_column("kind" if keep else "name")
        t.add_column("extra")
        t.add_column("what")
        for e in reg.entries():
            if keep is None or (e.name in kinds) == keep:
                t.add_row(e.name, e.extra or "core", e.summary)
        out.print(t)
    t = Table(title="frame-policy presets")
    t.add_column("preset")
    t.add_column("policy")
    for k, v in PRESETS.items():
        t.add_row(k, v)
    out.print(t)
    from vreason.data.importer import conventions, layout

    t = Table(title="video layouts (--convention NAME)")
    for col in ("name", "layout", "identity"):
        t.add_column(col)
    for name in conventions():
        lay = layout(name)
        t.add_row(name, lay.pattern + ("  (--model)" if lay.needs_model else ""), lay.identity)
    out.print(t)


def _list_options(benchmarks: Any, only: str | None) -> None:
    from rich.markup import escape

    from vreason.core.options import describe

    names = [only] if only else [e.name for e in benchmarks.entries()]
    for name in names:
        model = benchmarks.get(name).options_model
        if model is None:
            out.print(f"{name}: no declared options (any --opt key is passed through)")
            continue
        t = Table(title=f"{name} options (--opt key=value; unknown keys are rejected)")
        for col in ("option", "type", "default", "what it does"):
            t.add_column(col, overflow="fold")
        for row in describe(model):
            t.add_row(*(escape(row[k]) for k in ("name", "type", "default", "description")))
        out.print(t)


@app.command()
def run(
    protocol: str = typer.Argument(..., help="Benchmark protocol: synth, rise, ruler, mmecof (see `vreason list`)."),
    name: str = typer.Option(None, "--name", "-n", help="Run name; results go to RUNS/<name>/.",
                            show_default="the protocol's name"),
    runs: str = typer.Option("runs", "--runs", help="Folder holding run directories."),
    models: str = typer.Option(..., "--models", "-m", help="Comma-separated models: a built-in or imported name, "
                               "a spec kind:target (diffusers:/models/Wan2.1-I2V-14B-Diffusers, cmd:./my_model.sh, "
                               "sora:sora-2…), name=kind:target, or a model YAML file; videos missing are generated "
                               "(see `vreason list`, docs/generate.md)."),
    gen_timeout: float = typer.Option(None, "--gen-timeout", help="Seconds allowed for generating one video; past "
                                      "it the video is failed (the worker or command is killed). Not a plan change.",
                                      show_default="no limit (a model YAML's timeout wins)"),
    seeds: str = typer.Option(None, "--seeds", help="Comma-separated generation seeds per sample.",
                              show_default="the protocol's (0; tivibench: 0,1,2,3,4)"),
    data: str = typer.Option(None, "--data", help="Benchmark data folder (e.g. RISE's snapshot, RULER's data)."),
    videos: str = typer.Option(None, "--videos", help="Folder of generated videos to import before scoring."),
    convention: str = typer.Option(None, "--convention",
                                   help="Layout of --videos: vreason, rise, ruler, tivibench, pai… "
                                   "(`vreason list` shows each)."),
    manifest: str = typer.Option(None, "--manifest", help="JSONL/CSV manifest: sample_id, model, seed, path."),
    prompts: str = typer.Option(None, "--prompts", help="JSONL of prompt variants (sample_id, variant, prompt), "
                                "e.g. RUNS/<tpo>/tpo/optimized_prompts.jsonl from `vreason tpo`."),
    prompt_variants: str = typer.Option(None, "--prompt-variants", help="Run each model once per variant, e.g. "
                                        "default,videotpo (others run as <model>_<variant>); the report shows "
                                        "the paired difference."),
    allow_outside_data: bool = typer.Option(False, "--allow-outside-data", help="Accept data paths outside the "
                                            "dataset's folder (absolute, ../, symlinks out); refused by default."),
    judge: str = typer.Option(None, "--judge", help="Judge spec, e.g. openai:gpt-5 or vllm:Qwen3-VL@URL."),
    vq_judge: str = typer.Option(None, "--vq-judge", help="Separate judge for visual quality (RISE)."),
    hint: str = typer.Option(None, "--hint", help="MME-CoF-Pro hint setting: none, text, visual."),
    per_task: int = typer.Option(None, "--per-task", help="Built-in suite: samples per family × difficulty."),
    suite_seed: int = typer.Option(None, "--suite-seed", help="Built-in suite: seed of the task generator."),
    families: str = typer.Option(None, "--families", help="Built-in suite: comma-separated families."),
    features: str = typer.Option(None, "--features", help="Image feature backbone (TiViBench region similarity, "
                                 "PAI-Bench consistency): transformers:/local/folder or classical:hog-hsv."),
    detector: str = typer.Option(None, "--detector", help="Open-vocabulary detector (TiViBench grounding/tracking, "
                                 "PAI-Bench-C segmentation): transformers:/local/grounding-dino-or-owlv2-folder."),
    device: str = typer.Option(None, "--device", help="Device for local models: cpu, cuda, cuda:1, auto."),
    opt: list[str] = typer.Option([], "--opt", help="Extra protocol option key=value (repeatable)."),
    workers: int = typer.Option(None, "--workers", "-j", help="Worker processes for CPU work.",
                                show_default="one per core"),
    limit: int = typer.Option(None, "--limit", help="Only the first N samples (smoke runs)."),
    retry_failed: bool = typer.Option(False, "--retry-failed", help="Re-run units that ended unscored/error."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Do not read or write the judge cache."),
    refresh: bool = typer.Option(False, "--refresh", help="Ignore cached judge replies (but store new ones)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Show the plan (units per model × scorer, videos found / to "
                                 "generate, judge requests, tokens, cost) without generating or sending anything; "
                                 "needs no API key."),
    force_new: bool = typer.Option(False, "--force-new", help="Empty RUNS/<name> first instead of resuming (needed "
                                   "to re-use a name with other settings)."),
    report: bool = typer.Option(True, "--report/--no-report", help="Aggregate and write the report at the end."),
    executor: str = typer.Option("local", "--executor", help="Where CPU units run: local (process pool) or ray "
                                 "(extra ray; see docs/scale.md). Not a plan change."),
    ray_address: str = typer.Option(None, "--ray-address", help="With --executor ray: auto or ray://host:10001 "
                                    "for a running cluster.", show_default="a local Ray instance"),
    ray_temp_dir: str = typer.Option(None, "--ray-temp-dir", help="Temporary folder of a local Ray instance.",
                                     show_default="RUNS/<name>/ray"),
    ray_ship_videos: bool = typer.Option(False, "--ray-ship-videos", help="With --executor ray: workers send "
                                         "videos (and debug images) back as bytes (no shared filesystem)."),
) -> None:
    """Run a protocol end to end: import-or-generate → score → aggregate. Resumable: the same
    command again skips finished units; other settings on the same --name are refused.

    Exit codes: 0 all units ok · 2 refused before scoring (usage or input mistake, run folder in use,
    resume with other settings) · 3 finished with errors (units error/unscored, or expected videos
    missing/unreadable; results are saved, --retry-failed re-runs them) · 4 disk full (free space; the
    same command resumes) · 130 interrupted (the same command resumes) · 1 crash (a bug in vreason or a
    plugin, e.g. a KeyError in its aggregate: the traceback is printed).
    """
    from vreason.runner.outcome import exit_code
    from vreason.runner.run import RunConfig, Runner

    run_dir = os.path.join(runs, name or protocol)
    options: dict[str, Any] = {k: v for k, v in {
        "data": data, "videos": videos, "hint": hint, "per_task": per_task, "seed": suite_seed,
        "families": _csv(families) or None, "features": features, "detector": detector, "device": device,
    }.items() if v is not None}
    extra = _parse_opts(opt)
    options.update(extra)
    judges = {k: v for k, v in {"default": judge, "vq": vq_judge}.items() if v}
    cfg = RunConfig(
        protocol=protocol, run_dir=run_dir, models=_csv(models),
        seeds=_ints(seeds, "--seeds") or _default_seeds(protocol),
        options=_fit_options(protocol, options, list(extra)), judges=judges,
        judge_options={"no_cache": no_cache, "refresh": refresh} if judges else {}, dry_run=dry_run,
        workers=workers, retry_failed=retry_failed, limit=limit,
        videos_dir=videos, convention=convention, manifest=manifest, aggregate=report, force_new=force_new,
        prompts_file=prompts, prompt_variants=_csv(prompt_variants), allow_outside_data=allow_outside_data,
        executor=executor, ray_address=ray_address, ray_temp_dir=ray_temp_dir, ray_ship_videos=ray_ship_videos,
        gen_timeout=gen_timeout,
    )
    summary = Runner(cfg, console=console).run()
    _print_summary(summary.as_dict())
    if dry_run:
        _print_plan(summary.plan, summary.judge_stats)
    code = exit_code(summary)
    if code:
        raise typer.Exit(code)


def _print_summary(s: dict[str, Any]) -> None:
    t = Table(title=f"run {os.path.basename(s['run_dir'])}", show_header=False)
    t.add_row("samples", f"{s['samples']} ({s['load_errors']} records skipped)")
    t.add_row("videos", ", ".join(f"{k}: {v}" for k, v in sorted(s["videos"].items())) or "–")
    t.add_row("units", f"{s['units_total']} total, {s['units_skipped']} already done")
    t.add_row("this run", ", ".join(f"{k}: {v}" for k, v in sorted(s["units_run"].items())) or "nothing to do")
    if s.get("units_final"):
        t.add_row("all units", ", ".join(f"{k}: {v}" for k, v in sorted(s["units_final"].items())))
    for model, c in sorted(s.get("generation_cost", {}).items()):
        t.add_row(f"API {model}", f"${c['usd']:.2f}, {c['creates']} jobs created; "
                  + ", ".join(f"{k}: {v}" for k, v in sorted(c["by_status"].items())))
    t.add_row("seconds", ", ".join(f"{k} {v:.1f}" for k, v in s["seconds"].items()))
    t.add_row("results", s["run_dir"])
    console.print(t)
    for role, st in s.get("judge_stats", {}).items():
        shown = {k: v for k, v in st.items() if v not in (0, 0.0, None, {}, [])}
        console.print(f"judge [bold]{role}[/]: " + ", ".join(f"{k} {v}" for k, v in shown.items()), soft_wrap=True)
    from vreason.aggregate.tables import reason_kind

    kinds: dict[str, list[Any]] = {}
    for reason, n in s.get("failure_reasons", {}).items():
        entry = kinds.setdefault(reason_kind(reason), [0, reason])
        entry[0] += n
    reasons = sorted(kinds.items(), key=lambda kv: -kv[1][0])
    for kind, (n, example) in reasons[:8]:
        shown = example if example == kind else f"{kind} (e.g. {example})"
        console.print(Text.assemble((f"{n:>5} ×", "yellow"), f" {shown}"), soft_wrap=True)
    if len(reasons) > 8:
        console.print(f"… {len(reasons) - 8} more kinds of errors (see the run's report)")
    if s.get("finished_with_errors"):
        console.print("[bold yellow]finished with errors[/] (exit code 3): results are saved; "
                      "`--retry-failed` re-runs the failed units", soft_wrap=True)


def _print_plan(plan: dict[str, Any], judge_stats: dict[str, dict[str, Any]]) -> None:
    """A dry run's plan: units per model × scorer, videos per model by source, judge requests and cost."""
    t = Table(title="plan (dry run: nothing generated, stored or sent)")
    t.add_column("model × scorer")
    t.add_column("units", justify="right")
    t.add_column("to do", justify="right")
    for key, row in sorted(plan.get("units", {}).items()):
        t.add_row(key, str(row["total"]), str(row["to do"]))
    console.print(t)
    v = Table(title="videos per model")
    v.add_column("model")
    v.add_column("videos")
    for model, row in sorted(plan.get("videos", {}).items()):
        v.add_row(model, ", ".join(f"{k}: {n}" for k, n in sorted(row.items())))
    console.print(v)
    j = Table(title="judge requests (estimated)")
    for col in ("role", "requests", "images", "prompt tokens", "completion tokens", "cost (USD)"):
        j.add_column(col, justify="left" if col == "role" else "right")
    for role, st in sorted(judge_stats.items()):
        cost = st.get("estimated_cost") or 0.0
        j.add_row(role, str(st.get("estimated_requests", 0)), str(st.get("estimated_images", 0)),
                  str(st.get("estimated_prompt_tokens", 0)), str(st.get("estimated_completion_tokens", 0)),
                  f"{cost:.2f}" if cost else "unknown (no price for this model: set price in a judge YAML)")
    if not judge_stats:
        j.add_row("–", "0", "0", "0", "0", "0 (no judge in this protocol's plan)")
    console.print(j)
    for role, st in sorted(judge_stats.items()):
        if st.get("completion_assumption"):
            console.print(f"judge {role}: assumed {st['completion_assumption']}", soft_wrap=True)


@app.command()
def report(run_dir: str = typer.Argument(..., help="A run directory, e.g. runs/demo.")) -> None:
    """Aggregate a run into its protocol's tables and charts; print them and write RUN/report/."""
    from vreason.report.build import build_report
    from vreason.runner.guard import RunLock
    from vreason.runner.run import make_protocol
    from vreason.store import RunStore

    store = RunStore(run_dir, create=False)
    try:  # shared: beside `vreason annotate`; not while a run writes the folder (or clears it)
        with RunLock(run_dir, shared=True, purpose="being reported").acquire(f"vreason report {run_dir}"):
            man = store.read_manifest()
            cfg = man.get("config", {})
            if not cfg.get("protocol"):
                raise ConfigError(f"{run_dir}: manifest.json names no protocol")
            protocol = make_protocol(cfg["protocol"], cfg.get("options", {}), run_dir=store.run_dir)
            paths = build_report(store, protocol, console=console)
    finally:
        store.close()
    out.print(f"wrote {len(paths)} files under {os.path.join(run_dir, 'report')}")


@app.command()
def export(
    run_dir: str = typer.Argument(..., help="A run directory."),
    out_dir: str = typer.Option(None, "--out", help="Where to write.",
                                show_default="the run directory"),
) -> None:
    """Export scores and videos to JSONL and CSV (and parquet when pyarrow is installed)."""
    from vreason.store import RunStore

    with RunStore(run_dir, create=False) as store:
        for p in store.export(out_dir):
            out.print(p)


def _register_subcommands() -> None:
    from vreason.cli import data_cmds, ruler_cmds, stats_cmds, synth_cmds, view_cmd

    data_cmds.register(app)
    view_cmd.register(app)
    stats_cmds.register(app)
    from vreason.cli import human_cmds

    human_cmds.register(app)
    from vreason.cli import tpo_cmd

    tpo_cmd.register(app)
    app.add_typer(synth_cmds.synth_app, name="synth")
    app.add_typer(ruler_cmds.ruler_app, name="ruler")


_register_subcommands()


def main() -> None:
    try:
        app()
    except Exception as exc:
        full = disk_full(exc)
        if full is None:
            _usage_or_crash(exc)
            raise
        console.print(Text.assemble(("error", "bold red"), f": {full}"), soft_wrap=True)
        sys.exit(EXIT_DISK_FULL)


def _usage_or_crash(exc: Exception) -> None:
    """A usage or input mistake: one line and exit 2 (otherwise return: the caller re-raises a crash, exit 1
    with the traceback). Mistakes are vreason's own errors (``vreason.core.errors``: raised on purpose, with a
    message for the user) and a package that is not installed (a missing extra, or a ``--plugin`` module
    that does not exist); any other exception, e.g. a ``KeyError`` in a plugin's aggregate, is a bug."""
    if isinstance(exc, (VReasonError, ModuleNotFoundError)):
        console.print(Text.assemble(("error", "bold red"), f": {exc}"), soft_wrap=True)
        sys.exit(2)


if __name__ == "__main__":  # pragma: no cover
    main()
