"""Write an aggregate result as files: ``<table>.md`` / ``<table>.csv``, ``summary.json``, ``report.md``.

``report.md`` holds a header (title and run meta), every table in Markdown, the charts as image
links, and an "Errors" section: failed units grouped by reason with counts, non-ok scores, and
videos that could not be imported. Text from data (categories, tasks, prompts, reasons) is escaped
so ``|``, newlines or HTML cannot break a table or inject markup; URL credentials are redacted.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from vreason.aggregate.tables import errors_by_reason, failures_table, status_counts
from vreason.core.protocol import AggregateResult

MAX_FAILURE_ROWS = 50


def write_table_bundle(tables: dict[str, pd.DataFrame], out_dir: str, md_name: str,
                       formats: dict[str, Any] | None = None) -> None:
    """Each table as ``<name>.csv`` plus all of them in one Markdown file (a protocol's paper tables), each
    printed by its declared format (``formats[name]``, see :mod:`vreason.report.cells`)."""
    os.makedirs(out_dir, exist_ok=True)
    md = []
    for name, t in tables.items():
        t.to_csv(os.path.join(out_dir, f"{name}.csv"), index=False)
        md.append(f"## {md_text(name)}\n\n{_markdown(t, (formats or {}).get(name))}\n")
    with open(os.path.join(out_dir, md_name), "w", encoding="utf-8") as fh:
        fh.write("\n".join(md))


def _file_stem(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("._") or "table"


def _jsonable(obj: Any) -> Any:
    """NaN/inf → None, numpy scalars → Python, recursively."""
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_jsonable(v) for v in obj]
    if hasattr(obj, "item") and not isinstance(obj, str | bytes):
        try:
            obj = obj.item()
        except (ValueError, TypeError):
            return str(obj)
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if obj is None or isinstance(obj, bool | int | float | str):
        return obj
    return str(obj)


_MD_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "|": "\\|", "`": "&#96;"}


def md_text(value: Any) -> str:
    """Text safe inside a Markdown table cell or line: HTML and ``|`` escaped, newlines as ``<br>``,
    URL credentials redacted."""
    from vreason.store import redact_text

    text = "".join(_MD_ESCAPES.get(ch, ch) for ch in redact_text(str(value)))
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "<br>")


def _escaped(table: pd.DataFrame) -> pd.DataFrame:
    """String cells and column names escaped with :func:`md_text`; numbers untouched."""
    out = table.copy()
    for col in out.columns:
        if out[col].dtype == object or pd.api.types.is_string_dtype(out[col]):
            out[col] = pd.Series([md_text(v) if isinstance(v, str) else v for v in out[col]], index=out.index,
                                 dtype=object)
    out.columns = [md_text(c) for c in out.columns]
    return out


def _markdown(table: pd.DataFrame, fmt: dict[str, Any] | None = None) -> str:
    """The table in Markdown, every number printed as its declared format says (:mod:`vreason.report.cells`);
    NaN shows as "–"."""
    from vreason.report.cells import text_frame

    if table.empty:
        return "_(empty)_"
    shown, numeric = text_frame(table, fmt)
    align = ["right" if n else "left" for n in numeric]
    return _escaped(shown).to_markdown(index=False, colalign=align, disable_numparse=True)


def _format(result: AggregateResult, name: str) -> dict[str, Any]:
    from vreason.report.cells import formats_of

    return formats_of(result.summary, name)


def _ordered_names(result: AggregateResult) -> list[str]:
    first = [n for n in result.summary.get("headline_tables", []) if n in result.tables]
    return first + [n for n in result.tables if n not in first]


def _fmt_meta_value(v: Any) -> str:
    if isinstance(v, dict):
        return ", ".join(f"{md_text(k)}={_fmt_meta_value(x)}" for k, x in v.items()) or "–"
    if isinstance(v, list | tuple | set):
        return ", ".join(md_text(x) for x in v) or "–"
    return md_text(v)


def _is_long(v: Any) -> bool:
    if isinstance(v, dict):
        return any(isinstance(x, dict | list | tuple) for x in v.values()) or len(_fmt_meta_value(v)) > 160
    return isinstance(v, list | tuple) and len(_fmt_meta_value(v)) > 160


def _header(title: str, meta: dict[str, Any]) -> tuple[list[str], list[str]]:
    """Header bullets for short meta values; long/nested ones go to a "Run details" section."""
    from vreason.store import redact

    lines, details = [f"# {md_text(title)}", ""], []
    for key, val in meta.items():
        if _is_long(val):
            block = json.dumps(_jsonable(redact(val)), indent=2, allow_nan=False).replace("`", "\\u0060")
            details += [f"### {md_text(key)}", "", "```json", block, "```", ""]
        else:
            lines.append(f"- **{md_text(key)}**: {_fmt_meta_value(val)}")
    lines.append("")
    return lines, (["## Run details", ""] + details if details else [])


def _unit_failures(raw: Any) -> pd.DataFrame | None:
    """Failed units given in ``meta["failures"]`` (list of dicts or a frame), grouped by reason."""
    if raw is None:
        return None
    frame = raw if isinstance(raw, pd.DataFrame) else pd.DataFrame(list(raw))
    if frame.empty:
        return frame
    return errors_by_reason(frame)


def _failures_section(failures: pd.DataFrame | None, unit_failures: pd.DataFrame | None,
                      import_errors: list[dict[str, Any]] | None = None) -> list[str]:
    lines = ["## Errors", ""]
    if import_errors:
        lines += ["### Videos not imported or suspicious", ""]
        lines += _failure_rows(pd.DataFrame(import_errors), "report.md")
    if unit_failures is not None and not unit_failures.empty:
        lines += ["### Failed units by reason (sample × model × seed × scorer)", ""]
        lines += _failure_rows(unit_failures, "failed_units.csv")
        lines += ["### Non-ok scores", ""]
    if failures is None:
        lines += ["No failure information was provided to the report.", ""]
        return lines
    if failures.empty:
        lines += ["None: every score has status ok.", ""]
        return lines
    return lines + _failure_rows(failures, "failures.csv")


def _failure_rows(failures: pd.DataFrame, csv_name: str) -> list[str]:
    lines: list[str] = []
    if "status" in failures.columns and "count" in failures.columns:
        totals = failures.groupby("status")["count"].sum()
        lines.append("By status (never counted as 0): "
                     + ", ".join(f"{s}: {int(c)}" for s, c in totals.items()))
        lines.append("")
    shown = failures.head(MAX_FAILURE_ROWS)
    lines.append(_markdown(shown))
    if len(failures) > MAX_FAILURE_ROWS:
        lines.append("")
        lines.append(f"… and {len(failures) - MAX_FAILURE_ROWS} more rows (see {csv_name}).")
    lines.append("")
    return lines


def write_report(
    result: AggregateResult,
    out_dir: str | Path,
    *,
    title: str,
    meta: dict[str, Any] | None = None,
    scores: pd.DataFrame | None = None,
) -> list[str]:
    """Write every table (``.md`` + ``.csv``), ``summary.json`` and ``report.md`` under ``out_dir``.

    ``meta`` is shown in the header in order (e.g. run name, protocol, models, counts); nested or
    long values (config, versions) go to a "Run details" section; ``meta["failures"]`` (failed units:
    a list of dicts with status/scorer/reason, or a frame) is counted in the Failures section. When the
    run's score table is given as ``scores``, counts of samples / units / rows by status are added
    and the failures are computed from it if the result has no ``failures`` table.
    Returns the paths written.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    meta = dict(meta or {})
    import_errors = meta.pop("import_errors", None)
    unit_failures = _unit_failures(meta.pop("failures", None))
    if unit_failures is not None:
        meta["failed units"] = int(unit_failures["count"].sum()) if len(unit_failures) else 0
    failures = result.tables.get("failures")
    if scores is not None:
        counts = status_counts(scores)
        for key, label in (("models", "models"), ("samples", "samples"), ("units", "units"),
                           ("rows", "score rows"), ("by_status", "score rows by status")):
            if key in counts:
                meta.setdefault(label, counts[key])
        if failures is None:
            failures = failures_table(scores)
    written: list[str] = []
    # a run judged by the mock judge says so in every Markdown table and in summary.json, not only here
    judge_note = str(meta["note"]) if str(meta.get("note", "")).startswith("judge: mock") else ""
    table_note = f"> {md_text(judge_note)}\n\n" if judge_note else ""

    names = _ordered_names(result)
    stems: dict[str, str] = {}
    for name in names:
        stem = _file_stem(name)
        while stem in stems.values():
            stem += "_"
        stems[name] = stem
        table = result.tables[name]
        csv_path, md_path = out / f"{stem}.csv", out / f"{stem}.md"
        table.to_csv(csv_path, index=False)
        md_path.write_text(f"# {name}\n\n{table_note}{_markdown(table, _format(result, name))}\n", encoding="utf-8")
        written += [str(md_path), str(csv_path)]
    if unit_failures is not None:
        unit_failures.to_csv(out / "failed_units.csv", index=False)
        written.append(str(out / "failed_units.csv"))
    if failures is not None and "failures" not in result.tables:
        failures.to_csv(out / "failures.csv", index=False)
        written.append(str(out / "failures.csv"))

    summary_path = out / "summary.json"
    summary = dict(result.summary) if isinstance(result.summary, dict) else {"summary": result.summary}
    if judge_note:
        summary = {"judge_note": judge_note, **summary}
    summary_path.write_text(json.dumps(_jsonable(summary), indent=2, allow_nan=False) + "\n", encoding="utf-8")
    written.append(str(summary_path))

    lines, details = _header(title, meta)
    lines += ["## Tables", ""]
    notes = result.summary.get("table_notes", {}) if isinstance(result.summary, dict) else {}
    for name in names:
        if name == "failures":
            continue
        note = [md_text(notes[name]), ""] if notes.get(name) else []
        lines += [f"### {name}", "", *note, _markdown(result.tables[name], _format(result, name)), ""]
    if result.charts:
        lines += ["## Charts", ""]
        for name, path in result.charts.items():
            rel = os.path.relpath(Path(path).resolve(), out.resolve()) if Path(path).is_absolute() \
                else str(path)
            lines += [f"![{name}]({Path(rel).as_posix()})", ""]
    lines += _failures_section(failures, unit_failures, import_errors)
    lines += details
    report = out / "report.md"
    report.write_text("\n".join(lines), encoding="utf-8")
    written.append(str(report))
    return written


def print_tables(result: AggregateResult, console: Any = None, names: Sequence[str] | None = None) -> None:
    """Print the headline tables (``summary["headline_tables"]``, else all but ``failures``) with rich."""
    from rich.table import Table

    from vreason.console import make_console

    console = console or make_console()
    if names is None:
        names = [n for n in result.summary.get("headline_tables", []) if n in result.tables] or \
            [n for n in result.tables if n != "failures"]
    from vreason.report.cells import text_frame

    for name in names:
        note = (result.summary.get("table_notes", {}) if isinstance(result.summary, dict) else {}).get(name)
        table = Table(title=name, caption=note, show_lines=False)
        shown, numeric = text_frame(result.tables[name], _format(result, name))
        for col, num in zip(shown.columns, numeric, strict=True):
            table.add_column(str(col), justify="right" if num else "left", overflow="fold")
        for row in shown.itertuples(index=False):
            table.add_row(*[str(v) for v in row])
        console.print(table)
