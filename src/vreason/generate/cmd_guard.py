"""The guard between a vreason run and a ``cmd:`` generator: the command dies with the run.

Run as a script (``python -I -S cmd_guard.py DRIVER_PID ARGV...``, stdlib only, so it starts fast and
imports nothing of the project). ``cmd_gen`` starts it in a session (process group) of its own; the guard
starts the command in that same group and waits for it. When the driver dies — ``kill -9`` included —

* Linux: the kernel sends the guard SIGTERM (``prctl(PR_SET_PDEATHSIG)``), and
* everywhere: a watchdog thread sees the guard's parent change within ``WATCH_S``;

either way the guard SIGKILLs its whole process group: the command and everything it started (unless
they left the group on purpose). A timeout in the driver kills the same group. The command's exit
status is passed on as the guard's own (a command killed by signal N: the guard dies of signal N).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

WATCH_S = 0.5


def _kill_group(*_: object) -> None:
    os.killpg(0, signal.SIGKILL)  # the guard's own group: the command, its children and the guard


def _pdeathsig(sig: int) -> None:
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, sig, 0, 0, 0)  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # no prctl: the watchdog alone
        return


def _watch(driver: int) -> None:
    while True:
        time.sleep(WATCH_S)
        if os.getppid() != driver:
            _kill_group()


def main(argv: list[str]) -> int:
    driver, cmd = int(argv[0]), argv[1:]
    if os.getpgrp() != os.getpid():  # never kill a group the guard does not lead
        os.setsid()
    signal.signal(signal.SIGTERM, _kill_group)
    signal.signal(signal.SIGHUP, _kill_group)
    _pdeathsig(int(signal.SIGTERM))
    if os.getppid() != driver:  # the driver died before the death signal was armed
        _kill_group()
    threading.Thread(target=_watch, args=(driver,), daemon=True).start()
    try:
        child = subprocess.Popen(cmd)
    except OSError as exc:
        print(f"cannot start {cmd[0]}: {exc}", file=sys.stderr)
        return 127
    rc = child.wait()
    if rc < 0:  # killed by a signal: die of the same one, so the driver sees it
        signal.signal(-rc, signal.SIG_DFL)
        os.kill(os.getpid(), -rc)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
