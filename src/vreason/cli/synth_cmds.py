"""`vreason synth …`: the built-in verifiable suite as a benchmark folder."""

from __future__ import annotations

import typer

from vreason.console import make_console

synth_app = typer.Typer(help="The built-in, procedurally generated, verifiable suite.", no_args_is_help=True)
out = make_console()


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


@synth_app.command("export")
def export(
    out_dir: str = typer.Argument(..., help="Folder to write into."),
    fmt: str = typer.Option("tivibench", "--format", help="Layout to write: tivibench (the release's layout with "
                            "vreason annotations, read by `vreason run tivibench`)."),
    videos_from: str = typer.Option(None, "--videos-from", help="A `run synth` folder: export its instances and "
                                    "copy its videos to OUT/videos/<model>/<id>/<id>-<seed>.mp4."),
    per_task: int = typer.Option(10, "--per-task", help="Instances per family × difficulty (without --videos-from)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the task generator."),
    families: str = typer.Option(None, "--families", help="Comma-separated families.", show_default="all"),
    difficulties: str = typer.Option("easy,medium,hard", "--difficulties", help="Comma-separated difficulties."),
    width: int = typer.Option(640, "--width"),
    height: int = typer.Option(360, "--height"),
    fps: int = typer.Option(16, "--fps"),
    seconds: float = typer.Option(4.0, "--seconds"),
) -> None:
    """Write built-in suite instances in another benchmark's layout (TiViBench: prompts, first frames,
    end states, annotations), so that benchmark's loader reads them; score with `vreason run tivibench
    --data OUT --videos OUT/videos --models …`."""
    from vreason.core.errors import ConfigError
    from vreason.synth.base import RenderConfig
    from vreason.synth.export_tivibench import export_suite

    if fmt != "tivibench":
        raise ConfigError(f"synth export: unknown --format {fmt!r} (known: tivibench)")
    fams = [f.strip() for f in families.split(",") if f.strip()] if families else None
    diffs = [d.strip() for d in difficulties.split(",") if d.strip()]
    res = export_suite(out_dir, families=fams, difficulties=diffs, per_task=per_task, seed=seed,
                       cfg=RenderConfig(width=width, height=height, fps=fps, seconds=seconds), videos_from=videos_from)
    out.print(f"wrote {res.samples} tasks ({res.videos} videos) to {out_dir} in the tivibench layout")
    for e in res.errors[:10]:
        out.print(f"[yellow]skipped[/] {e}")
    if res.errors:
        raise typer.Exit(3)
