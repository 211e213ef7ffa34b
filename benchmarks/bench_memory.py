"""Peak memory of verifying a 4000×4000 video through the synth scorer, against the pre-change reader.

A short 4000×4000 H.264 clip (the oracle solution of a maze task, upscaled) is written once, in
a process of its own. Each case then runs in a fresh process that reports its own peak resident
set (``VmHWM`` on Linux, else ``getrusage(RUSAGE_SELF).ru_maxrss`` — which also counts what the
process inherited at fork, so this script's own process stays small) and its resident set right
after imports:

* ``pre-change reader``    — every frame converted to full-size RGB and held (how the suite's
                             scorer read videos before frames were reduced while decoding);
* ``full RGB, then resize`` — every frame converted to full-size RGB, then shrunk with OpenCV
                             (the reader before issue 10: one full-size RGB copy per frame in flight);
* ``synth scorer (now)``    — ``SynthVerifierScorer.score``: probe, completeness check, frames
                             reduced to the render size while converting, the maze verifier.

Decoding runs single-threaded as in run workers (``VREASON_CODEC_THREADS=1``); ``--threads auto``
measures the codec's own thread pool instead. Target: the scorer's peak under 500 MB.

Usage: python benchmarks/bench_memory.py [--frames 16] [--side 4000] [--threads 1|auto]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

TARGET_MB = 500.0
SIDE_RENDER = 360  # the suite's render size for this task (square, like the video)


def _rss_mb() -> float:
    """Peak resident set of this process since its exec."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024  # bytes on macOS, KiB on Linux


def _current_rss_mb() -> float:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:
        return _rss_mb()


def _child(case: str, video: str, sample_json: str) -> None:
    """Run one case in this (fresh) process and print its memory as JSON."""
    import numpy as np  # noqa: F401 - imported before the baseline, as every case needs it

    from vreason.core.records import Sample, Video
    from vreason.core.scoring import ScoreContext
    from vreason.frames import resize_max_side
    from vreason.synth.scorer import SynthVerifierScorer

    base = _current_rss_mb()
    out: dict = {"case": case}
    t0 = time.perf_counter()
    if case == "synth scorer (now)":
        sample = Sample.model_validate_json(open(sample_json).read())
        video_rec = Video(sample_id=sample.id, model="oracle", seed=0, path=video)
        with tempfile.TemporaryDirectory() as run_dir:
            (score,) = SynthVerifierScorer().score(sample, video_rec, ScoreContext(run_dir=run_dir))
        out.update(status=score.status.value, score=score.value, frames=len(score.evidence.frame_indices),
                   reason=score.reason)
    else:
        import av

        held = []
        with av.open(video) as c:
            stream = c.streams.video[0]
            if os.environ.get("VREASON_CODEC_THREADS"):
                stream.codec_context.thread_count = int(os.environ["VREASON_CODEC_THREADS"])
            for frame in c.decode(stream):
                rgb = frame.to_ndarray(format="rgb24")
                held.append(rgb if case == "pre-change reader" else resize_max_side(rgb, SIDE_RENDER))
        out.update(frames=len(held), frame_shape=list(held[0].shape))
    out.update(seconds=time.perf_counter() - t0, peak_mb=_rss_mb(), after_imports_mb=base)
    print(json.dumps(out))


def _write_clip(path: str, frames: int, side: int, sample_path: str) -> None:
    import cv2

    from vreason.frames import write_video
    from vreason.synth.base import RenderConfig
    from vreason.synth.suite import make_instance, make_sample

    cfg = RenderConfig(width=SIDE_RENDER, height=SIDE_RENDER, fps=8, seconds=frames / 8)
    sample = make_sample("maze", "easy", 0, 11, cfg, out_dir=os.path.join(os.path.dirname(path), "suite"))
    inst = make_instance("maze", "easy", 0, 11, cfg)
    with open(sample_path, "w") as f:
        f.write(sample.model_dump_json())
    big = (cv2.resize(img, (side, side), interpolation=cv2.INTER_NEAREST) for img in inst.solution)
    write_video(path, big, fps=cfg.fps, preset="ultrafast")
    print(json.dumps({"frames": len(inst.solution), "bytes": os.path.getsize(path)}))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--frames", type=int, default=16)
    ap.add_argument("--side", type=int, default=4000)
    ap.add_argument("--threads", default="1", help="codec threads in the measured process: 1 (as workers) or auto")
    ap.add_argument("--child", nargs=3, metavar=("CASE", "VIDEO", "SAMPLE"), help=argparse.SUPPRESS)
    ap.add_argument("--write", nargs=2, metavar=("VIDEO", "SAMPLE"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        _child(*args.child)
        return 0
    if args.write:
        _write_clip(args.write[0], args.frames, args.side, args.write[1])
        return 0

    env = dict(os.environ)
    env.pop("VREASON_CODEC_THREADS", None)
    if args.threads != "auto":
        env["VREASON_CODEC_THREADS"] = str(int(args.threads))
    with tempfile.TemporaryDirectory() as tmp:
        video, sample_path = os.path.join(tmp, "big.mp4"), os.path.join(tmp, "sample.json")
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--frames", str(args.frames), "--side",
                               str(args.side), "--write", video, sample_path], capture_output=True, text=True)
        if proc.returncode:
            print(f"writing the clip failed (exit {proc.returncode})\n{proc.stderr[-2000:]}")
            return 1
        clip = json.loads(proc.stdout.strip().splitlines()[-1])
        print(f"clip: {clip['frames']} frames of {args.side}×{args.side} H.264, {clip['bytes'] / 2**20:.1f} MB, "
              f"written in {time.perf_counter() - t0:.1f} s; codec threads: {args.threads}")
        rows = []
        for case in ("pre-change reader", "full RGB, then resize", "synth scorer (now)"):
            proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", case, video, sample_path],
                                  env=env, capture_output=True, text=True)
            if proc.returncode:
                print(f"{case}: failed (exit {proc.returncode})\n{proc.stderr[-2000:]}")
                return 1
            rows.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    print(f"\n{'case':<24} {'peak RSS':>10} {'after imports':>14} {'held frame':>14} {'time':>7}")
    for r in rows:
        shape = "×".join(map(str, r["frame_shape"][:2])) if "frame_shape" in r else "render size"
        print(f"{r['case']:<24} {r['peak_mb']:>7.0f} MB {r['after_imports_mb']:>11.0f} MB {shape:>14} "
              f"{r['seconds']:>6.1f}s")
    now = rows[-1]
    print(f"{'target':<24} {TARGET_MB:>7.0f} MB")
    ok = now["status"] == "ok" and now["peak_mb"] < TARGET_MB
    print(f"\nsynth scorer: status {now['status']}, score {now['score']}, {now['frames']} frames verified"
          + (f" ({now['reason']})" if now.get("reason") else ""))
    print(f"peak {now['peak_mb']:.0f} MB vs pre-change {rows[0]['peak_mb']:.0f} MB "
          f"({rows[0]['peak_mb'] / now['peak_mb']:.1f}× less); target < {TARGET_MB:.0f} MB: "
          f"{'met' if ok else 'NOT met'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
