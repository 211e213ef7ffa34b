"""What a run is asked to do (:class:`RunConfig`) and what it reports at the end (:class:`RunSummary`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class RunConfig:
    protocol: str
    run_dir: str
    models: list[str]
    seeds: list[int] = field(default_factory=lambda: [0])
    options: dict[str, Any] = field(default_factory=dict)
    judges: dict[str, str] = field(default_factory=dict)
    """Judge role → spec string (``default``, ``vq``…)."""
    judge_options: dict[str, Any] = field(default_factory=dict)
    workers: int | None = None
    io_concurrency: int = 32
    retry_failed: bool = False
    limit: int | None = None
    videos_dir: str | None = None
    """Import videos from this folder by ``convention`` before scoring."""
    convention: str | None = None
    manifest: str | None = None
    """Import videos listed in this JSONL/CSV manifest before scoring."""
    aggregate: bool = True
    dry_run: bool = False
    """Judges count requests/images/tokens/cost without sending; nothing is generated or stored."""
    force_new: bool = False
    """Empty the run folder (under its lock) instead of resuming."""
    executor: str = "local"
    """``local`` (process pool) or ``ray`` (:mod:`vreason.runner.ray_executor`); not part of the plan."""
    ray_address: str | None = None
    """``None``: a local Ray instance; ``auto`` or ``ray://host:10001``: a running cluster."""
    ray_temp_dir: str | None = None
    ray_ship_videos: bool = False
    """Workers send video bytes back (no shared filesystem) instead of writing into the run folder."""
    gen_timeout: float | None = None
    """Wall-clock limit for generating one video (a model YAML's ``timeout`` wins); not part of the plan."""
    prompts_file: str | None = None
    """JSONL of extra prompts (``sample_id``, ``variant``, ``prompt``), e.g. ``vreason tpo``'s output."""
    prompt_variants: list[str] = field(default_factory=list)
    """Run every model once per variant (``default`` = the sample's prompt; others as ``<model>_<variant>``)."""
    allow_outside_data: bool = False
    """Accept data paths outside the dataset's root (absolute, ``../``, symlinks out); see data/confine.py."""

    def as_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


@dataclass
class RunSummary:
    run_dir: str
    samples: int = 0
    load_errors: int = 0
    videos: dict[str, int] = field(default_factory=dict)
    units_total: int = 0
    units_skipped: int = 0
    units_run: dict[str, int] = field(default_factory=dict)
    interrupted: bool = False
    seconds: dict[str, float] = field(default_factory=dict)
    report_paths: list[str] = field(default_factory=list)
    failure_reasons: dict[str, int] = field(default_factory=dict)
    """Why videos or units failed (reason → count), most common first in the CLI summary."""
    judge_stats: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Per judge role: requests, cache hits, retries, re-asks, unscored, tokens, cost (or estimates)."""
    units_final: dict[str, int] = field(default_factory=dict)
    """Status of every unit of the plan at the end (this invocation's and earlier ones')."""
    finished_with_errors: bool = False
    """Units ended error/unscored or expected videos were missing/failed/unreadable (exit code 3)."""
    warnings: list[str] = field(default_factory=list)
    plan: dict[str, Any] = field(default_factory=dict)
    """What the run does: units per model × scorer (total / to do) and videos per model by source."""
    generation_cost: dict[str, dict[str, Any]] = field(default_factory=dict)
    """API generators' job ledger per model: jobs by status, creates sent, video seconds, USD of finished jobs."""

    def note_failure(self, reason: str | None) -> None:
        from vreason.aggregate.tables import shorten

        key = shorten(reason or "?", 160)  # cut where a word ends, marked with "…"; the report has the whole
        self.failure_reasons[key] = self.failure_reasons.get(key, 0) + 1

    def as_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}
