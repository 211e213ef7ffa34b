"""Build time of the HTML report for the full demo run (1,440 videos), beside the run's own time.

Uses ``runs/demo`` when it holds a finished synth run (the one ``make demo`` writes), else creates
it with ``vreason run synth --name demo --models oracle,static,shortcut,random,noise,reversed``
(about 5 minutes on 2 cores). The media cache (``report/media/``) is cleared first so the build is
cold, then the report is built a second time to show the warm (cached) build.

Targets: a cold build under 60 s on 2 cores, ``index.html`` under 2 MB.

Usage: python benchmarks/bench_report.py [--run runs/demo] [--workers N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from datetime import datetime

TARGET_S = 60.0
TARGET_MB = 2.0
MODELS = "oracle,static,shortcut,random,noise,reversed"


def _run_seconds(manifest: dict) -> float | None:
    total = 0.0
    for inv in manifest.get("invocations", []):
        if inv.get("command", "").startswith("run") and inv.get("end"):
            total += (datetime.fromisoformat(inv["end"]) - datetime.fromisoformat(inv["start"])).total_seconds()
    return total or None


def _ensure_run(run_dir: str) -> None:
    if os.path.exists(os.path.join(run_dir, "results.sqlite")):
        return
    parent, name = os.path.split(os.path.abspath(run_dir))
    os.makedirs(parent, exist_ok=True)
    print(f"creating {run_dir} (the demo run, about 5 minutes)…", flush=True)
    cmd = [sys.executable, "-m", "vreason.cli.main", "run", "synth", "--name", name, "--models", MODELS,
           "--no-report", "--runs", parent]
    code = subprocess.call(cmd)
    if code not in (0, 3):
        sys.exit(f"the demo run failed with exit code {code}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", default="runs/demo")
    ap.add_argument("--workers", type=int, default=None)
    args = ap.parse_args()
    _ensure_run(args.run)

    from vreason.report.build import build_report
    from vreason.runner.run import make_protocol
    from vreason.store import RunStore

    store = RunStore(args.run, create=False)
    man = store.read_manifest()
    cfg = man.get("config", {})
    protocol = make_protocol(cfg["protocol"], cfg.get("options", {}), run_dir=store.run_dir)
    report_dir = os.path.join(store.run_dir, "report")
    shutil.rmtree(os.path.join(report_dir, "media"), ignore_errors=True)
    shutil.rmtree(os.path.join(report_dir, "samples"), ignore_errors=True)
    n_videos = len(store.videos())
    t0 = time.perf_counter()
    build_report(store, protocol, workers=args.workers)
    cold = time.perf_counter() - t0
    t0 = time.perf_counter()
    build_report(store, protocol, workers=args.workers)
    warm = time.perf_counter() - t0
    store.close()
    index_mb = os.path.getsize(os.path.join(report_dir, "index.html")) / 1e6
    media_mb = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(os.path.join(report_dir, "media"))
                   for f in fs) / 1e6
    run_s = _run_seconds(man)
    print(f"run {store.run_dir}: {n_videos} videos, {os.cpu_count()} cores")
    print(f"{'measure':<34}{'value':>12}{'target':>12}")
    print(f"{'the run itself (s)':<34}{(run_s or float('nan')):>12.1f}{'':>12}")
    print(f"{'report, cold media cache (s)':<34}{cold:>12.1f}{TARGET_S:>12.0f}")
    print(f"{'report, warm media cache (s)':<34}{warm:>12.1f}{'':>12}")
    print(f"{'index.html (MB)':<34}{index_mb:>12.2f}{TARGET_MB:>12.1f}")
    print(f"{'media cache (MB)':<34}{media_mb:>12.1f}{'':>12}")
    ok = cold < TARGET_S and index_mb < TARGET_MB
    print("within targets" if ok else "OUTSIDE TARGETS")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
