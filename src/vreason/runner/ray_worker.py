"""What runs on a Ray worker for ``--executor ray``: one unit (a generation or a scoring job), in a
task or inside an actor that holds a heavy component (a GPU model) across units.

Every call is ``fn(component, *rest)``: ``component`` is the job's generator or scorer (its first
argument), so an actor can keep it — and whatever model it loaded — between units.

With ``--ray-ship-videos`` (no shared filesystem between the driver and the workers) the unit runs in
a temporary folder on the worker: a generated video comes back as bytes; a video to score goes to the
worker as bytes, and the debug images the scorer writes come back as bytes, with every path in the
returned records pointing at the run folder on the driver, as if the worker had written there.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from typing import Any

from vreason.core.records import Score, Video
from vreason.runner.work import _generate_in_worker, _score_in_worker


def run_unit(fn: Any, component: Any, *rest: Any) -> Any:
    """A Ray task: one unit. One unit per requested CPU, so codecs get one thread (as in the local pool)."""
    os.environ.setdefault("VREASON_CODEC_THREADS", "1")
    return fn(component, *rest)


class ComponentActor:
    """Holds one generator or scorer (loaded once) and runs its units one after another."""

    def __init__(self, component: Any):
        os.environ.setdefault("VREASON_CODEC_THREADS", "1")
        self.component = component

    def call(self, fn: Any, *rest: Any) -> Any:
        return fn(self.component, *rest)

    def pid(self) -> int:
        return os.getpid()


@dataclass
class Shipped:
    """A unit's result plus the files it wrote, relative to the run folder (bytes)."""

    result: Any
    files: dict[str, bytes] = field(default_factory=dict)


def generate_shipped(generator: Any, sample: Any, seed: int, out_path: str) -> Shipped:
    """Generate into a temporary file on the worker and return the video's bytes with its record."""
    tmp = tempfile.mkdtemp(prefix="vreason-unit-")
    try:
        local = os.path.join(tmp, os.path.basename(out_path))
        video: Video = _generate_in_worker(generator, sample, seed, local)
        data = b""
        if video.path and os.path.isfile(video.path):
            with open(video.path, "rb") as fh:
                data = fh.read()
            video = video.model_copy(update={"path": out_path})
        return Shipped(result=video, files={"": data} if data else {})
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def score_shipped(scorer: Any, sample: Any, video: Video, ctx: Any, video_bytes: bytes) -> Shipped:
    """Score a video sent as bytes, in a temporary run folder on the worker; return the scores (paths
    rewritten to the driver's run folder and video path) and the files the scorer wrote there."""
    tmp = tempfile.mkdtemp(prefix="vreason-unit-")
    try:
        local_video = os.path.join(tmp, "video", os.path.basename(video.path or "video.mp4"))
        os.makedirs(os.path.dirname(local_video))
        with open(local_video, "wb") as fh:
            fh.write(video_bytes)
        local_ctx = type(ctx)(run_dir=tmp, options=dict(ctx.options), judges={})
        scores = _score_in_worker(scorer, sample, video.model_copy(update={"path": local_video}), local_ctx)
        files: dict[str, bytes] = {}
        for root, _dirs, names in os.walk(tmp):
            for name in names:
                full = os.path.join(root, name)
                if full != local_video:
                    with open(full, "rb") as fh:
                        files[os.path.relpath(full, tmp)] = fh.read()
        return Shipped(result=_repath(scores, {local_video: video.path or "", tmp: ctx.run_dir}), files=files)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _repath(scores: Any, mapping: dict[str, str]) -> Any:
    """Replace worker-local paths inside the score records (evidence, debug images, reasons)."""
    if not isinstance(scores, list) or not all(isinstance(s, Score) for s in scores):
        return scores
    out = []
    for s in scores:
        blob = s.model_dump_json()
        for old, new in mapping.items():  # the longer (video) path first: it lies inside the folder
            blob = blob.replace(old.replace("\\", "\\\\"), new.replace("\\", "\\\\"))
        out.append(Score.model_validate_json(blob))
    return out
