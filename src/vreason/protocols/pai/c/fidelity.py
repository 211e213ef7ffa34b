"""PAI-Bench-C blur SSIM + Canny, one frame pair at a time, the frames of a pair spread over a thread pool.

The per-frame work is the released computation (``conditional_generation`` metrics_canny_blur_depth.py, notes
§5.3; formulas in :mod:`vreason.protocols.pai.c.metrics`): the bilateral filter (d=30) of both frames, the
full-map SSIM and MSE of the blurred pair, and the Canny edge counts of both frames. Nothing in one frame's
result depends on another frame, so frames are computed on a thread pool (OpenCV's filters and scikit-image's
array arithmetic release the GIL) while the caller keeps decoding; results come back **in frame order** and
are accumulated in that order, so the numbers are the serial path's, bit for bit (tested). In-flight work is
bounded to ``2 × threads`` frame pairs, so memory stays bounded by a small batch, not the video. While the
pool runs — and in a scoring pool's worker process — OpenCV's own thread pool is set to one thread (restored
afterwards): each frame's filter then runs on its own core instead of two pools contending for the same cores
(measured: ≈ 10 % less CPU for the same bilateral filters, and shorter wall time, on 2 cores). The numbers do
not depend on OpenCV's thread count (tested against the default-threads path, exact).

With ``device=cuda`` (and a GPU visible to torch) the bilateral filter and SSIM run in torch on the GPU
(:mod:`vreason.protocols.pai.c.gpu`, within 1e-4 of this path, checked on CPU tensors); otherwise, and by
default, on the CPU with the released kernels. The scorer's evidence says which (``fidelity_device``).
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from vreason.protocols.pai.c import metrics as M

T = TypeVar("T")


@dataclass(frozen=True)
class FrameFidelity:
    """One frame pair's blur SSIM / MSE and Canny counts."""

    ssim: float
    mse: float
    tp: int
    fp: int
    fn: int
    pred_on: int
    gt_on: int
    pixels: int


def frame_fidelity(gt: np.ndarray, pred: np.ndarray, preset: str = "medium", gray: bool = False,
                   gt_side: tuple[np.ndarray, np.ndarray] | None = None) -> FrameFidelity:
    """Blur SSIM, blur MSE and Canny counts of one (gt, pred-fitted-to-gt) frame pair; ``gt_side`` = the ground
    truth frame's (bilateral, Canny edges) when already computed (they depend on the ground truth alone)."""
    gb, ge = gt_side if gt_side is not None else (M.bilateral(gt), M.canny(gt, preset, gray=gray))
    pb = M.bilateral(pred)
    ssim = M.ssim_full_mean(gb, pb)
    mse = float(np.mean((gb.astype(np.float64) - pb.astype(np.float64)) ** 2))
    pe = M.canny(pred, preset, gray=gray)
    return FrameFidelity(ssim=ssim, mse=mse, tp=int(np.count_nonzero(ge & pe)), fp=int(np.count_nonzero(pe & ~ge)),
                         fn=int(np.count_nonzero(ge & ~pe)), pred_on=int(np.count_nonzero(pe)),
                         gt_on=int(np.count_nonzero(ge)), pixels=int(ge.size))


def add_frame(blur: M.BlurAcc, edges: M.CannyCounts, f: FrameFidelity) -> None:
    """Accumulate one frame's result (in frame order: the means are then the serial path's)."""
    blur.ssim.append(f.ssim)
    blur.mse.append(f.mse)
    edges.tp += f.tp
    edges.fp += f.fp
    edges.fn += f.fn
    edges.pred_on += f.pred_on
    edges.gt_on += f.gt_on
    edges.pixels += f.pixels


def available_cores() -> int:
    """Cores this process may run on (its CPU affinity), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _in_worker() -> bool:
    import multiprocessing

    return multiprocessing.parent_process() is not None


def resolve_threads(threads: int | None) -> int:
    """``threads`` ≥ 1 as given; 0 or None = automatic: the available cores in a main process (``--workers 1``,
    a library call, the benchmark), 1 in a child process such as a scoring pool's worker (one worker per core
    already fills the machine, as for codec threads)."""
    if threads and int(threads) > 0:
        return int(threads)
    return 1 if _in_worker() else available_cores()


class _OpenCvSerial:
    """A block during which OpenCV uses one thread (``cv2.setNumThreads(1)``), the count it had restored when
    the last concurrent block ends (blocks may overlap across threads; the first saves, the last restores)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.depth = 0
        self.saved: int | None = None

    def __enter__(self) -> None:
        import cv2

        with self.lock:
            if self.depth == 0:
                self.saved = cv2.getNumThreads()
                cv2.setNumThreads(1)
            self.depth += 1

    def __exit__(self, *exc: object) -> None:
        import cv2

        with self.lock:
            self.depth -= 1
            if self.depth == 0 and self.saved is not None:
                cv2.setNumThreads(self.saved)
                self.saved = None


OPENCV_SERIAL = _OpenCvSerial()
"""Entered by :func:`fidelity` while its frame pool runs (threads > 1)."""


def ordered_map(fn: Callable[..., T], items: Iterable[tuple], threads: int) -> Iterator[T]:
    """``fn(*item)`` for every item, in the items' order; with ``threads`` > 1 computed on a thread pool with at
    most ``2 × threads`` items in flight (the iterable — e.g. a decoder — is advanced only as results are
    taken). ``threads`` ≤ 1 computes inline, one item at a time."""
    if threads <= 1:
        for item in items:
            yield fn(*item)
        return
    window: deque[Future[T]] = deque()
    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="pai-c-frames") as pool:
        try:
            for item in items:
                window.append(pool.submit(fn, *item))
                if len(window) >= 2 * threads:
                    yield window.popleft().result()
            while window:
                yield window.popleft().result()
        finally:
            for fut in window:
                fut.cancel()


class GtCache:
    """The ground truth's per-frame (bilateral, Canny edges), kept for the next caption variant of the same sample.

    The six variants of a PAI-C sample share one ground truth, whose blurred frames and edges — half of the
    per-pair work — the released code recomputes for every variant. Entries are keyed by the file's identity
    (real path, size, mtime) and the Canny setting, hold exactly the arrays the computation produced (edges
    bit-packed), and are evicted least-recently-used beyond ``limit_mb``; 0 disables the cache."""

    def __init__(self, limit_mb: float = 512.0):
        from collections import OrderedDict

        self.limit = int(limit_mb * 2 ** 20)
        self.entries: OrderedDict[tuple, dict[int, tuple[np.ndarray, np.ndarray, tuple[int, int]]]] = OrderedDict()
        self.nbytes: dict[tuple, int] = {}
        self.lock = threading.Lock()
        self.hits = self.misses = 0

    @staticmethod
    def key(path: str, preset: str, gray: bool) -> tuple:
        st = os.stat(path)
        return (os.path.realpath(path), st.st_size, st.st_mtime_ns, preset, gray)

    def get(self, key: tuple, t: int) -> tuple[np.ndarray, np.ndarray] | None:
        with self.lock:
            entry = self.entries.get(key)
            got = entry.get(t) if entry is not None else None
            if got is None:
                self.misses += 1
                return None
            self.entries.move_to_end(key)
            self.hits += 1
        gb, packed, shape = got
        return gb, np.unpackbits(packed, count=shape[0] * shape[1]).reshape(shape).astype(bool)

    def put(self, key: tuple, t: int, gb: np.ndarray, ge: np.ndarray) -> None:
        packed = np.packbits(ge.ravel())
        size = gb.nbytes + packed.nbytes
        with self.lock:
            if self.limit <= 0 or size > self.limit:
                return
            entry = self.entries.setdefault(key, {})
            if t in entry:
                return
            entry[t] = (gb, packed, ge.shape)
            self.nbytes[key] = self.nbytes.get(key, 0) + size
            self.entries.move_to_end(key)
            while sum(self.nbytes.values()) > self.limit and len(self.entries) > 1:
                old, _ = self.entries.popitem(last=False)
                self.nbytes.pop(old, None)
            if sum(self.nbytes.values()) > self.limit:  # a single ground truth larger than the limit: stop growing
                entry.pop(t, None)
                self.nbytes[key] -= size

    def clear(self) -> None:
        with self.lock:
            self.entries.clear()
            self.nbytes.clear()


GT_CACHE = GtCache()
"""This process's cache (a scoring worker keeps the ground truths of the samples it just scored)."""


def fidelity(pairs: Iterable[tuple[np.ndarray, np.ndarray]], preset: str = "medium", gray: bool = False,
             threads: int | None = 0, *, gt_key: tuple | None = None, cache: GtCache | None = None,
             device: str = "cpu") -> tuple[M.BlurAcc, M.CannyCounts]:
    """Blur and Canny accumulators over every frame pair (``threads``: 1 = serial, 0 = automatic). With
    ``gt_key`` and ``cache``, the ground truth's per-frame bilateral and edges are taken from / put into the
    cache (the numbers are the same either way). ``device`` other than ``cpu`` (a torch device, e.g. ``cuda``)
    runs the bilateral filter and SSIM in torch (:mod:`vreason.protocols.pai.c.gpu`; within 1e-4 of the CPU
    path, not bit-identical), one frame at a time; ``torch-cpu`` runs that torch path on the CPU (slow: for
    checking it against the OpenCV path where no GPU exists)."""
    blur, edges = M.BlurAcc(), M.CannyCounts()
    use_cache = cache is not None and gt_key is not None

    def one(t: int, g: np.ndarray, p: np.ndarray) -> FrameFidelity:
        side = cache.get(gt_key, t) if use_cache else None
        if side is None and use_cache:
            side = (M.bilateral(g), M.canny(g, preset, gray=gray))
            cache.put(gt_key, t, *side)
        return frame_fidelity(g, p, preset, gray, side)

    def one_torch(t: int, g: np.ndarray, p: np.ndarray) -> FrameFidelity:
        from vreason.protocols.pai.c import gpu as pai_c_torch

        side = cache.get(gt_key, t) if use_cache else None
        f, gb, ge = pai_c_torch.frame_fidelity(g, p, preset, gray, side,
                                               device="cpu" if device == "torch-cpu" else device)
        if side is None and use_cache:
            cache.put(gt_key, t, gb, ge)
        return f

    items = ((t, g, p) for t, (g, p) in enumerate(pairs))
    if device != "cpu":
        for f in ordered_map(one_torch, items, 1):
            add_frame(blur, edges, f)
        return blur, edges
    n = resolve_threads(threads)
    if n <= 1 and not _in_worker():  # serial in the main process: OpenCV's threads as the released flow has them
        for f in ordered_map(one, items, n):
            add_frame(blur, edges, f)
        return blur, edges
    with OPENCV_SERIAL:  # the frame pool, or a pool worker (the pool fills the cores): one OpenCV thread each
        for f in ordered_map(one, items, n):
            add_frame(blur, edges, f)
    return blur, edges


def fidelity_device(device: str | None) -> str:
    """Where blur SSIM runs for the protocol's ``device`` option: ``cuda…`` when asked for and available (``auto``:
    when available), else ``cpu`` (the released kernels, bit-identical)."""
    dev = (device or "cpu").lower()
    if dev == "cpu":
        return "cpu"
    try:
        import torch
    except ImportError:
        return "cpu"
    if dev == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return dev if dev.startswith("cuda") and torch.cuda.is_available() else "cpu"


__all__ = ["GT_CACHE", "OPENCV_SERIAL", "FrameFidelity", "GtCache", "add_frame", "available_cores", "fidelity",
           "fidelity_device", "frame_fidelity", "ordered_map", "resolve_threads"]
