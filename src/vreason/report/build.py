"""Build a run's report: the protocol's aggregator → tables, charts, summary, report.md, index.html."""

from __future__ import annotations

import os
from typing import Any

from rich.console import Console

from vreason.store import RunStore


def videos_short_decoded(df: Any) -> int:
    """Videos (model, sample, seed) whose scores record fewer decoded frames than their container declares
    (``evidence.details.decode``, see :mod:`vreason.frames.video`)."""
    if not len(df) or "evidence" not in df:
        return 0
    return len({(m, s, seed) for m, s, seed, ev in zip(df["model"], df["sample_id"], df["seed"], df["evidence"],
                                                       strict=True) if '"frames_declared"' in str(ev)})


def build_report(store: RunStore, protocol: Any, *, console: Console | None = None, html: bool = True,
                 workers: int | None = None) -> list[str]:
    """Aggregate the run's scores with ``protocol.aggregate`` and write ``<run>/report/`` (Markdown, CSV,
    JSON and, with ``html``, ``index.html`` + ``samples/*.html`` + cached ``media/``)."""
    from vreason.report.writer import print_tables, write_report

    out_dir = os.path.join(store.run_dir, "report")
    os.makedirs(out_dir, exist_ok=True)
    df = store.scores_frame()
    samples = store.samples()
    result = protocol.aggregate(df, samples, out_dir)
    pairs = store.get_meta("prompt_variants", None)
    if pairs:  # a run with prompt variants (e.g. VideoTPO's): the paired difference against the defaults
        from vreason.data.prompt_variants import paired_variant_table

        result.tables["prompt_variants_paired"] = paired_variant_table(df, pairs)
    man = store.read_manifest()
    counts = store.counts()
    failures = store.failures()
    meta = {
        "run": os.path.basename(store.run_dir),
        "protocol": getattr(protocol, "name", "?"),
        "models": sorted(df["model"].unique().tolist()) if len(df) else [],
        "samples": counts["samples"],
        "videos": counts["videos"],
        "videos by model": _videos_by_model(store),
        "units": counts["units"],
        "load_errors": len(store.get_meta("load_errors", []) or []),
        "failures": failures,
        "import_errors": store.get_meta("import_errors", []) or [],
        "versions": man.get("versions", {}),
        "config": man.get("config", {}),
    }
    short = videos_short_decoded(df)
    if short:  # decoded fewer frames than their containers declare, scored as they decode (decode=released)
        meta["videos_short_decoded"] = short
    note = mock_judge_note(df, man)
    if note:
        meta = {"note": note, **meta}
    title = f"vreason report: {meta['run']} ({meta['protocol']})"
    html_meta = {k: meta[k] for k in ("note", "run", "protocol", "models", "samples", "videos", "videos_short_decoded",
                                      "units") if k in meta}
    html_meta["import_errors"] = meta["import_errors"]
    paths = write_report(result, out_dir, title=title, meta=meta)
    if note:  # the protocol's own paper-table files (written while aggregating) say it too
        label_markdown_tables(out_dir, note)
    if html:
        from vreason.report.html import write_html

        info = write_html(store, result, out_dir, title=title, meta=html_meta, workers=workers)
        paths.append(info["index"])
        if console is not None:
            console.print(f"html: {info['index']} ({info['pages']} sample pages, {info['media_built']} media built, "
                          f"{info['media_cached']} cached, {len(info['media_errors'])} videos unreadable)")
    if console is not None:
        if note:
            console.print(f"[bold yellow]{note}[/]", soft_wrap=True)
        print_tables(result, console)
        console.print(f"report: {os.path.join(out_dir, 'report.md')}")
    return paths


def label_markdown_tables(out_dir: str, note: str) -> None:
    """Put ``note`` under the title of every Markdown table file in ``out_dir`` that does not carry it yet."""
    for name in sorted(os.listdir(out_dir)):
        path = os.path.join(out_dir, name)
        if not name.endswith(".md") or name == "report.md" or not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        if note in text:
            continue
        head, sep, rest = text.partition("\n")
        body = f"{head}\n\n> {note}\n{sep}{rest}" if head.startswith("#") else f"> {note}\n\n{text}"
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(body)


def mock_judge_note(df: Any, manifest: dict[str, Any]) -> str | None:
    """``judge: mock (not a real model) …`` when any judge role of the run is the mock judge (judge/mock.py),
    from the manifest's judge specs and the judges named in the scores; else ``None``."""
    roles = (manifest.get("config") or {}).get("judges") or {}
    mocks = {f"role {r} = {spec}" for r, spec in roles.items() if str(spec).strip().lower().startswith("mock")}
    if not mocks and len(df) and "judge" in df:  # e.g. a mock given as a YAML file
        mocks = {str(j) for j in df["judge"].dropna().unique() if str(j).startswith("mock:")}
    if not mocks:
        return None
    return f"judge: mock (not a real model): {'; '.join(sorted(mocks))}; judged scores are made up, not measured"


def _videos_by_model(store: RunStore) -> dict[str, dict[str, int]]:
    """Videos per model by status (ok / blocked / failed / missing): refusals counted per model. Models and
    statuses in name order (not in the order the videos happened to finish)."""
    out: dict[str, dict[str, int]] = {}
    for v in store.videos():
        row = out.setdefault(v.model, {})
        row[v.status.value] = row.get(v.status.value, 0) + 1
    return {m: dict(sorted(out[m].items())) for m in sorted(out)}
