"""Annotations in the run's own SQLite store (``results.sqlite``, WAL), in tables of their own.

One row per record, committed the moment it is given (an app reload or a killed server loses nothing).
``undo`` deletes an annotator's latest record. Export/import as JSONL or CSV keep every field.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable

from pydantic import TypeAdapter

from vreason.core.errors import MissingFileError
from vreason.human.records import Annotation, PairVote, RubricLabel
from vreason.store import RESULTS_MIGRATIONS, RESULTS_TABLES, RESULTS_VERSION
from vreason.store_schema import Schema, open_versioned, set_wal

_SCHEMA = """
CREATE TABLE IF NOT EXISTS annotations (
  id TEXT PRIMARY KEY, kind TEXT NOT NULL, annotator TEXT NOT NULL, sample_id TEXT NOT NULL,
  created REAL NOT NULL, json TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS annotations_by_person ON annotations (annotator, created);
CREATE TABLE IF NOT EXISTS annotators (name TEXT PRIMARY KEY, created REAL NOT NULL);
"""

ANNOTATIONS_SCHEMA = Schema("results store (annotations)", RESULTS_VERSION, _SCHEMA, RESULTS_TABLES,
                            migrations=RESULTS_MIGRATIONS)
"""The annotation tables live in ``results.sqlite``: the file's version and migrations are the results store's."""

_ADAPTER: TypeAdapter[Annotation] = TypeAdapter(Annotation)


def parse_annotation(obj: dict | str) -> Annotation:
    """A record from a dict or JSON text (``kind`` decides the type); raises ``ValueError`` when invalid."""
    data = json.loads(obj) if isinstance(obj, str) else obj
    return _ADAPTER.validate_python(data)


class AnnotationStore:
    """Annotations of one run folder. Safe to open beside a :class:`~vreason.store.RunStore`."""

    def __init__(self, run_dir: str | os.PathLike):
        self.run_dir = os.path.abspath(str(run_dir))
        db = os.path.join(self.run_dir, "results.sqlite")
        if not os.path.exists(db):
            raise MissingFileError(f"{self.run_dir}: not a vreason run directory (no results.sqlite)")
        self.conn = sqlite3.connect(db, timeout=30, isolation_level=None, check_same_thread=False)
        set_wal(self.conn)
        try:
            open_versioned(self.conn, db, ANNOTATIONS_SCHEMA)
        except BaseException:
            self.conn.close()
            raise

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> AnnotationStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ writing
    def add(self, rec: Annotation) -> Annotation:
        """Store one record now (its own transaction); an existing id is replaced (idempotent import)."""
        self.conn.execute(
            "INSERT OR REPLACE INTO annotations (id, kind, annotator, sample_id, created, json) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (rec.id, rec.kind, rec.annotator, rec.sample_id, rec.created, rec.model_dump_json()))
        return rec

    def add_many(self, recs: Iterable[Annotation]) -> int:
        n = 0
        self.conn.execute("BEGIN")
        try:
            for rec in recs:
                self.add(rec)
                n += 1
            self.conn.execute("COMMIT")
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        return n

    def undo(self, annotator: str) -> Annotation | None:
        """Delete and return ``annotator``'s latest record (None when there is none)."""
        row = self.conn.execute(
            "SELECT id, json FROM annotations WHERE annotator = ? ORDER BY created DESC, rowid DESC LIMIT 1",
            (annotator,)).fetchone()
        if row is None:
            return None
        self.conn.execute("DELETE FROM annotations WHERE id = ?", (row[0],))
        return parse_annotation(row[1])

    def add_annotator(self, name: str, created: float) -> None:
        self.conn.execute("INSERT OR IGNORE INTO annotators (name, created) VALUES (?, ?)", (name, created))

    # ------------------------------------------------------------------ reading
    def all(self, kind: str | None = None, annotator: str | None = None) -> list[Annotation]:
        sql, args = "SELECT json FROM annotations WHERE 1=1", []
        if kind:
            sql += " AND kind = ?"
            args.append(kind)
        if annotator:
            sql += " AND annotator = ?"
            args.append(annotator)
        rows = self.conn.execute(sql + " ORDER BY created, rowid", args).fetchall()
        return [parse_annotation(r[0]) for r in rows]

    def votes(self) -> list[PairVote]:
        return [a for a in self.all("pairwise") if isinstance(a, PairVote)]

    def labels(self) -> list[RubricLabel]:
        return [a for a in self.all("rubric") if isinstance(a, RubricLabel)]

    def annotators(self) -> list[str]:
        return [r[0] for r in self.conn.execute("SELECT name FROM annotators ORDER BY created")]
