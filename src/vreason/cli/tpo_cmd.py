"""`vreason tpo`: VideoTPO test-time prompt optimisation (TiViBench seed §4, appendix D)."""

from __future__ import annotations

import json
import os
from typing import Any

import typer

from vreason.console import make_console

console = make_console(stderr=True)


def tpo(
    protocol: str = typer.Option(..., "--protocol", "-p", help="Protocol whose samples to optimise (synth, rise, "
                                 "tivibench, …)."),
    model: str = typer.Option(..., "--model", "-m", help="Generator: a built-in model or a spec (diffusers:DIR, "
                              "cmd:SCRIPT, sora:MODEL, name=kind:target, a YAML file)."),
    optimizer: str = typer.Option(..., "--optimizer", help="Judge spec of the optimizer VLM (the paper: GPT-4o), "
                                  "e.g. openai:gpt-4o."),
    iterations: int = typer.Option(3, "--iterations", help="Optimisation steps per sample (the released "
                                   "script's --max_iterations)."),
    seeds: str = typer.Option("42,123", "--seeds", help="The two (or more) candidate seeds per step."),
    max_tokens: int = typer.Option(300, "--max-prompt-tokens", help="Length limit stated to the optimizer."),
    enforce_limit: bool = typer.Option(False, "--enforce-limit", help="Re-ask when a rewrite is over the limit "
                                       "(stricter than the released script, which only states it)."),
    variant: str = typer.Option("videotpo", "--variant", help="Name of the prompt variant written."),
    name: str = typer.Option(None, "--name", "-n", help="Run name; results go to RUNS/<name>/tpo/.",
                             show_default="tpo-<protocol>"),
    runs: str = typer.Option("runs", "--runs", help="Folder holding run directories."),
    data: str = typer.Option(None, "--data", help="The protocol's data folder."),
    opt: list[str] = typer.Option([], "--opt", help="Extra protocol option key=value (repeatable)."),
    limit: int = typer.Option(None, "--limit", help="Only the first N samples."),
    concurrency: int = typer.Option(2, "--concurrency", help="Samples optimised at once."),
) -> None:
    """Optimise each sample's prompt for one model: generate two candidates, have the optimizer critique
    them (first and last frames, stitched), suggest changes and rewrite the prompt; repeat. Every step is
    stored; the same command resumes. Use the result with
    `vreason run <protocol> --models M --prompts RUNS/<name>/tpo/optimized_prompts.jsonl
    --prompt-variants default,videotpo`, which reports the paired difference."""
    from vreason.cli.args import _fit_options, _ints, _parse_opts
    from vreason.optimize.tpo_run import run_tpo
    from vreason.optimize.videotpo import TpoConfig

    options: dict[str, Any] = {"data": data} if data else {}
    extra = _parse_opts(opt)
    options.update(extra)
    cfg = TpoConfig(protocol=protocol, model=model, optimizer=optimizer,
                    run_dir=os.path.join(runs, name or f"tpo-{protocol}"),
                    options=_fit_options(protocol, options, list(extra)), iterations=iterations,
                    seeds=tuple(_ints(seeds, "--seeds")), max_prompt_tokens=max_tokens, enforce_limit=enforce_limit,
                    variant=variant, limit=limit, concurrency=concurrency)
    s = run_tpo(cfg)
    console.print(f"VideoTPO: {s.complete}/{s.samples} samples optimised through {iterations} step(s); "
                  f"{s.steps_run} step(s) run now, {s.steps_reused} reused")
    for sid, why in list(s.failed.items())[:10]:
        console.print(f"[yellow]stopped[/] {sid}: {why}", soft_wrap=True)
    console.print(f"prompts: {s.prompts_file}")
    print(json.dumps({"complete": s.complete, "samples": s.samples, "prompts": s.prompts_file}))
    if s.failed:
        raise typer.Exit(3)


def register(app: typer.Typer) -> None:
    app.command("tpo")(tpo)
