"""RULER-Bench loader: the released ``data.jsonl`` and the Hugging Face parquet variant.

One record per instance (official-code.md §3.2)::

    {"task_name": "maze", "index": 0, "category": "game", "prompt": "...",
     "implicit_explanation": "...", "input_image_path": "<rel path or empty>",
     "gt_image_path": "<rel path or empty>", "input_video_path": "<rel path or empty>",
     "checklist": [{"Instruction Following": "Q1 ..."}, {"Rule Coherence": "Q2 ..."}, ...]}

In the parquet variant ``checklist`` is a string holding the same list. Each checklist item
is a single-key dict whose key is one of the four metrics. A record becomes a
:class:`~vreason.core.records.Sample` with id ``safe_id_from(f"{task_name}-{index}")`` and one
``checklist`` rubric item per question (``dimension`` = the metric's full name).

Extension (ours): a record may carry ``enhanced_prompt`` (written by
:func:`vreason.protocols.ruler.tools.enhance_prompts`); it becomes the prompt variant ``pe``.
"""

from __future__ import annotations

import ast
import json
import os
from typing import Any

from vreason.core.errors import MissingFileError
from vreason.core.records import Mode, RubricItem, Sample, safe_id_from
from vreason.data.loaderrors import (
    WHOLE_RECORD,
    RecordFieldError,
    field_with_bad_text,
    jsonl_file_records,
    load_error,
)

METRICS: dict[str, str] = {
    "IF": "Instruction Following",
    "VC": "Visual Consistency",
    "VF": "Visual Fidelity",
    "RC": "Rule Coherence",
}
"""Metric code → the released checklist key."""
METRIC_CODE: dict[str, str] = {v: k for k, v in METRICS.items()}
VISION_RULE = "vision rule"

CATEGORIES: dict[str, tuple[str, ...]] = {
    "science": ("chemistry", "physics", "biology", "earth", "math", "medicine", "life"),
    "game": ("chess", "puzzle", "gomoku", "sudoku", "maze", "minesweeper", "number_sliding_puzzle",
             "sticks", "xiangqi", "Go"),
    "semantic": ("idioms", "metaphors", "definition"),
    "hypothetical": ("subjective_change", "objective_change"),
    "humanity": ("transportation", "sport", "social", "safety", "festival", "dress", "food", "emotion"),
    VISION_RULE: ("anomaly", "color", "count", "direction", "position", "shape", "size", "style", "view",
                  "motion"),
}
"""The 6 categories and 40 tasks of the released aggregation script."""
TASK_CATEGORY: dict[str, str] = {t: c for c, ts in CATEGORIES.items() for t in ts}

REQUIRED = ("task_name", "index", "category", "prompt", "checklist")


def metrics_for(category: str) -> tuple[str, ...]:
    """Metric codes a category is scored on (vision rule has no Instruction Following)."""
    if category.strip().lower() == VISION_RULE:
        return ("VC", "VF", "RC")
    return ("IF", "VC", "VF", "RC")


def _metric_code(key: str) -> str | None:
    k = " ".join(str(key).split()).lower()
    for code, name in METRICS.items():
        if k in (name.lower(), code.lower()):
            return code
    return None


def parse_checklist(value: Any) -> list[tuple[str, str]]:
    """``[(metric_code, question), ...]`` from a list of one-key dicts or its string form.

    Raises ``ValueError`` with the reason when the value does not fit the released format.
    """
    if isinstance(value, str):
        text = value.strip()
        try:
            value = json.loads(text)
        except (json.JSONDecodeError, RecursionError):
            try:
                value = ast.literal_eval(text)
            except (ValueError, SyntaxError, RecursionError, MemoryError) as exc:
                raise ValueError(f"checklist string is neither JSON nor a Python literal: {exc}") from exc
    if hasattr(value, "tolist"):  # numpy arrays from parquet
        value = value.tolist()
    if not isinstance(value, list) or not value:
        raise ValueError(f"checklist must be a non-empty list of one-key dicts, got {type(value).__name__}")
    out: list[tuple[str, str]] = []
    for i, item in enumerate(value, 1):
        if not isinstance(item, dict) or len(item) != 1:
            raise ValueError(f"checklist item {i} must be a dict with exactly one key, got {item!r}")
        (key, question), = item.items()
        code = _metric_code(key)
        if code is None:
            raise ValueError(f"checklist item {i} has unknown metric {key!r} (known: {', '.join(METRICS.values())})")
        if not isinstance(question, str) or not question.strip():
            raise ValueError(f"checklist item {i} ({key}) has an empty question")
        out.append((code, question.strip()))
    return out


def checklist_to_released(items: list[tuple[str, str]]) -> list[dict[str, str]]:
    """Back to the released format ``[{"Rule Coherence": "..."}, ...]``."""
    return [{METRICS[code]: q} for code, q in items]


def _opt_path(rec: dict[str, Any], key: str, where: str) -> str | None:
    v = rec.get(key)
    if v is None or (isinstance(v, float) and v != v):  # None / NaN from parquet
        return None
    if not isinstance(v, str):
        raise RecordFieldError(where, key, f"{key} must be a path string, got {type(v).__name__} {v!r}")
    return v.strip() or None


def _text(rec: dict[str, Any], key: str, where: str) -> str:
    v = rec[key]
    if not isinstance(v, str):
        raise RecordFieldError(where, key, f"{key} must be a string, got {type(v).__name__} {v!r}")
    if not v.strip():
        raise RecordFieldError(where, key, f"{key} is empty")
    return v.strip()


def _index(value: Any, where: str) -> int:
    if isinstance(value, bool):
        raise RecordFieldError(where, "index", f"index must be an integer, got {value!r}")
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    raise RecordFieldError(where, "index", f"index must be an integer, got {type(value).__name__} {value!r}")


def record_to_sample(rec: dict[str, Any], *, root: str | None, where: str, check_files: bool = True) -> Sample:
    """One released record → Sample; raises :class:`~vreason.data.loaderrors.RecordFieldError`
    naming ``where``, the field at fault and the reason."""
    missing = [k for k in REQUIRED if k not in rec or rec[k] is None]
    if missing:
        raise RecordFieldError(where, ", ".join(missing),
                               f"missing field(s) {', '.join(missing)}; fields found: {', '.join(sorted(rec))}")
    task, category = _text(rec, "task_name", where), _text(rec, "category", where)
    index = _index(rec["index"], where)
    prompt = _text(rec, "prompt", where)
    try:
        items = parse_checklist(rec["checklist"])
    except ValueError as exc:
        raise RecordFieldError(where, "checklist", f"{task}-{index}: {exc}") from None
    paths = {k: _opt_path(rec, k, where) for k in ("input_image_path", "gt_image_path", "input_video_path")}
    if check_files and root:
        for key, rel in paths.items():
            if rel and not os.path.exists(rel if os.path.isabs(rel) else os.path.join(root, rel)):
                raise RecordFieldError(where, key, f"{task}-{index}: {key} {rel!r} does not exist under {root}")
    if paths["input_video_path"]:
        mode = Mode.v2v
    elif paths["input_image_path"]:
        mode = Mode.i2v
    else:
        mode = Mode.t2v
    variants = {}
    pe = rec.get("enhanced_prompt")
    if isinstance(pe, str) and pe.strip():
        variants["pe"] = pe.strip()
    implicit = rec.get("implicit_explanation")
    implicit = "" if implicit is None or (isinstance(implicit, float) and implicit != implicit) else str(implicit)
    metadata: dict[str, Any] = {"index": index, "implicit_explanation": implicit,
                                "known_task": task in TASK_CATEGORY}
    if rec.get("initial_scenario") not in (None, ""):
        metadata["initial_scenario"] = str(rec["initial_scenario"])
    return Sample(
        id=safe_id_from(f"{task}-{index}"),
        benchmark="ruler",
        category=category,
        task=task,
        mode=mode,
        prompt=prompt,
        prompt_variants=variants,
        input_image=paths["input_image_path"],
        reference_image=paths["gt_image_path"],
        input_video=paths["input_video_path"],
        rubric=[
            RubricItem(id=f"q{i}", kind="checklist", text=q, dimension=METRICS[code])
            for i, (code, q) in enumerate(items, 1)
        ],
        root=root,
        metadata=metadata,
    )


def _find_data_file(path: str) -> str:
    if os.path.isdir(path):
        for name in ("data.jsonl", "data.parquet"):
            if os.path.exists(os.path.join(path, name)):
                return os.path.join(path, name)
        parquets = sorted(f for f in os.listdir(path) if f.endswith(".parquet"))
        if parquets:
            return os.path.join(path, parquets[0])
        raise MissingFileError(f"{path}: no data.jsonl or *.parquet found")
    if not os.path.exists(path):
        raise MissingFileError(f"{path}: no such file")
    return path


def read_records(path: str) -> list[tuple[str, dict[str, Any] | None, dict[str, str] | None]]:
    """``(where, record, error)`` per line (``file:line``) of a data.jsonl or row (``file[row]``) of a
    parquet file; ``error`` is a loader error dict (``where``, ``field``, ``reason``) for a line that is
    not valid UTF-8, not JSON or not an object. Never raises on a damaged line."""
    out: list[tuple[str, dict[str, Any] | None, dict[str, str] | None]] = []
    if path.endswith(".parquet"):
        import pandas as pd

        try:
            df = pd.read_parquet(path)
        except Exception as exc:  # noqa: BLE001 - reported per file
            return [(path, None, load_error(path, WHOLE_RECORD, f"cannot read parquet: {type(exc).__name__}: {exc}"))]
        for i, row in enumerate(df.to_dict(orient="records")):
            out.append((f"{path}[{i}]", row, None))
        return out
    for where, rec, bad_utf8, err in jsonl_file_records(path):  # line by line, each line bounded
        if err is not None:
            out.append((where, None, err))
            continue
        if not isinstance(rec, dict):
            why = f"expected a JSON object, got {type(rec).__name__}"
            out.append((where, None, load_error(where, WHOLE_RECORD, why)))
            continue
        if bad_utf8:
            fld = field_with_bad_text(rec) or WHOLE_RECORD
            out.append((where, None, load_error(where, fld, bad_utf8)))
            continue
        out.append((where, rec, None))
    return out


def load_ruler(path: str, *, root: str | None = None, check_files: bool = True):
    """Load RULER-Bench from ``data.jsonl``, a parquet file, or a folder holding one.

    ``root`` (default: the data file's folder) is what relative image/video paths resolve
    against. Returns a :class:`~vreason.core.protocol.LoadResult`; a bad record becomes one
    error (``{"where", "field", "reason"}``, see :mod:`vreason.data.loaderrors`) and the rest load.
    Duplicate ids are errors too.
    """
    from vreason.core.protocol import LoadResult

    result = LoadResult()
    try:
        data_file = _find_data_file(path)
    except FileNotFoundError as exc:
        result.errors.append(load_error(path, WHOLE_RECORD, str(exc)))
        return result
    root = root if root is not None else os.path.dirname(os.path.abspath(data_file))
    seen: dict[str, str] = {}
    for where, rec, err in read_records(data_file):
        if err is not None or rec is None:
            result.errors.append(err or load_error(where, WHOLE_RECORD, "empty record"))
            continue
        try:
            sample = record_to_sample(rec, root=root, where=where, check_files=check_files)
        except RecordFieldError as exc:
            result.errors.append(exc.as_dict())
            continue
        if sample.id in seen:
            result.errors.append(load_error(where, "index", f"duplicate id {sample.id} (first at {seen[sample.id]})"))
            continue
        seen[sample.id] = where
        result.samples.append(sample)
    return result


def ruler_video_path(videos_root: str, model: str, sample: Sample) -> str:
    """Where the released layout keeps a model's video: ``{root}/{model}/{task_name}/{index}.mp4``."""
    index = sample.metadata.get("index")
    if index is None:
        index = sample.id.rsplit("-", 1)[-1]
    return os.path.join(videos_root, model, sample.task, f"{index}.mp4")
