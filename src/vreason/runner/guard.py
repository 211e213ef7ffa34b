"""Guards around a run folder: one run at a time (a lock), and one plan per folder.

* :class:`RunLock` holds ``fcntl.flock`` on ``<run>/run.lock`` while a run works on the folder and
  writes the holder (pid, host, command, start) into it. The kernel drops the lock when the holder
  dies, so a lock left by a killed run never blocks a resume; a second live run is refused with
  the holder's details.
* :func:`plan_of` is what a run computes: protocol, models, seeds, data and protocol options,
  judges, video sources. Resuming a folder with another plan would silently mix two runs, so
  :func:`check_plan` refuses and shows the difference. Flags that only change *how* the same plan
  is carried out (workers, ``--retry-failed``, ``--refresh``, ``--no-cache``, ``--dry-run``,
  ``--no-report``) are not part of it.
"""

from __future__ import annotations

import datetime as _dt
import fcntl
import hashlib
import json
import os
import platform
import shutil
import sys
from typing import Any

from vreason.errors import ConfigError

LOCK_NAME = "run.lock"
PLAN_IGNORED_OPTIONS = frozenset({"run_dir", "out_dir"})


class RunLockedError(ConfigError):
    """Another live process holds the run folder's lock."""


class PlanMismatchError(ConfigError):
    """The run folder holds results of a different plan."""


class RunLock:
    """An exclusive, non-blocking ``flock`` on ``<run_dir>/run.lock``."""

    def __init__(self, run_dir: str):
        self.run_dir = os.path.abspath(run_dir)
        self.path = os.path.join(self.run_dir, LOCK_NAME)
        self._fh: Any = None

    @property
    def held(self) -> bool:
        return self._fh is not None

    def acquire(self, command: str | None = None) -> RunLock:
        os.makedirs(self.run_dir, exist_ok=True)
        fh = open(self.path, "a+", encoding="utf-8")  # noqa: SIM115 - kept open while the lock is held
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            fh.seek(0)
            holder = fh.read().strip()
            fh.close()
            raise RunLockedError(
                f"{self.run_dir} is in use by another vreason run ({_describe(holder)}). Wait for it to end, "
                "or pick another --name. (A lock left by a killed run is released by the system and does not "
                "block a resume.)"
            ) from None
        info = {
            "pid": os.getpid(),
            "host": platform.node(),
            "command": command or " ".join(sys.argv),
            "since": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        }
        fh.seek(0)
        fh.truncate()
        fh.write(json.dumps(info) + "\n")
        fh.flush()
        self._fh = fh
        return self

    def release(self) -> None:
        if self._fh is None:
            return
        try:
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
