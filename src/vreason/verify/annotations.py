"""TiViBench's task taxonomy and vreason's per-sample annotation schema.

TiViBench (seed 003, §3 and appendix C) has 4 dimensions × 6 task types × 3 difficulties; its authors
released neither data nor evaluation code. What vreason needs to score a sample beyond the prompt and
the images is an **annotation**: the task type, the metric family that checks it and that family's
parameters (answer key, region box, expected digits, waypoints, questions…). Annotations are JSONL
records (``vreason_annotations.jsonl`` beside the release files, one per sample key) validated by
:class:`TiviAnnotation`; the parameter model of each metric family is below.

Coordinates are **normalised** to the frame: ``x`` in [0, 1] from the left, ``y`` in [0, 1] from the top,
so one annotation fits a video at any resolution (TiViBench renders at 1280×720, models do not).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

DIMENSIONS: dict[str, str] = {
    "SS": "Structural Reasoning & Search",
    "SV": "Spatial & Visual Pattern Reasoning",
    "SL": "Symbolic & Logical Reasoning",
    "AT": "Action Planning & Task Execution",
}
"""Dimension code (the release's folder / prompt-file prefix) → the paper's name."""

DIMENSION_SHORT: dict[str, str] = {"SS": "Structural & Search", "SV": "Spatial & Visual Pattern",
                                   "SL": "Symbolic & Logical", "AT": "Planning & Execution"}
"""The column group names of the paper's Tables 1–2."""

DIFFICULTIES = ("easy", "medium", "hard")

MetricFamily = Literal["sudoku", "math", "mcq", "sequence", "bars", "match3", "region", "grounding",
                       "tracking", "elimination", "vlm_qa", "vreason_synth"]

# task type (snake_case, as in the image file names) → (dimension, paper name, default metric family)
TASK_TYPES: dict[str, tuple[str, str, str]] = {
    "graph": ("SS", "Graph Traversal", "grounding"),
    "maze": ("SS", "Maze Solving", "tracking"),
    "sorting": ("SS", "Sorting Numbers", "bars"),
    "temporal": ("SS", "Temporal Ordering", "region"),
    "rule": ("SS", "Rule Extrapolation", "region"),
    "gamemove": ("SS", "Game Move Reasoning", "region"),
    "shape": ("SV", "Shape Fitting", "region"),
    "connect": ("SV", "Connecting Colors", "region"),
    "pattern": ("SV", "Pattern Recognition", "region"),
    "oddoneout": ("SV", "Odd-One-Out", "grounding"),
    "counting": ("SV", "Counting Objects", "grounding"),
    "analogy": ("SV", "Visual Analogy", "region"),
    "sudoku": ("SL", "Simple Sudoku Completion", "sudoku"),
    "arithmetic": ("SL", "Arithmetic Operations", "math"),
    "symbolic": ("SL", "Symbolic Reasoning", "mcq"),
    "deduction": ("SL", "Visual Deduction", "mcq"),
    "transitive": ("SL", "Transitive Reasoning", "mcq"),
    "gamerule": ("SL", "Game Rule Reasoning", "match3"),
    "tool": ("AT", "Tool Use", "vlm_qa"),
    "robot": ("AT", "Robot Navigation", "tracking"),
    "goal": ("AT", "Goal-Directed Planning", "vlm_qa"),
    "manipulation": ("AT", "Multi-Step Manipulation", "vlm_qa"),
    "instruction": ("AT", "Visual Instruction Following", "vlm_qa"),
    "gamestrategy": ("AT", "Game Strategy Planning", "elimination"),
}
"""The 24 task types (paper §3.1; the official VideoTPO script's ``REASONING_TYPES``). The default metric
family per task is vreason's reading of appendix C (see docs/tivibench.md); a sample's annotation may
name another."""


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid")


Point = tuple[float, float]
"""(x, y), normalised."""


class Box(BaseModel):
    """An axis-aligned box, normalised: (x0, y0) top-left, (x1, y1) bottom-right."""

    model_config = ConfigDict(extra="forbid")
    x0: float = Field(ge=0, le=1)
    y0: float = Field(ge=0, le=1)
    x1: float = Field(ge=0, le=1)
    y1: float = Field(ge=0, le=1)

    @model_validator(mode="after")
    def _ordered(self) -> Box:
        if not (self.x1 > self.x0 and self.y1 > self.y0):
            raise ValueError(f"box needs x1 > x0 and y1 > y0, got {self.model_dump()}")
        return self

    def pixels(self, width: int, height: int) -> tuple[int, int, int, int]:
        """(x0, y0, x1, y1) in pixels of a ``width``×``height`` frame (at least one pixel wide)."""
        x0, y0 = int(round(self.x0 * width)), int(round(self.y0 * height))
        x1, y1 = max(x0 + 1, int(round(self.x1 * width))), max(y0 + 1, int(round(self.y1 * height)))
        return x0, y0, min(x1, width), min(y1, height)


class ColourSpec(BaseModel):
    """A colour to segment: an RGB reference and a tolerance (HSV ranges are derived from it)."""

    model_config = ConfigDict(extra="forbid")
    rgb: tuple[int, int, int]
    name: str = ""
    hue_tol: float = 12.0
    """Hue tolerance in OpenCV units (0–180)."""
    min_sat: int = 80
    min_val: int = 60


class SudokuParams(_Params):
    family: Literal["sudoku"] = "sudoku"
    solution: list[list[int]]
    """The solved grid, row by row (n × n, n in 4, 6, 9)."""
    region: Box | None = None
    """Where the grid is; ``None``: find the largest square-ish contour."""

    @field_validator("solution")
    @classmethod
    def _square(cls, v: list[list[int]]) -> list[list[int]]:
        n = len(v)
        if n not in (4, 6, 9) or any(len(r) != n for r in v):
            raise ValueError("solution must be a 4×4, 6×6 or 9×9 grid")
        return v


class MathParams(_Params):
    family: Literal["math"] = "math"
    expected: str
    """The answer after "=" (e.g. ``"42"``, ``"3/4"``, ``"x+1"``)."""
    region: Box | None = None
    """Where the equation line is (``None``: the whole frame)."""
    rel_tol: float = 1e-6


class McqParams(_Params):
    family: Literal["mcq"] = "mcq"
    answer: str
    """The correct option letter."""
    options: list[str] = Field(default_factory=lambda: ["A", "B", "C", "D"])
    box_colour: ColourSpec = Field(default_factory=lambda: ColourSpec(rgb=(230, 30, 30), name="red"))
    option_boxes: dict[str, Box] = Field(default_factory=dict)
    """Where each option sits (lets a highlighted box be identified even if its letter is unreadable)."""


class SequenceParams(_Params):
    family: Literal["sequence"] = "sequence"
    expected: list[str]
    """The completed sequence's items as text, left to right (e.g. ``["2", "4", "8", "16"]``)."""
    region: Box | None = None
    cells: list[Box] = Field(default_factory=list)
    """Optional per-item boxes (recognition on crops); ``[]``: segment the text in ``region``."""


class BarsParams(_Params):
    family: Literal["bars"] = "bars"
    n_bars: int = Field(ge=2)
    bar_colour: ColourSpec = Field(default_factory=lambda: ColourSpec(rgb=(40, 90, 220), name="blue"))
    order: Literal["ascending", "descending"] = "ascending"
    """Heights left to right."""
    expected_heights: list[float] = Field(default_factory=list)
    """Optional: the sorted heights, normalised to the frame height (checks no bar changed length)."""
    region: Box | None = None
    height_tol: float = 0.04


class Match3Params(_Params):
    family: Literal["match3"] = "match3"
    region: Box | None = None
    ssim_threshold: float = 0.96
    edge_threshold: float = 0.99
    """Edge-overlap F1 threshold (Canny edges of the last frame vs the ground-truth end state). The paper gives
    no thresholds; these are vreason's, measured at the check's 160-px working size: an honest end state after
    H.264 and resizing reaches SSIM ≥ 0.969 and edge F1 1.0, one tile left over 0.981 / 0.983, an unrelated
    board 0.84 / 0.84 (which the earlier 0.8 / 0.7 let pass)."""


class RegionParams(_Params):
    family: Literal["region"] = "region"
    box: Box
    threshold: float = 0.85
    """Cosine similarity of the crops' features at or above which the sample passes."""


class GroundingParams(_Params):
    family: Literal["grounding"] = "grounding"
    label: str
    """What to find (open-vocabulary prompt, e.g. "red circle")."""
    colour: ColourSpec | None = None
    """For rendered tasks: the colour detector's target (used when no open-vocabulary detector is given)."""
    expected_count: int | None = None
    expected_points: list[Point] = Field(default_factory=list)
    """Where the found objects must be (any order), e.g. the odd one out's centre or the visited nodes."""
    point_tol: float = 0.05
    region: Box | None = None
    marker: Literal["present", "highlighted"] = "present"
    """``present``: count the objects; ``highlighted``: find the marked ones (e.g. a circled odd one)."""


class TrackingParams(_Params):
    family: Literal["tracking"] = "tracking"
    label: str
    colour: ColourSpec | None = None
    waypoints: list[Point]
    """The ground-truth path the object must follow, in order (first = start, last = goal)."""
    walls: list[Box] = Field(default_factory=list)
    """Regions the object's centre may never enter."""
    path_tol: float = 0.06
    """Max distance (normalised to the frame diagonal) from the ground-truth path."""
    n_samples: int = 16
    """Frames sampled uniformly over the video (appendix C.2)."""
    max_step: float = Field(default=0.35, gt=0, le=1)
    """Largest advance along the path between consecutive sampled frames, as a fraction of the path's
    length (a cut from the start to the goal advances the whole path at once)."""


class EliminationParams(_Params):
    family: Literal["elimination"] = "elimination"
    objects: list[GroundingParams]
    """Each object to track (label / colour / where it starts)."""
    order: list[int]
    """Indices into ``objects`` in the order they must disappear."""
    n_samples: int = 16


class QaQuestion(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str
    expected: Literal["yes", "no"]


class VlmQaParams(_Params):
    family: Literal["vlm_qa"] = "vlm_qa"
    questions: list[QaQuestion] = Field(min_length=1)


class SynthParams(_Params):
    family: Literal["vreason_synth"] = "vreason_synth"
    synth_family: str
    state: dict[str, Any]
    render: dict[str, Any] = Field(default_factory=dict)
    """vreason's built-in suite verifier (exported suite instances keep their own verifier)."""


MetricParams = Annotated[
    SudokuParams | MathParams | McqParams | SequenceParams | BarsParams | Match3Params | RegionParams
    | GroundingParams | TrackingParams | EliminationParams | VlmQaParams | SynthParams,
    Field(discriminator="family"),
]


class TiviAnnotation(BaseModel):
    """One line of ``vreason_annotations.jsonl``: how to score one TiViBench sample."""

    model_config = ConfigDict(extra="forbid")

    key: str
    """``<difficulty>_<type>_<NNN>`` (the image / ground-truth folder name)."""
    dimension: Literal["SS", "SV", "SL", "AT"]
    task_type: str
    difficulty: Literal["easy", "medium", "hard"]
    metric: MetricParams
    note: str = ""

    @field_validator("task_type")
    @classmethod
    def _known_task(cls, v: str) -> str:
        if v not in TASK_TYPES:
            import difflib

            close = difflib.get_close_matches(v, list(TASK_TYPES), n=2)
            raise ValueError(f"unknown task type {v!r}" + (f"; did you mean {', '.join(close)}?" if close else ""))
        return v
