"""RISE-Video protocol: loader, the four metrics (+ maze and symmetry verifiers), W.Score, Accuracy.

Options (all strings from the CLI are accepted):

* ``data`` — the dataset folder (holding ``v5.json`` and the images) or the JSON file;
* ``videos`` — the videos root (``{model}/{category}/{task_id}.mp4`` or the JSON's ``video_path``);
* ``ra_mode`` — ``paper`` (default: ground-truth samples judged 1–5 against the GT image, score/5)
  or ``code`` (the released code's HEAD: yes/no questions on the last frame);
* ``ra_count`` — ``returned`` (default, the released code: Yes answers over the answers
  returned, a count mismatch flagged in the evidence) or ``asked`` (over the questions asked; a
  reply with another count is re-asked, then unscored);
* ``ra_yes`` — ``contains`` (default, released: an answer containing "yes" is Yes) or
  ``strict`` (the first word must be Yes or No, anything else fails the reply);
* ``table_rounding`` — ``released`` (default: metric means rounded to 2 decimals before the
  W.Score weighting, as ``cal_score/relax.py``) or ``none`` (full precision in the tables);
* ``maze_mode`` — ``official`` (default: the released rule, a static video scores 0.5) or
  ``strict`` (tracked from frame 0, must move; see ``vreason.verify.rise_maze``);
* ``sym_jpeg`` — true (default: the symmetry verifier reads the last frame back from a JPEG at
  quality 95, as the released pipeline does) or false (the decoded pixels as they are);
* ``n_boot`` (1000), ``ci_seed`` (0), ``check_files`` (true).

Judge roles: ``default`` (RA, TC, PR) and ``vq`` (Visual Quality; falls back to ``default``).
"""

from __future__ import annotations

import os
from typing import Any

import pandas as pd

from vreason.data.rise import CATEGORY_NAMES, load_rise, rise_video_path
from vreason.errors import ConfigError
from vreason.protocols.base import AggregateResult, LoadResult, Protocol
from vreason.protocols.rise_aggregate import ROUNDINGS, sample_records, table1, table2, unit_table, write_tables
from vreason.protocols.rise_scorers import (
    RA_YES,
    RisePhysicalRationality,
    RisePuzzleVerifier,
    RiseReasoningJudge,
    RiseTemporalConsistency,
    RiseVisualQuality,
)
from vreason.records import Sample
from vreason.registry import benchmarks
from vreason.scoring import Scorer

JUDGE_ROLES = ("default", "vq")
RELEASED_DEFAULTS: dict[str, Any] = {"ra_mode": "paper", "ra_count": "returned", "ra_yes": "contains",
                                     "maze_mode": "official", "sym_jpeg": True, "table_rounding": "released"}
"""The defaults: the released code (``ra_mode=paper`` follows the paper's reference mode, which the
released code used until commit 3819a04)."""


def _bool(v: Any) -> bool:
    if isinstance(v, str):
        return v.strip().lower() not in ("0", "false", "no", "off", "")
    return bool(v)


@benchmarks.register("rise", summary="RISE-Video: RA/TC/PR/VQ judged metrics, maze & symmetry verifiers")
class RiseProtocol(Protocol):
    """RISE-Video (TI2V reasoning): RA, TC, PR, VQ → W.Score and Accuracy (Tables 1 and 2)."""

    name = "rise"
    summary = "RISE-Video: RA/TC/PR/VQ judged metrics, maze & symmetry verifiers"
    default_seeds = (0,)
    judge_roles = JUDGE_ROLES
    convention = "rise"
    """Import layout for ``--videos`` (``{model}/{category}/{task_id}.mp4``)."""

    def __init__(self, **options: Any):
        super().__init__(**options)
        self.ra_mode = str(options.get("ra_mode") or "paper")
        self.ra_count = str(options.get("ra_count") or "returned")
        self.ra_yes = str(options.get("ra_yes") or "contains")
        self.table_rounding = str(options.get("table_rounding") or "released")
        self.maze_mode = str(options.get("maze_mode") or "official")
        if self.ra_mode not in ("paper", "code"):
            raise ConfigError(f"rise: ra_mode must be 'paper' or 'code', got {self.ra_mode!r}")
        if self.ra_count not in ("asked", "returned"):
            raise ConfigError(f"rise: ra_count must be 'asked' or 'returned', got {self.ra_count!r}")
        if self.ra_yes not in RA_YES:
            raise ConfigError(f"rise: ra_yes must be one of {RA_YES}, got {self.ra_yes!r}")
        if self.table_rounding not in ROUNDINGS:
            raise ConfigError(f"rise: table_rounding must be one of {ROUNDINGS}, got {self.table_rounding!r}")
        if self.maze_mode not in ("strict", "official"):
            raise ConfigError(f"rise: maze_mode must be 'strict' or 'official', got {self.maze_mode!r}")
        self.sym_jpeg = _bool(options.get("sym_jpeg", True))
        self.n_boot = int(options.get("n_boot") or 1000)
        self.ci_seed = int(options.get("ci_seed") or 0)

    # ------------------------------------------------------------------ loading
    def load(self) -> LoadResult:
        data = self.options.get("data")
        if not data:
            raise ConfigError("rise needs --data: the dataset folder holding v5.json and its images")
        try:
            res = load_rise(str(data), check_files=_bool(self.options.get("check_files", True)))
        except (FileNotFoundError, ValueError) as exc:
            raise ConfigError(f"rise: {exc}") from exc
        return LoadResult(samples=res.samples, errors=res.errors)

    def video_path(self, model: str, sample: Sample) -> str | None:
        """The video for (model, sample) under ``options['videos']``, or ``None`` when missing."""
        root = self.options.get("videos")
        if not root:
            raise ConfigError("rise needs --videos: the root holding {model}/{category}/{task_id}.mp4")
        return rise_video_path(str(root), model, sample)

    def locate_video(self, model: str, sample: Sample, seed: int = 0) -> str | None:
        """For the runner: the found video, else where it was expected (``None`` without --videos
        or for seeds other than 0; RISE has one video per sample)."""
        root = self.options.get("videos")
        if not root or seed != 0:
            return None
        found = rise_video_path(str(root), model, sample)
        return found or os.path.join(str(root), model, sample.category, f"{sample.id}.mp4")

    # ------------------------------------------------------------------ scoring
    def scorers(self) -> list[Scorer]:
        return [
            RiseReasoningJudge(ra_mode=self.ra_mode, ra_count=self.ra_count,  # type: ignore[arg-type]
                               ra_yes=self.ra_yes),  # type: ignore[arg-type]
            RisePuzzleVerifier(maze_mode=self.maze_mode, sym_jpeg=self.sym_jpeg),
            RiseTemporalConsistency(),
            RisePhysicalRationality(),
            RiseVisualQuality(),
        ]

    # ------------------------------------------------------------------ fidelity
    def protocol_options(self) -> dict[str, Any]:
        """The options that change numbers, as resolved for this run."""
        return {"ra_mode": self.ra_mode, "ra_count": self.ra_count, "ra_yes": self.ra_yes,
                "maze_mode": self.maze_mode, "sym_jpeg": self.sym_jpeg, "table_rounding": self.table_rounding}

    def header(self) -> list[str]:
        """Report-header lines: the options that depart from the released code, and the definitions."""
        off = {k: v for k, v in self.protocol_options().items() if RELEASED_DEFAULTS.get(k) != v}
        departs = ", ".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in off.items())
        lines = ["RISE-Video: " + (f"options departing from the released code: {departs}" if off
                                   else "released-code defaults (no departing option)")]
        lines.append(
            "Definitions: RA yes test " + ("'contains yes'" if self.ra_yes == "contains" else "'first word Yes/No'")
            + ", RA over the answers " + self.ra_count
            + f"; maze rule {self.maze_mode}; symmetry JPEG q95 round trip {'on' if self.sym_jpeg else 'off'}; "
            + ("W.Score from metric means rounded to 2 decimals (cal_score/relax.py)"
               if self.table_rounding == "released" else "W.Score at full precision")
            + "; board-game RA: "
            + ("paper reference mode (1-5 vs GT image)." if self.ra_mode == "paper" else "code HEAD (yes/no).")
        )
        return lines

    # ------------------------------------------------------------------ aggregation
    def aggregate(self, scores: pd.DataFrame, samples: list[Sample], out_dir: str) -> AggregateResult:
        cats = {s.id: s.category for s in samples}
        units = unit_table(scores, cats) if len(scores) else pd.DataFrame()
        if units.empty:
            return AggregateResult(summary={"protocol": "rise", "units": 0, "note": "no RISE scores"})
        t1, t1n = table1(units, n_boot=self.n_boot, seed=self.ci_seed, rounding=self.table_rounding)
        t2, t2n = table2(units, n_boot=self.n_boot, seed=self.ci_seed, rounding=self.table_rounding)
        tables = {"rise_table1": t1, "rise_table1_numeric": t1n, "rise_table2": t2, "rise_table2_numeric": t2n}
        records = sample_records(scores, units)
        header = self.header()
        paths = write_tables(out_dir, tables, records, header="\n".join(f"> {h}" for h in header))
        summary: dict[str, Any] = {
            "protocol": "rise",
            "options": {**self.protocol_options(), "n_boot": self.n_boot, "ci_seed": self.ci_seed},
            "header": header,
            "units": len(units),
            "models": {r["model"]: {k: r[k] for k in ("RA", "TC", "PR", "VQ", "W.Score", "Accuracy",
                                                      "acc_excluded", "n_unscored_units", "n_samples")}
                       for r in t1n.to_dict("records")},
            "categories": [CATEGORY_NAMES[c] for c in CATEGORY_NAMES],
            "files": paths,
            "notes": [
                "Scores are x100. W.Score = 0.4 RA + 0.25 TC + 0.25 PR + 0.1 VQ (PR over non-logical samples); "
                "Logical column: 0.5 RA + 0.3 TC + 0.2 VQ.",
                "Accuracy = % of samples with all four at full marks (PR full for logical); samples whose "
                "verdict depends on an unscored/error metric are excluded and counted.",
                "Intervals: 95% percentile bootstrap over samples.",
            ],
        }
        return AggregateResult(tables={"rise_table1": t1, "rise_table2": t2}, summary=summary)
