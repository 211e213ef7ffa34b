"""Command-line argument helpers shared by the commands (comma lists, ``--opt key=value``, option checks)."""

from __future__ import annotations

import json
from typing import Any

import typer

from vreason.console import make_console

console = make_console(stderr=True)


def _csv(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]


def _ints(value: str | None, what: str) -> list[int]:
    try:
        return [int(v) for v in _csv(value)]
    except ValueError as exc:
        raise typer.BadParameter(f"{what} must be comma-separated integers, got {value!r}") from exc


def _parse_opts(pairs: list[str]) -> dict[str, Any]:
    opts: dict[str, Any] = {}
    for pair in pairs:
        key, eq, val = pair.partition("=")
        if not eq or not key:
            raise typer.BadParameter(f"--opt expects key=value, got {pair!r}")
        try:
            opts[key] = json.loads(val)
        except json.JSONDecodeError:
            opts[key] = val
    return opts


def _fit_options(protocol: str, options: dict[str, Any], opt_keys: list[str] = ()) -> dict[str, Any]:
    """Check the options against the protocol's typed options (unknown ``--opt`` keys and bad values
    stop the run, exit code 2); drop run flags (``--hint``, ``--per-task``…) the protocol does not
    declare, with a note."""
    from vreason.core.registry import benchmarks, load_builtins
    from vreason.runner.checks import check_options, known_option_keys

    load_builtins()
    cls = benchmarks.get(protocol)
    known = known_option_keys(cls)
    kept = dict(options) if known is None else {k: v for k, v in options.items() if k in known or k in opt_keys}
    dropped = sorted(set(options) - set(kept))
    if dropped:
        console.print(f"[yellow]note[/]: {protocol} ignores option(s) {', '.join(dropped)}")
    check_options(protocol, cls, kept)
    return kept
