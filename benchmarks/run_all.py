"""Run every benchmark (benchmarks/bench_*.py) one after another; exit non-zero if any fails.

Registered (each found by its file name; pass names to run only some):
bench_align (the camera search's ECC levels: CPU per call and corner errors of both, target ≤ 0.75×),
bench_demo (suite scoring against a bare decode of the demo videos, target ≤ 2×),
bench_generate (API generation throughput vs the ideal against the fake video API, target ≥ 0.8),
bench_judge, bench_memory (peak RSS of verifying a 4000×4000 video, target < 500 MB),
bench_soak (10,000 units killed -9 at random points and resumed: units lost / duplicated / re-created
all 0, peak RSS flat), bench_synth_validity, bench_video; then ``adversarial_full``: the full adversarial matrix
(tests/test_synth_adversarial.py --adv-full, every variant at every difficulty, a fresh printed seed), which the
default ``make test`` only samples; then ``slow_tests``: the tests marked ``slow`` (``pytest -m slow``), which
``make test`` deselects.
"""

from __future__ import annotations

import glob
import os
import subprocess
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
only = sys.argv[1:]
REGISTERED = ("bench_align", "bench_demo", "bench_generate", "bench_judge", "bench_memory", "bench_pai_c", "bench_soak",
              "bench_synth_validity", "bench_video")
failed = []
paths = sorted(set(glob.glob(os.path.join(here, "bench_*.py"))) | {os.path.join(here, f"{n}.py") for n in REGISTERED})
for path in paths:
    name = os.path.basename(path)[:-3]
    if only and name not in only:
        continue
    print(f"== {name}", flush=True)
    t0 = time.perf_counter()
    code = subprocess.call([sys.executable, path])
    print(f"== {name}: exit {code} in {time.perf_counter() - t0:.1f} s\n", flush=True)
    if code:
        failed.append(name)
if not only or "adversarial_full" in only:
    print("== adversarial_full", flush=True)
    t0 = time.perf_counter()
    tests = os.path.join(os.path.dirname(here), "tests", "test_synth_adversarial.py")
    code = subprocess.call([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--adv-full",
                            "-n", "auto", "--timeout=600", tests])
    print(f"== adversarial_full: exit {code} in {time.perf_counter() - t0:.1f} s\n", flush=True)
    if code:
        failed.append("adversarial_full")
if not only or "slow_tests" in only:
    print("== slow_tests", flush=True)
    t0 = time.perf_counter()
    code = subprocess.call([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "slow", "-n", "auto",
                            "--timeout=900", "--durations=15", os.path.join(os.path.dirname(here), "tests")])
    print(f"== slow_tests: exit {code} in {time.perf_counter() - t0:.1f} s\n", flush=True)
    if code:
        failed.append("slow_tests")
print("benchmarks failed: " + ", ".join(failed) if failed else "all benchmarks passed")
sys.exit(1 if failed else 0)
