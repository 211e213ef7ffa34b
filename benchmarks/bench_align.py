"""The camera search of ``vreason.verify.align.align``: its ECC levels, measured side by side in one run.

Every family's first frame (each difficulty), moved by random honest cameras (rotation ≤ 2°, zoom ≤ 5%, shift
≤ 12 px, exposure ±15%), JPEG-compressed (quality 40..90), is aligned back twice: with the ECC candidates fitted
at the quarter, half *and full* working size (the search before the eighth session's change) and with
:data:`~vreason.verify.align.SEARCH_LEVELS` (quarter and half; the refinement polishes at full size anyway).
Printed: CPU time per call of each and their ratio, the corner error against the true camera (max, median,
95th percentile) of each, the cases whose ``ok`` differs, and the largest corner distance between the two
answers. Target: the error distribution unchanged (max within 0.1 px of the old search's), time ≤ 0.75×.

Exit 1 when the kept levels find a camera less often or their largest corner error grows by more than 0.1 px.

Usage: python benchmarks/bench_align.py [--cameras 4] [--seed 20261128]
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def _moved(fr: np.ndarray, r: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    import cv2

    h, w = fr.shape[:2]
    m = cv2.getRotationMatrix2D((w / 2, h / 2), float(r.uniform(-2, 2)), 1 + float(r.uniform(-0.05, 0.05)))
    m[:, 2] += r.uniform(-12, 12, 2)
    out = cv2.warpAffine(fr, m, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    out = np.clip(out.astype(np.float32) * (1 + float(r.uniform(-0.15, 0.15))), 0, 255).astype(np.uint8)
    ok, buf = cv2.imencode(".jpg", out[..., ::-1], [cv2.IMWRITE_JPEG_QUALITY, int(r.integers(40, 91))])
    return cv2.imdecode(buf, cv2.IMREAD_COLOR)[..., ::-1].copy(), cv2.invertAffineTransform(m)


def _corner_err(warp: np.ndarray, truth: np.ndarray, w: int, h: int) -> float:
    c = np.array([[0, 0], [w, 0], [0, h], [w, h]], np.float64)
    return float(np.abs(c @ warp[:, :2].T + warp[:, 2] - (c @ truth[:, :2].T + truth[:, 2])).max())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cameras", type=int, default=4, help="random cameras per family and difficulty")
    ap.add_argument("--seed", type=int, default=20261128)
    args = ap.parse_args()

    import cv2

    from vreason.synth.base import DIFFICULTIES, RenderConfig
    from vreason.synth.suite import default_families, make_instance
    from vreason.verify import align as al

    cv2.setNumThreads(1)
    al.MEMO = 0  # every call searches (the memo would answer the second run from the first)
    cfg = RenderConfig()
    r = np.random.default_rng(args.seed)
    cases = []
    for fam in default_families():
        for diff in DIFFICULTIES:
            fr = make_instance(fam, diff, 0, int(r.integers(1 << 30)), cfg).first_frame
            cases += [(fam, fr, *_moved(fr, r)) for _ in range(args.cameras)]
    kept = al.SEARCH_LEVELS
    runs: dict = {}
    for name, levels in (("full levels (4, 2, 1)", (4, 2, 1)), (f"SEARCH_LEVELS {kept}", kept)):
        al.SEARCH_LEVELS = levels
        t0 = time.process_time()
        got = [al.align(moved, fr) for _, fr, moved, _ in cases]
        runs[name] = (time.process_time() - t0, got)
    al.SEARCH_LEVELS = kept
    (n_old, (t_old, old)), (n_new, (t_new, new)) = runs.items()
    h, w = cases[0][1].shape[:2]
    worst_err = {}
    print(f"{len(cases)} alignments ({len(default_families())} families × {len(DIFFICULTIES)} difficulties × "
          f"{args.cameras} cameras, seed {args.seed}), one OpenCV thread")
    for name, t, res in ((n_old, t_old, old), (n_new, t_new, new)):
        errs = np.array([_corner_err(a.warp, c[3], w, h) for a, c in zip(res, cases, strict=True)])
        worst_err[name] = (float(errs.max()), sum(a.ok for a in res))
        print(f"  {name:24s} {1000 * t / len(cases):7.1f} ms CPU per call   corner error px: max {errs.max():.3f} "
              f"p95 {np.percentile(errs, 95):.3f} median {np.median(errs):.3f}   ok {sum(a.ok for a in res)}")
    between = [_corner_err(a.warp, b.warp, w, h) for a, b in zip(old, new, strict=True)]
    worst = int(np.argmax(between))
    print(f"  ratio (new / old CPU): {t_new / t_old:.2f}   target ≤ 0.75")
    print(f"  ok differs in {sum(a.ok != b.ok for a, b in zip(old, new, strict=True))} cases; largest corner "
          f"distance between the two answers {between[worst]:.3f} px ({cases[worst][0]}, methods "
          f"{old[worst].method} / {new[worst].method})")
    (e_old, ok_old), (e_new, ok_new) = worst_err[n_old], worst_err[n_new]
    return 0 if e_new <= e_old + 0.1 and ok_new >= ok_old else 1


if __name__ == "__main__":
    raise SystemExit(main())
