"""PAI-Bench-C blur SSIM / Canny over a thread pool: bit-identical to the serial path, in frame order, bounded;
DOVER on the original files (the newer released code) or on the aligned arrays (the September-2025 code)."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from _pai_c_fixtures import H, T, W, scene, write_dataset, write_results
from vreason.core.records import Video
from vreason.core.scoring import ScoreContext
from vreason.frames.write import write_video
from vreason.protocols.pai.c import fidelity as F
from vreason.protocols.pai.c import metrics as M
from vreason.protocols.pai.c import scorers as S
from vreason.protocols.pai.c.data import load_pai_c
from vreason.protocols.pai.c.protocol import PaiCOptions


def _pairs(n=6, h=40, w=56):
    rng = np.random.default_rng(3)
    out = []
    for t in range(n):
        g = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
        g[5:25, 10 + t:30 + t] = (200, 30, 30)
        p = np.clip(g.astype(int) + rng.integers(-20, 21, g.shape), 0, 255).astype(np.uint8)
        out.append((g, np.roll(p, t, axis=1)))
    return out


@pytest.mark.parametrize("gray", [False, True])
def test_pool_equals_the_per_frame_accumulators_exactly(gray):
    pairs = _pairs()
    blur, edges = M.BlurAcc(), M.CannyCounts()
    for g, p in pairs:  # the reference accumulators, one frame at a time
        blur.add(g, p)
        edges.add_edges(M.canny(g, "medium", gray=gray), M.canny(p, "medium", gray=gray))
    for threads in (1, 2, 3):
        b, e = F.fidelity(iter(pairs), "medium", gray, threads)
        assert b.ssim == blur.ssim and b.mse == blur.mse  # exact, frame by frame, in order
        assert (e.tp, e.fp, e.fn, e.pred_on, e.gt_on, e.pixels) == (edges.tp, edges.fp, edges.fn, edges.pred_on,
                                                                    edges.gt_on, edges.pixels)
        assert b.result() == blur.result() and e.result() == edges.result()


def test_ordered_map_keeps_order_and_bounds_the_items_in_flight():
    pulled, taken, seen_ahead = [0], [0], []
    lock = threading.Lock()

    def items():
        for i in range(20):
            with lock:
                pulled[0] += 1
                seen_ahead.append(pulled[0] - taken[0])
            yield (i,)

    def slow(i):
        time.sleep(0.002 * ((7 * i) % 5))  # later items often finish first
        return i * i

    out = []
    for v in F.ordered_map(slow, items(), threads=3):
        taken[0] += 1
        out.append(v)
    assert out == [i * i for i in range(20)]
    assert max(seen_ahead) <= 2 * 3 + 1  # the decoder runs at most a window ahead of the consumer


def test_ordered_map_raises_the_first_failing_item():
    def fn(i):
        if i == 4:
            raise ValueError("frame 4 is bad")
        return i

    got = []
    with pytest.raises(ValueError, match="frame 4"):
        for v in F.ordered_map(fn, ((i,) for i in range(10)), threads=2):
            got.append(v)
    assert got == [0, 1, 2, 3]


def _auto_in_child(q):
    q.put(F.resolve_threads(0))


def test_threads_default_to_the_cores_in_the_main_process_and_one_in_a_worker():
    import multiprocessing as mp

    assert F.resolve_threads(0) == F.resolve_threads(None) == F.available_cores() >= 1
    assert F.resolve_threads(3) == 3
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=_auto_in_child, args=(q,))
    p.start()
    got = q.get(timeout=60)
    p.join(timeout=30)
    assert got == 1
    with pytest.raises(ValueError):
        PaiCOptions(frame_threads=-1)


def _opencv_threads_in_worker(q):
    import cv2

    cv2.setNumThreads(2)
    seen = []

    def pairs():
        for g, p in _pairs(2):
            seen.append(cv2.getNumThreads())
            yield g, p

    F.fidelity(pairs(), "medium", False, 0)  # automatic = 1 frame thread in a worker process
    q.put((seen, cv2.getNumThreads()))


def test_a_pool_worker_scores_serially_with_one_opencv_thread():
    import multiprocessing as mp

    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=_opencv_threads_in_worker, args=(q,))
    p.start()
    seen, after = q.get(timeout=120)
    p.join(timeout=30)
    assert set(seen) == {1} and after == 2


def test_opencv_runs_one_thread_inside_the_frame_pool_and_is_restored_after():
    import cv2

    before = cv2.getNumThreads()
    cv2.setNumThreads(2)
    seen: list[int] = []

    def pairs():
        for g, p in _pairs(4):
            seen.append(cv2.getNumThreads())  # read while the pool is running
            yield g, p

    try:
        serial = F.fidelity(iter(_pairs(4)), "medium", False, 1)
        assert cv2.getNumThreads() == 2  # the serial path leaves OpenCV alone (as the released flow runs it)
        pooled = F.fidelity(pairs(), "medium", False, 2)
        assert seen and set(seen) == {1}
        assert cv2.getNumThreads() == 2  # restored
        assert pooled[0].ssim == serial[0].ssim and pooled[1].result() == serial[1].result()
        with F.OPENCV_SERIAL:  # overlapping blocks: the last one out restores
            with F.OPENCV_SERIAL:
                assert cv2.getNumThreads() == 1
            assert cv2.getNumThreads() == 1
        assert cv2.getNumThreads() == 2
        with pytest.raises(ValueError):  # restored when the pool raises too
            F.fidelity(iter([(np.zeros((8, 8, 3), np.uint8), np.zeros((9, 8, 3), np.uint8))]), "medium", False, 2)
        assert cv2.getNumThreads() == 2
    finally:
        cv2.setNumThreads(before)


def _score(scorer, sample, path, seed=0):
    return {s.metric: s for s in scorer.score(sample, Video(sample_id=sample.id, model="m", seed=seed, path=path),
                                              ScoreContext())}


def test_scorer_parallel_equals_serial_exactly_on_a_real_pair(tmp_path):
    root = write_dataset(tmp_path / "d", ids={"task_0001": "agibot"})
    sample = load_pai_c(root).samples[0]
    pred = write_results(tmp_path / "r", root, "copy", k=2, ids=["task_0001"]) + "/task_0001__1.mp4"
    runs = {n: _score(S.PaiCFidelityScorer(frame_threads=n, gt_cache_mb=0), sample, pred) for n in (1, 2, 4)}
    for n in (2, 4):
        for metric, sc in runs[1].items():
            other = runs[n][metric]
            assert (other.status, other.value, other.normalized) == (sc.status, sc.value, sc.normalized), (n, metric)
            assert other.evidence.details == sc.evidence.details
    assert runs[1]["blur_ssim"].evidence.details["fidelity_device"] == "cpu"
    assert 0 < runs[1]["blur_ssim"].value < 1


# ------------------------------------------------------------------ DOVER input
@pytest.fixture(scope="module")
def shape_quality(tmp_path_factory):
    """A TorchScript 'quality model' that reports what it was given: T + H / 1000 + W / 1e6."""
    import torch

    class Shape(torch.nn.Module):
        def forward(self, x):
            return torch.tensor(float(x.shape[0]) + x.shape[1] / 1000.0 + x.shape[2] / 1e6)

    path = tmp_path_factory.mktemp("paic_q") / "shape.pt"
    torch.jit.script(Shape()).save(str(path))
    return f"torchscript:{path}"


def test_dover_scores_the_original_files_by_default_and_the_aligned_arrays_as_an_option(tmp_path, shape_quality):
    root = write_dataset(tmp_path / "d", ids={"task_0001": "agibot"})
    sample = load_pai_c(root).samples[0]
    big = [np.repeat(np.repeat(f, 2, 0), 2, 1) for f in scene(T + 4)]  # longer and twice the size of the GT
    pred = str(tmp_path / "task_0001__0.mp4")
    write_video(pred, big, fps=10)

    orig = _score(S.PaiCDoverScorer(quality=shape_quality), sample, pred)["dover_tech_score"]
    assert orig.status.value == "ok"
    assert orig.value == pytest.approx((T + 4) + 2 * H / 1000 + 2 * W / 1e6)  # the file as it is
    d = orig.evidence.details
    assert d["dover_input"] == "original" and d["pred_frames"] == T + 4 and d["pred_size"] == [2 * H, 2 * W]
    assert d["dover_tech_score_gt"] == pytest.approx(T + H / 1000 + W / 1e6)

    aligned = _score(S.PaiCDoverScorer(quality=shape_quality, dover_input="aligned"), sample, pred)
    a = aligned["dover_tech_score"]
    assert a.value == pytest.approx(T + H / 1000 + W / 1e6)  # trimmed to the GT's frames, resized to its size
    assert a.evidence.details["dover_input"] == "aligned" and a.evidence.details["frames_compared"] == T


def test_dover_input_is_a_named_option_that_shows_when_it_departs():
    from vreason.protocols.pai.c.protocol import RELEASED

    assert PaiCOptions().dover_input == "original" and "dover_input" in RELEASED
    with pytest.raises(ValueError):
        PaiCOptions(dover_input="resized")


# ------------------------------------------------------------------ ground-truth reuse across caption variants
def test_ground_truth_reuse_gives_the_same_numbers_and_hits_for_the_next_variant(tmp_path):
    root = write_dataset(tmp_path / "d", ids={"task_0001": "agibot"})
    sample = load_pai_c(root).samples[0]
    res = write_results(tmp_path / "r", root, "copy", k=3, ids=["task_0001"])
    paths = [f"{res}/task_0001__{k}.mp4" for k in range(3)]
    F.GT_CACHE.clear()
    off = [_score(S.PaiCFidelityScorer(gt_cache_mb=0), sample, p, seed=k) for k, p in enumerate(paths)]
    assert not F.GT_CACHE.entries
    hits0 = F.GT_CACHE.hits
    on = [_score(S.PaiCFidelityScorer(frame_threads=2), sample, p, seed=k) for k, p in enumerate(paths)]
    assert F.GT_CACHE.hits - hits0 == 2 * T  # variants 1 and 2 reuse every ground-truth frame of variant 0
    for a, b in zip(off, on, strict=True):
        for metric, sc in a.items():
            assert (b[metric].status, b[metric].value, b[metric].normalized) == (sc.status, sc.value, sc.normalized)
            assert b[metric].evidence.details == sc.evidence.details
    F.GT_CACHE.clear()


def test_gt_cache_is_bounded_and_keyed_by_the_file(tmp_path):
    gb = np.zeros((10, 10, 3), np.uint8)
    ge = np.eye(10, dtype=bool)
    c = F.GtCache(limit_mb=(gb.nbytes + 13) * 3 / 2 ** 20)  # room for 3 frames (packed edges: 13 bytes)
    for t in range(5):
        c.put(("a",), t, gb, ge)
    assert len(c.entries[("a",)]) == 3  # one ground truth larger than the limit stops growing
    got = c.get(("a",), 0)
    assert got is not None and np.array_equal(got[1], ge) and got[1].dtype == bool and c.get(("a",), 4) is None
    c.put(("b",), 0, gb, ge)  # a new ground truth evicts the least recently used one
    assert ("b",) in c.entries and sum(c.nbytes.values()) <= c.limit
    f = tmp_path / "v.mp4"
    f.write_bytes(b"x")
    k1 = F.GtCache.key(str(f), "medium", False)
    f.write_bytes(b"xy")
    assert F.GtCache.key(str(f), "medium", False) != k1 != F.GtCache.key(str(f), "medium", True)
    assert F.GtCache(limit_mb=0).put(("a",), 0, gb, ge) is None and not F.GtCache(limit_mb=0).entries
