"""How a run ended: its exit code, honest video counts and warnings a user must see.

Exit codes of ``vreason run`` (also in ``vreason run --help`` and the README):

* ``0`` — every unit of the plan ended ok and every expected video was there (or a dry run);
* ``1`` — vreason itself crashed (a traceback; please report it);
* ``2`` — refused before scoring: a usage or input mistake (unknown model, option or protocol, a
  missing data or videos folder, 0 samples), a run folder in use, a resume with other settings;
* ``3`` — finished with errors: some units ended ``error`` or ``unscored``, or expected videos were
  missing, failed or unreadable; everything else was computed and saved (``--retry-failed`` re-runs
  the failed units);
* ``4`` — the disk filled up while writing (one line names the file); nothing recorded is lost and no
  temporary file is left: free space and run the same command to resume;
* ``130`` — interrupted (Ctrl-C); finished units are saved, the same command resumes.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import Any

from vreason.core.records import Video, VideoStatus

EXIT_OK = 0
EXIT_CRASH = 1
EXIT_USAGE = 2
EXIT_FINISHED_WITH_ERRORS = 3
EXIT_INTERRUPTED = 130

EXIT_CODES_HELP = (
    "Exit codes: 0 all units ok; 2 refused before scoring (usage or input mistake, run folder in use, "
    "resume with other settings); 3 finished with errors (units error/unscored or expected videos "
    "missing/unreadable; results saved); 4 disk full (free space, run the same command); "
    "130 interrupted (resume with the same command); 1 crash."
)

START_SHARE = 0.5
"""Share of a model's scored videos failing the ``start`` check above which the run warns."""
START_MIN_VIDEOS = 3


def exit_code(summary: Any) -> int:
    if summary.interrupted:
        return EXIT_INTERRUPTED
    return EXIT_FINISHED_WITH_ERRORS if summary.finished_with_errors else EXIT_OK


def video_counts(videos: Iterable[Video], imported_models: set[str], decode: str = "strict",
                 ) -> tuple[dict[str, int], list[dict[str, str]]]:
    """Counts by status, with imported files that cannot be opened (or, ``decode="strict"``, are cut off) as
    ``unreadable`` instead of ``ok``; and those files with the reason."""
    from vreason.core.errors import VideoError
    from vreason.frames import video as vio

    counts: dict[str, int] = {}
    unreadable: list[dict[str, str]] = []
    for v in videos:
        status = v.status.value
        if v.status == VideoStatus.ok and v.model in imported_models and v.path:
            try:
                vio.check_complete(vio.probe(v.path, exact=True), decode)  # counts frames: finds cut-off files
            except VideoError as exc:
                status = "unreadable"
                unreadable.append({"where": f"{v.model}/{v.sample_id}#{v.seed}", "reason": str(exc)})
        counts[status] = counts.get(status, 0) + 1
    return counts, unreadable


def start_check_warnings(conn: sqlite3.Connection, models: Iterable[str]) -> list[str]:
    """Models (imported, not built in) whose videos mostly fail the suite's ``start`` check: the
    videos were likely made from other tasks (another --data or --suite-seed)."""
    out = []
    for model in models:
        row = conn.execute(
            "SELECT SUM(CASE WHEN json_extract(json, '$.evidence.details.checks.start') = 0 THEN 1 ELSE 0 END),"
            " COUNT(json_extract(json, '$.evidence.details.checks.start'))"
            " FROM scores WHERE model = ? AND status = 'ok'", (model,)).fetchone()
        failed, checked = int(row[0] or 0), int(row[1] or 0)
        if checked >= START_MIN_VIDEOS and failed > START_SHARE * checked:
            out.append(
                f"{failed} of {checked} videos of {model!r} do not start from the task's first frame: the "
                "--data or --suite-seed may not match the videos (they were likely generated from other tasks)"
            )
    return out
