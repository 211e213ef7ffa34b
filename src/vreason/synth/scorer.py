"""The suite's scorer: decode the whole video, run the family's verifier, keep its evidence."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from vreason.core.errors import VideoError
from vreason.core.records import Evidence, Sample, Score, ScoreStatus, Video
from vreason.core.registry import scorers
from vreason.core.scoring import ScoreContext, Scorer

DEFAULT_MAX_FRAMES = 480
PICTURE_SIZED = True
"""Decode a letterboxed frame larger when its picture would otherwise come out softer than the scenes model
(:func:`decode_side`). False: always the frame's longer side at the family's share (before 27 Nov, sixth session)."""
MIN_PICTURE = 0.35
"""The smallest share of the render size a decoded picture may have: the softest rendering the scenes model
(:data:`vreason.verify.explain.SOFT_SCALES`)."""


def decode_side(frame: tuple[int, int], render: tuple[int, int], scale: float) -> int:
    """The longer side (px) to decode a ``frame`` (w, h) at, for a render of size ``render`` (w, h) and a family's
    ``scale`` of it: the frame's longer side at ``scale`` of the render's, as always — unless the picture the frame
    holds (the render's aspect fitted inside it: a letterbox of any colour) would then come out below
    :data:`MIN_PICTURE` of the render; then the picture comes out at ``scale`` of the render (never above the
    frame's own size). Connect and maze decode at 0.5: a 9:16 frame of their 16:9 render (640×1138 for 640×360)
    came out at 180×320 with the picture at 0.28 — honest draws unexplained (connect medium, maze hard, seeds
    12–13); now 320×569, the picture at 0.5. Families decoding at full size keep their decode (that 9:16 frame:
    the picture at 0.56, a softness the scenes model)."""
    fw, fh = frame
    rw, rh = render
    base = int(round(max(rw, rh) * scale))
    if not PICTURE_SIZED or fw <= 0 or fh <= 0:
        return base
    fit = min(fw / rw, fh / rh)  # the picture inside the frame, as a share of the render
    if min(1.0, base / max(fw, fh)) * fit >= MIN_PICTURE:
        return base
    k = min(1.0, scale / fit)  # the decode's share of the frame that gives the picture ``scale``
    return max(base, min(max(fw, fh), int(round(max(fw, fh) * k))))


def jsonable(obj: Any) -> Any:
    """Numpy scalars/arrays → Python, recursively (verifier evidence must be JSON)."""
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    return obj


def _worker_threads() -> None:
    """In a worker of a pool that fills the cores (``VREASON_CODEC_THREADS`` set by the run's executor),
    OpenCV runs on that many threads too: each verifier makes hundreds of small OpenCV calls, and on a
    busy machine a call split over threads waits for its slowest thread to be scheduled (measured: the
    scorer's wall time was ~3× its CPU time against ~1× for a bare decode). Same pixels either way."""
    global _THREADS_SET
    threads = os.environ.get("VREASON_CODEC_THREADS")
    if _THREADS_SET or not threads:
        return
    import cv2

    cv2.setNumThreads(max(1, int(threads)))
    _THREADS_SET = True


_THREADS_SET = False


@scorers.register("synth-verifier")
class SynthVerifierScorer(Scorer):
    """Programmatic verifier of the built-in suite (one metric ``score`` in [0, 1] + pass flag)."""

    name = "synth-verifier"
    version = "1"
    kind = "cpu"
    metrics = ("score",)

    def applies(self, sample: Sample) -> bool:
        return "family" in sample.metadata and "state" in sample.metadata

    def score(self, sample: Sample, video: Video, ctx: ScoreContext) -> list[Score]:
        from vreason.frames import check_complete, decode_pass, probe
        from vreason.synth.suite import get_family, render_config

        _worker_threads()
        md = sample.metadata
        if "family" not in md or "state" not in md:
            return self.fail(sample, video, f"sample {sample.id}: metadata lacks the synth family/state")
        try:
            fam = get_family(str(md["family"]))
        except KeyError as exc:
            return self.fail(sample, video, str(exc.args[0]))
        cfg = render_config(md.get("render"))
        if not video.path:
            return self.fail(sample, video, f"no video file for {sample.id}/{video.model}/{video.seed}")
        limit = int(ctx.options.get("max_frames", DEFAULT_MAX_FRAMES))
        # frames are reduced while decoding to what the verifier uses (the render size, or less where
        # the family asks): memory is bounded by the suite's resolution, not by the input's
        scale = getattr(fam, "decode_scale", None) or 1.0
        try:
            info = probe(video.path)
            max_side = decode_side((info.width, info.height), (cfg.width, cfg.height), scale)
            check_complete(info, "strict")  # the suite's videos are whole or an error (decode=strict)
            rate = info.fps if info.fps and info.fps > 0 else float(cfg.fps)
            got = decode_pass(video.path, None, limit=limit, max_side=max_side, mode="strict", fps=rate)
        except VideoError as exc:
            return self.fail(sample, video, f"video error: {exc}")
        frames, indices = got.frames, got.indices
        # verifiers reason in seconds and task units: frames are passed with their own presentation times
        # (a variable-frame-rate file is timed by its timestamps), never resampled to the suite's rate
        times = got.times
        res = fam.verify(frames, md["state"], cfg, times=times)
        if (res.evidence or {}).get("unscored"):  # the family's check could not score (e.g. no OCR engine)
            return self.fail(sample, video, str(res.evidence["unscored"]), status=ScoreStatus.unscored)
        if not np.isfinite(res.score):  # a broken verifier: an error, never clamped into a 0 or a 1
            return self.fail(sample, video, f"{md['family']} verifier returned {res.score!r}, not a finite score")
        debug: list[str] = []
        if res.debug_image is not None:
            import cv2

            from vreason.frames.write import write_image

            path = ctx.debug_path(self.name, video)
            from vreason.verify.overlay import SYNTH_LEGENDS, annotate

            img = annotate(res.debug_image, res.score, res.passed, (res.evidence or {}).get("checks"),
                           (res.evidence or {}).get("reason"), SYNTH_LEGENDS.get(md["family"]))
            if write_image(path, cv2.cvtColor(img, cv2.COLOR_RGB2BGR)):
                debug.append(os.path.relpath(path, ctx.run_dir))
        value = float(min(1.0, max(0.0, res.score)))
        details = jsonable(res.evidence)
        details.setdefault("family", md["family"])
        details["family_version"] = fam.version
        details["frame_times_from"] = got.time_source
        timing = "times=pts" if got.time_source == "pts" else f"time_base={rate:g}fps"
        policy = f"all+{timing}" + (
            f"+max_frames={limit}" if len(indices) >= limit else "") + f"+max_side={max_side}"
        ev = Evidence(frame_policy=policy, frame_indices=indices, debug_images=debug, details=details)
        return [self.ok(sample, video, "score", value, value, passed=bool(res.passed), evidence=ev)]
