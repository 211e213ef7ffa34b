"""A numeric table as text cells, the one place where report numbers become strings.

The protocol declares each table's format (``summary["table_formats"]``, see
:func:`vreason.aggregate.tables.declare_format`): decimals per column or per row by its metric, value /
low / high columns rendered as one ``"v [lo, hi]"`` cell, and a value with a paired change as ``"v(+d)"``.
The Markdown report, the HTML report and the terminal tables all render through :func:`render_table`, so a
number reads the same everywhere. Long text is shortened at a word boundary (``…``) with the full text kept
as the cell's ``title``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import pandas as pd

from vreason.aggregate.tables import default_digits, shorten

MAX_CELL_CHARS = 160


@dataclass
class Cell:
    text: str
    """What the cell shows."""
    v: str
    """Its sort value (a number's ``repr``, or the full text)."""
    num: bool
    title: str | None = None
    """The full text when ``text`` was shortened."""


def formats_of(summary: Any, name: str) -> dict[str, Any]:
    """The declared format of table ``name`` (``{}`` when none)."""
    if not isinstance(summary, dict):
        return {}
    return (summary.get("table_formats") or {}).get(name) or {}


def _finite(v: Any) -> float | None:
    if isinstance(v, bool) or v is None:
        return None
    if hasattr(v, "item") and not isinstance(v, str | bytes):
        try:
            v = v.item()
        except (ValueError, TypeError):
            return None
    if isinstance(v, int | float) and not isinstance(v, bool):
        f = float(v)
        return f if math.isfinite(f) else None
    return None


def _is_missing(v: Any) -> bool:
    if v is None:
        return True
    try:
        return bool(pd.isna(v))
    except (TypeError, ValueError):
        return False


class _Digits:
    """Decimals of one column: declared (an int, or by the row's key column), else the column's default."""

    def __init__(self, frame: pd.DataFrame, col: str, spec: Any):
        self.spec = spec
        self.by = None
        if isinstance(spec, dict):
            self.by = spec.get("by")
            self.values = {str(k): int(d) for k, d in (spec.get("values") or {}).items()}
            self.default = spec.get("default")
        self.fallback = default_digits(frame[col].tolist()) if col in frame.columns else 2

    def __call__(self, row: dict[str, Any]) -> int:
        if isinstance(self.spec, int) and not isinstance(self.spec, bool):
            return self.spec
        if self.by is not None:
            key = str(row.get(self.by))
            if key in self.values:
                return self.values[key]
            if self.default is not None:
                return int(self.default)
        return self.fallback


def number_text(v: Any, digits: int) -> str:
    """A number with ``digits`` decimals (ints as they are); ``"–"`` when missing."""
    f = _finite(v)
    if f is None:
        return "–"
    raw = v.item() if hasattr(v, "item") and not isinstance(v, str | bytes) else v
    if isinstance(raw, int) and not isinstance(raw, bool):
        return str(raw)
    return f"{f:.{digits}f}"


def _text_cell(v: Any, max_chars: int) -> Cell:
    from vreason.store import redact_text

    if _is_missing(v):
        return Cell("–", "", False)
    full = redact_text(str(v))
    short = shorten(full, max_chars)
    return Cell(short, full, False, full if short != full else None)


def render_table(frame: pd.DataFrame, fmt: dict[str, Any] | None = None, *,
                 max_chars: int = MAX_CELL_CHARS) -> tuple[list[str], list[list[Cell]]]:
    """Column names and rows of :class:`Cell` for ``frame`` under its declared format ``fmt``."""
    fmt = fmt or {}
    intervals = {c: tuple(lh) for c, lh in (fmt.get("intervals") or {}).items()
                 if c in frame.columns and all(x in frame.columns for x in lh)}
    deltas = {c: d for c, d in (fmt.get("deltas") or {}).items() if c in frame.columns and d in frame.columns}
    notes = {c: n for c, n in (fmt.get("notes") or {}).items() if c in frame.columns and n in frame.columns}
    hidden = {x for lh in intervals.values() for x in lh} | set(deltas.values()) | set(notes.values())
    cols = [c for c in frame.columns if c not in hidden]
    declared = fmt.get("digits") or {}
    digits = {c: _Digits(frame, c, declared.get(str(c))) for c in cols}
    rows: list[list[Cell]] = []
    for rec in frame.to_dict("records"):
        out = []
        for c in cols:
            v = rec[c]
            f = _finite(v)
            if f is None and not _is_missing(v) and not isinstance(v, bool):
                out.append(_text_cell(v, max_chars))
                continue
            if isinstance(v, bool) or (hasattr(v, "dtype") and str(getattr(v, "dtype", "")) == "bool"):
                out.append(Cell(str(bool(v)), str(bool(v)), False))
                continue
            if f is None:
                note = rec[notes[c]] if c in notes else None
                has = note is not None and not _is_missing(note) and str(note).strip()
                out.append(Cell(f"– ({note})" if has else "–", "", True))
                continue
            d = digits[c](rec)
            text = number_text(v, d)
            if c in intervals:
                lo, hi = (_finite(rec[x]) for x in intervals[c])
                if lo is not None and hi is not None:
                    text = f"{text} [{lo:.{d}f}, {hi:.{d}f}]"
            if c in deltas:
                delta = _finite(rec[deltas[c]])
                if delta is not None:
                    text += f"({delta:+.{d}f})" if round(delta, d) != 0 else f"({0:.{d}f})"
            if c in notes and not _is_missing(rec[notes[c]]) and str(rec[notes[c]]).strip():
                text += f" ({rec[notes[c]]})"
            out.append(Cell(text, repr(f), True))
        rows.append(out)
    return [str(c) for c in cols], rows


def text_frame(frame: pd.DataFrame, fmt: dict[str, Any] | None = None, *,
               max_chars: int = MAX_CELL_CHARS) -> tuple[pd.DataFrame, list[bool]]:
    """The rendered table as a frame of strings and which columns are numeric (for alignment)."""
    cols, rows = render_table(frame, fmt, max_chars=max_chars)
    numeric = [bool(rows) and all(r[i].num or r[i].text == "–" for r in rows) and any(r[i].num for r in rows)
               for i in range(len(cols))]
    return pd.DataFrame([[c.text for c in r] for r in rows], columns=cols, dtype=object), numeric
