"""Pool processes exit when the process that started them dies — kill -9 included.

A ``ProcessPoolExecutor`` worker blocks on its call queue, a pipe it holds both ends of, so it
never notices the main process going away; while workers live they also keep the forkserver
(they hold its "alive" pipe) and the resource tracker (they hold its pipe) running. Once the
workers are gone both of those exit by themselves. So every worker gets a watchdog:

* a daemon thread waits on multiprocessing's parent sentinel — a pipe whose write end only the
  main process holds, readable (EOF) the moment it dies — and also exits when the worker's OS
  parent changes (the forkserver died);
* under a forkserver, ``PR_SET_PDEATHSIG`` = SIGKILL (Linux) for the forkserver's death.

:func:`install` arms this for every forkserver pool of the process (also pools created outside
the runner, e.g. the suite builder's): it adds this module to the forkserver's preload list,
and when the forkserver imports it, every process it forks arms the watchdog right after the
fork. :func:`die_with_parent` is also the pool initializer of the runner's executor, which
covers the fork and spawn start methods.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import sys
import threading
import time

WATCH_INTERVAL = 1.0
"""Seconds between a worker's checks that the process it serves is alive."""

_armed = False


def _set_pdeathsig() -> None:
    """Linux: the kernel SIGKILLs this process when the thread that forked it exits. Only used
    under the forkserver, whose single thread does the forking (a pool thread of the main
    process could fork workers and exit long before the process)."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes
    import signal

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # no prctl in this libc: the watchdog alone
        return


def _parent_gone(timeout: float) -> bool:
    """Wait up to ``timeout`` s on the parent sentinel (once multiprocessing has set it)."""
    from multiprocessing.connection import wait

    parent = mp.parent_process()
    sentinel = getattr(parent, "sentinel", None)
    if sentinel is None:  # right after a fork, before the child has read its start data
        time.sleep(min(timeout, 0.2))
        return False
    try:
        return bool(wait([sentinel], timeout=timeout))
    except (OSError, ValueError):  # the sentinel was closed: the OS-parent check alone
        time.sleep(timeout)
        return False


def _watch(ppid: int) -> None:
    while True:
        if _parent_gone(WATCH_INTERVAL) or os.getppid() != ppid:
            os._exit(1)  # nothing to clean up: results only ever went to the (dead) main process


def die_with_parent(pdeathsig: bool = False) -> None:
    """Arm this process's watchdog (idempotent). ``pdeathsig`` also asks the kernel (Linux)
    for SIGKILL when the OS parent's forking thread exits — safe only under a forkserver."""
    global _armed
    if _armed:
        return
    _armed = True
    ppid = os.getppid()
    if pdeathsig:
        _set_pdeathsig()
        if os.getppid() != ppid:  # the parent died before prctl took effect
            os._exit(1)
    threading.Thread(target=_watch, args=(ppid,), name="vreason-parent-watchdog", daemon=True).start()


def _after_fork_in_server_child() -> None:
    die_with_parent(pdeathsig=True)


def install() -> None:
    """Have every process a forkserver of this process forks die with this process.

    Takes effect for a forkserver started after the call (one per process, shared by every
    pool); cheap, idempotent, starts nothing.
    """
    if "forkserver" not in mp.get_all_start_methods():
        return
    from multiprocessing import forkserver

    preload = list(getattr(forkserver._forkserver, "_preload_modules", None) or ["__main__"])
    if __name__ not in preload:
        forkserver.set_forkserver_preload([*preload, __name__])


def _imported_by_forkserver() -> bool:
    """True while ``multiprocessing.forkserver.main`` preloads this module."""
    frame = sys._getframe(1)
    target = os.path.join("multiprocessing", "forkserver.py")
    while frame is not None:
        if frame.f_code.co_name == "main" and frame.f_code.co_filename.endswith(target):
            return True
        frame = frame.f_back
    return False


if _imported_by_forkserver():
    os.register_at_fork(after_in_child=_after_fork_in_server_child)
