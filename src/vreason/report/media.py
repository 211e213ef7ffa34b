"""Thumbnails and frame strips for the HTML report, cached under ``<run>/report/media/``.

One job per video: decode a few frames once (PyAV, reduced to ``max_side`` while converting) and
write a thumbnail of the last frame plus, per scorer, a strip of the frames that scorer saw (at most
``STRIP_FRAMES`` of its ``evidence.frame_indices``, evenly chosen); for a video a browser cannot play
inline (not MP4), also a short animated GIF of ``ANIM_FRAMES`` evenly spaced frames. A file is rebuilt only when the
video is newer than it. Jobs run in a process pool; a video that cannot be decoded gives no media
and its error is returned (the page then shows the reason), never a crash.
"""

from __future__ import annotations

import hashlib
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

import numpy as np

THUMB_SIDE = 160
STRIP_SIDE = 120
STRIP_FRAMES = 12
JPEG_QUALITY = 80
ANIM_SIDE = 240
ANIM_FRAMES = 16
ANIM_SECONDS = 4.0


@dataclass
class MediaJob:
    """Media of one video: ``strips`` maps a scorer to the frame indices it saw."""

    video: str
    thumb: str
    strips: dict[str, tuple[str, list[int]]] = field(default_factory=dict)
    animation: str | None = None
    """Where to write a short animated GIF (for videos a browser cannot play inline), or None."""


@dataclass
class MediaResult:
    video: str
    built: int = 0
    cached: int = 0
    error: str | None = None


def shown_indices(indices: list[int], n: int = STRIP_FRAMES) -> list[int]:
    """At most ``n`` of ``indices``, evenly spread, first and last kept, order kept."""
    if len(indices) <= n:
        return list(indices)
    pos = np.linspace(0, len(indices) - 1, n).round().astype(int)
    return [indices[i] for i in dict.fromkeys(pos.tolist())]


def strip_name(scorer: str, indices: list[int]) -> str:
    """A cache name that changes when the indices change."""
    digest = hashlib.sha1(",".join(map(str, indices)).encode()).hexdigest()[:8]
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in scorer)
    return f"{safe}.{digest}.strip.jpg"


def _fresh(out: str, src_mtime: float) -> bool:
    return os.path.exists(out) and os.path.getmtime(out) >= src_mtime


def _save(img: np.ndarray, path: str) -> None:
    from PIL import Image

    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    Image.fromarray(img).save(tmp, format="JPEG", quality=JPEG_QUALITY)
    os.replace(tmp, path)


def _fit_height(img: np.ndarray, h: int) -> np.ndarray:
    import cv2

    if img.shape[0] == h:
        return img
    w = max(1, round(img.shape[1] * h / img.shape[0]))
    return cv2.resize(img, (w, h), interpolation=cv2.INTER_AREA)


def _strip(frames: list[np.ndarray]) -> np.ndarray:
    h = min(f.shape[0] for f in frames)
    gap = np.full((h, 2, 3), 255, np.uint8)
    parts: list[np.ndarray] = []
    for f in frames:
        parts += [_fit_height(f, h), gap]
    return np.concatenate(parts[:-1], axis=1)


def _save_gif(frames: list[np.ndarray], path: str) -> None:
    from PIL import Image

    os.makedirs(os.path.dirname(path), exist_ok=True)
    imgs = [Image.fromarray(f) for f in frames]
    tmp = path + ".tmp"
    ms = max(40, round(1000 * ANIM_SECONDS / len(imgs)))
    imgs[0].save(tmp, format="GIF", save_all=True, append_images=imgs[1:], duration=ms, loop=0)
    os.replace(tmp, path)


def _cached(job: MediaJob) -> MediaResult | None:
    """The job's result when every file it writes is fresh (nothing to decode), else None."""
    try:
        mtime = os.path.getmtime(job.video)
    except OSError:
        return None  # build_one names the reason
    outs = [job.thumb, *(v[0] for v in job.strips.values()), *([str(job.animation)] if job.animation else [])]
    if all(_fresh(o, mtime) for o in outs):
        return MediaResult(video=job.video, cached=len(outs))
    return None


def build_one(job: MediaJob) -> MediaResult:
    """Write the thumbnail and strips of one video (skipping fresh files)."""
    from vreason.frames.video import probe, read_frames, resize_max_side

    res = MediaResult(video=job.video)
    try:
        mtime = os.path.getmtime(job.video)
        todo_thumb = not _fresh(job.thumb, mtime)
        todo = {s: v for s, v in job.strips.items() if not _fresh(v[0], mtime)}
        todo_anim = bool(job.animation) and not _fresh(str(job.animation), mtime)
        res.cached = int(not todo_thumb) + len(job.strips) - len(todo) + int(bool(job.animation) and not todo_anim)
        if not todo_thumb and not todo and not todo_anim:
            return res
        info = probe(job.video, exact=True)  # the frames that decode (a declared count is a hint)
        last = max(0, info.n_frames - 1)
        wanted = {last} if todo_thumb else set()
        for _, idx in todo.values():
            wanted |= {i for i in idx if i <= last}
        anim = shown_indices(list(range(last + 1)), ANIM_FRAMES) if todo_anim else []
        wanted |= set(anim)
        order = sorted(wanted)
        side = ANIM_SIDE if anim else THUMB_SIDE
        frames = dict(zip(order, read_frames(job.video, order, max_side=side, info=info), strict=True))
        if todo_thumb:
            _save(resize_max_side(frames[last], THUMB_SIDE), job.thumb)
            res.built += 1
        if anim:
            _save_gif([frames[i] for i in anim], str(job.animation))
            res.built += 1
        for out, idx in todo.values():
            shown = [resize_max_side(frames[i], STRIP_SIDE) for i in idx if i in frames]
            if shown:
                _save(_strip(shown), out)
                res.built += 1
    except Exception as exc:  # noqa: BLE001 - a bad video gives no media, the page names the reason
        res.error = f"{type(exc).__name__}: {exc}"
    return res


def build_media(jobs: list[MediaJob], workers: int | None = None) -> list[MediaResult]:
    """Run the jobs in a process pool (``workers`` defaults to the CPU count; 1 runs inline). Jobs whose files
    are all fresh are answered here, without a pool: a report rebuilt over an unchanged run (a resume with
    nothing to do, ``vreason report`` again) starts no worker."""
    results: list[MediaResult | None] = [_cached(j) for j in jobs]
    todo = [j for j, r in zip(jobs, results, strict=True) if r is None]
    built = iter(_build_all(todo, workers))
    return [r if r is not None else next(built) for r in results]


def _build_all(jobs: list[MediaJob], workers: int | None) -> list[MediaResult]:
    workers = workers or os.cpu_count() or 1
    if workers <= 1 or len(jobs) < 8:
        return [build_one(j) for j in jobs]
    import multiprocessing as mp

    from vreason.core import deathguard

    # the project's guarded start: a forkserver child inherits no open run.lock, and every
    # worker dies with this process (kill -9 included), so a resume is never refused
    ctx = mp.get_context("forkserver") if "forkserver" in mp.get_all_start_methods() else None
    deathguard.install()
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=deathguard.die_with_parent) as pool:
        return list(pool.map(build_one, jobs, chunksize=max(1, len(jobs) // (workers * 8))))
