"""The demo's scoring cost against the decode limit, measured side by side in one run (issue 26, item 1).

The demo's videos (every default suite family × difficulty × built-in model, ``--per-task`` instances each)
are generated once into a temporary folder. Then, on the same process pool (``--workers``, default the
machine's cores), two passes over the same files are timed:

1. **decode**: a bare PyAV decode of every frame converted to RGB (the least any verifier that reads every
   frame can cost);
2. **score**: vreason's suite scorer (:class:`~vreason.synth.scorer.SynthVerifierScorer`: probe, decode at
   the family's resolution, the family's verifier), exactly as ``vreason run synth`` scores a unit.

It prints both wall times, the ratio score / decode against the target (≤ 2×), and per family the CPU
seconds of each pass and their ratio, so the family that costs most is named. Verdicts are checked: the
oracle must pass and the static model must fail every unit, or the benchmark exits 1.

Usage: python benchmarks/bench_demo.py [--per-task 1] [--workers N] [--families a,b]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import sys
import tempfile
import time
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor

TARGET = 2.0
MODELS = ("oracle", "static", "shortcut", "random", "noise", "reversed")


def _generate(job: tuple) -> tuple:
    from vreason.synth.models import make_model

    sample, model, out = job
    video = make_model(model).generate(sample, 0, out)
    return sample, video


def _decode(path: str) -> tuple[str, float, int]:
    import av

    t0 = time.process_time()
    n = 0
    with av.open(path) as c:
        for f in c.decode(video=0):
            f.to_ndarray(format="rgb24")
            n += 1
    return path, time.process_time() - t0, n


def _score(job: tuple) -> tuple[str, float, bool | None, str]:
    from vreason.core.scoring import ScoreContext
    from vreason.synth.scorer import SynthVerifierScorer

    sample, video, workdir = job
    t0 = time.process_time()
    (score,) = SynthVerifierScorer().score(sample, video, ScoreContext(run_dir=workdir))
    return video.path, time.process_time() - t0, score.passed, score.status.value


def _pool(workers: int) -> ProcessPoolExecutor:
    ctx = mp.get_context("forkserver") if "forkserver" in mp.get_all_start_methods() else None
    return ProcessPoolExecutor(max_workers=workers, mp_context=ctx)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--per-task", type=int, default=1)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--families", default="")
    args = ap.parse_args()

    from vreason.synth.suite import build_samples, default_families

    fams = [f for f in args.families.split(",") if f] or default_families()
    with tempfile.TemporaryDirectory() as tmp:
        samples = build_samples(fams, per_task=args.per_task, seed=0, out_dir=os.path.join(tmp, "data"))
        jobs = [(s, m, os.path.join(tmp, f"{s.id}-{m}.mp4")) for s in samples for m in MODELS]
        t0 = time.perf_counter()
        with _pool(args.workers) as pool:
            made = list(pool.map(_generate, jobs, chunksize=4))
        print(f"generated {len(made)} videos ({len(fams)} families, {args.per_task} per task) "
              f"in {time.perf_counter() - t0:.1f} s", flush=True)
        family_of = {v.path: s.category for s, v in made}
        model_of = {v.path: v.model for _, v in made}
        paths = [v.path for _, v in made]

        with _pool(args.workers) as pool:  # warm both pools' imports outside the timed passes
            list(pool.map(_decode, paths[: args.workers]))
            t0 = time.perf_counter()
            decoded = list(pool.map(_decode, paths, chunksize=2))
            t_decode = time.perf_counter() - t0
        with _pool(args.workers) as pool:
            list(pool.map(_score, [(s, v, tmp) for s, v in made[: args.workers]]))
            t0 = time.perf_counter()
            scored = list(pool.map(_score, [(s, v, tmp) for s, v in made], chunksize=2))
            t_score = time.perf_counter() - t0

    cpu_dec, cpu_score = defaultdict(float), defaultdict(float)
    for path, cpu, _ in decoded:
        cpu_dec[family_of[path]] += cpu
    bad = []
    for path, cpu, passed, status in scored:
        cpu_score[family_of[path]] += cpu
        model = model_of[path]
        if status != "ok" or (model == "oracle" and not passed) or (model == "static" and passed):
            bad.append(f"{os.path.basename(path)}: {status}, passed={passed}")
    frames = sum(n for *_, n in decoded)
    ratio = t_score / t_decode if t_decode > 0 else float("inf")
    print(f"\n{len(paths)} videos, {frames} frames, {args.workers} workers")
    print(f"{'pass':<8}{'wall s':>9}")
    print(f"{'decode':<8}{t_decode:>9.2f}")
    print(f"{'score':<8}{t_score:>9.2f}")
    print(f"score / decode = {ratio:.2f}  (target <= {TARGET:.1f}): {'met' if ratio <= TARGET else 'NOT met'}")
    print(f"\n{'family':<12}{'decode cpu s':>14}{'score cpu s':>13}{'ratio':>8}")
    for fam in sorted(cpu_score, key=lambda f: -cpu_score[f] / max(cpu_dec[f], 1e-9)):
        print(f"{fam:<12}{cpu_dec[fam]:>14.2f}{cpu_score[fam]:>13.2f}{cpu_score[fam] / max(cpu_dec[fam], 1e-9):>8.2f}")
    if bad:
        print(f"\n{len(bad)} wrong verdicts or errors:\n  " + "\n  ".join(bad[:20]))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
