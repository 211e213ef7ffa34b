"""The HTML report: ``report/index.html`` (tables, charts, sample × model grid, errors) and one page
per sample (``report/samples/<id>.html``). Works from ``file://``: no CDN, no network, media by
relative path. All data text goes through jinja2 autoescape; JSON inside ``<script>`` goes through
:func:`script_json`, which escapes ``<``, ``>`` and ``&`` so no ``</script>`` can end the block.
"""

from __future__ import annotations

import json
import os
import re
import time
from typing import Any

import pandas as pd
from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup

from vreason.aggregate.tables import errors_by_reason, failures_table, reason_kind
from vreason.core.protocol import AggregateResult
from vreason.report.cells import formats_of
from vreason.report.html_data import Declared, RunView, collect, rel
from vreason.report.media import build_media
from vreason.store import RunStore, redact, redact_text

MAX_TABLE_ROWS = 500


def script_json(obj: Any) -> Markup:
    """JSON safe inside ``<script type="application/json">``: ``<``, ``>``, ``&`` as ``\\u00XX``."""
    text = json.dumps(obj, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return Markup(text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def _pjson(obj: Any) -> str:
    from vreason.report.writer import _jsonable

    return json.dumps(_jsonable(redact(obj)), indent=1, ensure_ascii=False, allow_nan=False)


def environment() -> Environment:
    env = Environment(loader=PackageLoader("vreason.report", "templates"),
                      autoescape=select_autoescape(default=True, default_for_string=True, enabled_extensions=("j2",
                                                                                                              "html")))
    env.filters["pjson"] = _pjson
    return env


def table_view(name: str, frame: pd.DataFrame, note: str = "", stem: str | None = None,
               fmt: dict[str, Any] | None = None) -> dict[str, Any]:
    """A table for the template: cells rendered by the declared format ``fmt`` (:mod:`vreason.report.cells`)."""
    from vreason.report.cells import render_table

    columns, rows = render_table(frame.head(MAX_TABLE_ROWS), fmt)
    return {"name": name, "stem": stem or name, "note": note, "columns": columns,
            "rows": [[vars(c) for c in r] for r in rows], "more": max(0, len(frame) - MAX_TABLE_ROWS)}


def _default_note(name: str, frame: pd.DataFrame, fmt: dict[str, Any] | None = None) -> str:
    """What a table without a protocol note holds: its intervals (as printed) and its count columns."""
    fmt = fmt or {}
    cols = [str(c) for c in frame.columns]
    merged = list((fmt.get("intervals") or {}).keys())
    hidden = {x for lh in (fmt.get("intervals") or {}).values() for x in lh}
    n_cols = [c for c in cols if c == "n" or c.startswith("n_")]
    ci = [c for c in cols if c not in hidden and re.search(r"(^|[_ ])(ci|low|high|lo|hi)([_ ]|$)", c.lower())]
    parts = []
    if merged:
        parts.append("v [lo, hi]: a value with its interval")
    if ci:
        parts.append("interval columns: " + ", ".join(ci[:4]))
    if n_cols:
        parts.append("counts: " + ", ".join(n_cols[:5]))
    return "; ".join(parts)


def _error_tables(store: RunStore, scores: pd.DataFrame, import_errors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    units = pd.DataFrame(store.failures())
    if not units.empty:
        out.append(table_view("failed units by reason", errors_by_reason(units),
                              "units (sample × model × seed × scorer) that ended unscored or error, grouped by the "
                              "kind of their reason; never counted as 0"))
    if not scores.empty:
        bad = failures_table(scores.assign(reason=[reason_kind(r) for r in scores.get("reason", [None] * len(scores))]))
        if not bad.empty:
            out.append(table_view("non-ok scores by reason", bad, "score rows with status unscored / error"))
    vids = [v for v in store.videos() if v.status.value != "ok"]
    if vids:
        frame = pd.DataFrame([{"status": v.status.value, "reason": reason_kind(v.reason), "model": v.model}
                              for v in vids])
        grouped = frame.groupby(["status", "reason"]).agg(count=("model", "size"),
                                                          models=("model", lambda m: ", ".join(sorted(set(m)))))
        out.append(table_view("videos not ok by reason", grouped.reset_index().sort_values("count", ascending=False),
                              "videos missing, blocked or failed"))
    if import_errors:
        frame = pd.DataFrame(import_errors)
        out.append(table_view("videos not imported or suspicious", frame.head(200)))
    return out


def _meta_rows(meta: dict[str, Any]) -> list[tuple[str, str]]:
    rows = []
    for k, v in meta.items():
        if k in ("failures", "import_errors", "config", "versions"):
            continue
        if isinstance(v, dict):
            v = ", ".join(f"{a}={b}" for a, b in v.items())
        elif isinstance(v, list | tuple):
            v = ", ".join(str(x) for x in v)
        rows.append((str(k), redact_text(str(v))))
    return rows


def write_html(store: RunStore, result: AggregateResult, out_dir: str, *, title: str,
               meta: dict[str, Any] | None = None, workers: int | None = None) -> dict[str, Any]:
    """Write ``index.html``, ``samples/*.html`` and the cached media; returns timings and counts."""
    from vreason.report.writer import _file_stem, _ordered_names

    t0 = time.perf_counter()
    meta = dict(meta or {})
    declared = Declared.of(result.summary)
    view: RunView = collect(store, out_dir, declared)
    t_collect = time.perf_counter() - t0
    media = build_media(view.jobs, workers=workers)
    t_media = time.perf_counter() - t0 - t_collect
    broken = {m.video: m.error for m in media if m.error}
    for cell in view.cells:  # no thumbnail for a video that could not be decoded
        if cell["thumb"] and not os.path.exists(os.path.join(out_dir, cell["thumb"])):
            cell["thumb"] = None

    env = environment()
    notes = result.summary.get("table_notes", {}) if isinstance(result.summary, dict) else {}
    tables = []
    for n in _ordered_names(result):
        if n == "failures":
            continue
        fmt = formats_of(result.summary, n)
        note = notes.get(n) or _default_note(n, result.tables[n], fmt)
        tables.append(table_view(n, result.tables[n], note, _file_stem(n), fmt))
    charts = [(n, rel(os.path.abspath(p), out_dir)) for n, p in result.charts.items()]
    scores = store.scores_frame()
    errors = _error_tables(store, scores, meta.get("import_errors") or [])
    gm = declared.grid_metric
    grid = {"models": view.models, "cells": view.cells, "digits": int((gm or {}).get("digits", 2)),
            "label": str((gm or {}).get("label", "")),
            "samples": [{k: s[k] for k in ("id", "category", "difficulty", "page")} for s in view.samples]}
    index = env.get_template("index.html.j2").render(
        title=title, meta=_meta_rows(meta), tables=tables, charts=charts, errors=errors, grid_json=script_json(grid),
        grid_metric=gm)
    index_path = os.path.join(out_dir, "index.html")
    with open(index_path, "w", encoding="utf-8") as fh:
        fh.write(index)
    page_dir = os.path.join(out_dir, "samples")
    os.makedirs(page_dir, exist_ok=True)
    tpl = env.get_template("sample.html.j2")
    ids = [s["id"] for s in view.samples]
    run_name = os.path.basename(store.run_dir)
    for i, sid in enumerate(ids):
        page = view.pages[sid]
        for r in page["runs"]:
            if r["thumb"] and not os.path.exists(os.path.join(page_dir, r["thumb"])):
                r["thumb"] = None
        html = tpl.render(s=page["sample"], runs=page["runs"], run=run_name,
                          prev=ids[i - 1] if i > 0 else None, next=ids[i + 1] if i + 1 < len(ids) else None)
        with open(os.path.join(page_dir, f"{sid}.html"), "w", encoding="utf-8") as fh:
            fh.write(html)
    return {"index": index_path, "index_bytes": os.path.getsize(index_path), "pages": len(ids),
            "media_jobs": len(view.jobs), "media_built": sum(m.built for m in media),
            "media_cached": sum(m.cached for m in media), "media_errors": broken,
            "seconds": {"collect": round(t_collect, 2), "media": round(t_media, 2),
                        "total": round(time.perf_counter() - t0, 2)}}
