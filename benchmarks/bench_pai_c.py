"""PAI-Bench-C metrics on a 121-frame 1280×704 pair: time as a ratio of a bare decode of both videos, and
peak memory, side by side.

A ground-truth video and a prediction (the same scene shifted and re-textured) are written once. Each case
runs in a fresh process reporting its wall time and peak resident set (``VmHWM``):

* ``decode``  — decode both videos frame by frame (the floor: what any metric must pay);
* ``metrics`` — the released C metrics as vreason runs them: ``pai_c_fidelity`` (bilateral d=30 blur +
  full-map SSIM + blur MSE, Canny medium, pooled F1) and ``pai_c_depth`` (si-RMSE, with a stub depth model —
  the per-frame mean of the RGB channels — so no weights are needed, against a streamed ``depth_npzs``
  file), each streaming both videos.

Target: metrics ≤ 3× the decode, memory bounded by a frame batch (not the video). The bilateral filter with
the released constants (d=30) and the full-size SSIM dominate; the printout shows the per-frame costs.

Usage: python benchmarks/bench_pai_c.py [--frames 121] [--width 1280] [--height 704]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

TARGET_RATIO = 3.0


def _peak_mb() -> float:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _write(folder: str, frames: int, w: int, h: int) -> None:
    import numpy as np

    from vreason.frames.write import write_video

    yy, xx = np.mgrid[0:h, 0:w]

    def scene(shift: int, seed: int):
        rng = np.random.default_rng(seed)
        base = np.stack([(xx * 3 + yy) % 256, (yy * 2) % 256, (xx + yy * 5) % 256], -1).astype(np.uint8)
        for t in range(frames):
            f = np.roll(base, 4 * t + shift, axis=1).copy()
            x = 100 + 6 * t + shift
            f[200:400, x:x + 240] = (220, 40, 40)
            yield np.clip(f.astype(np.int16) + rng.integers(-6, 7, f.shape), 0, 255).astype(np.uint8)

    os.makedirs(os.path.join(folder, "videos"), exist_ok=True)
    os.makedirs(os.path.join(folder, "depth_npzs"), exist_ok=True)
    write_video(os.path.join(folder, "videos", "task_0001.mp4"), scene(0, 0), fps=24)
    write_video(os.path.join(folder, "pred.mp4"), scene(12, 1), fps=24)
    depth = np.broadcast_to(np.linspace(1, 20, w)[None, None], (frames, h, w)).astype(np.float64)
    np.savez_compressed(os.path.join(folder, "depth_npzs", "task_0001.npz"), data=depth)


def _case(name: str, folder: str, frames: int) -> dict:
    import numpy as np

    from vreason.measure.base import DepthEstimator
    from vreason.protocols import pai_c_metrics as M

    gt, pred = os.path.join(folder, "videos", "task_0001.mp4"), os.path.join(folder, "pred.mp4")
    t0 = time.perf_counter()
    out: dict = {}
    if name == "decode":
        n = sum(1 for _ in M.iter_rgb(gt, frames)) + sum(1 for _ in M.iter_rgb(pred, frames))
        out["frames"] = n
    else:
        import vreason.measure.spec as spec
        from vreason.protocols.pai_c_scorers import PaiCDepthScorer, PaiCFidelityScorer
        from vreason.records import Sample, Video
        from vreason.scoring import ScoreContext

        class StubDepth(DepthEstimator):
            name = "stub:mean-rgb"

            def depth(self, fs):
                return [f.mean(axis=2, dtype=np.float32) + 1.0 for f in fs]

        spec.make_depth = lambda *a, **k: StubDepth()
        sample = Sample(id="task_0001", benchmark="pai-c", prompt="x", reference_video="videos/task_0001.mp4",
                        root=folder, metadata={"depth_npz": "depth_npzs/task_0001.npz"})
        video = Video(sample_id="task_0001", model="m", path=pred)
        opts = {"max_frames": frames, "depth": "stub", "batch_size": 8}
        for scorer in (PaiCFidelityScorer(**opts), PaiCDepthScorer(**opts)):
            for s in scorer.score(sample, video, ScoreContext()):
                out[s.metric] = s.value if s.value is not None else s.reason
    out.update(seconds=time.perf_counter() - t0, peak_mb=_peak_mb())
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--frames", type=int, default=121)
    ap.add_argument("--width", type=int, default=1280)
    ap.add_argument("--height", type=int, default=704)
    ap.add_argument("--case", help=argparse.SUPPRESS)
    ap.add_argument("--folder", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.case:
        print(json.dumps(_case(a.case, a.folder, a.frames)))
        return 0
    with tempfile.TemporaryDirectory() as folder:
        subprocess.check_call([sys.executable, "-c", f"import sys; sys.path.insert(0, {os.path.dirname(__file__)!r}); "
                               f"from bench_pai_c import _write; _write({folder!r}, {a.frames}, {a.width}, "
                               f"{a.height})"])
        got = {}
        for case in ("decode", "metrics"):
            res = subprocess.run([sys.executable, __file__, "--case", case, "--folder", folder, "--frames",
                                  str(a.frames)], capture_output=True, text=True, check=True)
            got[case] = json.loads(res.stdout.strip().splitlines()[-1])
    frame_mb = a.width * a.height * 3 / 2 ** 20
    ratio = got["metrics"]["seconds"] / got["decode"]["seconds"]
    print(f"{a.frames} frames {a.width}×{a.height} (one RGB frame = {frame_mb:.1f} MB, the video "
          f"{frame_mb * a.frames:.0f} MB)")
    print(f"{'case':<10}{'seconds':>10}{'per frame':>12}{'peak MB':>10}")
    for case, r in got.items():
        print(f"{case:<10}{r['seconds']:>10.2f}{r['seconds'] / a.frames:>12.3f}{r['peak_mb']:>10.0f}")
    print(f"metrics / decode = {ratio:.1f}× (target ≤ {TARGET_RATIO:.0f}×): "
          f"{'met' if ratio <= TARGET_RATIO else 'NOT met'}")
    batch_mb = frame_mb * 16 + 8 * a.width * a.height * 12 / 2 ** 20
    print(f"metric peak − decode peak = {got['metrics']['peak_mb'] - got['decode']['peak_mb']:.0f} MB "
          f"(a batch: 8 frame pairs + their depths ≈ {batch_mb:.0f} MB; scikit-image / torch imports included)")
    print("values:", {k: (round(v, 4) if isinstance(v, float) else v) for k, v in got["metrics"].items()
                      if k not in ("seconds", "peak_mb")})
    return 0


if __name__ == "__main__":
    sys.exit(main())
