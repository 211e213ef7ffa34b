"""Validity and speed of the built-in suite on fresh seeds.

For N fresh instances per family × difficulty it renders every built-in model's video (the
real generator code, H.264), decodes it, runs the family's verifier, and also scores the
oracle after degradation (half size, ±8 per channel + a small hue shift, H.264 at 300 kbps).
Prints the pass-rate matrix and CPU time per stage, and exits 1 when a "done when" criterion
is violated:

* oracle ≥ 99% and degraded oracle ≥ 95% on every family × difficulty;
* static, noise, random ≤ 5% on every family; reversed ≤ 5% where the task is directional;
  shortcut ≤ 5% where the rule is about the process;
* zero false passes (a cheat that passes) and zero false fails (an honest variant that fails) on the
  suite's adversarial set (src/vreason/synth/adversary*.py), scored through the run's scorer after
  H.264 encoding, on ``--adversarial`` fresh instances per family × difficulty;
* zero false passes and zero false fails per principle × family on the generated adversarial set of
  issue 24 (src/vreason/synth/adversary_principles*.py: every kind of every principle ``--principles``
  times per family, each at a random difficulty and with parameters drawn from the seed), written with
  the case's encoder and timestamps and scored through the run's scorer.

    python benchmarks/bench_synth_validity.py [-n 10] [--adversarial 2] [--principles 1] [--seed S] [--jobs 2]
        [--families maze]

Only the generated set: ``-n 0 --adversarial 0 --principles 2``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from collections import defaultdict

import numpy as np

MODELS = ("oracle", "static", "shortcut", "random", "noise", "reversed")


def _degrade(frames, path, fps, rng):
    import cv2

    from vreason.frames import read_all, write_video

    off = rng.integers(-8, 9, 3)
    shift = int(rng.choice([-3, -2, 2, 3]))
    out = []
    for f in frames:
        f = cv2.resize(f, (f.shape[1] // 2, f.shape[0] // 2), interpolation=cv2.INTER_AREA)
        hsv = cv2.cvtColor(f, cv2.COLOR_RGB2HSV)
        hsv[..., 0] = ((hsv[..., 0].astype(np.int32) + shift) % 180).astype(np.uint8)
        out.append(np.clip(cv2.cvtColor(hsv, cv2.COLOR_HSV2RGB).astype(np.int32) + off, 0, 255).astype(np.uint8))
    write_video(path, out, fps, bitrate=300_000)
    return read_all(path)


def run_instance(args):
    """Everything for one instance: (family, difficulty, rows of results, stage times)."""
    family, difficulty, index, seed, workdir = args
    from vreason.frames import read_all
    from vreason.synth.models import make_model
    from vreason.synth.suite import get_family, instance_from_sample, make_sample

    t0 = time.process_time()
    sample = make_sample(family, difficulty, index, seed)
    fam, inst, cfg = instance_from_sample(sample)
    times = {"make": time.process_time() - t0}
    scale = getattr(fam, "decode_scale", None)
    max_side = int(round(max(cfg.width, cfg.height) * scale)) if scale else None
    rows = []
    folder = os.path.join(workdir, f"{sample.id}-{seed}")
    os.makedirs(folder, exist_ok=True)
    for m in MODELS:
        path = os.path.join(folder, f"{m}.mp4")
        t = time.process_time()
        video = make_model(m).generate(sample, 0, path)
        tg = time.process_time() - t
        t = time.process_time()
        frames = read_all(video.path, max_side=max_side)
        td = time.process_time() - t
        t = time.process_time()
        res = get_family(family).verify(frames, sample.metadata["state"], cfg)
        tv = time.process_time() - t
        rows.append((m, bool(res.passed), float(res.score), tg, td, tv))
    t = time.process_time()
    frames = _degrade(inst.solution, os.path.join(folder, "degraded.mp4"), cfg.fps,
                      np.random.default_rng(inst.seed))
    res = fam.verify(frames, sample.metadata["state"], cfg)
    rows.append(("oracle-degraded", bool(res.passed), float(res.score), 0.0, 0.0, time.process_time() - t))
    shutil.rmtree(folder, ignore_errors=True)
    return family, difficulty, bool(inst.directional), bool(inst.process_rule), rows, times


def run_adversarial(args):
    """Every adversarial variant of one instance: (family, [(variant, honest, passed, reason)])."""
    family, difficulty, index, seed, workdir = args
    from vreason.synth.adversary import load_variants, run_variant

    folder = os.path.join(workdir, f"adv-{family}-{difficulty}-{index}")
    out = []
    for v in load_variants().get(family, []):
        if difficulty not in v.difficulties:
            continue
        sc = run_variant(v, difficulty, index, seed, folder)
        reason = (sc.evidence.details.get("reason") if sc.evidence else None) or sc.reason
        out.append((v.name, v.honest, bool(sc.passed) and sc.status.value == "ok", reason))
    shutil.rmtree(folder, ignore_errors=True)
    return family, difficulty, out


def run_principle(args):
    """One generated case of adversary_principles: (case, passed, reason, params) or (case, None, reason, {})
    when its kind cannot apply to the instance."""
    case, workdir = args
    from vreason.synth.adversary_principles import NotApplicable, run_case

    folder = os.path.join(workdir, f"pr-{case.id}")
    try:
        out = run_case(case, folder)
    except NotApplicable as exc:  # pragma: no cover - run_case returns None instead
        out, why = None, str(exc)
    except Exception as exc:  # a generator's bug is reported per case; the run goes on
        shutil.rmtree(folder, ignore_errors=True)
        return case, "error", f"{type(exc).__name__}: {exc}", {}
    else:
        why = "not applicable to this instance"
    shutil.rmtree(folder, ignore_errors=True)
    if out is None:
        return case, None, why, {}
    return case, out.passed, out.reason, out.params


def report_principles(results, fams, seed: int, violations: list[str]) -> None:
    """Per principle × family: cheats tried / passed (false passes), honest cases tried / failed (false
    fails), cases whose kind could not apply; then every wrong verdict with its parameters."""
    from vreason.synth.adversary_principles import PRINCIPLE_NAMES, PRINCIPLES

    stats: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0])
    bad = []
    for case, passed, reason, params in results:
        st = stats[(case.principle, case.family)]
        if passed == "error":
            violations.append(f"generator error {case.principle} {case.family}/{case.kind} "
                              f"case_seed={case.case_seed}: {reason}")
            continue
        if passed is None:
            st[4] += 1
            continue
        if case.honest:
            st[2] += 1
            if not passed:
                st[3] += 1
                bad.append(f"false fail {case.principle} {case.family}/{case.difficulty}/{case.kind} "
                           f"case_seed={case.case_seed} {params}: {reason}")
        else:
            st[0] += 1
            if passed:
                st[1] += 1
                bad.append(f"false pass {case.principle} {case.family}/{case.difficulty}/{case.kind} "
                           f"case_seed={case.case_seed} {params}")
    print(f"\ngenerated adversarial set by principle (seed {seed}; cheats / false passes, honest / false fails)")
    print(f"{'family':<11}" + "".join(f"{p + ' ' + PRINCIPLE_NAMES[p][:14]:>22}" for p in PRINCIPLES))
    tot = [0, 0, 0, 0, 0]
    for fam in fams:
        cells = []
        for p in PRINCIPLES:
            c, fp, h, ff, na = stats.get((p, fam), [0, 0, 0, 0, 0])
            tot = [a + b for a, b in zip(tot, (c, fp, h, ff, na), strict=True)]
            cell = (f"{fp}/{c} pass" if c else "") + (" " if c and h else "") + (f"{ff}/{h} fail" if h else "")
            cells.append(f"{cell or '-':>22}")
        print(f"{fam:<11}" + "".join(cells))
    print(f"total: {tot[1]} false passes of {tot[0]} cheats, {tot[3]} false fails of {tot[2]} honest cases, "
          f"{tot[4]} not applicable; target 0 / 0 in every family: {'met' if tot[1] == tot[3] == 0 else 'NOT met'}")
    violations.extend(bad)


def _imap(fn, jobs, n_jobs):
    """Results in job order as they finish (progress can be printed)."""
    if n_jobs > 1:
        import multiprocessing as mp

        with mp.get_context("spawn").Pool(n_jobs) as pool:
            yield from pool.imap(fn, jobs, chunksize=1)
        return
    for j in jobs:
        yield fn(j)


def _map(fn, jobs, n_jobs):
    if n_jobs > 1:
        import multiprocessing as mp

        with mp.get_context("spawn").Pool(n_jobs) as pool:
            return pool.map(fn, jobs, chunksize=1)
    return [fn(j) for j in jobs]


def report_adversarial(results, fams, violations: list[str]) -> None:
    """Per family: cheats tried / passed (false passes), honest variants tried / failed (false fails)."""
    stats = {f: [0, 0, 0, 0] for f in fams}  # cheats, false passes, honest, false fails
    bad = []
    for fam, diff, rows in results:
        for name, honest, ok, reason in rows:
            st = stats[fam]
            if honest:
                st[2] += 1
                if not ok:
                    st[3] += 1
                    bad.append(f"false fail {fam}/{diff}/{name}: {reason}")
            else:
                st[0] += 1
                if ok:
                    st[1] += 1
                    bad.append(f"false pass {fam}/{diff}/{name}")
    print("\nadversarial set (scored through the run's scorer after H.264 encoding)")
    print(f"{'family':<11}{'cheats':>8}{'false pass':>12}{'honest':>8}{'false fail':>12}")
    total = [0, 0, 0, 0]
    for fam in fams:
        c, fp, h, ff = stats[fam]
        print(f"{fam:<11}{c:>8}{fp:>12}{h:>8}{ff:>12}")
        total = [a + b for a, b in zip(total, (c, fp, h, ff), strict=True)]
        if c == 0 or h == 0:
            violations.append(f"{fam}: no adversarial variants ran")
    print(f"total: {total[1]} false passes of {total[0]} cheats, {total[3]} false fails of {total[2]} honest; "
          f"target 0 / 0: {'met' if total[1] == total[3] == 0 else 'NOT met'}")
    violations.extend(bad)


def main(argv=None) -> int:
    from vreason.synth.base import DIFFICULTIES
    from vreason.synth.suite import default_families

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", "--per-task", type=int, default=10, help="fresh instances per family × difficulty")
    ap.add_argument("--seed", type=int, default=None, help="suite seed [default: a fresh random one]")
    ap.add_argument("--adversarial", type=int, default=2,
                    help="fresh instances per family × difficulty for the adversarial set (0: skip)")
    ap.add_argument("--principles", type=int, default=1,
                    help="generated cases per kind × family for the by-principle set (0: skip)")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes")
    ap.add_argument("--families", default=None, help="comma-separated families [default: all]")
    a = ap.parse_args(argv)
    seed = a.seed if a.seed is not None else int.from_bytes(os.urandom(4), "little") & 0x7FFFFFFF
    fams = [f.strip() for f in a.families.split(",")] if a.families else default_families()
    print(f"suite seed {seed}; families {', '.join(fams)}; {a.per_task} per family × difficulty; jobs {a.jobs}")
    work = tempfile.mkdtemp(prefix="vreason-bench-")
    jobs = [(f, d, i, seed, work) for f in fams for d in DIFFICULTIES for i in range(a.per_task)]
    wall = time.perf_counter()
    results = _map(run_instance, jobs, a.jobs)
    adv_jobs = [(f, d, 1000 + i, seed, work) for f in fams for d in DIFFICULTIES for i in range(a.adversarial)]
    adv_results = _map(run_adversarial, adv_jobs, a.jobs)
    pr_results = []
    if a.principles:
        from vreason.synth.adversary_principles import sample_cases

        pr_jobs = [(c, work) for c in sample_cases(fams, seed, per_kind=a.principles, index=2000)]
        for k, (case, passed, reason, params) in enumerate(_imap(run_principle, pr_jobs, a.jobs)):
            pr_results.append((case, passed, reason, params))
            wrong = passed not in (None, "error") and passed != case.honest
            print(f"[{k + 1}/{len(pr_jobs)}] {case.principle} {case.family}/{case.difficulty}/{case.kind} "
                  f"{'honest' if case.honest else 'cheat'} -> "
                  f"{ {True: 'pass', False: 'fail', None: 'n/a', 'error': 'ERROR'}[passed] }"
                  f"{' WRONG' if wrong else ''} case_seed={case.case_seed} {params} {reason or ''}", flush=True)
    wall = time.perf_counter() - wall
    shutil.rmtree(work, ignore_errors=True)

    passed: dict[tuple[str, str, str], list[bool]] = defaultdict(list)
    flags: dict[str, tuple[bool, bool]] = {}
    stage = defaultdict(list)
    for fam, diff, directional, process_rule, rows, times in results:
        flags[fam] = (directional, process_rule)
        stage["make"].append(times["make"])
        for m, ok, _score, tg, td, tv in rows:
            passed[(fam, diff, m)].append(ok)
            if m != "oracle-degraded":
                stage["generate"].append(tg)
                stage["decode"].append(td)
                stage["verify"].append(tv)
    cols = list(MODELS) + ["oracle-degraded"]
    print("\npass rate (%) by family × difficulty")
    print(f"{'family':<11}{'diff':<8}" + "".join(f"{c:>17}" for c in cols))
    violations = []
    for fam in fams:
        directional, process_rule = flags.get(fam, (True, False))
        for diff in DIFFICULTIES:
            cells = []
            for m in cols:
                v = passed.get((fam, diff, m), [])
                rate = 100.0 * sum(v) / len(v) if v else float("nan")
                cells.append(f"{rate:>17.1f}")
                limit = None
                if m == "oracle" and rate < 99:
                    limit = "≥ 99"
                elif m == "oracle-degraded" and rate < 95:
                    limit = "≥ 95"
                elif m in ("static", "noise", "random") and rate > 5:
                    limit = "≤ 5"
                elif m == "reversed" and directional and rate > 5:
                    limit = "≤ 5 (directional)"
                elif m == "shortcut" and process_rule and rate > 5:
                    limit = "≤ 5 (process rule)"
                if limit:
                    violations.append(f"{fam}/{diff}/{m}: {rate:.1f}% (needs {limit})")
            print(f"{fam:<11}{diff:<8}" + "".join(cells))
    if a.adversarial:
        report_adversarial(adv_results, fams, violations)
    if a.principles:
        report_principles(pr_results, fams, seed, violations)
    n_videos = len(stage["generate"])
    if not n_videos:
        print(f"\nwall {wall:.1f} s with {a.jobs} job(s)")
        if violations:
            print("\nVIOLATIONS:\n  " + "\n  ".join(violations))
            return 1
        print("\nall criteria met")
        return 0
    print(f"\nCPU seconds per video (mean over {n_videos} videos): "
          + ", ".join(f"{k} {np.mean(v):.3f}" for k, v in stage.items() if k != "make")
          + f"; instance build {np.mean(stage['make']):.3f} per instance")
    per_video = float(np.mean(stage["generate"]) + np.mean(stage["decode"]) + np.mean(stage["verify"]))
    print(f"wall {wall:.1f} s with {a.jobs} job(s); projected default demo (1440 videos, 2 cores, no "
          f"overhead): {1440 * per_video / 2:.0f} s")
    if violations:
        print("\nVIOLATIONS:\n  " + "\n  ".join(violations))
        return 1
    print("\nall criteria met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
