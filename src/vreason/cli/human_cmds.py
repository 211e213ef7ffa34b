"""`vreason annotate RUN_DIR` (the browser app), `vreason annotate export RUN_DIR --out f` and
`vreason annotate import RUN_DIR f`: human labels of a run, kept in its own SQLite store."""

from __future__ import annotations

import os

import typer

from vreason.core.errors import ConfigError, MissingExtraError, MissingFileError

USAGE = ("vreason annotate RUN_DIR [--task pairwise|rubric] [--port N] [--dimensions quality,physics] · "
         "vreason annotate export RUN_DIR --out f.jsonl|f.csv · vreason annotate import RUN_DIR f.jsonl|f.csv")


def _serve(run_dir: str, task: str, port: int, dimensions: list[str]) -> None:
    try:
        import uvicorn  # noqa: F401  (the web extra: local_server.serve runs it)

        from vreason.human.app import make_app
    except ImportError as exc:
        raise MissingExtraError("vreason annotate needs the web extra: pip install 'vreason[web]'") from exc
    from vreason.cli import local_server
    from vreason.runner.guard import RunLock

    # shared: `report` may run beside it; `run` (--force-new) and imports are refused while it serves
    with RunLock(run_dir, shared=True, purpose="being annotated").acquire(f"vreason annotate {run_dir}"):
        app = make_app(run_dir, task=task, dimensions=dimensions or None)  # type: ignore[arg-type]
        ann = app.state.annotation
        n = len(ann.pairs) if task == "pairwise" else len(ann.videos)
        if n == 0:
            why = "needs two models with ok videos of one sample" if task == "pairwise" else "no ok videos"
            raise ConfigError(f"{run_dir}: nothing to annotate for --task {task} ({why})")
        sock = local_server.bind(port)
        typer.echo(f"{n} {'pairs' if task == 'pairwise' else 'videos'} to annotate; open (the token is the "
                   "password):")
        typer.echo(f"  http://{local_server.HOST}:{sock.getsockname()[1]}/?token={app.state.token}")
        typer.echo("Ctrl-C stops; every answer is already saved in the run's results.sqlite.")
        local_server.serve(app, sock)


def annotate(
    args: list[str] = typer.Argument(..., help="RUN_DIR, or `export RUN_DIR`, or `import RUN_DIR FILE`."),
    task: str = typer.Option("pairwise", "--task", help="pairwise (PAI-Bench's A/B study) or rubric (the "
                             "protocol's questions on one video)."),
    port: int = typer.Option(8766, "--port", help="Port on 127.0.0.1 (0: any free port, printed)."),
    dimensions: str = typer.Option("quality,physics", "--dimensions",
                                   help="Pairwise dimensions (PAI-Bench: quality, physics)."),
    out: str = typer.Option("", "--out", help="export: the .jsonl or .csv file to write."),
) -> None:
    """Label a run's videos in the browser (127.0.0.1, token in the printed URL), or export / import labels."""
    from vreason.human.exchange import export_annotations, import_annotations
    from vreason.human.store import AnnotationStore

    action = args[0] if args[0] in ("export", "import") else "serve"
    rest = args[1:] if action != "serve" else args
    if action == "serve":
        if len(rest) != 1:
            raise typer.BadParameter(f"expected one RUN_DIR; usage: {USAGE}")
        if task not in ("pairwise", "rubric"):
            raise typer.BadParameter(f"--task must be pairwise or rubric, got {task!r}")
        dims = [d.strip() for d in dimensions.split(",") if d.strip()]
        if not dims or len(set(dims)) != len(dims):
            raise typer.BadParameter("--dimensions needs distinct, non-empty names")
        _serve(rest[0], task, port, dims)
        return
    if action == "export":
        if len(rest) != 1 or not out:
            raise typer.BadParameter(f"usage: {USAGE}")
        with AnnotationStore(rest[0]) as store:
            try:
                n = export_annotations(store, out)
            except ValueError as exc:
                raise typer.BadParameter(str(exc)) from exc
        typer.echo(f"{n} annotation(s) → {out}")
        return
    if len(rest) != 2:
        raise typer.BadParameter(f"usage: {USAGE}")
    from vreason.runner.guard import RunLock

    if not os.path.isdir(rest[0]):
        raise MissingFileError(f"{rest[0]}: not a vreason run directory")
    with RunLock(rest[0]).acquire(f"vreason annotate import {rest[0]}"), AnnotationStore(rest[0]) as store:
        try:
            res = import_annotations(store, rest[1])
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from exc
    for line, reason in res.errors:
        typer.echo(f"{rest[1]}:{line}: skipped: {reason}", err=True)
    typer.echo(f"{res.imported} annotation(s) imported, {len(res.errors)} row(s) skipped")
    if res.errors:
        raise typer.Exit(3)


def register(app: typer.Typer) -> None:
    app.command("annotate", help=f"Human labels of a run. {USAGE}")(annotate)
