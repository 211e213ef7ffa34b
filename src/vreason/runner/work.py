"""What runs for one job: generation and scoring wrapped so a crash becomes a recorded failure."""

from __future__ import annotations

import traceback
from typing import Any

from vreason.core.errors import VideoError, disk_full
from vreason.core.records import Sample, Score, Video, VideoStatus
from vreason.core.scoring import ScoreContext, Scorer


def load_error_text(err: dict[str, Any]) -> str:
    """``where: reason`` of a loader's error dict, with the field when the loader names one."""
    field_name = err.get("field")
    where = f"{err.get('where', '?')}" + (f" [field {field_name}]" if field_name else "")
    return f"{where}: {err.get('reason', '?')}"


# ---------------------------------------------------------------------- worker functions
def _generate_in_worker(generator, sample: Sample, seed: int, out_path: str, check: bool = False) -> Video:
    """``check``: decode the written file (models other than the built-in suite's)."""
    try:
        video = generator.generate(sample, seed, out_path)
    except Exception as exc:  # a crash is a failed video with its reason, the run goes on
        if disk_full(exc):  # not the video's fault: the run stops (exit 4) and resumes it once space is freed
            raise
        return generator.failed(sample, seed, f"generator crashed: {type(exc).__name__}: {exc}")
    return check_output(video) if check else video


def check_output(video: Any) -> Any:
    """A generated video said ``ok`` must decode: a missing, empty or unreadable file becomes a
    ``failed`` video with the decoder's reason."""
    from vreason.frames.video import decode_check

    if not isinstance(video, Video):
        return video
    if video.status != VideoStatus.ok or not video.path or video.manifest.source != "generated":
        return video
    try:
        decode_check(video.path)
    except VideoError as exc:
        return video.model_copy(update={"status": VideoStatus.failed, "path": None,
                                        "reason": f"generator wrote an unreadable video: {exc.reason}"})
    return video


def _score_in_worker(scorer: Scorer, sample: Sample, video: Video, ctx: ScoreContext) -> list[Score]:
    try:
        return scorer.score(sample, video, ctx)
    except VideoError as exc:
        return scorer.fail(sample, video, f"video error: {exc}")
    except Exception as exc:
        if disk_full(exc):  # not the unit's fault: the run stops and resumes it once space is freed
            raise
        tb = traceback.format_exception_only(type(exc), exc)[-1].strip()
        return scorer.fail(sample, video, f"scorer crashed: {tb}")


def _check_scores(scorer: Scorer, sample: Sample, video: Video, scores: Any) -> list[Score]:
    if not isinstance(scores, list) or not scores or not all(isinstance(s, Score) for s in scores):
        return scorer.fail(sample, video, f"scorer {scorer.name} returned {type(scores).__name__}, not Scores")
    return scores


def _io_factory(scorer: Scorer, sample: Sample, video: Video, ctx: ScoreContext):
    async def go() -> list[Score]:
        try:
            return await scorer.ascore(sample, video, ctx)
        except VideoError as exc:
            return scorer.fail(sample, video, f"video error: {exc}")

    return go



