"""Guards around a run folder: one run at a time (a lock), and one plan per folder.

* :class:`RunLock` holds ``fcntl.flock`` on ``<run>/run.lock`` while a run works on the folder and
  writes the holder (pid, host, command, start) into it. The kernel drops the lock when the holder
  dies, so a lock left by a killed run never blocks a resume; a second live run is refused with
  the holder's details. Two modes: *exclusive* for what writes or clears the folder (``run``, its
  ``--force-new``, ``tpo``, ``import``, ``annotate import``) and *shared* for what only needs the
  folder to stay (the ``annotate`` server, ``report``): shared holders run side by side, and an
  exclusive one is refused while any of them lives ("run X is being annotated (pid N); stop it
  first"). A shared holder's details go to ``.run.lock.<pid>.<n>`` beside the lock (several may hold it).
* :func:`plan_of` is what a run computes: protocol, models, seeds, data and protocol options,
  judges, video sources. Resuming a folder with another plan would silently mix two runs, so
  :func:`check_plan` refuses and shows the difference. Flags that only change *how* the same plan
  is carried out (workers, ``--retry-failed``, ``--refresh``, ``--no-cache``, ``--dry-run``,
  ``--no-report``) are not part of it.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import fcntl
import hashlib
import json
import os
import platform
import shutil
import sys
import time
from typing import Any

from vreason.core.errors import ConfigError, MissingFileError

LOCK_NAME = "run.lock"
PLAN_IGNORED_OPTIONS = frozenset({"run_dir", "out_dir"})


class RunLockedError(ConfigError):
    """Another live process holds the run folder's lock."""


class PlanMismatchError(ConfigError):
    """The run folder holds results of a different plan."""


class RunLock:
    """A non-blocking ``flock`` on ``<run_dir>/run.lock``: exclusive, or ``shared=True`` with ``purpose``
    (how a refused exclusive holder is told, e.g. "being annotated"). A shared lock never creates the
    folder."""

    def __init__(self, run_dir: str, *, shared: bool = False, purpose: str = "in use"):
        self.run_dir = os.path.abspath(run_dir)
        self.path = os.path.join(self.run_dir, LOCK_NAME)
        self.shared = shared
        self.purpose = purpose
        self._fh: Any = None
        self._side: str | None = None

    @property
    def held(self) -> bool:
        return self._fh is not None

    def acquire(self, command: str | None = None) -> RunLock:
        if self.shared:
            if not os.path.isdir(self.run_dir):
                raise MissingFileError(f"{self.run_dir}: no such run directory")
        else:
            os.makedirs(self.run_dir, exist_ok=True)
        fh = open(self.path, "a+", encoding="utf-8")  # noqa: SIM115 - kept open while the lock is held
        try:
            fcntl.flock(fh.fileno(), (fcntl.LOCK_SH if self.shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
        except OSError:
            fh.seek(0)
            holder = fh.read().strip()
            fh.close()
            raise RunLockedError(self._refusal(holder)) from None
        info = {
            "pid": os.getpid(),
            "host": platform.node(),
            "command": command or " ".join(sys.argv),
            "since": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "purpose": self.purpose,
            "since_ns": time.time_ns(),  # orders shared holders that started within the same second
        }
        try:
            # holding it, no exclusive holder lives: what the lock file says is stale (a killed run's)
            fh.seek(0)
            fh.truncate()
            if self.shared:
                self._side = os.path.join(self.run_dir, f".{LOCK_NAME}.{os.getpid()}.{id(self):x}")
                _write_atomic(self._side, json.dumps(info) + "\n")
            else:
                for name in os.listdir(self.run_dir):  # nor does any shared holder: their notes are stale
                    if name.startswith(f".{LOCK_NAME}."):
                        _remove(os.path.join(self.run_dir, name))
                fh.write(json.dumps(info) + "\n")
                fh.flush()
        except BaseException:
            fh.close()
            raise
        self._fh = fh
        return self

    def _refusal(self, holder: str) -> str:
        if holder:  # an exclusive holder (a run) writes itself into the lock file
            return (f"{self.run_dir} is in use by another vreason run ({_describe(holder)}). Wait for it to end, "
                    "or pick another --name. (A lock left by a killed run is released by the system and does "
                    "not block a resume.)")
        readers = _shared_holders(self.run_dir)
        if readers:
            first = readers[0]
            more = f" and {len(readers) - 1} more" if len(readers) > 1 else ""
            return (f"run {self.run_dir} is {first.get('purpose', 'in use')} (pid {first.get('pid')}: "
                    f"{first.get('command')}){more}; stop it first")
        return f"run {self.run_dir} is in use by another vreason process (holder unknown); stop it first"

    def release(self) -> None:
        if self._fh is None:
            return
        try:
            if self._side:
                _remove(self._side)
                self._side = None
            else:
                self._fh.seek(0)
                self._fh.truncate()  # nobody holds it now
            fcntl.flock(self._fh.fileno(), fcntl.LOCK_UN)
        finally:
            self._fh.close()
            self._fh = None

    def __enter__(self) -> RunLock:
        return self.acquire() if not self.held else self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _describe(holder: str) -> str:
    try:
        info = json.loads(holder)
    except ValueError:
        return "holder unknown"
    return f"pid {info.get('pid')} on {info.get('host')} since {info.get('since')}: {info.get('command')}"


def _write_atomic(path: str, text: str) -> None:
    tmp = f"{path}.tmp"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        _remove(tmp)
        raise


def _remove(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.remove(path)


def _alive(pid: Any) -> bool:
    try:
        os.kill(int(pid), 0)
    except (ProcessLookupError, ValueError, TypeError):
        return False
    except PermissionError:
        return True
    return True


def _shared_holders(run_dir: str) -> list[dict[str, Any]]:
    """The live shared holders' notes (``.run.lock.<pid>.<n>``), oldest first."""
    out = []
    try:
        names = sorted(os.listdir(run_dir))
    except OSError:
        return []
    for name in names:
        if not name.startswith(f".{LOCK_NAME}.") or name.endswith(".tmp"):
            continue
        try:
            with open(os.path.join(run_dir, name), encoding="utf-8") as f:
                info = json.loads(f.read())
        except (OSError, ValueError):
            continue
        if isinstance(info, dict) and _alive(info.get("pid")):
            out.append(info)
    return sorted(out, key=lambda i: (str(i.get("since")), int(i.get("since_ns") or 0)))


def clear_run_dir(run_dir: str) -> None:
    """``--force-new``: delete everything in the (locked) run folder except its lock file."""
    for name in os.listdir(run_dir):
        if name == LOCK_NAME:
            continue
        path = os.path.join(run_dir, name)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.remove(path)


# ---------------------------------------------------------------------- plan
def _path(p: Any) -> Any:
    return os.path.abspath(str(p)) if p else None


def _judge_model(spec: str) -> str:
    """A judge spec without its endpoint (``vllm:M@http://host:port`` → ``vllm:M``): a server that moved
    is the same judge; another model is not."""
    head, at, tail = str(spec).partition("@")
    return head if at and "://" in tail else str(spec)


def plan_of(cfg: Any, resolved: dict[str, Any] | None = None) -> dict[str, Any]:
    """The settings that decide *what* a run computes (see the module docstring). ``resolved``: the
    protocol's options with defaults filled in, so that spelling out a default is not a change."""
    given = cfg.options if resolved is None else resolved
    options = {k: v for k, v in sorted(given.items()) if k not in PLAN_IGNORED_OPTIONS}
    for key in ("data", "videos", "root"):
        if isinstance(options.get(key), str):
            options[key] = _path(options[key])
    return {
        "protocol": cfg.protocol,
        "models": sorted(cfg.models),
        "seeds": sorted(cfg.seeds),
        "options": options,
        "judges": {role: _judge_model(spec) for role, spec in sorted(cfg.judges.items())},
        "limit": cfg.limit,
        "videos": _path(cfg.videos_dir),
        "convention": cfg.convention,
        "manifest": _path(cfg.manifest),
    }


def fingerprint(plan: dict[str, Any]) -> str:
    blob = json.dumps(plan, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def plan_diff(old: dict[str, Any], new: dict[str, Any], prefix: str = "") -> list[str]:
    """Human-readable differences ``key: old → new`` (nested dicts by dotted key)."""
    lines = []
    for key in sorted(set(old) | set(new), key=str):
        a, b = old.get(key, "(unset)"), new.get(key, "(unset)")
        if a == b:
            continue
        if isinstance(a, dict) and isinstance(b, dict):
            lines += plan_diff(a, b, f"{prefix}{key}.")
        else:
            lines.append(f"{prefix}{key}: {json.dumps(a, default=str)} → {json.dumps(b, default=str)}")
    return lines


def check_plan(recorded: dict[str, Any] | None, plan: dict[str, Any], run_dir: str) -> None:
    """Refuse to resume ``run_dir`` (recorded plan) with another ``plan``."""
    if not recorded or recorded == plan:
        return
    diff = plan_diff(recorded, plan)
    raise PlanMismatchError(
        f"{run_dir} holds a run with other settings; resuming would mix two runs.\n  "
        + "\n  ".join(diff)
        + "\nRun the same settings again to resume, add --force-new to start this folder over, "
        "or pick a new --name."
    )


def check_samples(recorded: str | None, sample_ids: list[str], run_dir: str) -> None:
    """Refuse when the same settings now load other samples (the data changed under the same path)."""
    if recorded and recorded != fingerprint({"ids": sample_ids}):
        raise PlanMismatchError(
            f"{run_dir} holds a run over other samples: the data now yields {len(sample_ids)} samples whose ids "
            "differ from the recorded run's. Add --force-new to start this folder over, or pick a new --name."
        )
