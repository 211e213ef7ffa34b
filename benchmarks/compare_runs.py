"""Compare two run folders: outputs must not change across a refactor (issue 23, "Done when").

Compares, between run folder A and run folder B:

* ``scores.jsonl``: rows keyed by unit (sample_id, model, seed, scorer, metric); every field of every row
  must be equal. Units only in one run are differences.
* ``videos.jsonl``: rows keyed by (sample_id, model, seed), the same way.
* every table file: ``*.csv``, ``*.md``, ``*.html``, ``*.txt`` and ``*.json`` under ``tables/``, ``scores.csv``
  and any other ``*.csv`` at the top, compared as text; ``*.parquet`` compared as data frames (the file
  bytes carry the writer's metadata).

What is ignored, and only this: the run folder's own absolute path inside strings (``videos.jsonl`` stores
each video's path, which names the run) is replaced by ``<run>`` before comparing; ``manifest.json`` is not
compared (creation time, host, invocations); no score field is a timestamp or a duration of the run
(``details.duration_s`` is the video's length, compared). ``results.sqlite`` is not compared (its rows are
what ``scores.jsonl``/``videos.jsonl`` export).

Usage: python benchmarks/compare_runs.py RUN_A RUN_B [--show 10]. Exits 0 when identical, 1 on any
difference (each listed, at most ``--show`` per file), 2 on a usage mistake (a folder without scores.jsonl).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

UNIT = ("sample_id", "model", "seed", "scorer", "metric")
VIDEO = ("sample_id", "model", "seed")
TABLE_EXT = (".csv", ".md", ".html", ".txt", ".json", ".parquet")


def _normalise(value: Any, run_dir: str) -> Any:
    if isinstance(value, str):
        return value.replace(run_dir, "<run>")
    if isinstance(value, list):
        return [_normalise(v, run_dir) for v in value]
    if isinstance(value, dict):
        return {k: _normalise(v, run_dir) for k, v in value.items()}
    return value


def _rows(path: str, key: tuple[str, ...], run_dir: str) -> dict[tuple, dict]:
    out: dict[tuple, dict] = {}
    if not os.path.exists(path):
        return out
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            row = _normalise(json.loads(line), run_dir)
            k = tuple(row.get(f) for f in key)
            if k in out:
                k = (*k, f"#line{n}")  # a duplicate unit is kept (and will differ if the other run lacks it)
            out[k] = row
    return out


def _diff_fields(a: Any, b: Any, prefix: str = "") -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b), key=str):
            if k not in a or k not in b:
                out.append(f"{prefix}{k}: only in {'B' if k not in a else 'A'}")
            else:
                out += _diff_fields(a[k], b[k], f"{prefix}{k}.")
        return out
    return [] if a == b else [f"{prefix.rstrip('.')}: {json.dumps(a)[:80]} != {json.dumps(b)[:80]}"]


def compare_jsonl(name: str, a_dir: str, b_dir: str, key: tuple[str, ...]) -> list[str]:
    a = _rows(os.path.join(a_dir, name), key, os.path.abspath(a_dir))
    b = _rows(os.path.join(b_dir, name), key, os.path.abspath(b_dir))
    out = [f"{name}: unit {k} only in A" for k in sorted(set(a) - set(b), key=str)]
    out += [f"{name}: unit {k} only in B" for k in sorted(set(b) - set(a), key=str)]
    for k in sorted(set(a) & set(b), key=str):
        out += [f"{name}: {k}: {d}" for d in _diff_fields(a[k], b[k])]
    return out


def _table_files(run_dir: str) -> set[str]:
    found = {f for f in os.listdir(run_dir) if f.endswith(".csv") or f.endswith(".parquet")}
    tables = os.path.join(run_dir, "tables")
    if os.path.isdir(tables):
        for root, _, files in os.walk(tables):
            found |= {os.path.relpath(os.path.join(root, f), run_dir) for f in files if f.endswith(TABLE_EXT)}
    return found


def compare_tables(a_dir: str, b_dir: str) -> list[str]:
    fa, fb = _table_files(a_dir), _table_files(b_dir)
    out = [f"table {f}: only in A" for f in sorted(fa - fb)] + [f"table {f}: only in B" for f in sorted(fb - fa)]
    for f in sorted(fa & fb):
        pa, pb = os.path.join(a_dir, f), os.path.join(b_dir, f)
        if f.endswith(".parquet"):
            import pandas as pd

            da, db = pd.read_parquet(pa), pd.read_parquet(pb)
            if not (list(da.columns) == list(db.columns) and da.shape == db.shape and da.equals(db)):
                out.append(f"table {f}: data differ")
            continue
        with open(pa, encoding="utf-8") as ha, open(pb, encoding="utf-8") as hb:
            ta = ha.read().replace(os.path.abspath(a_dir), "<run>")
            tb = hb.read().replace(os.path.abspath(b_dir), "<run>")
        if ta != tb:
            la, lb = ta.splitlines(), tb.splitlines()
            first = next((i for i, (x, y) in enumerate(zip(la, lb, strict=False)) if x != y), min(len(la), len(lb)))
            out.append(f"table {f}: differs from line {first + 1} ({len(la)} vs {len(lb)} lines)")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run_a")
    ap.add_argument("run_b")
    ap.add_argument("--show", type=int, default=10, help="differences listed per file (all are counted)")
    args = ap.parse_args(argv)
    for d in (args.run_a, args.run_b):
        if not os.path.isfile(os.path.join(d, "scores.jsonl")):
            print(f"error: {d} has no scores.jsonl (not a finished run folder)", file=sys.stderr)
            return 2
    groups = {
        "scores.jsonl": compare_jsonl("scores.jsonl", args.run_a, args.run_b, UNIT),
        "videos.jsonl": compare_jsonl("videos.jsonl", args.run_a, args.run_b, VIDEO),
        "tables": compare_tables(args.run_a, args.run_b),
    }
    n_units = len(_rows(os.path.join(args.run_a, "scores.jsonl"), UNIT, ""))
    total = 0
    for name, diffs in groups.items():
        total += len(diffs)
        for d in diffs[: args.show]:
            print(d)
        if len(diffs) > args.show:
            print(f"{name}: … {len(diffs) - args.show} more")
    tables = sorted(_table_files(args.run_a))
    print(f"compared {n_units} score units, videos.jsonl and {len(tables)} table files ({', '.join(tables)}): "
          f"{'identical' if total == 0 else f'{total} differences'}")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
