"""Dump every judged protocol's fixture run (scores, manifest departures, report tables) to compare two versions.

Each variant runs one judged protocol's tiny test fixture end to end through the CLI, offline: ``--judge mock``
(well-formed replies) and ``garble[:salt]`` (the same mock judge with about a third of its replies, chosen by a hash
of the request or, with a salt, of the sample, replaced by unparseable text, so the re-ask and *unscored* paths run
too), plus a few option variants that depart from the released defaults. The dump holds the sorted rows of
``scores.jsonl`` without timestamps and durations, the manifest's options and departures, and the report's table files
with run-specific paths, dates and durations blanked. Run it before and after a refactor and compare::

    python benchmarks/compare_judged.py dump before.json
    python benchmarks/compare_judged.py dump after.json
    python benchmarks/compare_judged.py diff before.json after.json   # exit 1 on any difference

``--only rise,ruler`` limits the variants to those whose name starts with one of the given prefixes.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import re
import sys
import tempfile
from contextlib import contextmanager
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))  # the protocols' fixture writers

DROP = {"created", "created_at", "started", "finished", "duration", "duration_s", "elapsed", "elapsed_s",
        "latency", "latency_s", "timestamp", "time", "ts", "at", "wall_s", "seconds"}
"""Keys (anywhere in a row) whose values differ between two runs of the same code."""

VARIANTS: list[tuple[str, str, str, list[str]]] = [
    # (variant name, fixture (tests/test_judge_mock_e2e.py), judge mode, extra CLI arguments)
    ("rise", "rise", "mock", []),
    ("rise-garble", "rise", "garble", []),
    ("rise-code-asked", "rise", "garble", ["--opt", "ra_mode=code", "--opt", "ra_count=asked"]),
    ("ruler", "ruler", "mock", []),
    ("ruler-garble", "ruler", "garble", []),
    ("ruler-frames", "ruler", "mock", ["--opt", "frame_policy=uniform:4", "--opt", "missing_metric=skip"]),
    ("mmecof", "mmecof", "mock", []),
    ("mmecof-garble", "mmecof", "garble", []),
    ("mmecof-scale", "mmecof", "mock", ["--opt", "quality_scale=1-5", "--opt", "frame_policy=uniform:4"]),
    ("tivibench", "tivibench", "mock", []),
    ("tivibench-garble", "tivibench", "garble", []),
    ("tivibench-garble2", "tivibench", "garble:2", []),
    ("pai-g", "pai-g", "mock", []),
    ("pai-g-garble", "pai-g", "garble", []),
    ("pai-g-garble-unscored", "pai-g", "garble", ["--opt", "unparsed=unscored", "--opt", "answer_rule=word"]),
    ("pai-u", "pai-u", "mock", []),
    ("pai-u-garble", "pai-u", "garble", []),
    ("pai-u-garble-unscored", "pai-u", "garble", ["--opt", "missing_answer=unscored", "--opt", "temperature=0"]),
]


def _clean(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items() if k not in DROP}
    if isinstance(obj, list):
        return [_clean(v) for v in obj]
    return obj


@contextmanager
def _garbled(salt: str = ""):
    """The mock judge with a deterministic third of its replies (by request content) made unparseable."""
    from vreason.judge.mock import MockJudge
    from vreason.judge.scripted import request_text

    original = MockJudge.complete

    async def complete(self, request):
        reply = await original(self, request)
        # without a salt: by content (a re-ask differs, so may succeed); with one: by sample (every re-ask fails too)
        what = f"{salt}|{request.template}|{request.sample_id}" if salt else \
            f"{request.template}|{request.sample_id}|{request_text(request)}"
        key = hashlib.sha256(what.encode()).digest()
        if key[0] % 3 == 0:
            reply = dataclasses.replace(reply, text="I cannot tell from these frames.")
        return reply

    MockJudge.complete = complete
    try:
        yield
    finally:
        MockJudge.complete = original


_FINGERPRINT = re.compile(r'(\\?"plan_fingerprint\\?": \\?")[0-9a-f]{16}')


def _scrub(text: str, paths: list[str]) -> str:
    for p in paths:
        text = text.replace(p, "<tmp>")
    text = re.sub(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:?\d\d)?", "<time>", text)
    text = _FINGERPRINT.sub(r"\1<fp>", text)  # a hash of the plan, which holds the temporary paths
    return re.sub(r"\d+(\.\d+)?\s?(s|ms|min)\b", "<dur>", text)


def run_variant(name: str, fixture: str, mode: str, extra: list[str], tmp: str) -> dict[str, Any]:
    from typer.testing import CliRunner

    from test_judge_mock_e2e import PROTOCOLS
    from vreason.cli.main import app

    root = os.path.join(tmp, name)
    args = PROTOCOLS[fixture](os.path.join(root, "fixture"))
    runs = os.path.join(root, "runs")
    cmd = ["run", *args, *extra, "--runs", runs, "--name", "r", "--judge", "mock:quality=0.5,seed=1",
           "--workers", "1", "--opt", "n_boot=50"]
    if mode.startswith("garble"):
        with _garbled(mode.partition(":")[2]):
            res = CliRunner().invoke(app, cmd)
    else:
        res = CliRunner().invoke(app, cmd)
    run_dir = os.path.join(runs, "r")
    out: dict[str, Any] = {"exit_code": res.exit_code}
    rows = []
    with open(os.path.join(run_dir, "scores.jsonl"), encoding="utf-8") as fh:
        for line in fh:
            rows.append(_clean(json.loads(line)))
    out["scores"] = sorted(rows, key=lambda r: json.dumps(r, sort_keys=True))
    manifest = json.load(open(os.path.join(run_dir, "manifest.json"), encoding="utf-8"))
    out["manifest"] = {k: v for k, v in manifest.items() if re.search(r"option|depart|released", k)}
    out["manifest"].update({k: v for k, v in (manifest.get("config") or {}).items() if re.search(r"depart", k)})
    report = os.path.join(run_dir, "report")
    out["report"] = {f: _scrub(open(os.path.join(report, f), encoding="utf-8").read(), [root])
                     for f in sorted(os.listdir(report)) if f.endswith(".md")}
    statuses: dict[str, int] = {}
    for r in rows:
        statuses[r.get("status", "?")] = statuses.get(r.get("status", "?"), 0) + 1
    print(f"{name:28s} exit {res.exit_code}  scores {len(rows):3d}  {statuses}", flush=True)
    return out


def dump(path: str, only: list[str] | None) -> None:
    result = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, fixture, mode, extra in VARIANTS:
            if only and not any(name.startswith(o) for o in only):
                continue
            result[name] = run_variant(name, fixture, mode, extra, tmp)
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(result, fh, indent=1, sort_keys=True)


def _lines(variant: dict[str, Any]) -> list[str]:
    """A variant's dump as lines: the JSON of its scores and manifest, then every report file line by line."""
    out = json.dumps({k: v for k, v in variant.items() if k != "report"}, indent=1, sort_keys=True).splitlines()
    for f, text in sorted(variant.get("report", {}).items()):
        out += [f"{f}: {line}" for line in _FINGERPRINT.sub(r"\1<fp>", text).splitlines()]
    return out


def diff(a_path: str, b_path: str) -> int:
    import difflib

    a, b = (json.load(open(p, encoding="utf-8")) for p in (a_path, b_path))
    bad = 0
    for name in sorted(set(a) | set(b)):
        if name not in a or name not in b:
            print(f"{name}: only in {'the first' if name in a else 'the second'} dump")
            continue
        sa, sb = (_lines(x[name]) for x in (a, b))
        if sa == sb:
            print(f"{name}: identical ({len(a[name]['scores'])} scores, {len(a[name]['report'])} tables)")
            continue
        bad += 1
        print(f"{name}: DIFFERS")
        for line in list(difflib.unified_diff(sa, sb, a_path, b_path, lineterm="", n=1))[:60]:
            print("   ", line[:200])
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dump")
    d.add_argument("out")
    d.add_argument("--only", default="")
    c = sub.add_parser("diff")
    c.add_argument("a")
    c.add_argument("b")
    ns = ap.parse_args(argv)
    if ns.cmd == "dump":
        dump(ns.out, [o for o in ns.only.split(",") if o] or None)
        return 0
    return diff(ns.a, ns.b)


if __name__ == "__main__":
    sys.exit(main())
