"""`vreason synth …`: the built-in verifiable suite as a benchmark folder."""

from __future__ import annotations

import typer
from rich.console import Console

synth_app = typer.Typer(help="The built-in, procedurally generated, verifiable suite.", no_args_is_help=True)
out = Console()


@synth_app.command("generate")
def generate(
    out_dir: str = typer.Option(..., "--out", help="Folder to write the benchmark into."),
    per_task: int = typer.Option(10, "--per-task", help="Instances per family × difficulty."),
    seed: int = typer.Option(0, "--seed", help="Seed of the task generator."),
    families: str = typer.Option(None, "--families", help="Comma-separated families.",
                                 show_default="all"),
    difficulties: str = typer.Option("easy,medium,hard", "--difficulties", help="Comma-separated difficulties."),
    videos: bool = typer.Option(False, "--videos/--no-videos", help="Also write ground-truth solution videos."),
    width: int = typer.Option(640, "--width"),
    height: int = typer.Option(360, "--height"),
    fps: int = typer.Option(16, "--fps"),
    seconds: float = typer.Option(4.0, "--seconds"),
) -> None:
    """Write the suite (first-frame images, prompts, ground-truth final frames, manifest.jsonl)
    so it can be handed to any video model; score its videos with `vreason run synth --data DIR
    --videos DIR`."""
    from vreason.synth.base import RenderConfig
    from vreason.synth.suite import write_benchmark

    fams = [f.strip() for f in families.split(",")] if families else None
    diffs = [d.strip() for d in difficulties.split(",") if d.strip()]
    cfg = RenderConfig(width=width, height=height, fps=fps, seconds=seconds)
    samples = write_benchmark(out_dir, families=fams, difficulties=diffs, per_task=per_task, seed=seed,
                              cfg=cfg, write_videos=videos)
    out.print(f"wrote {len(samples)} tasks to {out_dir} (manifest.jsonl)")
