"""Run every benchmark (benchmarks/bench_*.py) one after another; exit non-zero if any fails."""

from __future__ import annotations

import glob
import os
import subprocess
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
only = sys.argv[1:]
failed = []
for path in sorted(glob.glob(os.path.join(here, "bench_*.py"))):
    name = os.path.basename(path)[:-3]
    if only and name not in only:
        continue
    print(f"== {name}", flush=True)
    t0 = time.perf_counter()
    code = subprocess.call([sys.executable, path])
    print(f"== {name}: exit {code} in {time.perf_counter() - t0:.1f} s\n", flush=True)
    if code:
        failed.append(name)
print("benchmarks failed: " + ", ".join(failed) if failed else "all benchmarks passed")
sys.exit(1 if failed else 0)
