"""Frame sampling speed and memory, measured side by side in one run.

1. Time to sample 16 uniform frames from a 10 s 720p H.264 clip with vreason
   (`sample_frames(path, "uniform:16")`: probe + packet scan + decode) against a bare sequential
   PyAV decode of the same clip (every frame decoded and converted to RGB). Target ≤ 1.2×.
2. Peak resident memory of a fresh process sampling 16 frames from a long 1080p clip,
   above the same process's memory after imports. Target: under 500 MB.

Usage: python benchmarks/bench_video.py [--seconds-long 60] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np


def _frames(n: int, h: int, w: int):
    rng = np.random.default_rng(0)
    base = rng.integers(0, 255, (h // 8, w // 8, 3), dtype=np.uint8).repeat(8, 0).repeat(8, 1)
    for i in range(n):
        yield np.roll(base, i * 4, axis=1)


def _bare_decode(path: str) -> int:
    import av

    n = 0
    with av.open(path) as c:
        for f in c.decode(video=0):
            f.to_ndarray(format="rgb24")
            n += 1
    return n


def _compare_methods(clip: str, cases: list[tuple[str, list[int]]]) -> bool:
    """Time sequential vs seek vs auto; True when auto picked the faster one (or within 15%)."""
    from vreason.frames import probe, read_frames
    from vreason.frames.video import choose_method

    info = probe(clip, exact=True)
    good = True
    for label, idx in cases:
        times = {}
        for method in ("sequential", "seek", "auto"):
            t0 = time.perf_counter()
            read_frames(clip, idx, method=method, info=info)
            times[method] = time.perf_counter() - t0
        pick = choose_method(idx, info)
        best = min(("sequential", "seek"), key=times.get)
        good &= pick == best or times[pick] <= 1.15 * times[best]
        print(f"  {label}: sequential {times['sequential'] * 1000:.0f} ms | seek {times['seek'] * 1000:.0f} ms | "
              f"auto chose {pick} ({times['auto'] * 1000:.0f} ms); fastest measured: {best}")
    return good


def _child_memory(path: str) -> None:
    import gc

    from vreason.frames import sample_frames

    gc.collect()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    got = sample_frames(path, "uniform:16")
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"{len(got.frames)} {before} {after}")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds-long", type=float, default=60.0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        _child_memory(a.child)
        return 0
    from vreason.frames import sample_frames, write_video

    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        clip = os.path.join(tmp, "720p.mp4")
        t0 = time.perf_counter()
        write_video(clip, _frames(240, 720, 1280), fps=24)
        print(f"wrote 10 s 720p H.264 clip in {time.perf_counter() - t0:.1f} s")
        bare, ours = [], []
        for _ in range(a.repeats):
            t0 = time.perf_counter()
            _bare_decode(clip)
            bare.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            got = sample_frames(clip, "uniform:16")
            ours.append(time.perf_counter() - t0)
            assert len(got.frames) == 16
        ratio = min(ours) / min(bare)
        print(f"sample 16 frames (vreason): {min(ours) * 1000:.0f} ms | bare sequential PyAV decode: "
              f"{min(bare) * 1000:.0f} ms | ratio {ratio:.2f}x (target <= 1.2x)")
        ok &= ratio <= 1.2
        print("decode method on the 720p clip (one keyframe):")
        ok &= _compare_methods(clip, [("16 uniform", [int(i) for i in np.linspace(0, 239, 16)]),
                                      ("2 late", [200, 230])])

        long_clip = os.path.join(tmp, "1080p.mp4")
        n_long = int(24 * a.seconds_long)
        t0 = time.perf_counter()
        write_video(long_clip, _frames(n_long, 1080, 1920), fps=24, crf=30, preset="ultrafast")
        print(f"wrote {a.seconds_long:.0f} s 1080p clip ({n_long} frames) in {time.perf_counter() - t0:.1f} s")
        print("decode method on the long 1080p clip (keyframe every 250 frames):")
        ok &= _compare_methods(long_clip, [("16 uniform", [int(i) for i in np.linspace(0, n_long - 1, 16)]),
                                           ("1 late", [n_long - 5])])
        out = subprocess.run([sys.executable, __file__, "--child", long_clip], capture_output=True, text=True,
                             check=True).stdout.split()
        before_kb, after_kb = int(out[1]), int(out[2])
        peak_mb, delta_mb = after_kb / 1024, (after_kb - before_kb) / 1024
        all_frames_mb = n_long * 1080 * 1920 * 3 / 2**20
        print(f"peak RSS sampling 16 of {n_long} 1080p frames: {peak_mb:.0f} MB total, {delta_mb:.0f} MB above "
              f"imports (target < 500 MB; holding every frame would need {all_frames_mb:.0f} MB)")
        ok &= peak_mb < 500
    print("bench_video:", "PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
