"""The job ledger of API generators: one SQLite file in the run folder (``generate_jobs.sqlite``).

One row per (model, sample, seed, request hash): the provider's job id — committed *before* the
first poll, so a killed run resumes polling the same job instead of creating (paying for) a new one
— its status, the reason of a failure or refusal, the price the job costs when it finishes, and the
downloaded file. Statuses:

``creating``  the create call was sent, no job id yet (a crash here cannot be resumed: the next run
              creates again; at most one job per killed run is lost this way)
``running``   job id known, polling; ``timeout`` polled past the time limit (the job may still finish)
``done``      the provider finished the job (it is paid; ``path`` is set once downloaded)
``failed``    the provider or a fatal HTTP error ended it (a ``--retry-failed`` run creates a new job)
``blocked``   refused by content policy (kept; not created again unless ``retry_blocked``)

No secret is ever written here: rows hold ids, statuses, reasons scrubbed by the engine and numbers.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from typing import Any

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
)
"""


def request_hash(prompt: str, image: bytes | None, params: dict[str, Any]) -> str:
    """Hash of what is sent: prompt, input image bytes and the request parameters."""
    h = hashlib.sha256(prompt.encode())
    h.update(hashlib.sha256(image or b"").digest())
    h.update(json.dumps(params, sort_keys=True, default=str).encode())
    return h.hexdigest()[:24]


def job_key(model: str, sample_id: str, seed: int, req_hash: str) -> str:
    return f"{model}|{sample_id}|{seed}|{req_hash}"


class JobLedger:
    """Thread-safe; each write is its own committed transaction (WAL)."""

    def __init__(self, run_dir: str):
        os.makedirs(run_dir, exist_ok=True)
        self.path = os.path.join(run_dir, LEDGER_FILE)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=30)
        self._db.row_factory = sqlite3.Row
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(_SCHEMA)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._db.execute("SELECT * FROM jobs WHERE key = ?", (key,)).fetchone()
        return dict(row) if row else None

    def rows(self) -> list[dict[str, Any]]:
        with self._lock:
            return [dict(r) for r in self._db.execute("SELECT * FROM jobs ORDER BY model, sample_id, seed")]

    def creating(self, key: str, *, provider: str, model: str, sample_id: str, seed: int, request_hash: str,
                 usd: float | None = None, video_seconds: float | None = None) -> None:
        now = time.time()
        with self._lock:
            self._db.execute(
                "INSERT INTO jobs (key, model, sample_id, seed, request_hash, provider, status, usd, video_seconds,"
                " creates, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, 'creating', ?, ?, 1, ?, ?)"
                " ON CONFLICT(key) DO UPDATE SET status='creating', job_id=NULL, reason=NULL, path=NULL,"
                " usd=excluded.usd, video_seconds=excluded.video_seconds, creates=creates+1,"
                " updated_at=excluded.updated_at",
                (key, model, sample_id, seed, request_hash, provider, usd, video_seconds, now, now),
            )

    def created(self, key: str, job_id: str) -> None:
        with self._lock:
            self._db.execute("UPDATE jobs SET job_id = ?, status = 'running', updated_at = ? WHERE key = ?",
                             (job_id, time.time(), key))

    def finish(self, key: str, status: str, reason: str | None, *, path: str | None = None) -> None:
        with self._lock:
            self._db.execute("UPDATE jobs SET status = ?, reason = ?, path = COALESCE(?, path), updated_at = ?"
                             " WHERE key = ?", (status, reason, path, time.time(), key))

    def totals(self) -> dict[str, dict[str, Any]]:
        """Per model: jobs by status, creates sent, seconds of video and the cost of finished jobs."""
        out: dict[str, dict[str, Any]] = {}
        for r in self.rows():
            t = out.setdefault(r["model"], {"jobs": 0, "creates": 0, "usd": 0.0, "video_seconds": 0.0,
                                            "by_status": {}})
            t["jobs"] += 1
            t["creates"] += int(r["creates"] or 0)
            t["by_status"][r["status"]] = t["by_status"].get(r["status"], 0) + 1
            if r["status"] == "done":
                t["usd"] = round(t["usd"] + float(r["usd"] or 0.0), 4)
                t["video_seconds"] += float(r["video_seconds"] or 0.0)
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
