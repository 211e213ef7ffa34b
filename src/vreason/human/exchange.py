"""Annotations out of and into a run: JSONL (one record a line) or CSV (one column per field, empty = none).

Import validates every row with :func:`vreason.human.store.parse_annotation`; a bad row is reported with its
line number and skipped, the rest are stored (an existing id is replaced, so importing twice is harmless).
"""

from __future__ import annotations

import csv
import json
import os
from dataclasses import dataclass, field
from typing import Any

from vreason.human.records import PairVote, RubricLabel
from vreason.human.store import AnnotationStore, parse_annotation

COLUMNS: list[str] = list(dict.fromkeys([*PairVote.model_fields, *RubricLabel.model_fields]))


def _format(path: str) -> str:
    ext = os.path.splitext(path)[1].lower()
    if ext not in (".jsonl", ".csv"):
        raise ValueError(f"{path}: use a .jsonl or .csv file")
    return ext[1:]


def export_annotations(store: AnnotationStore, out: str) -> int:
    recs = store.all()
    fmt = _format(out)
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w", encoding="utf-8", newline="") as fh:
        if fmt == "jsonl":
            for r in recs:
                fh.write(r.model_dump_json() + "\n")
        else:
            writer = csv.DictWriter(fh, fieldnames=COLUMNS)
            writer.writeheader()
            for r in recs:
                row = {k: ("" if v is None else str(v).lower() if isinstance(v, bool) else v)
                       for k, v in r.model_dump().items()}
                writer.writerow(row)
    return len(recs)


@dataclass
class ImportResult:
    imported: int = 0
    errors: list[tuple[int, str]] = field(default_factory=list)
    """(line number in the file, reason) of each row that was skipped."""


def _rows(path: str, fmt: str) -> list[tuple[int, dict[str, Any] | str]]:
    with open(path, encoding="utf-8", newline="") as fh:
        if fmt == "jsonl":
            return [(i, line) for i, line in enumerate(fh, 1) if line.strip()]
        reader = csv.DictReader(fh)
        out: list[tuple[int, dict[str, Any] | str]] = []
        for row in reader:
            extra = row.pop(None, None)  # type: ignore[call-overload]
            if extra:
                out.append((reader.line_num, f"{len(extra)} cell(s) more than the header"))
                continue
            out.append((reader.line_num, {k: v for k, v in row.items() if k and v not in ("", None)}))
        return out


def import_annotations(store: AnnotationStore, path: str, *, source: str | None = None) -> ImportResult:
    """Store every valid row of ``path``; ``source`` (default: the file's name) marks rows that name none."""
    fmt = _format(path)
    result = ImportResult()
    good = []
    for line, raw in _rows(path, fmt):
        try:
            if isinstance(raw, str) and fmt == "csv":
                raise ValueError(raw)
            data = json.loads(raw) if isinstance(raw, str) else raw
            if not isinstance(data, dict):
                raise ValueError("a row must be an object")
            data.setdefault("source", source or os.path.basename(path))
            good.append(parse_annotation(data))
        except ValueError as exc:  # pydantic's ValidationError and JSONDecodeError are ValueErrors
            result.errors.append((line, " ".join(str(exc).split())[:300]))
    result.imported = store.add_many(good)
    return result
