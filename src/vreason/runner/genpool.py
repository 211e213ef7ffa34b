"""Killable generation workers: a model loaded once per worker process, a hang stopped for real.

Each worker is a process of its own (in its own process group) that keeps the generators it was sent —
so a diffusers pipeline is loaded once and reused across videos. A call that outlives its timeout gets
the worker's whole process group killed (SIGKILL) and a fresh worker takes its place; a worker that dies
(segfault, out of memory) is replaced too. Either way the caller gets a ``failed`` video with the reason
and the run goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing as mp
import os
import signal
import threading
import time
from typing import Any

from vreason.core import deathguard
from vreason.core.errors import DiskFullError, disk_full
from vreason.core.records import Sample, Video, VideoStatus

POLL_S = 0.2


def _worker_main(conn: Any) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with contextlib.suppress(OSError):  # a group of its own: a timeout kills it and whatever it started
        os.setsid()
    os.environ.setdefault("VREASON_CODEC_THREADS", "1")
    deathguard.die_with_parent()
    from vreason.runner.work import _generate_in_worker

    cache: dict[str, Any] = {}
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        if msg is None:
            return
        key, gen, sample, seed, out_path, ctx = msg
        held = cache.setdefault(key, gen)  # the first copy keeps its loaded model; later copies are dropped
        if held is gen:
            held.bind(ctx)
        try:
            conn.send(("ok", _generate_in_worker(held, sample, seed, out_path, check=True)))
        except Exception as exc:  # noqa: BLE001 - e.g. an unpicklable result: reported, the worker lives on
            full = disk_full(exc)
            conn.send(("full", full.path) if full else ("err", f"{type(exc).__name__}: {exc}"))


class _Worker:
    def __init__(self) -> None:
        ctx = mp.get_context("forkserver") if "forkserver" in mp.get_all_start_methods() else mp.get_context()
        deathguard.install()
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker_main, args=(child,), daemon=True, name="vreason-gen")
        self.proc.start()
        child.close()

    def alive(self) -> bool:
        return self.proc.is_alive()

    def call(self, msg: tuple, timeout: float | None, cancel: threading.Event) -> tuple[str, Any]:
        """Send one request and wait: ``("ok", Video)``, ``("err", text)``, ``("timeout", s)``,
        ``("dead", exitcode)`` or ``("cancelled", None)``."""
        try:
            self.conn.send(msg)
        except (OSError, EOFError, BrokenPipeError):
            return "dead", self.proc.exitcode
        t0 = time.monotonic()
        while True:
            if cancel.is_set():
                return "cancelled", None
            if self.conn.poll(POLL_S):
                try:
                    return self.conn.recv()
                except (EOFError, OSError):
                    self.proc.join(1)
                    return "dead", self.proc.exitcode
            if not self.proc.is_alive():
                return "dead", self.proc.exitcode
            if timeout is not None and time.monotonic() - t0 > timeout:
                return "timeout", timeout

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError, AttributeError, ValueError):
            self.proc.kill()
        self.proc.join(5)
        self.conn.close()

    def stop(self) -> None:
        with contextlib.suppress(OSError, BrokenPipeError):
            self.conn.send(None)
        self.proc.join(2)
        if self.proc.is_alive():
            self.kill()
        else:
            self.conn.close()


class GenPool:
    """Up to ``size`` workers for one model; :meth:`generate` waits for a free one."""

    def __init__(self, size: int = 1):
        self.size = max(1, int(size))
        self._free: list[_Worker] = []
        self._busy: set[_Worker] = set()
        self._slots = asyncio.Semaphore(self.size)
        self.replaced = 0

    async def generate(self, key: str, gen: Any, sample: Sample, seed: int, out_path: str,
                       timeout: float | None) -> Video:
        async with self._slots:
            worker = self._free.pop() if self._free else await asyncio.to_thread(_Worker)
            self._busy.add(worker)
            cancel = threading.Event()
            try:
                status, value = await asyncio.to_thread(worker.call, (key, gen, sample, seed, out_path, gen.ctx),
                                                        timeout, cancel)
            except BaseException:
                cancel.set()
                self._busy.discard(worker)
                worker.kill()
                raise
            self._busy.discard(worker)
            if status == "ok":
                self._free.append(worker)
                return value
            if status == "full":  # not the video's fault: the run stops (exit 4) and resumes it
                self._free.append(worker)
                raise DiskFullError(value)
            if status == "err":
                self._free.append(worker)
                return _failed(gen, sample, seed, f"generation worker error: {value}")
            await asyncio.to_thread(worker.kill)
            self.replaced += 1
            if status == "timeout":
                return _failed(gen, sample, seed, f"generation timed out after {value:g} s (worker killed and "
                                                  "replaced)")
            return _failed(gen, sample, seed, f"generation worker died (exit code {value}); replaced")

    def shutdown(self) -> None:
        for w in list(self._busy):
            w.kill()
        for w in self._free:
            w.stop()
        self._free.clear()
        self._busy.clear()


def _failed(gen: Any, sample: Sample, seed: int, reason: str) -> Video:
    try:
        return gen.failed(sample, seed, reason)
    except Exception:  # noqa: BLE001 - a generator whose own record cannot be built
        return Video(sample_id=sample.id, model=gen.model_name(), seed=seed, status=VideoStatus.failed, reason=reason)
