"""Concurrency and rate limits shared by every scorer that talks to the same endpoint.

:func:`shared_limiter` returns one :class:`Limiter` per endpoint key (e.g. ``openai:api.openai.com``),
so two judge roles pointing at one server share its budget. A limiter caps requests in flight and,
optionally, spaces request starts to stay under a requests-per-minute limit. It works across event
loops (each ``asyncio.run`` gets fresh primitives).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class Limiter:
    def __init__(self, max_concurrency: int = 8, rpm: float | None = None):
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency must be ≥ 1, got {max_concurrency}")
        if rpm is not None and rpm <= 0:
            raise ValueError(f"rpm must be > 0, got {rpm}")
        self.max_concurrency = int(max_concurrency)
        self.rpm = rpm
        self._loop: asyncio.AbstractEventLoop | None = None
        self._sem: asyncio.Semaphore | None = None
        self._rate_lock: asyncio.Lock | None = None
        self._next_start = 0.0
        self._guard = threading.Lock()
        self.in_flight = 0
        self.peak_in_flight = 0

    def _primitives(self) -> tuple[asyncio.Semaphore, asyncio.Lock]:
        loop = asyncio.get_running_loop()
        with self._guard:
            if self._loop is not loop or self._sem is None or self._rate_lock is None:
                self._loop = loop
                self._sem = asyncio.Semaphore(self.max_concurrency)
                self._rate_lock = asyncio.Lock()
            return self._sem, self._rate_lock

    async def _pace(self, lock: asyncio.Lock) -> None:
        if not self.rpm:
            return
        interval = 60.0 / self.rpm
        async with lock:
            now = time.monotonic()
            start = max(now, self._next_start)
            self._next_start = start + interval
        if start > now:
            await asyncio.sleep(start - now)

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        sem, lock = self._primitives()
        async with sem:
            await self._pace(lock)
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
            try:
                yield
            finally:
                self.in_flight -= 1


_SHARED: dict[str, Limiter] = {}
_SHARED_LOCK = threading.Lock()


def shared_limiter(key: str, max_concurrency: int = 8, rpm: float | None = None) -> Limiter:
    """The limiter for endpoint ``key``, created on first use. Later calls set its limits to the
    values given (the last configuration wins), so clients built for one run share one budget
    and a stale setting from an earlier run in the same process does not linger."""
    if max_concurrency < 1:
        raise ValueError(f"max_concurrency must be ≥ 1, got {max_concurrency}")
    with _SHARED_LOCK:
        lim = _SHARED.get(key)
        if lim is None:
            lim = _SHARED[key] = Limiter(max_concurrency, rpm)
        else:
            if max_concurrency != lim.max_concurrency:
                lim.max_concurrency = max_concurrency
                lim._sem = None  # new semaphore on next use
            lim.rpm = rpm
        return lim
