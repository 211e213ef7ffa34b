"""The local executor: CPU work in worker processes, I/O-bound work concurrent on one event loop.

Work items are coroutines or picklable functions; results are handed back to the caller's
``on_done`` callback on the loop thread (where the store is written), as they arrive.
In-flight work is bounded, so a run of 100k units never queues 100k futures.
"""

from __future__ import annotations

import asyncio
import multiprocessing as mp
import os
from collections.abc import Awaitable, Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

from vreason.core import deathguard
from vreason.core.registry import plugins

# every forkserver pool of this process (the runner's and any other) gets workers that exit when
# this process dies, kill -9 included (see vreason.core.deathguard)
deathguard.install()


@dataclass
class Job:
    key: Any
    kind: str  # "cpu" or "io"
    fn: Callable[..., Any] | None = None  # cpu: picklable function
    args: tuple = ()
    coro_factory: Callable[[], Awaitable[Any]] | None = None  # io


def _worker_init(plugin_specs: tuple[str, ...] = ()) -> None:
    """Workers ignore Ctrl-C: the main process decides, cancels and shuts the pool down.
    They exit by themselves when the main process dies (:func:`deathguard.die_with_parent`), and load the
    main process's plugins (their registry entries: a plugin's frame presets, layouts, templates)."""
    import signal

    from vreason.core.registry import load_plugin

    for spec in plugin_specs:
        load_plugin(spec)

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # one worker per core already fills the machine: codec threads inside a worker only contend
    os.environ.setdefault("VREASON_CODEC_THREADS", "1")
    deathguard.die_with_parent()



def default_workers() -> int:
    return max(1, os.cpu_count() or 1)


class LocalExecutor:
    def __init__(self, workers: int | None = None, io_concurrency: int = 32):
        self.workers = workers or default_workers()
        self.io_concurrency = io_concurrency
        self._pool: ProcessPoolExecutor | None = None

    def _get_pool(self) -> ProcessPoolExecutor | None:
        if self.workers <= 1:
            return None  # run CPU work in a thread of this process (tests, debugging)
        if self._pool is None:
            ctx = mp.get_context("forkserver") if "forkserver" in mp.get_all_start_methods() else None
            deathguard.install()
            self._pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=ctx, initializer=_worker_init,
                                             initargs=(tuple(plugins()),))
        return self._pool

    def shutdown(self, cancel: bool = False) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=not cancel, cancel_futures=cancel)
            self._pool = None

    async def run(
        self,
        jobs: Iterable[Job],
        on_done: Callable[[Job, Any, BaseException | None], None],
    ) -> None:
        """Run every job; call ``on_done(job, result, error)`` on the loop thread as each finishes."""
        loop = asyncio.get_running_loop()
        pool = self._get_pool()
        cpu_slots = asyncio.Semaphore(self.workers * 2)
        io_slots = asyncio.Semaphore(self.io_concurrency)
        async def one(job: Job, slots: asyncio.Semaphore) -> None:
            try:
                if job.kind == "cpu":
                    res = await loop.run_in_executor(pool, job.fn, *job.args)
                else:
                    res = await job.coro_factory()
                err = None
            except asyncio.CancelledError:
                raise
            except BaseException as exc:  # noqa: BLE001 - reported to the caller, never swallowed
                res, err = None, exc
            finally:
                slots.release()
            on_done(job, res, err)

        await dispatch(jobs, one, lambda job: cpu_slots if job.kind == "cpu" else io_slots)


async def dispatch(
    jobs: Iterable[Job],
    one: Callable[[Job, asyncio.Semaphore], Awaitable[None]],
    slots_for: Callable[[Job], asyncio.Semaphore],
) -> None:
    """Start ``one(job, slots)`` for every job once a slot of ``slots_for(job)`` is free (``one`` releases
    it); wait for all. On any error or cancellation the jobs still running are cancelled."""
    pending: set[asyncio.Task] = set()
    failed: list[BaseException] = []

    def settle(task: asyncio.Task) -> None:  # a job's error is taken here (never "exception never retrieved")
        pending.discard(task)
        if not task.cancelled() and task.exception() is not None:
            failed.append(task.exception())  # type: ignore[arg-type]

    try:
        for job in jobs:
            if failed:  # e.g. a full disk: start nothing more
                raise failed[0]
            slots = slots_for(job)
            await slots.acquire()
            task = asyncio.create_task(one(job, slots))
            pending.add(task)
            task.add_done_callback(settle)
        while pending:
            await asyncio.gather(*list(pending))
        if failed:
            raise failed[0]
    except BaseException:
        for t in list(pending):
            t.cancel()
        raise
