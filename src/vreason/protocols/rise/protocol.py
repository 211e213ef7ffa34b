"""RISE-Video protocol: loader, the four metrics (+ maze and symmetry verifiers), W.Score, Accuracy.

Options: :class:`RiseOptions` (``vreason list --options``; every default follows the released
code, docs/rise.md). Judge roles: ``default`` (RA, TC, PR) and ``vq`` (Visual Quality; falls back
to ``default``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, ClassVar, Literal

import pandas as pd
from pydantic import Field

from vreason.core.errors import ConfigError
from vreason.core.human import LIKERT_3, LIKERT_5, YES_NO, Question
from vreason.core.options import (
    RELEASED,
    BootSeedField,
    NBootField,
    ProtocolOptions,
    SeedOptions,
    departures,
    released_defaults,
)
from vreason.core.protocol import AggregateResult, LoadResult, Protocol
from vreason.core.records import Sample
from vreason.core.registry import benchmarks
from vreason.core.scoring import Scorer
from vreason.protocols.rise.aggregate import sample_records, table1, table2, unit_table, write_tables
from vreason.protocols.rise.data import CATEGORY_NAMES, load_rise, rise_video_path
from vreason.protocols.rise.scorers import (
    RaCount,
    RaMode,
    RaYes,
    RisePhysicalRationality,
    RisePuzzleVerifier,
    RiseReasoningJudge,
    RiseTemporalConsistency,
    RiseVisualQuality,
)

JUDGE_ROLES = ("default", "vq")


# the annotation app's Likert questions (metric -> (question, scale))
HUMAN_LIKERT = {
    "tc": ("Temporal consistency: does the video keep what the instruction does not change "
           "(1 = not at all, 5 = fully)?", LIKERT_5),
    "pr": ("Physical rationality: does the motion obey physics (1 = violates it badly, 5 = fully plausible)?",
           LIKERT_5),
    "vq": ("Visual quality (1 = poor, 3 = good)?", LIKERT_3),
}


class RiseOptions(SeedOptions):
    """Options of ``vreason run rise``; the defaults reproduce the released code (VisionXLab/Rise-Video)."""

    data: str | None = Field(None, description="The dataset folder holding v5.json and its images, or the JSON "
                             "file (required).")
    videos: str | None = Field(None, description="The videos root: {model}/{category}/{task_id}.mp4 or the "
                               "JSON's video_path.")
    ra_mode: RaMode = Field("paper", description="Board-game (gt) RA: `paper` = last frame + ground-truth image, "
                            "1-5 per focus question, score/5 (default: the released code until commit 3819a04, "
                            "which produced the paper's numbers); `code` = the released HEAD's yes/no questions on "
                            "the last frame.", json_schema_extra=RELEASED)
    ra_count: RaCount = Field("returned", description="RA = Yes answers over the answers `returned` (default, as "
                              "the released code; a count mismatch is flagged in the evidence) or over the "
                              "questions `asked` (a reply with another count is re-asked, then unscored).",
                              json_schema_extra=RELEASED)
    ra_yes: RaYes = Field("contains", description="An RA answer is Yes when it `contains` 'yes' (default, as the "
                          "released code) or, `strict`, when its first word is Yes (No likewise; anything else "
                          "fails the reply).", json_schema_extra=RELEASED)
    maze_mode: Literal["official", "strict"] = Field(
        "official", description="Maze verifier: `official` = the released rule (default; a static video scores "
        "0.5) or `strict` (tracked from frame 0, the agent must move; see vreason.protocols.rise.maze).",
        json_schema_extra=RELEASED)
    sym_jpeg: bool = Field(True, description="Symmetry verifier reads the last frame back from a JPEG at quality "
                           "95 (default, as the released pipeline) or, false, grids the decoded pixels.",
                           json_schema_extra=RELEASED)
    table_rounding: Literal["released", "none"] = Field(
        "released", description="`released` (default, as cal_score/relax.py): metric means rounded to 2 decimals "
        "before the W.Score weighting; `none`: full precision in the tables.", json_schema_extra=RELEASED)
    n_boot: NBootField = Field(description="Bootstrap resamples for the 95% intervals (no effect on point "
                               "values).")
    ci_seed: BootSeedField
    check_files: bool = Field(True, description="Check at load time that every referenced image exists.")


RELEASED_DEFAULTS: dict[str, Any] = released_defaults(RiseOptions)
"""The options that change numbers (marked ``RELEASED``: named in the report header when they depart) and their
defaults: the released code (``ra_mode=paper`` follows the paper's reference mode, which the released code used
until commit 3819a04)."""
NUMBER_OPTIONS = tuple(RELEASED_DEFAULTS)


@benchmarks.register("rise", summary="RISE-Video: RA/TC/PR/VQ judged metrics, maze & symmetry verifiers")
class RiseProtocol(Protocol):
    """RISE-Video (TI2V reasoning): RA, TC, PR, VQ → W.Score and Accuracy (Tables 1 and 2)."""

    name = "rise"
    summary = "RISE-Video: RA/TC/PR/VQ judged metrics, maze & symmetry verifiers"
    default_seeds = (0,)

    @classmethod
    def human_questions(cls, sample: Sample, metrics: Sequence[str]) -> list[Question]:
        """TC and PR on Likert 1–5 and VQ on 1–3 when scored; RA one yes/no per question of the sample
        (item = the question's index; yes = 1, no = 0)."""
        out = [Question(f"rise:{m}", "", text, scale) for m, (text, scale) in HUMAN_LIKERT.items() if m in metrics]
        if "ra" in metrics:
            out += [Question("rise:ra", str(i), item.text, YES_NO) for i, item in enumerate(sample.rubric)]
        return out


    @classmethod
    def judge_roles(cls, opts: Any, samples: Any = None) -> tuple[str, ...]:
        """RA, TC and PR ask the ``default`` judge, VQ the ``vq`` one (falling back to ``default``)."""
        return JUDGE_ROLES

    layout = "rise"
    """Import layout for ``--videos`` (``{model}/{category}/{task_id}.mp4``)."""
    options_model: ClassVar[type[ProtocolOptions]] = RiseOptions
    opts: RiseOptions

    # the resolved options, read where the protocol and its tests use them
    ra_mode = property(lambda self: self.opts.ra_mode)
    ra_count = property(lambda self: self.opts.ra_count)
    ra_yes = property(lambda self: self.opts.ra_yes)
    maze_mode = property(lambda self: self.opts.maze_mode)
    sym_jpeg = property(lambda self: self.opts.sym_jpeg)
    table_rounding = property(lambda self: self.opts.table_rounding)
    n_boot = property(lambda self: self.opts.n_boot)
    ci_seed = property(lambda self: self.opts.ci_seed)

    # ------------------------------------------------------------------ loading
    def load(self) -> LoadResult:
        data = self.opts.data
        if not data:
            raise ConfigError("rise needs --data: the dataset folder holding v5.json and its images")
        try:
            res = load_rise(data, check_files=self.opts.check_files)
        except (FileNotFoundError, ValueError) as exc:
            raise ConfigError(f"rise: {exc}") from exc
        return res

    def video_path(self, model: str, sample: Sample) -> str | None:
        """The video for (model, sample) under ``options['videos']``, or ``None`` when missing."""
        root = self.opts.videos
        if not root:
            raise ConfigError("rise needs --videos: the root holding {model}/{category}/{task_id}.mp4")
        return rise_video_path(str(root), model, sample)

    def locate_video(self, model: str, sample: Sample, seed: int = 0) -> str | None:
        """For the runner: the found video, else where it was expected (``None`` without --videos
        or for seeds other than 0; RISE has one video per sample)."""
        root = self.opts.videos
        if not root or seed != 0:
            return None
        found = rise_video_path(str(root), model, sample)
        return found or os.path.join(str(root), model, sample.category, f"{sample.id}.mp4")

    # ------------------------------------------------------------------ scoring
    def scorers(self) -> list[Scorer]:
        return [
            RiseReasoningJudge(ra_mode=self.ra_mode, ra_count=self.ra_count, ra_yes=self.ra_yes),
            RisePuzzleVerifier(maze_mode=self.maze_mode, sym_jpeg=self.sym_jpeg),
            RiseTemporalConsistency(),
            RisePhysicalRationality(),
            RiseVisualQuality(),
        ]

    # ------------------------------------------------------------------ fidelity
    def protocol_options(self) -> dict[str, Any]:
        """The options that change numbers, as resolved for this run."""
        return {k: getattr(self.opts, k) for k in NUMBER_OPTIONS}

    def header(self) -> list[str]:
        """Report-header lines: the options that depart from the released code, and the definitions."""
        off = departures(self.opts)
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
        from vreason.protocols.rise.tables import declare, table1_layout, table2_layout

        p1, p2 = table1_layout(t1, t1n, self.table_rounding, units), table2_layout(t2n, self.table_rounding)
        tables = {"rise_table1": p1, "rise_table1_numeric": t1n, "rise_table2": p2, "rise_table2_numeric": t2n}
        records = sample_records(scores, units)
        header = self.header()
        paths = write_tables(out_dir, tables, records, header="\n".join(f"> {h}" for h in header),
                             markdown={"rise_table1": t1, "rise_table2": t2})
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
        return AggregateResult(tables={"rise_table1": p1, "rise_table2": p2}, summary=declare(summary, p1, p2))
