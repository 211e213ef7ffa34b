"""A content-addressed reply cache in SQLite.

The key is a SHA-256 over everything that decides a reply: the judge identity (backend, model,
endpoint host), the backend's input settings (image format, quality, longest side), the decoding
settings, the template name and version, the rendered text and a hash of every image's pixels with
the encoding its part asks for (a JPEG quality, or a hash of the original bytes sent and their MIME
type; parts at the judge's default keep the key they always had), and of a video file's bytes.
Equal key, equal question: a re-run answers from here without a request. API keys are never part of a key or a row.

Only replies that yielded an answer are stored (the client puts a reply after it parsed, under the
key of the question as first asked, with the completion-token cap it finally took). Garbage — an
HTML page, an empty ``choices`` list, a cut-off or unparseable reply — is never cached, so
``--retry-failed`` asks again.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from typing import Any

from vreason.judge.base import ImagePart, JudgeReply, JudgeRequest, TextPart, Usage, VideoPart
from vreason.store_schema import Schema, add_missing_columns, apply_ddl, open_versioned, set_wal

_SCHEMA = """
CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, judge TEXT, template TEXT, template_version TEXT,
  text TEXT NOT NULL, prompt_tokens INTEGER, completion_tokens INTEGER, finish_reason TEXT, created REAL,
  max_tokens INTEGER)
"""


def _adopt(conn: sqlite3.Connection) -> None:
    """An unversioned cache: the first ones had no ``max_tokens`` column (added, NULL for old rows)."""
    apply_ddl(conn, _SCHEMA)
    add_missing_columns(conn, "replies", {"max_tokens": "INTEGER"})


CACHE_VERSION = 1
"""Schema version of the judge reply cache (``PRAGMA user_version``). 1: ``replies`` with ``max_tokens``."""
CACHE_SCHEMA = Schema("judge reply cache", CACHE_VERSION, _SCHEMA, frozenset({"replies"}), adopt=_adopt)


def image_digest(image: Any) -> str:
    import numpy as np

    a = np.ascontiguousarray(image)
    h = hashlib.sha256()
    h.update(f"{a.dtype.str}{a.shape}".encode())
    h.update(a.data)
    return h.hexdigest()


def file_digest(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def request_key(identity: str, request: JudgeRequest, settings: dict[str, Any] | None = None) -> str:
    """The cache key of ``request`` sent to the judge ``identity`` with backend ``settings``."""
    parts: list[Any] = []
    for p in request.parts:
        if isinstance(p, TextPart):
            parts.append(["t", p.text])
        elif isinstance(p, ImagePart):
            row: list[Any] = ["i", image_digest(p.image), p.label]
            if p.data is not None:  # original bytes: what is sent is the bytes, not the pixels
                row += ["bytes", hashlib.sha256(p.data).hexdigest(), p.mime]
            elif p.quality is not None:  # a part-level JPEG quality overrides the judge's settings
                row += ["jpeg", int(p.quality)]
            parts.append(row)
        elif isinstance(p, VideoPart):
            digest = file_digest(p.path) if os.path.isfile(p.path) else f"missing:{p.path}"
            parts.append(["v", digest, p.fps])
        else:  # pragma: no cover - the Part union is closed
            raise TypeError(f"unknown part {type(p).__name__}")
    payload = {
        "judge": identity,
        "settings": settings or {},
        "decoding": request.decoding.as_dict(),
        "template": request.template,
        "template_version": request.template_version,
        "system": request.system,
        "parts": parts,
    }
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str).encode()
    return hashlib.sha256(blob).hexdigest()


class ReplyCache:
    """SQLite table ``replies(key → text, usage, finish_reason, max_tokens)``; safe across threads."""

    def __init__(self, path: str):
        self.path = str(path)
        folder = os.path.dirname(os.path.abspath(self.path))
        os.makedirs(folder, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=30.0)
        with self._lock:
            set_wal(self._db)
            try:
                open_versioned(self._db, self.path, CACHE_SCHEMA)
            except BaseException:
                self._db.close()
                raise

    def get(self, key: str) -> JudgeReply | None:
        with self._lock:
            row = self._db.execute(
                "SELECT text, prompt_tokens, completion_tokens, finish_reason, max_tokens FROM replies"
                " WHERE key = ?",
                (key,),
            ).fetchone()
        if row is None:
            return None
        return JudgeReply(
            text=row[0],
            usage=Usage(row[1] or 0, row[2] or 0),
            finish_reason=row[3],
            cached=True,
            max_tokens=row[4],
        )

    def put(self, key: str, reply: JudgeReply, *, judge: str, request: JudgeRequest) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO replies (key, judge, template, template_version, text, prompt_tokens,"
                " completion_tokens, finish_reason, created, max_tokens) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    key,
                    judge,
                    request.template,
                    request.template_version,
                    reply.text,
                    reply.usage.prompt_tokens,
                    reply.usage.completion_tokens,
                    reply.finish_reason,
                    time.time(),
                    reply.max_tokens,
                ),
            )
            self._db.commit()

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM replies").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()
