"""TiViBench loader: the documented release layout plus vreason's per-sample annotations.

Layout (README of the release; its evaluation data is not public yet, official-code.md §2)::

    DATA/
      eval_cache/SS_prompt.json  SV_prompt.json  SL_prompt.json  AT_prompt.json
      eval_cache/<DIM>/<key>/end.png             ground-truth end state (optional per sample)
      images/<DIM>/<key>.png                     first frame (the model's input)
      vreason_annotations.jsonl                  how to score each sample (tivibench_schema.TiviAnnotation)

``<key>`` is ``<difficulty>_<type>_<NNN>`` (e.g. ``easy_graph_001``). A sample's id is ``<DIM>_<key>``,
the folder name of its videos in the release's video layout (``<DIM>_<key>/<DIM>_<key>-{0..4}.mp4``, the
importer's ``tivibench`` convention).

The prompt files' schema is unpublished. They are read through a :class:`TiviFieldMap` (like the
MME-CoF-Pro loader): a record's key is the first of ``key`` candidates present, its prompt the first of
``prompt`` candidates. Accepted shapes: ``{key: "prompt"}``, ``{key: {"prompt": …}}``, a list of records,
or an object holding one such list (``{"data": [...]}``). Keys may be given as file names or paths
(``images/SS/easy_graph_001.png`` → ``easy_graph_001``) and with the dimension prefix (``SS_easy_…``).

A sample without an annotation gets its task type's default metric family only when that family needs no
per-sample parameters; otherwise it is a per-record load error naming the missing annotation.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError, field_validator

from vreason.core.records import Mode, Sample
from vreason.data.loaderrors import WHOLE_RECORD, decode_utf8, jsonl_file_records, load_error, read_field_map
from vreason.verify.annotations import DIMENSIONS, TASK_TYPES, MetricParams, TiviAnnotation

BENCHMARK = "tivibench"
ANNOTATIONS = "vreason_annotations.jsonl"
KEY_RE = re.compile(r"^(easy|medium|hard)_([A-Za-z0-9]+(?:[_-][A-Za-z0-9]+)*?)_(\d+)$")
IMAGE_EXTS = (".png", ".jpg", ".jpeg", ".webp")
_METRIC = TypeAdapter(MetricParams)


class TiviFieldMap(BaseModel):
    """Logical field → candidate record keys of the prompt files (first present wins)."""

    model_config = ConfigDict(extra="forbid")

    key: list[str] = ["key", "id", "name", "sample_id", "image", "image_name", "image_path", "file_name",
                      "filename"]
    prompt: list[str] = ["prompt", "text", "instruction", "caption", "description"]

    @field_validator("*", mode="before")
    @classmethod
    def _listify(cls, v: Any) -> Any:
        return [v] if isinstance(v, str) else v


def load_field_map(spec: str | dict[str, Any] | TiviFieldMap | None) -> TiviFieldMap:
    """A field map from ``None`` (the default), a mapping or a YAML file; entries given replace defaults."""
    return read_field_map(spec, TiviFieldMap, TiviFieldMap(), "tivibench field map")


def normalise_key(raw: Any, dim: str) -> str | None:
    """``images/SS/SS_easy_graph_001.png`` → ``easy_graph_001``; ``None`` when it is not a key."""
    if isinstance(raw, bool) or not isinstance(raw, str):
        return None
    stem = os.path.splitext(os.path.basename(raw.strip().replace("\\", "/")))[0]
    if stem.startswith(f"{dim}_"):
        stem = stem[len(dim) + 1:]
    return stem if KEY_RE.match(stem) else None


def task_of_key(key: str) -> str | None:
    """The task type spelled in a key (``easy_odd_one_out_003`` → ``oddoneout``), if it is a known one."""
    m = KEY_RE.match(key)
    if not m:
        return None
    spelled = m.group(2).lower()
    for cand in (spelled, spelled.replace("_", "").replace("-", "")):
        if cand in TASK_TYPES:
            return cand
    return None


def _pick(rec: dict[str, Any], names: list[str]) -> tuple[str | None, Any]:
    for n in names:
        if n in rec and rec[n] is not None:
            return n, rec[n]
    return None, None


def prompt_records(path: str, dim: str, fmap: TiviFieldMap) -> tuple[list[tuple[str, str, str]], list[dict]]:
    """``([(where, key, prompt)], errors)`` of one ``<DIM>_prompt.json`` in any accepted shape."""
    rows: list[tuple[str, str, str]] = []
    errors: list[dict] = []
    with open(path, "rb") as fh:
        text = decode_utf8(fh.read())
    try:
        top = json.loads(text)
    except RecursionError:  # an item nested too deep: the others of a list still load
        from vreason.data.loaderrors import TOO_DEEP, json_list_items

        if not text.lstrip().startswith("["):
            return [], [load_error(path, WHOLE_RECORD, TOO_DEEP, file=path)]
        try:
            listed = json_list_items(path, text)
        except ValueError as exc:
            return [], [load_error(path, WHOLE_RECORD, str(exc), file=path)]
        errors += [load_error(f"{path}:{line} (item {i})", WHOLE_RECORD, err, file=path, line=line)
                   for i, line, _, err in listed if err]
        top = [item for _, _, item, err in listed if not err]
    except json.JSONDecodeError as exc:
        return [], [load_error(f"{path}:{exc.lineno}", WHOLE_RECORD, f"not valid JSON ({exc.msg})")]
    items: list[tuple[str, Any, Any]] = []  # (where, key given by the container or None, record)
    if isinstance(top, dict):
        lists = [k for k, v in top.items() if isinstance(v, list)]
        if len(top) == 1 and lists:
            items = [(f"{path} ({lists[0]}[{i}])", None, r) for i, r in enumerate(top[lists[0]])]
        else:
            items = [(f"{path} (key {k!r})", k, v) for k, v in top.items()]
    elif isinstance(top, list):
        items = [(f"{path}[{i}]", None, r) for i, r in enumerate(top)]
    else:
        return [], [load_error(path, WHOLE_RECORD, f"expected a JSON object or list, got {type(top).__name__}")]
    for where, given, rec in items:
        if isinstance(rec, str) and given is not None:
            raw_key, prompt = given, rec
        elif isinstance(rec, dict):
            kfield, raw_key = _pick(rec, fmap.key)
            if raw_key is None:
                raw_key = given
            pfield, prompt = _pick(rec, fmap.prompt)
            if raw_key is None:
                errors.append(load_error(where, "key", f"no key field (tried {', '.join(fmap.key)}); fields "
                                         f"found: {', '.join(sorted(map(str, rec))) or '(none)'}"))
                continue
            if prompt is None:
                errors.append(load_error(where, "prompt", f"no prompt field (tried {', '.join(fmap.prompt)}); "
                                         f"fields found: {', '.join(sorted(map(str, rec))) or '(none)'}"))
                continue
        else:
            errors.append(load_error(where, WHOLE_RECORD, f"expected a prompt string or an object, got "
                                     f"{type(rec).__name__}"))
            continue
        key = normalise_key(raw_key, dim)
        if key is None:
            errors.append(load_error(where, "key", f"{raw_key!r} is not a TiViBench key "
                                     "(<easy|medium|hard>_<type>_<NNN>)"))
            continue
        if not isinstance(prompt, str) or not prompt.strip():
            errors.append(load_error(where, "prompt", f"prompt of {key} must be non-empty text"))
            continue
        rows.append((where, key, prompt))
    return rows, errors


def read_annotations(path: str) -> tuple[dict[tuple[str, str], tuple[str, TiviAnnotation]], list[dict]]:
    """``({(dimension, key): (where, annotation)}, errors)``; a bad or duplicate line is an error."""
    out: dict[tuple[str, str], tuple[str, TiviAnnotation]] = {}
    errors: list[dict] = []
    for where, rec, bad_utf8, err in jsonl_file_records(path):  # line by line, each line bounded
        if err is not None or bad_utf8:
            errors.append(err or load_error(where, WHOLE_RECORD, bad_utf8 or "unreadable"))
            continue
        if not isinstance(rec, dict):
            errors.append(load_error(where, WHOLE_RECORD, f"expected a JSON object, got {type(rec).__name__}"))
            continue
        try:
            ann = TiviAnnotation.model_validate(rec)
        except ValidationError as exc:
            e = exc.errors()[0]
            loc = ".".join(str(x) for x in e.get("loc", ())) or WHOLE_RECORD
            errors.append(load_error(where, loc.split(".")[0], f"annotation {rec.get('key', '?')}: {loc}: "
                                     f"{str(e.get('msg')).removeprefix('Value error, ')}"))
            continue
        k = (ann.dimension, ann.key)
        if k in out:
            errors.append(load_error(where, "key", f"duplicate annotation for {ann.dimension}_{ann.key} (first at "
                                     f"{out[k][0]})"))
            continue
        out[k] = (where, ann)
    return out, errors


def default_metric(task_type: str) -> tuple[dict[str, Any] | None, str]:
    """The task type's default family with default parameters, or ``(None, what is missing)``."""
    family = TASK_TYPES[task_type][2]
    try:
        return _METRIC.validate_python({"family": family}).model_dump(mode="json"), ""
    except ValidationError as exc:
        missing = sorted({str(e["loc"][1]) for e in exc.errors() if e["type"] == "missing" and len(e["loc"]) > 1})
        return None, f"its default metric {family!r} needs per-sample parameters ({', '.join(missing)})"


def _image(root: str, rel_dir: str, stem: str) -> str | None:
    for ext in IMAGE_EXTS:
        rel = f"{rel_dir}/{stem}{ext}"
        if os.path.isfile(os.path.join(root, rel)):
            return rel
    return None


def load_tivibench(root: str, *, field_map: str | dict[str, Any] | TiviFieldMap | None = None,
                   annotations: str | None = None, dimensions: list[str] | None = None):
    """Load TiViBench from a release folder → ``LoadResult`` (samples + one error per bad record)."""
    from vreason.core.protocol import LoadResult

    res = LoadResult()
    if not os.path.isdir(root):
        res.errors.append(load_error(root, WHOLE_RECORD, "data folder does not exist"))
        return res
    root = os.path.abspath(root)
    fmap = load_field_map(field_map)
    ann_path = annotations or os.path.join(root, ANNOTATIONS)
    anns: dict[tuple[str, str], tuple[str, TiviAnnotation]] = {}
    if os.path.isfile(ann_path):
        anns, errs = read_annotations(ann_path)
        res.errors += errs
    elif annotations:
        res.errors.append(load_error(annotations, WHOLE_RECORD, "annotations file does not exist"))
    dims = [d for d in DIMENSIONS if not dimensions or d in dimensions]
    used: set[tuple[str, str]] = set()
    found_any = False
    for dim in dims:
        pfile = os.path.join(root, "eval_cache", f"{dim}_prompt.json")
        if not os.path.isfile(pfile):
            continue
        found_any = True
        try:
            rows, errs = prompt_records(pfile, dim, fmap)
        except OSError as exc:
            res.errors.append(load_error(pfile, WHOLE_RECORD, f"cannot read: {exc}"))
            continue
        res.errors += errs
        seen: dict[str, str] = {}
        for where, key, prompt in rows:
            if key in seen:
                res.errors.append(load_error(where, "key", f"duplicate key {key} (first at {seen[key]})"))
                continue
            seen[key] = where
            used.add((dim, key))
            sample, err = _sample(root, dim, key, prompt, where, anns.get((dim, key)))
            if err:
                res.errors.append(err)
            else:
                res.samples.append(sample)
    if not found_any:
        res.errors.append(load_error(os.path.join(root, "eval_cache"), WHOLE_RECORD,
                                     "no <DIM>_prompt.json (SS, SV, SL, AT) under eval_cache/"))
    for (dim, key), (where, _) in sorted(anns.items()):
        if dim in dims and (dim, key) not in used:
            res.errors.append(load_error(where, "key", f"annotation for {dim}_{key}, which no prompt file lists"))
    return res


def _sample(root: str, dim: str, key: str, prompt: str, where: str,
            ann: tuple[str, TiviAnnotation] | None) -> tuple[Sample | None, dict | None]:
    sid = f"{dim}_{key}"
    difficulty = KEY_RE.match(key).group(1)  # type: ignore[union-attr]
    if ann is not None:
        a = ann[1]
        if a.difficulty != difficulty:
            return None, load_error(ann[0], "difficulty", f"{sid}: annotation says {a.difficulty}, the key says "
                                    f"{difficulty}")
        if TASK_TYPES[a.task_type][0] != dim:
            return None, load_error(ann[0], "task_type", f"{sid}: task type {a.task_type} belongs to dimension "
                                    f"{TASK_TYPES[a.task_type][0]}, not {dim}")
        task, metric, source = a.task_type, a.metric.model_dump(mode="json"), "annotation"
    else:
        task = task_of_key(key)
        if task is None:
            return None, load_error(where, "key", f"{sid}: no annotation in {ANNOTATIONS} and the key's type is not "
                                    f"one of the 24 task types; add an annotation naming task_type and metric")
        if TASK_TYPES[task][0] != dim:
            return None, load_error(where, "key", f"{sid}: task type {task} belongs to dimension "
                                    f"{TASK_TYPES[task][0]}, not {dim}")
        metric, why = default_metric(task)
        if metric is None:
            return None, load_error(where, "annotation", f"{sid}: no annotation in {ANNOTATIONS} and {why}; add "
                                    f"a line with key {key!r}, dimension {dim!r} and its metric")
        source = "default"
    image = _image(root, f"images/{dim}", key)
    if image is None:
        return None, load_error(where, "image", f"{sid}: no first frame images/{dim}/{key}.png")
    end = _image(root, f"eval_cache/{dim}/{key}", "end")
    return Sample(
        id=sid, benchmark=BENCHMARK, category=dim, task=task, difficulty=difficulty, mode=Mode.i2v,
        prompt=prompt, input_image=image, reference_image=end, root=root,
        metadata={"dimension": dim, "dimension_name": DIMENSIONS[dim], "task_type": task,
                  "task_name": TASK_TYPES[task][1], "key": key, "metric": metric, "metric_family": metric["family"],
                  "metric_source": source, "record": where,
                  "note": ann[1].note if ann is not None else ""},
    ), None


__all__ = ["ANNOTATIONS", "BENCHMARK", "KEY_RE", "TiviFieldMap", "default_metric", "load_field_map",
           "load_tivibench", "normalise_key", "prompt_records", "read_annotations", "task_of_key"]
