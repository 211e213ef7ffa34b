"""Progress of a run's stages: a rich live bar on a terminal, plain lines otherwise.

On a terminal: a bar with done/total, ok/failed counts, rate, elapsed time and ETA. When the progress
console is not a terminal (output piped to a file, a CI log, ``nohup``), a live bar would print nothing
useful, so one plain line is printed every :data:`DEFAULT_INTERVAL` seconds (``VREASON_PROGRESS_SECONDS``
sets another; ``0`` turns the periodic lines off) and once when the stage ends, e.g.::

    score: 120/400 done (30%), ok 118, failed 2, 3.1/s, elapsed 0:00:39, eta 0:01:30
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterable
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

DEFAULT_INTERVAL = 5.0
"""Seconds between plain progress lines when the output is not a terminal."""
INTERVAL_ENV = "VREASON_PROGRESS_SECONDS"


class RateColumn(ProgressColumn):
    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text(f"{speed:.1f}/s" if speed else "–/s", style="progress.data.speed")


def unit_ok(scores: Any) -> bool:
    """Whether a finished unit's scores are all ``ok`` (a video: its status is ``ok``)."""
    items: Iterable[Any] = scores if isinstance(scores, list | tuple) else [scores]
    items = list(items)
    return bool(items) and all(getattr(getattr(s, "status", None), "value", getattr(s, "status", None)) == "ok"
                               for s in items)


def interval_seconds() -> float:
    """The plain-line interval: ``VREASON_PROGRESS_SECONDS`` when it is a number ≥ 0, else the default."""
    raw = os.environ.get(INTERVAL_ENV, "")
    try:
        value = float(raw)
    except ValueError:
        return DEFAULT_INTERVAL
    return value if value >= 0 else DEFAULT_INTERVAL


def _clock(seconds: float) -> str:
    s = int(round(seconds))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


class RichProgress:
    """A rich live bar with ok/failed counts (terminal output)."""

    def __init__(self, console: Console):
        self._p = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("[green]{task.fields[ok]} ok[/] [red]{task.fields[failed]} failed[/]"),
            RateColumn(),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            console=console,
            transient=False,
        )

    def __enter__(self) -> RichProgress:
        self._p.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._p.__exit__(*exc)

    def add_task(self, description: str, total: int) -> Any:
        return self._p.add_task(description, total=total, ok=0, failed=0)

    def advance(self, task: Any, ok: bool = True) -> None:
        fields = next(t for t in self._p.tasks if t.id == task).fields
        key = "ok" if ok else "failed"
        self._p.update(task, advance=1, **{key: fields[key] + 1})


class _Counts:
    def __init__(self, description: str, total: int):
        self.description, self.total = description, total
        self.ok = self.failed = 0
        self.t0 = time.monotonic()

    @property
    def done(self) -> int:
        return self.ok + self.failed

    def line(self) -> str:
        elapsed = time.monotonic() - self.t0
        pct = f" ({100 * self.done / self.total:.0f}%)" if self.total else ""
        rate = self.done / elapsed if elapsed > 0 and self.done else 0.0
        if self.done >= self.total:
            eta = "done"
        elif rate > 0:
            eta = f"eta {_clock((self.total - self.done) / rate)}"
        else:
            eta = "eta –"
        return (f"{self.description}: {self.done}/{self.total} done{pct}, ok {self.ok}, failed {self.failed}, "
                f"{rate:.1f}/s, elapsed {_clock(elapsed)}, {eta}")


class PlainProgress:
    """Plain progress lines every ``interval`` seconds and at the end (output that is not a terminal)."""

    def __init__(self, console: Console, interval: float | None = None):
        self.console = console
        self.interval = interval_seconds() if interval is None else interval
        self._tasks: list[_Counts] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _print(self, text: str) -> None:
        self.console.print(text, markup=False, highlight=False, soft_wrap=True)

    def _tick(self) -> None:
        while not self._stop.wait(self.interval):
            with self._lock:
                lines = [t.line() for t in self._tasks if t.done < t.total]
            for ln in lines:
                self._print(ln)

    def __enter__(self) -> PlainProgress:
        if self.interval > 0:
            self._thread = threading.Thread(target=self._tick, name="vreason-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        with self._lock:
            lines = [t.line() for t in self._tasks]
        for ln in lines:  # the stage's last word, also when it ended early (interrupted, failed)
            self._print(ln)

    def add_task(self, description: str, total: int) -> int:
        with self._lock:
            self._tasks.append(_Counts(description, total))
            return len(self._tasks) - 1

    def advance(self, task: int, ok: bool = True) -> None:
        with self._lock:
            t = self._tasks[task]
            if ok:
                t.ok += 1
            else:
                t.failed += 1


def make_progress(console: Console, interval: float | None = None) -> RichProgress | PlainProgress:
    """A live bar when ``console`` is a terminal, plain periodic lines otherwise."""
    if console.is_terminal:
        return RichProgress(console)
    return PlainProgress(console, interval)
