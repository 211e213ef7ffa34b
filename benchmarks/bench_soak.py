"""Soak: a long run killed with ``kill -9`` at random points and resumed, until it is done (issue 22).

The built-in suite (one cheap family, small renders, two models) is written once with ``vreason synth
generate``; then ``vreason run synth --data …`` is started as its own process and killed with SIGKILL when
its store has recorded a randomly drawn share of the work (videos + units), then started again with the same
command, ``--kills`` times, and finally left to finish. The driver's workers must die with it (the resume is
never refused for a held lock). Printed at the end, each measured from the run's store:

* **units lost**: planned units (samples × models × scorer) without a final record;
* **units duplicated**: units with more score rows than the unit says it has, or score rows of no unit;
* **re-created**: videos or units finished before a kill that were generated or scored again after it (their
  record's ``updated`` time or the video file changed), and videos written twice;
* **peak memory**: the driver's resident set (its workers' added) sampled every 0.25 s, per segment and as a
  timeline over the work done: it should stay flat.

The first three must be 0 (exit 1 otherwise). The suite is verified by code, so this mode has no judge.

``--judged`` soaks a judged protocol instead (``soak_judged.py``): PAI-Bench-U items answered by a loopback
OpenAI-compatible judge started here, of which ``--fault-rate`` (15%) of the requests fault (HTTP 500/503,
429 with Retry-After, HTML or empty-choices 200 bodies, replies past the timeout), with the same kills and
resumes; it prints units lost, duplicated, re-created, unscored by reason, judge requests per unit and memory.

    python benchmarks/bench_soak.py [--units 10000] [--kills 6] [--seed 0] [--workers 2] [--keep DIR]
    python benchmarks/bench_soak.py --judged [--units 10000] [--kills 6] [--fault-rate 0.15]

``--units 150 --kills 2`` is a quick run (about a minute); ``--judged --units 300 --kills 2`` too.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

MODELS = ["oracle", "static"]
FAMILY = "sorting"
RENDER = {"width": 96, "height": 64, "fps": 8, "seconds": 0.5}


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "vreason.cli.main", *args]


def _rss_kb(pid: int) -> int:
    """Resident set of ``pid`` and its children (kB; 0 when gone)."""
    total = 0
    todo = [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/status") as fh:
                total += next((int(ln.split()[1]) for ln in fh if ln.startswith("VmRSS:")), 0)
            with open(f"/proc/{p}/task/{p}/children") as fh:
                todo += [int(c) for c in fh.read().split()]
        except (OSError, ValueError):
            continue
    return total


def _descendants(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/task/{p}/children") as fh:
                kids = [int(c) for c in fh.read().split()]
        except (OSError, ValueError):
            kids = []
        out += kids
        todo += kids
    return out


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as fh:
            return not any(ln.startswith("State:") and "Z" in ln.split()[1] for ln in fh)
    except OSError:
        return False


def _progress(db: str) -> tuple[int, int]:
    """(videos, units) recorded so far (0, 0 before the store exists)."""
    if not os.path.exists(db):
        return 0, 0
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as c:
            return (c.execute("SELECT COUNT(*) FROM videos").fetchone()[0],
                    c.execute("SELECT COUNT(*) FROM units").fetchone()[0])
    except sqlite3.Error:
        return 0, 0


def _snapshot(db: str, run_dir: str) -> tuple[dict, dict]:
    """Finished videos (key → (updated, file inode, mtime)) and finished units (key → updated)."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30) as c:
        videos = {}
        for s, m, k, path, upd in c.execute("SELECT sample_id, model, seed, path, updated FROM videos "
                                            "WHERE status = 'ok'"):
            full = path if os.path.isabs(path or "") else os.path.join(run_dir, path or "")
            try:
                st = os.stat(full)
                videos[(s, m, k)] = (upd, st.st_ino, st.st_mtime_ns)
            except OSError:
                videos[(s, m, k)] = (upd, None, None)
        units = {(s, m, k, sc): upd for s, m, k, sc, upd in
                 c.execute("SELECT sample_id, model, seed, scorer, updated FROM units WHERE status = 'ok'")}
    return videos, units


def soak(units: int, kills: int, seed: int, workers: int, root: str) -> dict:
    rng = random.Random(seed)
    per_task = max(1, math.ceil(units / (3 * len(MODELS))))
    data = os.path.join(root, "suite")
    subprocess.run(_cli("synth", "generate", "--out", data, "--per-task", str(per_task), "--families", FAMILY,
                        *[a for k, v in RENDER.items() for a in (f"--{k}", str(v))]),
                   check=True, capture_output=True)
    cmd = _cli("run", "synth", "--runs", root, "--name", "soak", "--models", ",".join(MODELS), "--data", data,
               "-j", str(workers), "--no-report", *[a for k, v in RENDER.items() for a in ("--opt", f"{k}={v}")])
    run_dir = os.path.join(root, "soak")
    db = os.path.join(run_dir, "results.sqlite")
    planned = per_task * 3 * len(MODELS)
    work = 2 * planned  # a video and a unit each
    points = sorted(rng.uniform(0.03, 0.97) for _ in range(kills))
    timeline: list[tuple[float, int, int]] = []  # (seconds, work done, rss kB)
    segments, changed_videos, changed_units, refused, orphans = [], 0, 0, 0, 0
    t0 = time.perf_counter()
    for i in range(kills + 1):
        before = _snapshot(db, run_dir) if os.path.exists(db) else ({}, {})
        log = open(os.path.join(root, f"segment{i}.log"), "w")  # noqa: SIM115 - closed below
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        target = points[i] * work if i < kills else None
        peak = 0
        while proc.poll() is None:
            time.sleep(0.25)
            rss = _rss_kb(proc.pid)
            peak = max(peak, rss)
            v, u = _progress(db)
            timeline.append((time.perf_counter() - t0, v + u, rss))
            if target is not None and v + u >= target:
                kids = _descendants(proc.pid)
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait()
                deadline = time.time() + 10  # its workers die with it (the deathguard), not later
                while time.time() < deadline and any(_alive(k) for k in kids):
                    time.sleep(0.1)
                orphans += sum(1 for k in kids if _alive(k))
                break
        log.close()
        v, u = _progress(db)
        segments.append({"segment": i, "killed_at": None if target is None else round(points[i], 3),
                         "work_done": v + u, "exit": proc.returncode, "peak_rss_mb": round(peak / 1024, 1)})
        if proc.returncode == 2:
            refused += 1
        if before[0]:
            after = _snapshot(db, run_dir)
            changed_videos += sum(1 for k, was in before[0].items() if after[0].get(k) != was)
            changed_units += sum(1 for k, was in before[1].items() if after[1].get(k) != was)
    last = segments[-1]["exit"]
    with sqlite3.connect(db) as c:
        samples = [r[0] for r in c.execute("SELECT id FROM samples")]
        scorers = [r[0] for r in c.execute("SELECT DISTINCT scorer FROM units")] or ["synth-verifier"]
        have = {tuple(r[:4]): r[4] for r in c.execute("SELECT sample_id, model, seed, scorer, n_scores FROM units "
                                                      "WHERE status IN ('ok', 'error', 'unscored')")}
        expected = {(s, m, 0, sc) for s in samples for m in MODELS for sc in scorers}
        lost = len(expected - set(have))
        rows = {tuple(r[:4]): r[4] for r in c.execute("SELECT sample_id, model, seed, scorer, COUNT(*) FROM scores "
                                                      "GROUP BY sample_id, model, seed, scorer")}
        duplicated = sum(1 for k, n in rows.items() if n > have.get(k, 0)) + len(set(rows) - set(have))
        status = dict(c.execute("SELECT status, COUNT(*) FROM units GROUP BY status").fetchall())
    files = [f for d, _, fs in os.walk(os.path.join(run_dir, "videos")) for f in fs]
    leftovers = [f for f in files if ".part" in f or f.endswith(".tmp")]
    return {"planned": planned, "samples": len(samples), "status": status, "lost": lost,
            "duplicated": duplicated, "recreated_videos": changed_videos, "recreated_units": changed_units,
            "refused_resumes": refused, "orphans": orphans, "last_exit": last, "leftover_partial_files": len(leftovers),
            "segments": segments, "timeline": timeline, "seconds": time.perf_counter() - t0}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--units", type=int, default=10_000, help="planned units (rounded up to whole tasks)")
    ap.add_argument("--kills", type=int, default=6, help="kill -9 points before the run may finish")
    ap.add_argument("--seed", type=int, default=0, help="seed of the kill points")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--keep", default=None, help="work in this folder and keep it (default: a temporary one)")
    ap.add_argument("--judged", action="store_true", help="soak PAI-U against a faulting loopback judge")
    ap.add_argument("--fault-rate", type=float, default=0.15, help="share of judge requests that fault (--judged)")
    a = ap.parse_args()
    if a.judged:
        from soak_judged import judged_soak, report

        with tempfile.TemporaryDirectory(prefix="vreason-soak-judged-") as tmp:
            root = a.keep or tmp
            os.makedirs(root, exist_ok=True)
            r = judged_soak(a.units, a.kills, a.seed, a.workers, root, a.fault_rate)
        return report(r, a.kills)
    with tempfile.TemporaryDirectory(prefix="vreason-soak-") as tmp:
        root = a.keep or tmp
        os.makedirs(root, exist_ok=True)
        r = soak(a.units, a.kills, a.seed, a.workers, root)
    print(f"soak: {r['planned']} units ({r['samples']} samples × {len(MODELS)} models, family {FAMILY}), "
          f"{a.kills} kill -9, {r['seconds']:.0f} s")
    for s in r["segments"]:
        print(f"  segment {s['segment']}: killed at {s['killed_at'] if s['killed_at'] is not None else '(end)'}"
              f" of the work, work done {s['work_done']}, exit {s['exit']}, peak RSS {s['peak_rss_mb']} MB")
    tl = r["timeline"]
    if tl:
        step = max(1, len(tl) // 10)
        print("  RSS over time (s, work done, MB): " + ", ".join(
            f"({t:.0f}, {w}, {rss / 1024:.0f})" for t, w, rss in tl[::step]))
        live = [rss for _, _, rss in tl if rss]
        half = len(live) // 2
        if half:
            print(f"  RSS first half max {max(live[:half]) / 1024:.0f} MB, second half max "
                  f"{max(live[half:]) / 1024:.0f} MB")
    print(f"  final unit status: {r['status']}; last exit {r['last_exit']}")
    print(f"  units lost: {r['lost']}")
    print(f"  units duplicated: {r['duplicated']}")
    print(f"  re-created: videos {r['recreated_videos']}, units {r['recreated_units']}")
    print(f"  resumes refused (lock held by a dead driver's workers): {r['refused_resumes']}")
    print(f"  workers outliving a killed driver (10 s): {r['orphans']}")
    print(f"  partial files left: {r['leftover_partial_files']}")
    bad = r["lost"] or r["duplicated"] or r["recreated_videos"] or r["recreated_units"] or r["refused_resumes"] \
        or r["orphans"] or r["leftover_partial_files"] or r["last_exit"] not in (0, 3)
    print("soak: FAILED" if bad else "soak: ok (nothing lost, duplicated or re-created)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
