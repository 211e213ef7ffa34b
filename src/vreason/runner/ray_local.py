"""A local Ray instance started by vreason: where its temporary folder goes, and what is left of it
when the driver was killed.

Ray keeps its session (logs, sockets) in a temporary folder; vreason puts it inside the run folder
(``<run>/ray``) — or a short folder of the system's temporary space when that path is too long for a
Unix socket — or the folder given with ``--ray-temp-dir``.

When the driver that started a local instance dies (``kill -9``), Ray's own processes (GCS, raylet,
workers) die with it, but on Linux its agent processes (``ray::DashboardAgent``,
``ray::RuntimeEnvAgent``) are left running. So vreason records the instance's processes (pid and
start time, read from ``/proc``) in ``<run>/ray-processes.json`` while it runs; the next run on the
folder ends those still alive once their driver is gone, and removes the record at a clean shutdown.
"""

from __future__ import annotations

import json
import os
import signal
import tempfile
import time

RECORD = "ray-processes.json"
SOCKET_SUFFIX = len("/session_2026-01-01_00-00-00_000000_1234567/sockets/plasma_store")
UNIX_PATH_MAX = 107


def temp_dir_for(run_dir: str, given: str | None) -> tuple[str, bool]:
    """Ray's temporary folder and whether vreason chose it (then it is removed after a clean shutdown)."""
    if given:
        return os.path.abspath(given), False
    inside = os.path.join(os.path.abspath(run_dir), "ray")
    if len(inside) + SOCKET_SUFFIX <= UNIX_PATH_MAX:
        return inside, True
    return tempfile.mkdtemp(prefix="vreason-ray-"), True


def _stat(pid: int) -> tuple[int, int] | None:
    """(parent pid, start time in clock ticks) of a live, non-zombie process, from /proc."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except OSError:
        return None
    fields = text[text.rfind(")") + 2:].split()
    if fields[0] in ("Z", "X"):
        return None
    return int(fields[1]), int(fields[19])


def descendants(root: int) -> dict[int, int]:
    """Every live descendant of ``root``: pid → start time (Linux; empty elsewhere)."""
    if not os.path.isdir("/proc"):
        return {}
    children: dict[int, list[tuple[int, int]]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit() and (st := _stat(int(name))) is not None:
            children.setdefault(st[0], []).append((int(name), st[1]))
    out: dict[int, int] = {}
    todo = [root]
    while todo:
        for pid, start in children.get(todo.pop(), []):
            if pid not in out:
                out[pid] = start
                todo.append(pid)
    return out


def record(run_dir: str, temp_dir: str) -> None:
    """Write (or refresh) the record of this driver's local instance."""
    me = os.getpid()
    procs = {str(p): s for p, s in descendants(me).items()}
    path = os.path.join(run_dir, RECORD)
    old: dict = {}
    if os.path.exists(path):
        try:
            with open(path, encoding="utf-8") as fh:
                old = json.load(fh)
        except (OSError, ValueError):
            old = {}
    if old.get("driver") == me:  # keep processes seen earlier (workers come and go, agents stay)
        procs = {**old.get("processes", {}), **procs}
    st = _stat(me)
    data = {"driver": me, "driver_start": st[1] if st else None, "temp_dir": temp_dir, "processes": procs}
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(data, fh)
    os.replace(tmp, path)


def forget(run_dir: str) -> None:
    try:
        os.remove(os.path.join(run_dir, RECORD))
    except FileNotFoundError:
        return


def end_leftovers(run_dir: str, grace: float = 3.0) -> list[int]:
    """End the processes of a local instance whose driver died (recorded in the run folder); return
    their pids. Only processes whose pid *and* start time match the record are touched."""
    path = os.path.join(run_dir, RECORD)
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return []
    driver = _stat(int(data.get("driver", 0)))
    if driver is not None and driver[1] == data.get("driver_start"):
        return []  # the driver still runs (the run lock makes this another folder's driver): leave it
    alive = [int(p) for p, start in data.get("processes", {}).items()
             if (st := _stat(int(p))) is not None and st[1] == start]
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in [p for p in alive if _stat(p) is not None]:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                continue
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and any(_stat(p) is not None for p in alive):
            time.sleep(0.1)
    forget(run_dir)
    return alive
