"""One place that makes rich consoles: wide tables when the output is not a terminal.

rich sizes a console once, from the terminal or ``COLUMNS``, and falls back to 80 columns when the output is
a pipe or a file: a wide paper table piped to ``less`` or a log file is then squeezed to one character per
column. Consoles made here decide their width at print time instead: the terminal's own width on a
terminal, ``COLUMNS`` when it is set, and :data:`PIPE_WIDTH` columns otherwise (rich still folds text that is
longer than that).
"""

from __future__ import annotations

import os
from typing import Any

from rich.console import Console, ConsoleDimensions

PIPE_WIDTH = 240
"""Columns used when the output is neither a terminal nor sized by ``COLUMNS``."""


class AdaptiveConsole(Console):
    """A rich console whose width is decided when it prints, not when it is made."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        fixed = kwargs.get("width")
        super().__init__(*args, **kwargs)
        if fixed is None:  # rich read COLUMNS once at construction; read it at print time instead
            self._width = None

    @property
    def size(self) -> ConsoleDimensions:
        if self._width is None and not self.is_terminal:
            columns = os.environ.get("COLUMNS", "")
            width = int(columns) if columns.isdigit() and int(columns) > 0 else PIPE_WIDTH
            return ConsoleDimensions(width, self._height or 25)
        return super().size

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        width, height = new_size
        self._width, self._height = width, height


def make_console(*, stderr: bool = False, **kwargs: Any) -> Console:
    """The project's console: stdout (results) or stderr (progress, notes), sized at print time."""
    return AdaptiveConsole(stderr=stderr, **kwargs)
