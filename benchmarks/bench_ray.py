"""Local vs Ray executor on the demo workload (the built-in suite × the six baseline models, generate +
verify), side by side in one process, and the per-unit overhead Ray adds.

    python benchmarks/bench_ray.py [--fraction 0.3] [--repeat 1]

``--fraction`` scales the demo's 10 samples per family × difficulty (0.3 → 3: 72 tasks, 432 videos and
432 scoring units). The Ray run uses a local instance (all cores) started before the clock starts; its
start-up time is printed separately. Target: Ray ≤ 15% slower than the local executor on one machine
(the point of Ray is scale-out, not single-box speed). Exit code 1 when the target is missed or the two
executors' scores differ.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import sys
import tempfile
import time

MODELS = ["oracle", "static", "shortcut", "random", "noise", "reversed"]
TARGET = 1.15


def _run(run_dir: str, executor: str, per_task: int) -> tuple[float, dict, int]:
    from vreason.runner.run import RunConfig, Runner

    cfg = RunConfig(protocol="synth", run_dir=run_dir, models=MODELS, options={"per_task": per_task},
                    executor=executor, aggregate=False)
    t0 = time.perf_counter()
    summary = Runner(cfg).run()
    wall = time.perf_counter() - t0
    jobs = sum(summary.videos.values()) + sum(summary.units_run.values())
    if summary.units_final != {"ok": summary.units_total}:
        raise SystemExit(f"{executor}: units ended {summary.units_final}")
    return wall, summary.seconds, jobs


def _scores(run_dir: str) -> list[tuple]:
    with sqlite3.connect(os.path.join(run_dir, "results.sqlite")) as c:
        return sorted(c.execute("SELECT sample_id, model, seed, scorer, metric, value, status, passed FROM scores"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fraction", type=float, default=0.3, help="share of the demo's 10 samples per task")
    ap.add_argument("--repeat", type=int, default=1, help="alternate local / Ray runs this many times")
    args = ap.parse_args()
    per_task = max(1, round(10 * args.fraction))
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    import ray

    base = tempfile.mkdtemp(prefix="vr-bench-")
    try:
        t0 = time.perf_counter()
        ray.init(num_cpus=os.cpu_count(), include_dashboard=False, _temp_dir=os.path.join(base, "ray"),
                 log_to_driver=False, logging_level="warning")
        ray_start = time.perf_counter() - t0
        walls: dict[str, list[float]] = {"local": [], "ray": []}
        stages: dict[str, dict] = {}
        jobs = 0
        for i in range(args.repeat):
            for ex in ("local", "ray"):
                run_dir = os.path.join(base, f"{ex}{i}")
                wall, seconds, jobs = _run(run_dir, ex, per_task)
                walls[ex].append(wall)
                stages[ex] = seconds
        same = _scores(os.path.join(base, "local0")) == _scores(os.path.join(base, "ray0"))
        ray.shutdown()
    finally:
        shutil.rmtree(base, ignore_errors=True)
    local, remote = min(walls["local"]), min(walls["ray"])
    ratio = remote / local
    per_unit_ms = (remote - local) / jobs * 1000
    print(f"workload: synth per_task={per_task} × {len(MODELS)} models = {jobs} jobs (generate + verify), "
          f"{os.cpu_count()} CPUs, best of {args.repeat}")
    print(f"{'executor':<10}{'wall s':>9}{'videos s':>10}{'score s':>9}")
    for ex, wall in (("local", local), ("ray", remote)):
        st = stages[ex]
        print(f"{ex:<10}{wall:>9.1f}{st.get('videos', 0):>10.1f}{st.get('score', 0):>9.1f}")
    print(f"ray start-up (local instance, not in the wall time): {ray_start:.1f} s")
    print(f"ray / local: {ratio:.3f} (target ≤ {TARGET}); overhead per job: {per_unit_ms:+.1f} ms")
    print(f"scores identical: {same}")
    ok = ratio <= TARGET and same
    print("verdict:", "target met" if ok else "TARGET MISSED" if same else "SCORES DIFFER")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
