"""PAI-Bench-U loader (multiple-choice video understanding, ``shi-labs/physical-ai-bench-understanding``).

Each item: ``question``, ``index2ans`` (option letter → text; a JSON string is accepted, ``None`` options
dropped as the released prompt does), ``answer`` (the letter), ``video_path`` (relative to the snapshot
folder, as the released ``run.py`` joins it with ``--local_dir``), ``category``, ``subcategory``.

``--data`` is a records file (JSON list, JSONL or parquet) or a folder holding exactly one of them (a
``test`` split file is preferred: ``test.jsonl``, ``test.json``, ``data/test-*.parquet``). Sample ids come
from an ``id``/``uid`` field when there is one, else ``u<line number>`` in file order. A record missing a
field, or whose answer is not one of its option letters, is an error for that record; the run goes on.
"""

from __future__ import annotations

import glob
import json
import os
from typing import Any

from vreason.core.errors import MissingFileError
from vreason.core.protocol import LoadResult
from vreason.core.records import Mode, RubricItem, Sample, check_safe_id, safe_id_from
from vreason.data.loaderrors import WHOLE_RECORD, field_with_bad_text, json_or_jsonl_records, load_error

REQUIRED = ("question", "index2ans", "answer", "video_path")


class _Bad(Exception):
    def __init__(self, field: str, reason: str):
        super().__init__(reason)
        self.field = field


def find_records(data: str) -> str:
    if os.path.isfile(data):
        return data
    if not os.path.isdir(data):
        raise MissingFileError(f"PAI-Bench-U data {data}: no such file or folder")
    for pattern in ("test.jsonl", "test.json", "data/test-*.parquet", "*test*.parquet", "*.jsonl", "*.json",
                    "*.parquet", "data/*.parquet"):
        found = sorted(glob.glob(os.path.join(data, pattern)))
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            raise MissingFileError(f"PAI-Bench-U data {data}: several record files match {pattern} "
                                    f"({', '.join(os.path.basename(f) for f in found[:4])}); pass one as --data")
    raise MissingFileError(f"PAI-Bench-U data {data}: no records file (test.jsonl, test.json, *.parquet)")


def _records(path: str) -> list[tuple[str, Any, dict[str, str] | None]]:
    if path.endswith(".parquet"):
        import pandas as pd

        df = pd.read_parquet(path)
        return [(f"{path}[{i}]", {k: (v.tolist() if hasattr(v, "tolist") else v) for k, v in rec.items()}, None)
                for i, rec in enumerate(df.to_dict("records"))]
    return json_or_jsonl_records(path, lambda items: items["test"] if isinstance(items, dict)
                                 and isinstance(items.get("test"), list) else items)


def _options(v: Any) -> dict[str, str]:
    if isinstance(v, str):
        try:
            v = json.loads(v)
        except (json.JSONDecodeError, RecursionError):
            raise _Bad("index2ans", "index2ans is text that is not a JSON object") from None
    if not isinstance(v, dict) or not v:
        raise _Bad("index2ans", f"index2ans must be a non-empty mapping letter -> option, got {type(v).__name__}")
    return {str(k): str(t) for k, t in v.items() if t is not None}


def _sample(rec: Any, n: int, root: str, seen: set[str]) -> Sample:
    if not isinstance(rec, dict):
        raise _Bad(WHOLE_RECORD, f"an item must be an object, got {type(rec).__name__}")
    bad_text = field_with_bad_text(rec)
    if bad_text:  # undecodable bytes never reach a Sample (the store could not serialise it)
        raise _Bad(bad_text, "text that is not valid UTF-8 (undecodable bytes in the file)")
    missing = [k for k in REQUIRED if rec.get(k) in (None, "")]
    if missing:
        raise _Bad(missing[0], f"item without {', '.join(missing)} (fields: {', '.join(sorted(map(str, rec)))})")
    for key in ("question", "video_path", "answer"):
        if not isinstance(rec[key], str):
            raise _Bad(key, f"{key} must be text, got {type(rec[key]).__name__}")
    opts = _options(rec["index2ans"])
    norm = {k.lower().replace(".", "").replace(" ", ""): k for k in opts}
    if rec["answer"].lower().replace(".", "").replace(" ", "") not in norm:
        raise _Bad("answer", f"answer {rec['answer']!r} is not one of the option letters {sorted(opts)}")
    raw_id = rec.get("id", rec.get("uid"))
    sid = safe_id_from(str(raw_id)) if raw_id not in (None, "") else f"u{n:05d}"
    try:
        check_safe_id(sid)
    except ValueError as exc:
        raise _Bad("id", str(exc)) from None
    if sid in seen:
        raise _Bad("id", f"duplicate item id {sid!r}")
    seen.add(sid)
    cat, sub = str(rec.get("category") or ""), str(rec.get("subcategory") or "")
    return Sample(id=sid, benchmark="pai-u", category=cat, task=sub, mode=Mode.v2v, prompt=rec["question"],
                  input_video=rec["video_path"], root=os.path.abspath(root),
                  rubric=[RubricItem(id="answer", kind="question", text=rec["question"], expected=rec["answer"])],
                  metadata={"index2ans": opts, "answer": rec["answer"], "video_path": rec["video_path"],
                            "subcategory": sub})


def load_pai_u(data: str, *, video_root: str | None = None) -> LoadResult:
    """Every item as a Sample (video at ``video_root or the data folder`` / ``video_path``)."""
    path = find_records(data)
    root = video_root or (data if os.path.isdir(data) else os.path.dirname(os.path.abspath(path)))
    res = LoadResult()
    seen: set[str] = set()
    for n, (where, rec, err) in enumerate(_records(path)):
        if err is not None:
            res.errors.append(err)
            continue
        try:
            res.samples.append(_sample(rec, n, root, seen))
        except _Bad as exc:
            res.errors.append(load_error(where, exc.field, str(exc)))
    return res


__all__ = ["find_records", "load_pai_u"]
