"""Loader for RISE-Video's released ``v5.json`` and its video path conventions.

The file is a JSON list of records with the keys ``task_id``, ``text``, ``image_path``,
``sub_task``, ``questions``, ``extra_frame``, ``ref_path``, ``color_name`` and the optional
``intent_classification`` and ``reverse`` (plus ``video_path`` / ``frame_path`` when a user or
the official frame extractor wrote them back). The category comes from the ``task_id`` prefix.

A malformed record never stops the load: it becomes one entry of ``errors`` — ``where``
(``file:line (item i)``), ``field`` and ``reason``, see :mod:`vreason.data.loaderrors` — and the
other records load. Bytes that are not valid UTF-8 inside a record make that record an error
naming the field that holds them.
"""

from __future__ import annotations

import json
import os
from typing import Any

from vreason.core.errors import MissingFileError
from vreason.core.records import LoadResult, Mode, RubricItem, Sample, check_safe_id
from vreason.data.loaderrors import (
    WHOLE_RECORD,
    decode_utf8,
    field_with_bad_text,
    json_items_with_lines,
    json_list_items,
    load_error,
)

# task_id prefix → (category slug, display name as in the paper's Table 2)
CATEGORIES: dict[str, tuple[str, str]] = {
    "com": ("commonsense", "Commonsense"),
    "dom": ("subject", "Subject"),
    "per": ("perceptual", "Perceptual"),
    "soc": ("societal", "Societal"),
    "log": ("logical", "Logical"),
    "exp": ("experiential", "Experiential"),
    "spa": ("spatial", "Spatial"),
    "tem": ("temporal", "Temporal"),
}
CATEGORY_ORDER: tuple[str, ...] = tuple(slug for slug, _ in CATEGORIES.values())
"""Category slugs in the column order of the paper's Table 2."""
CATEGORY_NAMES: dict[str, str] = {slug: name for slug, name in CATEGORIES.values()}

# Folder spellings a user may have used for ``{model}/{category}/{task_id}``.
_FOLDER_ALIASES: dict[str, tuple[str, ...]] = {
    "commonsense": ("commonsense_knowledge", "Commonsense Knowledge", "com"),
    "subject": ("domain_knowledge", "subject_knowledge", "Subject Knowledge", "dom"),
    "perceptual": ("perceptual_knowledge", "Perceptual Knowledge", "per"),
    "societal": ("societal_knowledge", "Societal Knowledge", "soc"),
    "logical": ("logical_capability", "Logical Capability", "log"),
    "experiential": ("experiential_knowledge", "Experiential Knowledge", "exp"),
    "spatial": ("spatial_reasoning", "spatial_knowledge", "Spatial Reasoning", "spa"),
    "temporal": ("temporal_knowledge", "temporal_reasoning", "Temporal Knowledge", "tem"),
}
VIDEO_EXTS = (".mp4", ".webm", ".mov", ".mkv", ".avi", "")

PUZZLE_MODES = ("maze", "sym", "gt")
COLOR_NAMES = ("red", "yellow", "green", "blue", "purple", "orange")
REQUIRED_KEYS = ("task_id", "text", "image_path", "sub_task", "questions", "extra_frame")


def find_json(data: str) -> str:
    """The dataset JSON: ``data`` itself if it is a file, else ``data/v5.json`` (or the only *.json)."""
    if os.path.isfile(data):
        return data
    if not os.path.isdir(data):
        raise MissingFileError(f"RISE data {data!r}: no such file or folder")
    cand = os.path.join(data, "v5.json")
    if os.path.isfile(cand):
        return cand
    jsons = sorted(f for f in os.listdir(data) if f.lower().endswith(".json"))
    if len(jsons) == 1:
        return os.path.join(data, jsons[0])
    raise MissingFileError(
        f"RISE data folder {data!r}: no v5.json" + (f" and several JSON files ({', '.join(jsons)})" if jsons else "")
    )


def category_of(task_id: str) -> str:
    """Category slug from the ``task_id`` prefix (``com_3`` → ``commonsense``); KeyError if unknown."""
    prefix = str(task_id).split("_", 1)[0].lower()[:3]
    if prefix not in CATEGORIES:
        raise KeyError(f"task_id {task_id!r}: unknown category prefix {prefix!r} (known: {', '.join(CATEGORIES)})")
    return CATEGORIES[prefix][0]


def parse_extra_frame(value: Any) -> int | str:
    """``extra_frame`` as an int fps (> 0), ``-1`` or one of ``maze``/``sym``/``gt``."""
    if isinstance(value, bool):
        raise ValueError(f"extra_frame must be an int or one of {PUZZLE_MODES}, got a bool")
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, str):
        s = value.strip().lower()
        if s in PUZZLE_MODES:
            return s
        try:
            value = int(s)
        except ValueError:
            raise ValueError(f"extra_frame {value!r} is neither an int nor one of {PUZZLE_MODES}") from None
    if not isinstance(value, int):
        raise ValueError(f"extra_frame must be an int or one of {PUZZLE_MODES}, got {type(value).__name__}")
    if value == -1 or value > 0:
        return value
    raise ValueError(f"extra_frame {value} is not an fps > 0 or -1")


def parse_reverse(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if value is None:
        return False
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "yes", "no", "1", "0", ""):
        return value.strip().lower() in ("true", "yes", "1")
    raise ValueError(f"reverse must be a bool or 'TRUE'/'FALSE', got {value!r}")


def _resolve(folder: str, path: str) -> str:
    return path if os.path.isabs(path) else os.path.normpath(os.path.join(folder, path))


class _FieldError(ValueError):
    def __init__(self, field: str, reason: str):
        super().__init__(reason)
        self.field = field


def _record_to_sample(rec: Any, folder: str, check_files: bool) -> Sample:
    if not isinstance(rec, dict):
        raise _FieldError(WHOLE_RECORD, f"record is a {type(rec).__name__}, not an object")
    bad_text = field_with_bad_text(rec)
    if bad_text:
        raise _FieldError(bad_text, "text that is not valid UTF-8 (undecodable bytes in the file)")
    missing = [k for k in REQUIRED_KEYS if k not in rec]
    if missing:
        raise _FieldError(", ".join(missing), f"missing key(s) {', '.join(missing)}")
    task_id = rec["task_id"]
    if not isinstance(task_id, str) or not task_id:
        raise _FieldError("task_id", f"task_id must be a non-empty string, got {task_id!r}")
    try:
        check_safe_id(task_id, "task_id")
        category = category_of(task_id)
    except (ValueError, KeyError) as exc:
        raise _FieldError("task_id", exc.args[0] if exc.args else str(exc)) from None
    for key in ("text", "image_path", "sub_task"):
        if not isinstance(rec[key], str):
            raise _FieldError(key, f"{key} must be a string, got {type(rec[key]).__name__} {rec[key]!r}")
    questions = rec["questions"]
    if not isinstance(questions, list) or not all(isinstance(q, str) for q in questions):
        raise _FieldError("questions", f"questions must be a list of strings, got {questions!r}"[:300])
    try:
        extra = parse_extra_frame(rec["extra_frame"])
    except ValueError as exc:
        raise _FieldError("extra_frame", str(exc)) from None
    ref_path = rec.get("ref_path") or ""
    color = rec.get("color_name") or ""
    for key, v in (("ref_path", ref_path), ("color_name", color)):
        if not isinstance(v, str):
            raise _FieldError(key, f"{key} must be a string, got {type(v).__name__} {v!r}")
    if extra in ("sym", "gt") and not ref_path:
        raise _FieldError("ref_path", f"extra_frame {extra!r} needs a ref_path (the ground-truth image)")
    if extra == "sym" and color.lower() not in COLOR_NAMES:
        raise _FieldError("color_name", f"extra_frame 'sym' needs color_name in {COLOR_NAMES}, got {color!r}")
    try:
        reverse = parse_reverse(rec.get("reverse", False))
    except ValueError as exc:
        raise _FieldError("reverse", str(exc)) from None
    intent = rec.get("intent_classification", "REALISTIC")
    if not isinstance(intent, str):
        raise _FieldError("intent_classification", f"intent_classification must be a string, got {intent!r}")
    if check_files:
        for key, p in (("image_path", rec["image_path"]), ("ref_path", ref_path)):
            if p and not os.path.isfile(_resolve(folder, p)):
                raise _FieldError(key, f"{key} {p!r} not found (resolved to {_resolve(folder, p)})")
    kind = "focus" if extra == "gt" else "question"
    rubric = [RubricItem(id=f"q{i + 1}", kind=kind, text=q, expected=None if kind == "focus" else "yes")
              for i, q in enumerate(questions)]
    metadata: dict[str, Any] = {
        "extra_frame": extra,
        "ref_path": ref_path,
        "color_name": color.lower(),
        "reverse": reverse,
        "intent_classification": intent,
        "sub_task": rec["sub_task"],
    }
    for key in ("video_path", "frame_path"):
        if key in rec:
            metadata[key] = rec[key]
    return Sample(
        id=task_id,
        benchmark="rise",
        category=category,
        task=rec["sub_task"],
        mode=Mode.ti2v,
        prompt=rec["text"],
        input_image=rec["image_path"] or None,
        reference_image=ref_path or None,
        rubric=rubric,
        root=folder,
        metadata=metadata,
    )


def load_rise(data: str, *, check_files: bool = True) -> LoadResult:
    """Load every record of the dataset at ``data`` (folder or JSON file).

    Image paths are resolved against the folder holding the JSON. ``check_files`` makes a
    record whose first-frame or reference image is missing an error (the record is skipped).
    Raises only when the file itself cannot be read or is not a JSON list (``ValueError`` naming
    the file and the line).
    """
    path = find_json(data)
    folder = os.path.dirname(os.path.abspath(path))
    with open(path, "rb") as fh:
        text = decode_utf8(fh.read())
    bad: dict[int, str] = {}
    try:
        records = json.loads(text)
    except RecursionError:  # an item nested too deep: the others still load, that one is an error
        items = json_list_items(path, text)
        records = [rec for _, _, rec, _ in items]
        lines = [line for _, line, _, _ in items]
        bad = {i: err for i, _, _, err in items if err}
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg} at column {exc.colno})") from None
    else:
        if not isinstance(records, list):
            raise ValueError(f"{path}: expected a JSON list of records, got {type(records).__name__}")
        lines = json_items_with_lines(text, records)
    out = LoadResult(source=path)
    seen: set[str] = set()
    for i, rec in enumerate(records):
        tid = rec.get("task_id", "") if isinstance(rec, dict) else ""
        where = f"{path}:{lines[i]} (item {i})"
        if i in bad:
            out.errors.append(load_error(where, WHOLE_RECORD, bad[i], file=path, line=lines[i], item=i, index=i))
            continue
        try:
            sample = _record_to_sample(rec, folder, check_files)
            if sample.id in seen:
                raise _FieldError("task_id", f"duplicate task_id {sample.id!r}")
        except _FieldError as exc:
            out.errors.append(load_error(where, exc.field, str(exc), file=path, line=lines[i], item=i, index=i,
                                         task_id=tid if isinstance(tid, str) else repr(tid)))
            continue
        seen.add(sample.id)
        out.samples.append(sample)
    return out


def _under(path: str, folder: str) -> bool:
    try:
        return os.path.commonpath([os.path.abspath(path), os.path.abspath(folder)]) == os.path.abspath(folder)
    except ValueError:
        return False


def rise_video_path(videos_root: str, model: str, sample: Sample) -> str | None:
    """The video of ``sample`` for ``model``, or ``None`` when it is missing.

    Tries ``{videos_root}/{model}/{category}/{task_id}{ext}`` (the category folder spelled as the
    slug, the code's slug, the display name or the 3-letter prefix; ext .mp4, .webm, …), then
    the record's ``video_path`` — relative paths resolved against ``{videos_root}/{model}`` and
    ``{videos_root}``, and only accepted when the file lies inside ``{videos_root}/{model}`` (a
    ``video_path`` written for one model is never used for another). By convention the file
    name is the sample's ``task_id``; no other sample's file is ever matched.
    """
    model_dir = os.path.join(videos_root, model)
    cat = sample.category
    folders = [cat, *_FOLDER_ALIASES.get(cat, ()), sample.metadata.get("sub_task", "")]
    for folder in dict.fromkeys(f for f in folders if f):
        for ext in VIDEO_EXTS:
            cand = os.path.join(model_dir, folder, sample.id + ext)
            if os.path.isfile(cand):
                return cand
    vp = sample.metadata.get("video_path")
    if isinstance(vp, str) and vp:
        cands = [vp] if os.path.isabs(vp) else [os.path.join(model_dir, vp), os.path.join(videos_root, vp)]
        for cand in cands:
            if os.path.isfile(cand) and _under(cand, model_dir):
                return os.path.normpath(cand)
    return None
