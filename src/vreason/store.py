"""The result store of one run: ``runs/<name>/``.

* ``manifest.json`` — resolved config, versions, host, start/end of every invocation.
* ``results.sqlite`` — SQLite in WAL mode: samples, videos, units and scores, written as
  results arrive. A *unit* is (sample, model, seed, scorer); its scores are written in one
  transaction together with its unit row, so a kill at any moment loses at most the units in
  flight and never leaves half a unit.
* exports: ``scores.jsonl``, ``scores.csv``, ``videos.jsonl`` (``scores.parquet`` when pyarrow is
  installed).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
import platform
import re
import sqlite3
import time
from collections.abc import Iterable
from importlib import metadata
from typing import Any

import pandas as pd

from vreason import __version__
from vreason.core.errors import MissingFileError, disk_full
from vreason.core.records import Sample, Score, ScoreStatus, Video
from vreason.store_schema import Schema, Step, open_versioned, set_wal

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS samples (id TEXT PRIMARY KEY, benchmark TEXT, json TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS videos (
  sample_id TEXT NOT NULL, model TEXT NOT NULL, seed INTEGER NOT NULL,
  status TEXT NOT NULL, path TEXT, json TEXT NOT NULL, updated REAL NOT NULL,
  PRIMARY KEY (sample_id, model, seed));
CREATE TABLE IF NOT EXISTS units (
  sample_id TEXT NOT NULL, model TEXT NOT NULL, seed INTEGER NOT NULL, scorer TEXT NOT NULL,
  status TEXT NOT NULL, reason TEXT, n_scores INTEGER NOT NULL, updated REAL NOT NULL,
  PRIMARY KEY (sample_id, model, seed, scorer));
CREATE TABLE IF NOT EXISTS scores (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  sample_id TEXT NOT NULL, model TEXT NOT NULL, seed INTEGER NOT NULL, scorer TEXT NOT NULL,
  scorer_version TEXT, metric TEXT NOT NULL, value REAL, normalized REAL, status TEXT NOT NULL,
  reason TEXT, passed INTEGER, frame_policy TEXT, judge TEXT, json TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS scores_unit ON scores (sample_id, model, seed, scorer);
"""

RESULTS_VERSION = 1
"""Schema version of ``results.sqlite`` (``PRAGMA user_version``), covering the results tables above and the
annotation tables (:mod:`vreason.human.store`) kept in the same file. 1: the schema every vreason so far wrote
(a file from before versions were recorded is adopted as 1 as it is)."""
RESULTS_MIGRATIONS: dict[int, Step] = {}
"""``{v: step from v to v + 1}`` of ``results.sqlite``; shared by every store opening the file."""
RESULTS_TABLES = frozenset({"meta", "samples", "videos", "units", "scores", "annotations", "annotators"})
"""Tables any version of ``results.sqlite`` had (an unversioned file with one of them is a results store)."""
RESULTS_SCHEMA = Schema("results store", RESULTS_VERSION, _SCHEMA, RESULTS_TABLES, migrations=RESULTS_MIGRATIONS)

SCORE_COLUMNS = [
    "sample_id", "model", "seed", "scorer", "scorer_version", "metric", "value", "normalized",
    "status", "reason", "passed", "frame_policy", "judge",
]
SAMPLE_COLUMNS = ["benchmark", "category", "task", "difficulty", "mode"]

UnitKey = tuple[str, str, int, str]


def _now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


_URL_CREDENTIALS = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@]+@")
_URL_SECRET_PARAM = re.compile(r"(?i)([?&](?:api[_-]?key|key|token|access_token|secret|password|sig)=)[^&\s#]+")
_AUTH_HEADER = re.compile(r"(?i)\b((?:proxy-)?authorization|x-api-key|api-key|cookie)(\s*[:=]\s*)"
                          r"(?:(?:bearer|basic|token)\s+)?[^\s,;\"']+")
_BEARER = re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}")
_SECRET_WORDS = {"password", "passwd", "passphrase", "secret", "authorization", "auth", "cookie", "credentials",
                 "apikey", "bearer", "signature"}
_TOKEN_COUNTS = {"max", "min", "num", "n", "count", "limit", "budget", "tokens", "new", "per", "total", "length"}


def _key_words(key: str) -> list[str]:
    """``"maxTokens"`` / ``"max_tokens"`` / ``"X-Api-Key"`` → lower-case words."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", str(key))
    return [w for w in re.split(r"[^A-Za-z0-9]+", spaced.lower()) if w]


def is_secret_key(key: str) -> bool:
    """Whether a setting named ``key`` holds a secret, by what it is: a password / secret / auth header /
    cookie; an API or access key (``api_key``, ``key``, ``x-api-key``, ``secret_key``, ``private_key``; not a
    ``sort_key`` or an ``api_key_env`` that names the variable); a token (``token``, ``hf_token``,
    ``access_token``; not ``max_tokens`` or ``token_limit``, which are counts)."""
    words = _key_words(key)
    if not words or words[-1] in ("env", "var", "file", "path", "name", "header"):
        return False
    if _SECRET_WORDS & set(words):
        return True
    if "key" in words:
        return words == ["key"] or bool({"api", "access", "secret", "private", "x", "auth", "client"} & set(words))
    if "token" in words:
        return not (_TOKEN_COUNTS & set(words))
    return False


_KNOWN_SECRETS: set[str] = set()


def register_secret(value: str | None) -> None:
    """Make :func:`redact_text` scrub ``value`` wherever it appears (the exact string and its base64
    form): the key, password or header value a client of this process sends. Values under 6
    characters are not registered (they would scrub ordinary words)."""
    import base64

    if not value or len(value) < 6:
        return
    _KNOWN_SECRETS.add(value)
    _KNOWN_SECRETS.add(base64.b64encode(value.encode()).decode("ascii"))


def redact_text(text: str) -> str:
    """Secrets inside text replaced by ``***``: every value given to :func:`register_secret` (and its
    base64 form), URL credentials (``https://user:key@host``, ``?key=…``), an ``Authorization`` /
    ``X-Api-Key`` / ``Cookie`` header's value, a ``Bearer`` / ``Basic`` credential."""
    for secret in sorted(_KNOWN_SECRETS, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, "***")
    text = _URL_SECRET_PARAM.sub(r"\1***", _URL_CREDENTIALS.sub(r"\1***@", text))
    return _BEARER.sub(r"\1 ***", _AUTH_HEADER.sub(r"\1\2***", text))


def redact(obj: Any) -> Any:
    """Drop the values of settings that are secrets (:func:`is_secret_key`) and secrets inside text
    (:func:`redact_text`): config is stored; secrets never are. ``max_tokens`` is a number, not a secret."""
    if isinstance(obj, dict):
        return {k: ("***" if is_secret_key(str(k)) and v else redact(v)) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [redact(v) for v in obj]
    if isinstance(obj, str):
        return redact_text(obj)
    return obj


def package_versions() -> dict[str, str]:
    out = {"vreason": __version__, "python": platform.python_version()}
    for name in ("numpy", "av", "opencv-python-headless", "pydantic", "openai", "pandas", "scipy",
                 "scikit-image", "torch", "transformers"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


class RunStore:
    """All persistent state of one run directory. Not shared across processes for writing:
    only the runner's main process writes; workers return results to it."""

    def __init__(self, run_dir: str | os.PathLike, *, create: bool = True):
        self.run_dir = os.path.abspath(str(run_dir))
        self.db_path = os.path.join(self.run_dir, "results.sqlite")
        if not create and not os.path.exists(self.db_path):
            raise MissingFileError(f"{self.run_dir}: not a vreason run directory (no results.sqlite)")
        os.makedirs(self.run_dir, exist_ok=True)
        self.conn = sqlite3.connect(self.db_path, timeout=30, isolation_level=None)
        set_wal(self.conn)
        self.conn.execute("PRAGMA synchronous=NORMAL")
        try:
            open_versioned(self.conn, self.db_path, RESULTS_SCHEMA)
        except BaseException:
            self.conn.close()
            raise

    # ------------------------------------------------------------------ lifecycle
    def close(self) -> None:
        try:
            self.conn.close()
        except sqlite3.Error:  # pragma: no cover
            pass

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def manifest_path(self) -> str:
        return os.path.join(self.run_dir, "manifest.json")

    def read_manifest(self) -> dict[str, Any]:
        if not os.path.exists(self.manifest_path):
            return {}
        with open(self.manifest_path, encoding="utf-8") as fh:
            return json.load(fh)

    def start(self, config: dict[str, Any], command: str = "run") -> None:
        """Record an invocation start: config (redacted), versions, host."""
        man = self.read_manifest()
        man.setdefault("created", _now_iso())
        man["config"] = redact(config)
        man["versions"] = package_versions()
        man["host"] = {"node": platform.node(), "platform": platform.platform(), "cpus": os.cpu_count()}
        man.setdefault("invocations", []).append({"command": command, "start": _now_iso(), "end": None})
        self._write_manifest(man)

    def finish(self, status: str, summary: dict[str, Any] | None = None) -> None:
        man = self.read_manifest()
        if man.get("invocations"):
            man["invocations"][-1].update({"end": _now_iso(), "status": status})
        if summary is not None:
            man["last_summary"] = summary
        self._write_manifest(man)

    def _write_manifest(self, man: dict[str, Any]) -> None:
        tmp = self.manifest_path + ".tmp"
        try:
            with open(tmp, "w", encoding="utf-8") as fh:
                json.dump(man, fh, indent=2, default=str)
            os.replace(tmp, self.manifest_path)
        except BaseException as exc:
            with contextlib.suppress(OSError):
                os.remove(tmp)  # no half-written temporary left behind; the previous manifest stays whole
            full = disk_full(exc, self.manifest_path)
            if full is not None and full is not exc:
                raise full from exc
            raise

    def set_meta(self, key: str, value: Any) -> None:
        self.conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, json.dumps(value, default=str)))

    def get_meta(self, key: str, default: Any = None) -> Any:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else default

    def has_results(self) -> bool:
        """Whether any video or unit has been recorded (a run to resume, not just a started one)."""
        return any(self.conn.execute(f"SELECT 1 FROM {t} LIMIT 1").fetchone() for t in ("units", "videos"))

    # ------------------------------------------------------------------ samples
    def put_samples(self, samples: Iterable[Sample]) -> None:
        rows = [(s.id, s.benchmark, s.model_dump_json()) for s in samples]
        with self.conn:
            self.conn.execute("BEGIN")
            self.conn.executemany("INSERT OR REPLACE INTO samples VALUES (?, ?, ?)", rows)

    def samples(self) -> list[Sample]:
        rows = self.conn.execute("SELECT json FROM samples ORDER BY rowid").fetchall()
        return [Sample.model_validate_json(r[0]) for r in rows]

    # ------------------------------------------------------------------ videos
    def put_video(self, video: Video) -> None:
        self.put_videos([video])

    def put_videos(self, videos: Iterable[Video]) -> None:
        now = time.time()
        rows = [(v.sample_id, v.model, v.seed, v.status.value, v.path, v.model_dump_json(), now) for v in videos]
        with self.conn:
            self.conn.execute("BEGIN")
            self.conn.executemany("INSERT OR REPLACE INTO videos VALUES (?, ?, ?, ?, ?, ?, ?)", rows)

    def videos(self, model: str | None = None) -> list[Video]:
        q, args = "SELECT json FROM videos", ()
        if model is not None:
            q, args = q + " WHERE model = ?", (model,)
        return [Video.model_validate_json(r[0]) for r in self.conn.execute(q + " ORDER BY rowid", args)]

    def video(self, sample_id: str, model: str, seed: int) -> Video | None:
        row = self.conn.execute(
            "SELECT json FROM videos WHERE sample_id = ? AND model = ? AND seed = ?", (sample_id, model, seed)
        ).fetchone()
        return Video.model_validate_json(row[0]) if row else None

    # ------------------------------------------------------------------ units and scores
    def unit_status(self) -> dict[UnitKey, str]:
        rows = self.conn.execute("SELECT sample_id, model, seed, scorer, status FROM units")
        return {(a, b, int(c), d): e for a, b, c, d, e in rows}

    def pending(self, units: Iterable[UnitKey], *, retry_failed: bool = False) -> list[UnitKey]:
        """Units not yet finished. Finished = ok, or unscored/error unless ``retry_failed``."""
        done = self.unit_status()
        out = []
        for u in units:
            st = done.get(u)
            if st is None or (retry_failed and st != ScoreStatus.ok.value):
                out.append(u)
        return out

    def put_unit(self, key: UnitKey, scores: list[Score]) -> str:
        """Write a unit's scores atomically (replacing any earlier attempt); returns its status."""
        if not scores:
            raise ValueError(f"unit {key}: a scorer must return at least one score")
        statuses = {s.status for s in scores}
        status = (
            ScoreStatus.error if ScoreStatus.error in statuses
            else ScoreStatus.unscored if ScoreStatus.unscored in statuses
            else ScoreStatus.ok
        )
        reasons = sorted({s.reason for s in scores if s.reason})
        rows = []
        for s in scores:
            ev = s.evidence
            judge = ev.judge.judge if ev.judge else None
            rows.append((
                s.sample_id, s.model, s.seed, s.scorer, s.scorer_version, s.metric, s.value, s.normalized,
                s.status.value, s.reason, None if s.passed is None else int(s.passed), ev.frame_policy,
                judge, s.model_dump_json(),
            ))
        with self.conn:
            self.conn.execute("BEGIN IMMEDIATE")
            self.conn.execute(
                "DELETE FROM scores WHERE sample_id = ? AND model = ? AND seed = ? AND scorer = ?", key
            )
            self.conn.executemany(
                "INSERT INTO scores (sample_id, model, seed, scorer, scorer_version, metric, value, normalized,"
                " status, reason, passed, frame_policy, judge, json) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                rows,
            )
            self.conn.execute(
                "INSERT OR REPLACE INTO units VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (*key, status.value, "; ".join(reasons)[:2000] or None, len(scores), time.time()),
            )
        return status.value

    def scores(self) -> list[Score]:
        return [Score.model_validate_json(r[0]) for r in self.conn.execute("SELECT json FROM scores ORDER BY id")]

    def counts(self) -> dict[str, Any]:
        units = dict(self.conn.execute("SELECT status, COUNT(*) FROM units GROUP BY status").fetchall())
        videos = dict(self.conn.execute("SELECT status, COUNT(*) FROM videos GROUP BY status").fetchall())
        n_samples = self.conn.execute("SELECT COUNT(*) FROM samples").fetchone()[0]
        return {"samples": n_samples, "videos": videos, "units": units}

    def failures(self) -> list[dict[str, Any]]:
        rows = self.conn.execute(
            "SELECT sample_id, model, seed, scorer, status, reason FROM units WHERE status != 'ok' ORDER BY rowid"
        ).fetchall()
        return [dict(zip(("sample_id", "model", "seed", "scorer", "status", "reason"), r, strict=True)) for r in rows]

    def scores_frame(self) -> pd.DataFrame:
        """One row per Score, with the sample's benchmark/category/task/difficulty/mode joined."""
        df = pd.read_sql_query(f"SELECT {', '.join(SCORE_COLUMNS)}, json AS evidence FROM scores ORDER BY id",
                               self.conn)
        df["evidence"] = [json.dumps(json.loads(j).get("evidence", {})) for j in df["evidence"]]
        df["passed"] = df["passed"].map(lambda v: None if pd.isna(v) else bool(v)).astype(object)
        meta = {s.id: s for s in self.samples()}
        for col in SAMPLE_COLUMNS:
            df[col] = [
                (getattr(meta[sid], col).value if col == "mode" else getattr(meta[sid], col)) if sid in meta else ""
                for sid in df["sample_id"]
            ]
        return df

    # ------------------------------------------------------------------ exports
    def export(self, out_dir: str | None = None) -> list[str]:
        """Write scores.jsonl / scores.csv / videos.jsonl (+ scores.parquet with pyarrow)."""
        out_dir = out_dir or self.run_dir
        os.makedirs(out_dir, exist_ok=True)
        paths = []
        p = os.path.join(out_dir, "scores.jsonl")
        with open(p, "w", encoding="utf-8") as fh:
            for (j,) in self.conn.execute(
                "SELECT json FROM scores ORDER BY sample_id, model, seed, scorer, metric"
            ):
                fh.write(j + "\n")
        paths.append(p)
        p = os.path.join(out_dir, "videos.jsonl")
        with open(p, "w", encoding="utf-8") as fh:
            for (j,) in self.conn.execute("SELECT json FROM videos ORDER BY sample_id, model, seed"):
                fh.write(j + "\n")
        paths.append(p)
        df = self.scores_frame().sort_values(["sample_id", "model", "seed", "scorer", "metric"])
        p = os.path.join(out_dir, "scores.csv")
        df.to_csv(p, index=False)
        paths.append(p)
        try:
            import pyarrow  # noqa: F401

            p = os.path.join(out_dir, "scores.parquet")
            df.to_parquet(p, index=False)
            paths.append(p)
        except ImportError:
            pass
        return paths
