"""The judged soak of ``bench_soak.py --judged`` (issue 22): PAI-Bench-U items scored by a faulting judge while
the driver is killed with ``kill -9`` and resumed.

N items (``{question, index2ans, answer, video_path, category, subcategory}``, each question distinct so the
judge cache never answers one item for another) point at a handful of tiny MP4 files in the dataset folder.
The model under test — PAI-U's judge — is the loopback OpenAI-compatible server of
``vreason.testing.loopback``, started here on 127.0.0.1 in this process and living across the driver's kills.
It answers ``<think>…</think><answer>X</answer>`` (the item's own letter, found from the question's item
marker) except for a random share of requests (``--fault-rate``, default 15%) that fault: HTTP 500, 503, 429
with ``Retry-After``, an HTML page or an empty ``choices`` list with HTTP 200, and replies slower than the
judge's timeout. Each kind is counted by the server.

``vreason run pai-u --judge <yaml>`` (timeout 1 s, 2 retries, 50 ms backoff) is started as its own process,
killed with SIGKILL when its store holds a randomly drawn share of the units, and started again with the same
command ``--kills`` times, then left to finish. Measured from the run's store and the server's counts:

* units lost (planned without a final record), duplicated (more score rows than the unit says, or rows of no
  unit), re-created (a unit finished before a kill whose record changed after it);
* judge requests vs units (the excess is the faults' retries and replies in flight when the driver died);
* units unscored, with their reasons counted — a question whose retries all faulted is unscored with the
  reason, never scored 0 and never lost (about fault-rate³ of the units);
* the driver's peak resident set per segment and as a timeline: it should stay flat.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import sqlite3
import subprocess
import threading
import time
from collections import Counter
from typing import Any

from bench_soak import _alive, _cli, _descendants, _rss_kb, _snapshot

MODEL = "soak-model"
N_VIDEOS = 4
LETTERS = "ABCD"
FAULTS = ("http500", "http503", "http429", "html200", "empty_choices", "slow_timeout")
TIMEOUT = 1.0  # the judge's per-request timeout (s); a slow fault waits longer
HTML = "<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"
MARK = re.compile(r"\[item (\d+)\]")


def write_dataset(root: str, n: int, seed: int) -> dict[int, str]:
    """``root/test.jsonl`` with ``n`` items over ``N_VIDEOS`` tiny videos in ``root/videos``; item → answer."""
    import numpy as np

    from vreason.frames import write_video

    rng = random.Random(seed)
    os.makedirs(os.path.join(root, "videos"), exist_ok=True)
    for v in range(N_VIDEOS):
        frames = []
        for i in range(8):
            f = np.full((48, 64, 3), 40 + 30 * v, np.uint8)
            f[18:30, 4 + 4 * i: 16 + 4 * i] = (240, 220, 40)
            frames.append(f)
        write_video(os.path.join(root, "videos", f"v{v}.mp4"), frames, fps=8)
    answers: dict[int, str] = {}
    with open(os.path.join(root, "test.jsonl"), "w", encoding="utf-8") as fh:
        for i in range(n):
            answers[i] = rng.choice(LETTERS)
            fh.write(json.dumps({
                "id": f"q{i:06d}", "question": f"[item {i}] Where does the square move?",
                "index2ans": {k: f"option {k.lower()}" for k in LETTERS}, "answer": answers[i],
                "video_path": f"videos/v{i % N_VIDEOS}.mp4", "category": f"cat{i % 3}",
                "subcategory": f"sub{i % 5}"}) + "\n")
    return answers


class FaultyJudge:
    """The loopback script: the item's letter, or (with probability ``rate``) one of ``FAULTS``."""

    def __init__(self, answers: dict[int, str], rate: float, seed: int):
        self.answers, self.rate = answers, rate
        self.rng = random.Random(seed + 1)
        self.served: Counter[str] = Counter()
        self.asked: Counter[int] = Counter()  # item → requests
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Any:
        from vreason.testing.loopback import Reply

        text = json.dumps(body.get("messages", []))
        m = MARK.search(text)
        item = int(m.group(1)) if m else -1
        with self._lock:
            kind = self.rng.choice(FAULTS) if self.rng.random() < self.rate else "answer"
            self.served[kind] += 1
            self.asked[item] += 1
        if kind == "http500":
            return Reply(status=500)
        if kind == "http503":
            return Reply(status=503)
        if kind == "http429":
            return Reply(status=429, headers={"Retry-After": "0.05"})
        if kind == "html200":
            return Reply(body=HTML, content_type="text/html")
        if kind == "empty_choices":
            return Reply(body={"id": "x", "object": "chat.completion", "model": MODEL, "choices": []})
        if kind == "slow_timeout":
            return Reply(text="<answer>A</answer>", delay=TIMEOUT + 0.5)
        letter = self.answers.get(item, "A")
        return f"<think>The square moves.</think>\n<answer>{letter}</answer>"


def _units_done(db: str) -> int:
    if not os.path.exists(db):
        return 0
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as c:
            return c.execute("SELECT COUNT(*) FROM units").fetchone()[0]
    except sqlite3.Error:
        return 0


def _reason_kind(reason: str | None) -> str:
    """A reason without its item-specific parts (for counting)."""
    r = (reason or "(none)").split("; ")[0].removeprefix("judge reply unusable: judge request failed ")
    return re.sub(r"\d+(\.\d+)?", "#", r)[:100]


def judged_soak(units: int, kills: int, seed: int, workers: int, root: str, fault_rate: float = 0.15) -> dict:
    from vreason.testing.loopback import LoopbackServer

    rng = random.Random(seed)
    data = os.path.join(root, "pai_u")
    answers = write_dataset(data, units, seed)
    script = FaultyJudge(answers, fault_rate, seed)
    srv = LoopbackServer(script, model=MODEL).start()
    try:
        judge = os.path.join(root, "judge.yaml")
        with open(judge, "w", encoding="utf-8") as fh:
            fh.write(f"backend: openai\nmodel: {MODEL}\nbase_url: {srv.base_url}\napi_key_env: SOAK_JUDGE_KEY\n"
                     f"timeout: {TIMEOUT}\nmax_concurrency: 8\nretries: 2\nbackoff: 0.05\n")
        env = {**os.environ, "SOAK_JUDGE_KEY": "soak-dummy-key"}
        cmd = _cli("run", "pai-u", "--runs", root, "--name", "soak-judged", "--models", MODEL, "--data", data,
                   "--judge", judge, "-j", str(workers), "--no-report")
        run_dir = os.path.join(root, "soak-judged")
        db = os.path.join(run_dir, "results.sqlite")
        points = sorted(rng.uniform(0.03, 0.97) for _ in range(kills))
        timeline: list[tuple[float, int, int]] = []
        segments, changed_units, refused, orphans = [], 0, 0, 0
        t0 = time.perf_counter()
        for i in range(kills + 1):
            before = _snapshot(db, run_dir)[1] if os.path.exists(db) else {}
            asked_before = srv.count
            log = open(os.path.join(root, f"judged-segment{i}.log"), "w")  # noqa: SIM115 - closed below
            proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
            target = points[i] * units if i < kills else None
            peak = 0
            while proc.poll() is None:
                time.sleep(0.25)
                rss = _rss_kb(proc.pid)
                peak = max(peak, rss)
                done = _units_done(db)
                timeline.append((time.perf_counter() - t0, done, rss))
                if target is not None and done >= target:
                    kids = _descendants(proc.pid)
                    os.kill(proc.pid, signal.SIGKILL)
                    proc.wait()
                    deadline = time.time() + 10
                    while time.time() < deadline and any(_alive(k) for k in kids):
                        time.sleep(0.1)
                    orphans += sum(1 for k in kids if _alive(k))
                    break
            log.close()
            segments.append({"segment": i, "killed_at": None if target is None else round(points[i], 3),
                             "units_done": _units_done(db), "exit": proc.returncode,
                             "requests": srv.count - asked_before, "peak_rss_mb": round(peak / 1024, 1)})
            if proc.returncode == 2:
                refused += 1
            if before:
                after = _snapshot(db, run_dir)[1]
                changed_units += sum(1 for k, was in before.items() if after.get(k) != was)
        seconds = time.perf_counter() - t0
    finally:
        srv.stop()
    with sqlite3.connect(db) as c:
        samples = [r[0] for r in c.execute("SELECT id FROM samples")]
        scorers = [r[0] for r in c.execute("SELECT DISTINCT scorer FROM units")] or ["pai_u_mcq"]
        have = {tuple(r[:4]): r[4] for r in c.execute("SELECT sample_id, model, seed, scorer, n_scores FROM units "
                                                      "WHERE status IN ('ok', 'error', 'unscored')")}
        expected = {(s, MODEL, 0, sc) for s in samples for sc in scorers}
        rows = {tuple(r[:4]): r[4] for r in c.execute("SELECT sample_id, model, seed, scorer, COUNT(*) FROM scores "
                                                      "GROUP BY sample_id, model, seed, scorer")}
        status = dict(c.execute("SELECT status, COUNT(*) FROM units GROUP BY status").fetchall())
        reasons = Counter(_reason_kind(r) for (r,) in c.execute("SELECT reason FROM units WHERE status != 'ok'"))
        zero_unscored = c.execute("SELECT COUNT(*) FROM scores WHERE status != 'ok' AND value IS NOT NULL")\
            .fetchone()[0]
        correct = c.execute("SELECT COUNT(*), SUM(value) FROM scores WHERE status = 'ok'").fetchone()
        cached, recorded = c.execute("SELECT SUM(json_extract(json, '$.evidence.judge.cached')), "
                                     "SUM(json_extract(json, '$.evidence.judge.requests')) FROM scores").fetchone()
    lost = len(expected - set(have))
    duplicated = sum(1 for k, n in rows.items() if n > have.get(k, 0)) + len(set(rows) - set(have))
    return {"planned": units, "samples": len(samples), "status": status, "lost": lost, "duplicated": duplicated,
            "recreated_units": changed_units, "refused_resumes": refused, "orphans": orphans,
            "last_exit": segments[-1]["exit"], "requests": srv.count, "served": dict(script.served),
            "items_asked_more_than_once": sum(1 for n in script.asked.values() if n > 1),
            "reasons": dict(reasons), "unscored_with_value": zero_unscored,
            "cached": int(cached or 0), "recorded_requests": int(recorded or 0),
            "ok_scores": correct[0], "ok_correct": int(correct[1] or 0), "fault_rate": fault_rate,
            "segments": segments, "timeline": timeline, "seconds": seconds}


def report(r: dict, kills: int) -> int:
    """Print the judged soak's results; 1 when anything was lost, duplicated or re-created."""
    n = r["planned"]
    print(f"judged soak: {n} PAI-U units ({r['samples']} items × 1 model, judge = loopback server with "
          f"{r['fault_rate']:.0%} faults), {kills} kill -9, {r['seconds']:.0f} s "
          f"({1000 * r['seconds'] / n:.1f} ms/unit)")
    for s in r["segments"]:
        print(f"  segment {s['segment']}: killed at {s['killed_at'] if s['killed_at'] is not None else '(end)'}"
              f" of the units, units done {s['units_done']}, judge requests {s['requests']}, exit {s['exit']}, "
              f"peak RSS {s['peak_rss_mb']} MB")
    tl = r["timeline"]
    if tl:
        step = max(1, len(tl) // 10)
        print("  RSS over time (s, units done, MB): " + ", ".join(
            f"({t:.0f}, {w}, {rss / 1024:.0f})" for t, w, rss in tl[::step]))
        live = [rss for _, done, rss in tl if rss and done < n]  # while units were being scored
        tail = [rss for _, done, rss in tl if rss and done >= n]  # after the last unit: aggregate, manifest
        half = len(live) // 2
        if half:
            print(f"  RSS while scoring: first half max {max(live[:half]) / 1024:.0f} MB, second half max "
                  f"{max(live[half:]) / 1024:.0f} MB; after the last unit (aggregation) max "
                  f"{max(tail, default=0) / 1024:.0f} MB")
    served = r["served"]
    faults = sum(v for k, v in served.items() if k != "answer")
    print(f"  judge requests {r['requests']} for {n} units: {r['requests'] / n:.3f} per unit; faults served "
          f"{faults} ({', '.join(f'{k} {served.get(k, 0)}' for k in FAULTS)}), answers {served.get('answer', 0)}; "
          f"answers beyond one per unit (in flight at a kill) {served.get('answer', 0) - r['ok_scores']}")
    print(f"  requests recorded in the scores' evidence {r['recorded_requests']} (the rest were in flight at a kill), "
          f"items asked more than once {r['items_asked_more_than_once']}; "
          f"units answered from the judge cache {r['cached']} (answered before a kill, recorded after)")
    print(f"  final unit status: {r['status']}; last exit {r['last_exit']}; correct {r['ok_correct']} of "
          f"{r['ok_scores']} scored")
    print(f"  units unscored/error by reason: {r['reasons'] or '{}'}; with a value (scored 0): "
          f"{r['unscored_with_value']}")
    print(f"  units lost: {r['lost']}")
    print(f"  units duplicated: {r['duplicated']}")
    print(f"  units re-created (finished before a kill, scored again after): {r['recreated_units']}")
    print(f"  resumes refused: {r['refused_resumes']}; workers outliving a killed driver (10 s): {r['orphans']}")
    bad = r["lost"] or r["duplicated"] or r["recreated_units"] or r["refused_resumes"] or r["orphans"] \
        or r["unscored_with_value"] or r["last_exit"] not in (0, 3)
    print("judged soak: FAILED" if bad else "judged soak: ok (nothing lost, duplicated or re-created)")
    return 1 if bad else 0
