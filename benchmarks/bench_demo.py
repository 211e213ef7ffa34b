"""The demo's scoring cost against the decode limit, measured side by side in one run (issue 26, item 1).

The demo's videos (every default suite family × difficulty × built-in model, ``--per-task`` instances each)
are generated once into a temporary folder. Then, on the same process pool (``--workers``, default the
machine's cores), two passes over the same files are timed:

1. **decode**: a bare PyAV decode of every frame converted to RGB at its own size, one reused conversion
   context per stream (the least any verifier that reads every frame can cost);
2. **score**: vreason's suite scorer (:class:`~vreason.synth.scorer.SynthVerifierScorer`: probe, decode at
   the family's resolution, the family's verifier), exactly as ``vreason run synth`` scores a unit.

Workers are set up as ``vreason run``'s executor sets up its own (``VREASON_CODEC_THREADS=1``: one codec
thread and one OCR inference thread per worker, the pool filling the cores); the OCR engine is loaded in
each worker before the timed passes (once per worker, as in a run). The passes alternate ``--rounds``
times (decode, score, decode, score, …) so a change of machine load shows as a spread between rounds.

It prints per round both wall times and the ratio score / decode beside the target (≤ 2×), the machine's
load (``os.getloadavg``) before and after, and per family the CPU and wall seconds of each pass (summed
over its videos, last round) and their ratios, so the family that costs most is named. Verdicts are
checked: the oracle must pass and the static model must fail every unit, or the benchmark exits 1.

Usage: python benchmarks/bench_demo.py [--per-task 1] [--workers N] [--families a,b] [--rounds 2]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import statistics
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


def _decode(path: str) -> tuple[str, float, float, int]:
    import av
    from av.video.reformatter import VideoReformatter

    t0, w0 = time.process_time(), time.perf_counter()
    n = 0
    rf = VideoReformatter()  # one conversion context per stream, as the scorer's decode reuses its own
    with av.open(path) as c:
        c.streams.video[0].codec_context.thread_count = int(os.environ.get("VREASON_CODEC_THREADS", "0"))
        for f in c.decode(video=0):
            rf.reformat(f, format="rgb24").to_ndarray()
            n += 1
    return path, time.process_time() - t0, time.perf_counter() - w0, n


def _score(job: tuple) -> tuple[str, float, float, bool | None, str]:
    from vreason.core.scoring import ScoreContext
    from vreason.synth.scorer import SynthVerifierScorer

    sample, video, workdir = job
    t0, w0 = time.process_time(), time.perf_counter()
    (score,) = SynthVerifierScorer().score(sample, video, ScoreContext(run_dir=workdir))
    return video.path, time.process_time() - t0, time.perf_counter() - w0, score.passed, score.status.value


def _worker_setup() -> None:
    """As the run's executor sets up a worker of a pool that fills the cores (vreason.runner.executor)."""
    os.environ.setdefault("VREASON_CODEC_THREADS", "1")


def _warm_worker(_: int) -> int:
    from vreason.verify.ocr import get_ocr

    time.sleep(0.2)  # every worker gets one
    get_ocr()
    return os.getpid()


def _pool(workers: int) -> ProcessPoolExecutor:
    ctx = mp.get_context("forkserver") if "forkserver" in mp.get_all_start_methods() else None
    return ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_worker_setup)


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--per-task", type=int, default=1)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--families", default="")
    ap.add_argument("--rounds", type=int, default=2, help="decode and score passes, alternating")
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

        load0 = _load()
        rounds: list[tuple[float, float]] = []
        with _pool(args.workers) as pool:  # one pool for both passes, warmed outside the timed passes
            list(pool.map(_warm_worker, range(args.workers)))
            list(pool.map(_decode, paths[: args.workers]))
            list(pool.map(_score, [(s, v, tmp) for s, v in made[: args.workers]]))
            for r in range(max(1, args.rounds)):
                t0 = time.perf_counter()
                decoded = list(pool.map(_decode, paths, chunksize=2))
                t_decode = time.perf_counter() - t0
                t0 = time.perf_counter()
                scored = list(pool.map(_score, [(s, v, tmp) for s, v in made], chunksize=2))
                t_score = time.perf_counter() - t0
                rounds.append((t_decode, t_score))
                print(f"round {r + 1}: decode {t_decode:.2f} s, score {t_score:.2f} s, "
                      f"ratio {t_score / t_decode:.2f} (load {_load()})", flush=True)
        load1 = _load()

    cpu_dec, cpu_score = defaultdict(float), defaultdict(float)
    wall_dec, wall_score = defaultdict(float), defaultdict(float)
    for path, cpu, wall, _ in decoded:
        cpu_dec[family_of[path]] += cpu
        wall_dec[family_of[path]] += wall
    bad = []
    for path, cpu, wall, passed, status in scored:
        cpu_score[family_of[path]] += cpu
        wall_score[family_of[path]] += wall
        model = model_of[path]
        if status != "ok" or (model == "oracle" and not passed) or (model == "static" and passed):
            bad.append(f"{os.path.basename(path)}: {status}, passed={passed}")
    frames = sum(n for *_, n in decoded)
    ratio = statistics.median(s / d if d > 0 else float("inf") for d, s in rounds)
    print(f"\n{len(paths)} videos, {frames} frames, {args.workers} workers (cores {os.cpu_count()}), "
          f"load {load0} -> {load1} (1/5/15 min)")
    print(f"{'round':<7}{'decode s':>10}{'score s':>10}{'ratio':>8}")
    for i, (d, sc) in enumerate(rounds):
        print(f"{i + 1:<7}{d:>10.2f}{sc:>10.2f}{sc / d:>8.2f}")
    print(f"score / decode = {ratio:.2f} (median of {len(rounds)} rounds; target <= {TARGET:.1f}): "
          f"{'met' if ratio <= TARGET else 'NOT met'}")
    tc, tw = sum(cpu_score.values()) / max(sum(cpu_dec.values()), 1e-9), \
        sum(wall_score.values()) / max(sum(wall_dec.values()), 1e-9)
    print(f"summed over videos (last round): cpu ratio {tc:.2f}, wall ratio {tw:.2f}")
    print(f"\n{'family':<12}{'dec cpu s':>10}{'score cpu':>10}{'cpu x':>7}{'dec wall':>10}{'score wall':>11}"
          f"{'wall x':>8}")
    for fam in sorted(cpu_score, key=lambda f: -cpu_score[f] / max(cpu_dec[f], 1e-9)):
        print(f"{fam:<12}{cpu_dec[fam]:>10.2f}{cpu_score[fam]:>10.2f}{cpu_score[fam] / max(cpu_dec[fam], 1e-9):>7.2f}"
              f"{wall_dec[fam]:>10.2f}{wall_score[fam]:>11.2f}{wall_score[fam] / max(wall_dec[fam], 1e-9):>8.2f}")
    if bad:
        print(f"\n{len(bad)} wrong verdicts or errors:\n  " + "\n  ".join(bad[:20]))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
