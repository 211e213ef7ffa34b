"""`vreason import`, `vreason preflight`, `vreason probe`, `vreason frames`."""

from __future__ import annotations

import json
import os

import typer
from rich.table import Table
from rich.text import Text

from vreason.console import make_console

console = make_console(stderr=True)
out = make_console()


def _declared(protocol: str, opts: dict) -> tuple[dict, list[str]]:
    """``opts`` without the keys ``protocol`` does not declare (a protocol without an options model
    that takes ``**options`` accepts all), and the names of the keys left out."""
    from vreason.core.registry import benchmarks, load_builtins
    from vreason.runner.checks import known_option_keys

    load_builtins()
    known = known_option_keys(benchmarks.get(protocol))
    if known is None:
        return opts, []
    return {k: v for k, v in opts.items() if k in known}, [k for k in opts if k not in known]


def _load_samples(protocol: str, data: str | None, extra: dict):
    """Load ``protocol``'s samples. ``extra`` holds command-line conveniences (``--per-task``) that
    only some protocols declare: given to one that does not, they are left out with a note."""
    from vreason.runner.run import make_protocol

    given = {k: v for k, v in extra.items() if v is not None}
    kept, dropped = _declared(protocol, given)
    for k in dropped:
        console.print(f"[yellow]note[/] --{k.replace('_', '-')} ignored: {protocol} has no {k!r} option")
    opts = {k: v for k, v in {"data": data, **kept}.items() if v is not None}
    res = make_protocol(protocol, opts).load()
    return res.samples, res.errors


def _check_sources(manifest: str | None, root: str | None, convention: str | None, model: str | None) -> None:
    """Usage mistakes in the video sources, before anything is loaded or written (exit code 2)."""
    from vreason.core.errors import ConfigError
    from vreason.data.importer import check_convention

    if not manifest and not root:
        raise ConfigError("give --manifest FILE or --root DIR --convention NAME")
    if root:
        check_convention(convention or "vreason", model)


def _gather(manifest: str | None, root: str | None, convention: str | None, model: str | None):
    from vreason.data.importer import ImportResult, read_manifest, scan

    _check_sources(manifest, root, convention, model)
    res = ImportResult()
    if manifest:
        r = read_manifest(manifest, default_model=model)
        res.videos += r.videos
        res.errors += r.errors
    if root:
        r = scan(root, convention or "vreason", model=model)
        res.videos += r.videos
        res.errors += r.errors
    return res


def import_cmd(
    run_dir: str = typer.Argument(..., help="Run directory to import into (created if new)."),
    manifest: str = typer.Option(None, "--manifest", help="JSONL or CSV: sample_id, model, seed, path."),
    root: str = typer.Option(None, "--root", help="Folder laid out by --convention."),
    convention: str = typer.Option(None, "--convention", help="A registered video layout: vreason, rise, ruler, "
                                   "tivibench, pai… (`vreason list` shows each)."),
    model: str = typer.Option(None, "--model", help="Model name (needed by tivibench/pai; filters others)."),
) -> None:
    """Bring your own videos into a run: from a manifest or a benchmark's path convention.
    Each file that cannot be matched is reported with the reason; nothing is guessed."""
    from vreason.runner.guard import RunLock
    from vreason.store import RunStore

    res = _gather(manifest, root, convention, model)
    with RunLock(run_dir).acquire(f"vreason import {run_dir}"), RunStore(run_dir) as store:
        store.put_videos(res.videos)
        if res.errors:
            store.set_meta("import_errors", (store.get_meta("import_errors") or []) + res.errors)
    by_model: dict[str, int] = {}
    for v in res.videos:
        by_model[v.model] = by_model.get(v.model, 0) + 1
    for m, n in sorted(by_model.items()):
        out.print(f"imported {n} videos for model {m}")
    for e in res.errors:
        console.print(Text.assemble(("skipped", "yellow"), f" {e['where']}: {e['reason']}"), soft_wrap=True)
    out.print(f"{len(res.videos)} imported, {len(res.errors)} skipped → {run_dir}")


def preflight_cmd(
    protocol: str = typer.Argument(..., help="Benchmark whose samples define what is expected."),
    data: str = typer.Option(None, "--data", help="Benchmark data folder."),
    manifest: str = typer.Option(None, "--manifest", help="JSONL or CSV manifest of videos."),
    root: str = typer.Option(None, "--root", help="Videos folder laid out by --convention."),
    convention: str = typer.Option(None, "--convention", help="A registered video layout: vreason, rise, ruler, "
                                   "tivibench, pai… (`vreason list` shows each)."),
    model: str = typer.Option(None, "--model", help="Only this model."),
    seeds: str = typer.Option("0", "--seeds", help="Expected seeds per sample."),
    min_frames: int = typer.Option(2, "--min-frames", help="Shorter videos are reported as too short."),
    min_seconds: float = typer.Option(0.0, "--min-seconds", help="Minimum duration in seconds."),
    per_task: int = typer.Option(None, "--per-task", help="Instances per family × difficulty "
                                  "(protocols with a per_task option, e.g. synth; others ignore it with a note)."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """Before any scoring: per model, missing / extra / undecodable / too-short videos, fps and
    resolution, and every benchmark record that cannot be loaded (file, line or item, field, reason).
    Exits 1 when anything expected is missing or unusable, or a record was skipped."""
    from vreason.data.preflight import preflight
    from vreason.runner.work import load_error_text

    _check_sources(manifest, root, convention, model)
    samples, rec_errors = _load_samples(protocol, data, {"per_task": per_task})
    res = _gather(manifest, root, convention, model)
    seeds_l = [int(s) for s in seeds.split(",") if s.strip()]
    rep = preflight(samples, res.videos, models=[model] if model else None, seeds=seeds_l,
                    min_frames=min_frames, min_seconds=min_seconds, import_errors=res.errors,
                    decode="strict" if protocol == "synth" else "released")  # the protocols' default decode
    if as_json:
        out.print_json(json.dumps({**rep.as_dict(), "record_errors": rec_errors}))
    else:
        t = Table(title=f"preflight: {protocol} ({len(samples)} samples × {len(seeds_l)} seeds)")
        for col in ("model", "expected", "ok", "missing", "extra", "undecodable", "too short", "fps", "resolution"):
            t.add_column(col)
        for m in rep.models:
            t.add_row(m.model, str(m.expected), str(m.ok), str(len(m.missing)), str(len(m.extra)),
                      str(len(m.undecodable)), str(len(m.too_short)),
                      ", ".join(f"{k}×{v}" for k, v in m.fps.items()),
                      ", ".join(f"{k}×{v}" for k, v in m.resolution.items()))
        out.print(t)
        for m in rep.models:
            for k in m.missing[:20]:
                out.print(f"[red]missing[/] {m.model}: {k}")
            for d in m.undecodable + m.too_short:
                out.print(f"[red]unusable[/] {m.model}: {d['video']}: {d['reason']}")
            for d in m.short_decoded:
                out.print(f"[yellow]short[/] {m.model}: {d['video']}: {d['reason']}")
            for k in m.extra[:20]:
                out.print(f"[yellow]extra[/] {m.model}: {k}")
        for e in rep.errors:
            out.print(Text.assemble(("skipped", "yellow"), f" {e['where']}: {e['reason']}"), soft_wrap=True)
        for e in rec_errors:
            out.print(Text.assemble(("record skipped", "yellow"), " ", load_error_text(e)), soft_wrap=True)
        if rec_errors:
            out.print(f"{len(rec_errors)} record(s) of the benchmark data skipped: fix them or they are not scored")
    if not rep.clean or rec_errors:
        raise typer.Exit(1)


def probe_cmd(path: str = typer.Argument(..., help="A video file.")) -> None:
    """Print a video's fps, frame count, size, duration and codec."""
    from vreason.frames.video import probe

    info = probe(path, exact=True)
    out.print_json(json.dumps({k: v for k, v in info.__dict__.items() if k != "keyframes"}))


def frames_cmd(
    path: str = typer.Argument(..., help="A video file."),
    policy: str = typer.Option("uniform:16", "--policy", "-p", help="Frame policy spec or preset name."),
    dump: str = typer.Option(None, "--dump", help="Write the frames as PNGs into this folder."),
) -> None:
    """Show which frames a policy picks from a video (and optionally write them)."""
    from PIL import Image

    from vreason.frames import sample_frames

    got = sample_frames(path, policy)
    out.print(f"policy {got.policy}: {len(got.indices)} frames of {got.info.n_frames} → {got.indices}")
    facts = got.details()
    if facts.get("frames_declared"):  # a declared count is a hint: say what decodes
        out.print(f"decodes {facts['frames_decoded']} of the {facts['frames_declared']} frames its container "
                  "declares" + (f"; mapped to the last decodable frame: {facts['frames_mapped']}"
                                if facts.get("frames_mapped") else ""))
    if dump:
        os.makedirs(dump, exist_ok=True)
        for i, img in zip(got.indices, got.frames, strict=True):
            Image.fromarray(img).save(os.path.join(dump, f"frame_{i:05d}.png"))
        out.print(f"wrote {len(got.frames)} PNGs to {dump}")


def register(app: typer.Typer) -> None:
    app.command("import")(import_cmd)
    app.command("preflight")(preflight_cmd)
    app.command("probe")(probe_cmd)
    app.command("frames")(frames_cmd)
