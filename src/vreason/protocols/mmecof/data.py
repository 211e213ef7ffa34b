"""MME-CoF-Pro loader with a declarative field map.

The released field names of ``yqi19/mme-cof-pro`` are not public (official-code.md §4), so
records are read through a :class:`FieldMap`: for each logical field a list of candidate
names, the first one present in a record wins. The documented default
(:data:`DEFAULT_FIELD_MAP`) covers the obvious spellings; a YAML file overrides it::

    # mmecof_fields.yaml — every key optional; a string or a list of candidate names
    id: question_id
    category: [category, task_type]
    image: image_path
    visual_hint_image: hint_image_path
    prompt_no_hint: instruction
    prompt_text_hint: instruction_text_hint
    prompt_visual_hint: instruction_visual_hint   # no default: see MmeCofProtocol visual_prompt
    text_hint: hint            # used only when prompt_text_hint is absent: prompt + " " + hint
    steps: reasoning_steps     # a list of strings, or one string with one step per line

A record that lacks a required field fails with a message that lists the fields it has.
Required: id, category, image, prompt_no_hint, steps, and either prompt_text_hint or text_hint.
"""

from __future__ import annotations

import json
import numbers
import os
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator

from vreason.core.errors import ConfigError
from vreason.core.records import Mode, RubricItem, Sample, safe_id_from
from vreason.data.loaderrors import (
    WHOLE_RECORD,
    RecordFieldError,
    decode_utf8,
    field_with_bad_text,
    json_items_with_lines,
    jsonl_file_records,
    load_error,
    read_field_map,
)

CATEGORIES: tuple[str, ...] = (
    "Visual Detail", "3D Geometry", "Real-world Spatial", "Visual Trace", "Physics-based", "2D Geometry",
    "Table & Chart", "Object Counting", "GUI", "Rotation", "Medical", "Embodied", "4D Dynamics",
    "Natural Science", "Text-based", "Visual Logical",
)
"""The 16 categories (website tab names)."""
VISUAL_HINT_CATEGORIES: tuple[str, ...] = (
    "4D Dynamics", "Embodied", "GUI", "Medical", "Object Counting", "Table & Chart", "Visual Detail",
    "Visual Trace",
)
"""The 8 categories with a visual-hint setting (MME-CoF-Pro-mini; the paper's Table 2)."""
HINTS: tuple[str, ...] = ("none", "text", "visual")


def _norm_cat(text: str) -> str:
    t = str(text).lower().replace("&", " and ").replace("_", " ").replace("-", " ")
    t = re.sub(r"\b(reasoning|domain)\b", " ", t)
    return re.sub(r"[^a-z0-9]+", "", t)


_CANON = {_norm_cat(c): c for c in CATEGORIES}
_CANON[_norm_cat("Table and Chart")] = "Table & Chart"
_CANON[_norm_cat("Natural Science")] = "Natural Science"
_CANON[_norm_cat("Physics")] = "Physics-based"
_CANON[_norm_cat("Real World Spatial")] = "Real-world Spatial"


def canonical_category(text: str) -> str | None:
    """The canonical category name for e.g. ``"Table and Chart Reasoning"``, or ``None``."""
    return _CANON.get(_norm_cat(text))


class FieldMap(BaseModel):
    """Logical field → candidate record keys (first present wins)."""

    model_config = ConfigDict(extra="forbid")

    id: list[str] = ["id", "sample_id", "question_id", "qid", "index"]
    category: list[str] = ["category", "task", "task_type", "type"]
    image: list[str] = ["image", "image_path", "input_image", "input_image_path", "first_image_path"]
    visual_hint_image: list[str] = ["visual_hint_image", "image_visual_hint", "visual_hint_image_path",
                                    "hint_image", "hint_image_path"]
    prompt_no_hint: list[str] = ["prompt_no_hint", "no_hint_prompt", "prompt", "instruction", "question"]
    prompt_text_hint: list[str] = ["prompt_text_hint", "text_hint_prompt", "prompt_with_text_hint"]
    prompt_visual_hint: list[str] = ["prompt_visual_hint", "visual_hint_prompt", "prompt_with_visual_hint"]
    text_hint: list[str] = ["text_hint", "hint"]
    steps: list[str] = ["reasoning_steps", "steps", "key_steps", "rubric", "reasoning_score_rubric"]

    @field_validator("*", mode="before")
    @classmethod
    def _listify(cls, v: Any) -> Any:
        return [v] if isinstance(v, str) else v


DEFAULT_FIELD_MAP = FieldMap()


def load_field_map(spec: str | dict[str, Any] | FieldMap | None) -> FieldMap:
    """A FieldMap from ``None`` (default), a dict, or a YAML file; entries given replace defaults."""
    return read_field_map(spec, FieldMap, DEFAULT_FIELD_MAP, "bad field map")

def _present(v: Any) -> bool:
    if v is None or (isinstance(v, float) and v != v):
        return False
    if isinstance(v, str) and not v.strip():
        return False
    return True


def _pick(rec: dict[str, Any], names: list[str]) -> tuple[str | None, Any]:
    for n in names:
        if n in rec and _present(rec[n]):
            return n, rec[n]
    return None, None


def parse_steps(value: Any) -> list[str]:
    """Reasoning steps from a list (of strings or ``{"step"/"text": ...}`` dicts) or a multi-line
    string (``1. ...`` numbering stripped)."""
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, str):
        s = value.strip()
        if s.startswith("["):
            try:
                return parse_steps(json.loads(s))
            except (json.JSONDecodeError, RecursionError):
                pass
        value = [ln for ln in s.splitlines() if ln.strip()]
    if not isinstance(value, list):
        raise ValueError(f"steps must be a list or a string, got {type(value).__name__}")
    out = []
    for item in value:
        if isinstance(item, dict):
            item = next((item[k] for k in ("step", "text", "description", "content") if k in item), None)
        if not isinstance(item, str):
            raise ValueError(f"step {item!r} is not text")
        text = re.sub(r"^\s*(step\s*)?\d+\s*[.):]\s*", "", item, flags=re.I).strip()
        if text:
            out.append(text)
    if not out:
        raise ValueError("no reasoning steps")
    return out


def _text(where: str, key: str, value: Any) -> str:
    if not isinstance(value, str):
        raise RecordFieldError(where, key, f"{key} must be a string, got {type(value).__name__} {value!r}")
    return value


def record_to_sample(rec: dict[str, Any], fmap: FieldMap, *, root: str | None, where: str) -> Sample:
    """One record → Sample; raises :class:`~vreason.data.loaderrors.RecordFieldError` naming the
    record field at fault (the logical field's name when the record has none of its candidates)."""
    found = ", ".join(sorted(map(str, rec))) or "(none)"

    def need(field: str) -> tuple[str, Any]:
        key, val = _pick(rec, getattr(fmap, field))
        if key is None:
            raise RecordFieldError(where, field, f"record does not fit the field map: no field for {field!r} "
                                   f"(tried {', '.join(getattr(fmap, field))}); fields found: {found}. "
                                   "Pass a field map YAML naming the right fields.")
        return key, val

    id_key, rid = need("id")
    if isinstance(rid, bool) or not isinstance(rid, (str, numbers.Integral)):
        raise RecordFieldError(where, id_key, f"{id_key} must be a string or an integer, got "
                               f"{type(rid).__name__} {rid!r}")
    cat_key, cat = need("category")
    cat = _text(where, cat_key, cat)
    _, image = need("image")
    prompt_key, prompt = need("prompt_no_hint")
    prompt = _text(where, prompt_key, prompt)
    steps_key, steps_raw = need("steps")
    tp_key, text_prompt = _pick(rec, fmap.prompt_text_hint)
    if text_prompt is None:
        hint_key, hint = _pick(rec, fmap.text_hint)
        if hint is None:
            raise RecordFieldError(where, "prompt_text_hint", "record does not fit the field map: no text-hint "
                                   f"prompt (tried {', '.join(fmap.prompt_text_hint)}) nor a text hint (tried "
                                   f"{', '.join(fmap.text_hint)}); fields found: {found}")
        text_prompt = f"{prompt.rstrip()} {_text(where, str(hint_key), hint).strip()}"
    else:
        text_prompt = _text(where, str(tp_key), text_prompt)
    vis_image_key, vis_image = _pick(rec, fmap.visual_hint_image)
    vp_key, vis_prompt = _pick(rec, fmap.prompt_visual_hint)
    if vis_prompt is not None:
        vis_prompt = _text(where, str(vp_key), vis_prompt)
    try:
        steps = parse_steps(steps_raw)
    except ValueError as exc:
        raise RecordFieldError(where, steps_key, f"sample {rid}: {exc}") from None
    category = canonical_category(cat) or cat.strip()
    for key, label, p in ((fmap_key(rec, fmap.image), "image", image),
                          (vis_image_key, "visual hint image", vis_image)):
        if p is not None and not isinstance(p, str):
            raise RecordFieldError(where, str(key), f"sample {rid}: {label} must be a file path, got "
                                   f"{type(p).__name__}")
        if p and root and not os.path.exists(p if os.path.isabs(p) else os.path.join(root, p)):
            raise RecordFieldError(where, str(key), f"sample {rid}: {label} {p!r} does not exist under {root}")
    variants = {"text": text_prompt}
    has_visual = vis_image is not None
    if has_visual and vis_prompt is not None:
        variants["visual"] = vis_prompt
    # without a visual-hint prompt nothing is filled in here: a visual-hint run reports the
    # sample, or pairs the annotated image with the text-hint prompt only when asked to
    # (MmeCofProtocol option visual_prompt=text_hint)
    return Sample(
        id=safe_id_from(str(int(rid)) if isinstance(rid, numbers.Integral) else rid),
        benchmark="mmecof",
        category=category,
        task=category,
        mode=Mode.i2v,
        prompt=prompt,
        prompt_variants=variants,
        input_image=image,
        rubric=[RubricItem(id=f"s{i}", kind="step", text=s, expected="yes") for i, s in enumerate(steps, 1)],
        root=root,
        metadata={"visual_hint_image": vis_image, "has_visual_hint": has_visual,
                  "has_visual_hint_prompt": vis_prompt is not None, "source_id": str(rid),
                  "known_category": category in CATEGORIES},
    )


def fmap_key(rec: dict[str, Any], names: list[str]) -> str | None:
    """The record key a field-map entry resolved to."""
    return _pick(rec, names)[0]


Row = tuple[str, "dict[str, Any] | None", "dict[str, str] | None"]


def _object_rows(where: str, rec: Any, bad_utf8: str | None = None) -> Row:
    """``(where, record, None)`` for a usable object, else ``(where, None, error)``."""
    if not isinstance(rec, dict):
        return where, None, load_error(where, WHOLE_RECORD, f"expected a JSON object, got {type(rec).__name__}")
    fld = field_with_bad_text(rec)
    if bad_utf8 or fld:
        return where, None, load_error(where, fld or WHOLE_RECORD, bad_utf8 or "text that is not valid UTF-8")
    return where, rec, None


def _read(path: str) -> list[Row]:
    """``(where, record, error)`` per record of a JSONL (``file:line``), JSON (``file:line (item i)``
    for a top-level list, ``file (key item i)`` for a list under a key) or parquet (``file[i]``) file.
    A damaged record (invalid UTF-8, not JSON, not an object) is an error row, never an exception;
    a file that cannot be read at all raises (``OSError`` / ``ValueError``)."""
    if path.endswith(".parquet"):
        import pandas as pd

        return [_object_rows(f"{path}[{i}]", r) for i, r in enumerate(pd.read_parquet(path).to_dict(orient="records"))]
    if path.endswith(".json"):
        with open(path, "rb") as fh:
            text = decode_utf8(fh.read())
        try:
            top = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg} at column {exc.colno})") from None
        except RecursionError:
            raise ValueError(f"{path}: nested deeper than can be parsed (hostile or damaged file)") from None
        if isinstance(top, list):
            lines = json_items_with_lines(text, top)
            return [_object_rows(f"{path}:{lines[i]} (item {i})", r) for i, r in enumerate(top)]
        if isinstance(top, dict):
            key = next((k for k, v in top.items() if isinstance(v, list)), None)
            if key is None:
                return [_object_rows(path, top)]
            return [_object_rows(f"{path} ({key} item {i})", r) for i, r in enumerate(top[key])]
        raise ValueError(f"{path}: expected a JSON list of records, got {type(top).__name__}")
    out: list[Row] = []
    for where, rec, bad_utf8, err in jsonl_file_records(path):  # line by line, each line bounded
        if err is not None:
            out.append((where, None, err))
            continue
        out.append(_object_rows(where, rec, bad_utf8))
    return out


def load_mmecof(path: str, *, field_map: str | dict[str, Any] | FieldMap | None = None, root: str | None = None):
    """Load MME-CoF-Pro from a JSONL / JSON / parquet file or a folder holding one.

    Returns a :class:`~vreason.core.protocol.LoadResult`; a bad record becomes one error
    (``{"where", "field", "reason"}``, see :mod:`vreason.data.loaderrors`) and the rest load. A
    misfit record's reason lists the fields found.
    """
    from vreason.core.protocol import LoadResult

    fmap = load_field_map(field_map)
    result = LoadResult()
    data_file = path
    if os.path.isdir(path):
        files = sorted(f for f in os.listdir(path) if f.endswith((".jsonl", ".json", ".parquet")))
        if not files:
            result.errors.append(load_error(path, WHOLE_RECORD, "no .jsonl/.json/.parquet file in this folder"))
            return result
        data_file = os.path.join(path, files[0])
    elif not os.path.exists(path):
        result.errors.append(load_error(path, WHOLE_RECORD, "no such file"))
        return result
    root = root if root is not None else os.path.dirname(os.path.abspath(data_file))
    try:
        rows = _read(data_file)
    except Exception as exc:  # noqa: BLE001 - reported per file
        result.errors.append(load_error(data_file, WHOLE_RECORD, f"cannot read: {type(exc).__name__}: {exc}"))
        return result
    seen: dict[str, str] = {}
    for where, rec, err in rows:
        if err is not None or rec is None:
            result.errors.append(err or load_error(where, WHOLE_RECORD, "empty record"))
            continue
        try:
            s = record_to_sample(rec, fmap, root=root, where=where)
        except RecordFieldError as exc:
            result.errors.append(exc.as_dict())
            continue
        if s.id in seen:
            id_key = fmap_key(rec, fmap.id) or "id"
            result.errors.append(load_error(where, id_key, f"duplicate id {s.id} (first at {seen[s.id]})"))
            continue
        seen[s.id] = where
        result.samples.append(s.model_copy(update={"metadata": {**s.metadata, "record": where}}))
    return result


def hint_inputs(sample: Sample, hint: str) -> tuple[str, str | None]:
    """(prompt, image path) a generator gets under a hint setting; ``KeyError`` if not available."""
    if hint not in HINTS:
        raise ConfigError(f"hint must be one of {', '.join(HINTS)}, got {hint!r}")
    if hint == "none":
        return sample.prompt, sample.resolve(sample.input_image)
    if hint == "text":
        return sample.prompt_for("text"), sample.resolve(sample.input_image)
    if not sample.metadata.get("has_visual_hint"):
        raise KeyError(f"sample {sample.id} has no visual hint")
    if "visual" not in sample.prompt_variants:
        raise KeyError(f"sample {sample.id} has a visual-hint image but no visual-hint prompt")
    return sample.prompt_for("visual"), sample.resolve(sample.metadata["visual_hint_image"])
