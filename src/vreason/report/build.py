"""Build a run's report: the protocol's aggregator → tables, charts, summary, report.md."""

from __future__ import annotations

import os
from typing import Any

from rich.console import Console

from vreason.store import RunStore


def build_report(store: RunStore, protocol: Any, *, console: Console | None = None) -> list[str]:
    """Aggregate the run's scores with ``protocol.aggregate`` and write ``<run>/report/``."""
    from vreason.report.writer import print_tables, write_report

    out_dir = os.path.join(store.run_dir, "report")
    os.makedirs(out_dir, exist_ok=True)
    df = store.scores_frame()
    samples = store.samples()
    result = protocol.aggregate(df, samples, out_dir)
    man = store.read_manifest()
    counts = store.counts()
    failures = store.failures()
    meta = {
        "run": os.path.basename(store.run_dir),
        "protocol": getattr(protocol, "name", "?"),
        "models": sorted(df["model"].unique().tolist()) if len(df) else [],
        "samples": counts["samples"],
        "videos": counts["videos"],
        "units": counts["units"],
        "load_errors": len(store.get_meta("load_errors", []) or []),
        "failures": failures,
        "import_errors": store.get_meta("import_errors", []) or [],
        "versions": man.get("versions", {}),
        "config": man.get("config", {}),
    }
    paths = write_report(result, out_dir, title=f"vreason report: {meta['run']} ({meta['protocol']})", meta=meta)
    if console is not None:
        print_tables(result, console)
        console.print(f"report: {os.path.join(out_dir, 'report.md')}")
    return paths
