"""The job ledger of API generators: one SQLite file in the run folder (``generate_jobs.sqlite``).

One row per (model, sample, seed, request hash): the provider's job id — committed *before* the
first poll, so a killed run resumes polling the same job instead of creating (paying for) a new one
— its status, the reason of a failure or refusal, the price the job costs when it finishes, and the
downloaded file. Statuses:

``creating``  a create is under way (or was, when the run died): no job id yet. The next try of this
              row does *not* create blindly: it looks the job up / resends the same idempotency key
``unknown``   a create may have reached the provider (5xx, timeout, dropped connection after sending)
              and the adapter could not find out: the job may exist and be billed; not created again
              unless the model's ``recreate_after_ambiguous`` option says so
``running``   job id known, polling; ``timeout`` polled past the time limit (the job may still finish)
``done``      the provider finished the job (it is paid; ``path`` is set once downloaded)
``failed``    the provider or a fatal HTTP error ended it (a ``--retry-failed`` run creates a new job)
``blocked``   refused by content policy (kept; not created again unless ``retry_blocked``)

Every create *attempt* is a row of ``create_attempts`` (attempt number, client reference, outcome,
HTTP status, the provider's job id when known), and so is every look-up made after an ambiguous
failure. A row's ``gen`` counts deliberate new jobs (a ``--retry-failed`` after a failed job); all
attempts of one ``gen`` share its client reference (sent as the idempotency key), derived from the
run's nonce, the row's key and ``gen``.

No secret is ever written here: rows hold ids, statuses, reasons scrubbed by the engine and numbers.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import sqlite3
import threading
import time
from collections.abc import Iterator
from typing import Any

from vreason.store_schema import Schema, add_missing_columns, apply_ddl, open_versioned, set_wal

LEDGER_FILE = "generate_jobs.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    sample_id TEXT NOT NULL,
    seed INTEGER NOT NULL,
    request_hash TEXT NOT NULL,
    provider TEXT NOT NULL DEFAULT '',
    job_id TEXT,
    status TEXT NOT NULL,
    reason TEXT,
    usd REAL,
    video_seconds REAL,
    path TEXT,
    creates INTEGER NOT NULL DEFAULT 0,
    created_at REAL,
    updated_at REAL
);
CREATE TABLE IF NOT EXISTS create_attempts (
    key TEXT NOT NULL,
    gen INTEGER NOT NULL,
    attempt INTEGER NOT NULL,
    kind TEXT NOT NULL,
    client_ref TEXT NOT NULL,
    outcome TEXT NOT NULL,
    http_status INTEGER,
    job_id TEXT,
    detail TEXT,
    started_at REAL,
    ended_at REAL,
    PRIMARY KEY (key, gen, attempt)
);
CREATE TABLE IF NOT EXISTS ledger_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
_NEW_COLUMNS = {"gen": "INTEGER NOT NULL DEFAULT 0", "client_ref": "TEXT", "gen_started_at": "REAL",
                "lookup_identity": "TEXT"}
LEDGER_VERSION = 1
"""Schema version of the job ledger (``PRAGMA user_version``). 1: the tables above with ``jobs``' attempt
columns; an unversioned ledger (written before attempts were recorded, or after) is adopted as 1 in place."""


def _adopt(conn: sqlite3.Connection) -> None:
    apply_ddl(conn, _SCHEMA)
    add_missing_columns(conn, "jobs", _NEW_COLUMNS)  # a ledger written before attempts were recorded


LEDGER_SCHEMA = Schema("video job ledger", LEDGER_VERSION, _SCHEMA, frozenset({"jobs", "create_attempts",
                       "ledger_meta"}), adopt=_adopt)
MAY_BILL = ("creating", "unknown", "running", "timeout", "done")
"""Statuses whose job the provider may bill (a job exists or may exist and was not refused/failed)."""


def request_hash(prompt: str, image: bytes | None, params: dict[str, Any]) -> str:
    """Hash of what is sent: prompt, input image bytes and the request parameters."""
    h = hashlib.sha256(prompt.encode())
    h.update(hashlib.sha256(image or b"").digest())
    h.update(json.dumps(params, sort_keys=True, default=str).encode())
    return h.hexdigest()[:24]


def job_key(model: str, sample_id: str, seed: int, req_hash: str) -> str:
    return f"{model}|{sample_id}|{seed}|{req_hash}"


class JobLedger:
    """Thread-safe; each method's writes are one committed transaction (WAL), and :meth:`batch` groups
    several methods' writes in one (committed when the block ends, rolled back if it raises)."""

    def __init__(self, run_dir: str):
        os.makedirs(run_dir, exist_ok=True)
        self.path = os.path.join(run_dir, LEDGER_FILE)
        self._lock = threading.RLock()
        self._depth = 0
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=30)
        self._db.row_factory = sqlite3.Row
        set_wal(self._db)
        self._db.execute("PRAGMA synchronous=NORMAL")
        try:
            open_versioned(self._db, self.path, LEDGER_SCHEMA)
        except BaseException:
            self._db.close()
            raise
        self._db.execute("INSERT OR IGNORE INTO ledger_meta (name, value) VALUES ('run_nonce', ?)",
                         (secrets.token_hex(8),))
        self.nonce = self._db.execute("SELECT value FROM ledger_meta WHERE name = 'run_nonce'").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()

    @contextlib.contextmanager
    def batch(self) -> Iterator[None]:
        """One transaction for the writes inside the block (nested blocks join the outer one)."""
        with self._lock:
            if self._depth == 0:
                self._db.execute("BEGIN IMMEDIATE")
            self._depth += 1
            try:
                yield
            except BaseException:
                self._depth -= 1
                if self._depth == 0:
                    self._db.execute("ROLLBACK")
                raise
            self._depth -= 1
            if self._depth == 0:
                self._db.execute("COMMIT")

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._db.execute("SELECT * FROM jobs WHERE key = ?", (key,)).fetchone()
        return dict(row) if row else None

    def rows(self) -> list[dict[str, Any]]:
        with self._lock:
            return [dict(r) for r in self._db.execute("SELECT * FROM jobs ORDER BY model, sample_id, seed")]

    def client_ref(self, key: str, gen: int) -> str:
        """The reference every create attempt of (``key``, ``gen``) carries: run nonce + key + gen."""
        return "vr-" + hashlib.sha256(f"{self.nonce}|{key}|{gen}".encode()).hexdigest()[:32]

    def begin(self, key: str, *, new: bool, provider: str, model: str, sample_id: str, seed: int,
              request_hash: str, usd: float | None = None, video_seconds: float | None = None,
              lookup_identity: str | None = None) -> tuple[int, str]:
        """Mark ``key`` as being created; ``new``: a new job is wanted (a new ``gen``, a new client
        reference), else the earlier, unresolved create is continued under its reference."""
        now = time.time()
        with self.batch():
            self._db.execute(
                "INSERT INTO jobs (key, model, sample_id, seed, request_hash, provider, status, usd, video_seconds,"
                " creates, created_at, updated_at, gen, gen_started_at) VALUES"
                " (?, ?, ?, ?, ?, ?, 'creating', ?, ?, 0, ?, ?, 1, ?)"
                " ON CONFLICT(key) DO UPDATE SET status='creating', reason=NULL, path=NULL, usd=excluded.usd,"
                " video_seconds=excluded.video_seconds, updated_at=excluded.updated_at"
                + (", job_id=NULL, gen=gen+1, gen_started_at=excluded.updated_at" if new else ""),
                (key, model, sample_id, seed, request_hash, provider, usd, video_seconds, now, now, now),
            )
            gen = int(self._db.execute("SELECT gen FROM jobs WHERE key = ?", (key,)).fetchone()[0])
            ref = self.client_ref(key, gen)
            self._db.execute("UPDATE jobs SET client_ref = ?, lookup_identity = ? WHERE key = ?",
                             (ref, lookup_identity, key))
        return gen, ref

    def attempt(self, key: str, gen: int, kind: str, client_ref: str) -> int:
        """Record that an attempt (``create`` or ``lookup``) starts now; its number (1, 2, … per gen)."""
        now = time.time()
        with self.batch():
            n = int(self._db.execute("SELECT COALESCE(MAX(attempt), 0) + 1 FROM create_attempts WHERE key = ?"
                                     " AND gen = ?", (key, gen)).fetchone()[0])
            self._db.execute("INSERT INTO create_attempts (key, gen, attempt, kind, client_ref, outcome, started_at)"
                             " VALUES (?, ?, ?, ?, ?, 'sending', ?)", (key, gen, n, kind, client_ref, now))
            if kind == "create":
                self._db.execute("UPDATE jobs SET creates = creates + 1, updated_at = ? WHERE key = ?", (now, key))
        return n

    def attempt_done(self, key: str, gen: int, n: int, outcome: str, *, http_status: int | None = None,
                     job_id: str | None = None, detail: str | None = None) -> None:
        with self._lock:
            self._db.execute("UPDATE create_attempts SET outcome = ?, http_status = ?, job_id = ?, detail = ?,"
                             " ended_at = ? WHERE key = ? AND gen = ? AND attempt = ?",
                             (outcome, http_status, job_id, detail, time.time(), key, gen, n))

    def close_stale(self, key: str, gen: int) -> None:
        """Attempts a dead run left ``sending``: their answer never came."""
        with self._lock:
            self._db.execute("UPDATE create_attempts SET outcome = 'no_reply', detail = 'the run ended before the"
                             " answer' WHERE key = ? AND gen = ? AND outcome = 'sending'", (key, gen))

    def attempts(self, key: str | None = None) -> list[dict[str, Any]]:
        q = "SELECT * FROM create_attempts" + (" WHERE key = ?" if key else "") + " ORDER BY key, gen, attempt"
        with self._lock:
            return [dict(r) for r in self._db.execute(q, (key,) if key else ())]

    def sent_in_gen(self, key: str, gen: int) -> int:
        """Create attempts of (``key``, ``gen``) that were (or may have been) sent."""
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM create_attempts WHERE key = ? AND gen = ? AND"
                                        " kind = 'create' AND outcome != 'not_sent'", (key, gen)).fetchone()[0])

    def rivals(self, key: str, lookup_identity: str, request_hash: str) -> int:
        """Unresolved rows whose jobs a provider's list shows just like ``key``'s (same
        ``lookup_identity``) although their requests differ (e.g. another input image)."""
        with self._lock:
            return int(self._db.execute(
                "SELECT COUNT(*) FROM jobs WHERE lookup_identity = ? AND request_hash != ? AND key != ? AND"
                " status IN ('creating', 'unknown')", (lookup_identity, request_hash, key)).fetchone()[0])

    def claim(self, key: str, job_id: str) -> bool:
        """Record ``job_id`` as ``key``'s job unless another row already holds it (atomic)."""
        with self._lock:
            cur = self._db.execute(
                "UPDATE jobs SET job_id = ?, status = 'running', updated_at = ? WHERE key = ? AND NOT EXISTS"
                " (SELECT 1 FROM jobs WHERE job_id = ? AND key != ?)", (job_id, time.time(), key, job_id, key))
            return cur.rowcount == 1

    def created(self, key: str, job_id: str) -> None:
        with self._lock:
            self._db.execute("UPDATE jobs SET job_id = ?, status = 'running', updated_at = ? WHERE key = ?",
                             (job_id, time.time(), key))

    def finish(self, key: str, status: str, reason: str | None, *, path: str | None = None) -> None:
        with self._lock:
            self._db.execute("UPDATE jobs SET status = ?, reason = ?, path = COALESCE(?, path), updated_at = ?"
                             " WHERE key = ?", (status, reason, path, time.time(), key))

    def totals(self) -> dict[str, dict[str, Any]]:
        """Per model: jobs by status, create attempts sent, seconds of video, the cost of finished jobs
        (``usd``) and of every job the provider may bill (``usd_may_bill``: finished, running, timed out,
        or a create whose outcome is unknown)."""
        out: dict[str, dict[str, Any]] = {}
        for r in self.rows():
            t = out.setdefault(r["model"], {"jobs": 0, "creates": 0, "usd": 0.0, "usd_may_bill": 0.0,
                                            "video_seconds": 0.0, "by_status": {}})
            t["jobs"] += 1
            t["creates"] += int(r["creates"] or 0)
            t["by_status"][r["status"]] = t["by_status"].get(r["status"], 0) + 1
            if r["status"] == "done":
                t["usd"] = round(t["usd"] + float(r["usd"] or 0.0), 4)
                t["video_seconds"] += float(r["video_seconds"] or 0.0)
            if r["status"] in MAY_BILL and (r["job_id"] or r["status"] in ("creating", "unknown")):
                t["usd_may_bill"] = round(t["usd_may_bill"] + float(r["usd"] or 0.0), 4)
        return out


def ledger_totals(run_dir: str) -> dict[str, dict[str, Any]]:
    """The cost ledger of a run folder (``{}`` when no API generator ran there)."""
    if not os.path.exists(os.path.join(run_dir, LEDGER_FILE)):
        return {}
    led = JobLedger(run_dir)
    try:
        return led.totals()
    finally:
        led.close()
