"""The Python API: run a protocol from a script or a notebook and get its tables as DataFrames.

    import vreason
    res = vreason.evaluate("synth", ["oracle", "static"], options={"families": ["maze"], "per_task": 2})
    res.tables["..."]          # the protocol's tables (pandas DataFrames)
    res.scores                 # one row per score, with evidence
    await vreason.aevaluate(…)  # the same from async code

It runs the same :class:`~vreason.runner.run.Runner` as ``vreason run`` (same store, resume, report).
Worker processes never re-import the caller's ``__main__`` (a script without an
``if __name__ == "__main__":`` guard is safe): the forkserver preloads vreason instead. Plugins that
workers must see (generators, scorers) belong in an importable module, not in ``__main__``.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd


@dataclass
class Evaluation:
    run_dir: str
    summary: dict[str, Any]
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    scores: pd.DataFrame = field(default_factory=pd.DataFrame)
    report_paths: list[str] = field(default_factory=list)
    exit_code: int = 0
    """What ``vreason run`` would exit with: 0 ok, 3 finished with errors (see docs)."""
    note: str | None = None
    """``judge: mock (not a real model) …`` when a judge role was the mock judge (also in each table's
    ``DataFrame.attrs["note"]``): judged numbers that were made up, not measured."""


_CLI_TO_API = (("--force-new", "evaluate(..., force_new=True)"), ("--name", "name (evaluate(..., name=...))"),
               ("--judge", "judge=..."),
               ("--seeds", "seeds=[...]"), ("--runs", "runs=..."), ("--opt", "options={...}"),
               ("--data", "data=..."), ("--videos", "videos=..."), ("--models", "models"))


def api_wording(message: str) -> str:
    """A refusal written for ``vreason run`` with its flags named as :func:`evaluate`'s arguments
    (``--force-new`` → ``evaluate(..., force_new=True)``, ``--name`` → ``name=...``)."""
    import re

    for flag, arg in _CLI_TO_API:
        message = re.sub(re.escape(flag) + r"(?![\w-])", arg, message)
    return message


def _no_main_preload() -> None:
    """Keep the caller's ``__main__`` out of worker processes (they would run an unguarded script again).

    Workers of a spawn/forkserver pool re-import the parent's main script (as ``__mp_main__``) from the
    preparation data the parent sends; vreason's jobs never need it, so that entry is dropped from the
    data (and the forkserver no longer preloads ``__main__``). Applies to pools started after the call."""
    from multiprocessing import spawn

    if getattr(spawn.get_preparation_data, "_vreason_no_main", False):
        return
    original = spawn.get_preparation_data

    def get_preparation_data(name: str) -> dict[str, Any]:
        data = original(name)
        data.pop("init_main_from_path", None)
        data.pop("init_main_from_name", None)
        return data

    get_preparation_data._vreason_no_main = True  # type: ignore[attr-defined]
    spawn.get_preparation_data = get_preparation_data


def _evaluate(protocol: str, models: Sequence[str], *, data: str | None, videos: str | None,
              judge: str | dict[str, str] | None, seeds: Sequence[int], runs: str, name: str | None,
              options: dict[str, Any] | None, workers: int | None, force_new: bool, report: bool,
              quiet: bool, config: dict[str, Any]) -> Evaluation:
    from vreason.console import make_console
    from vreason.core.errors import ConfigError
    from vreason.runner.outcome import exit_code
    from vreason.runner.run import RunConfig, Runner, make_protocol
    from vreason.store import RunStore

    _no_main_preload()
    opts = dict(options or {})
    if data is not None:
        opts["data"] = data
    if videos is not None:
        opts.setdefault("videos", videos)
    judges = {"default": judge} if isinstance(judge, str) else dict(judge or {})
    run_dir = os.path.join(runs, name or protocol)
    cfg = RunConfig(protocol=protocol, run_dir=run_dir, models=list(models), seeds=list(seeds), options=opts,
                    judges=judges, workers=workers, videos_dir=videos, force_new=force_new, aggregate=report,
                    **config)
    console = make_console(stderr=True, quiet=quiet)
    try:
        summary = Runner(cfg, console=console).run()
    except ConfigError as exc:  # a refusal worded for the CLI: name this API's arguments instead
        worded = api_wording(str(exc))
        if worded == str(exc):
            raise
        try:
            again = type(exc)(worded)
        except TypeError:
            again = ConfigError(worded)
        raise again from exc
    store = RunStore(run_dir)
    try:
        scores = store.scores_frame()
        proto = make_protocol(protocol, opts, run_dir=store.run_dir)
        out_dir = os.path.join(store.run_dir, "report")
        os.makedirs(out_dir, exist_ok=True)
        tables = proto.aggregate(scores, store.samples(), out_dir).tables if len(scores) else {}
        from vreason.report.build import label_markdown_tables, mock_judge_note

        note = mock_judge_note(scores, store.read_manifest())
        if note:  # aggregating again rewrote the protocol's table files
            label_markdown_tables(out_dir, note)
    finally:
        store.close()
    if note:
        for table in tables.values():
            table.attrs["note"] = note
    return Evaluation(run_dir=store.run_dir, summary=summary.as_dict(), tables=dict(tables), scores=scores,
                      report_paths=list(summary.report_paths), exit_code=exit_code(summary), note=note)


def evaluate(protocol: str, models: Sequence[str], *, data: str | None = None, videos: str | None = None,
             judge: str | dict[str, str] | None = None, seeds: Sequence[int] = (0,), runs: str = "runs",
             name: str | None = None, options: dict[str, Any] | None = None, workers: int | None = None,
             force_new: bool = False, report: bool = True, quiet: bool = True, **config: Any) -> Evaluation:
    """Run ``protocol`` for ``models`` and return its tables. ``judge`` is a spec (or ``{role: spec}``);
    ``options`` are the protocol's options (``vreason list --options``); other keyword arguments go to
    :class:`~vreason.runner.run.RunConfig` (``limit``, ``retry_failed``, ``convention``, ``dry_run``…).
    Safe to call from inside a running event loop (a notebook): it then runs in a helper thread."""
    kw = dict(data=data, videos=videos, judge=judge, seeds=seeds, runs=runs, name=name, options=options,
              workers=workers, force_new=force_new, report=report, quiet=quiet, config=config)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _evaluate(protocol, models, **kw)
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(_evaluate, protocol, models, **kw).result()


async def aevaluate(protocol: str, models: Sequence[str], **kw: Any) -> Evaluation:
    """:func:`evaluate` for async code: the run happens in a thread, the event loop stays free."""
    return await asyncio.to_thread(_evaluate_kw, protocol, models, kw)


def _evaluate_kw(protocol: str, models: Sequence[str], kw: dict[str, Any]) -> Evaluation:
    return evaluate(protocol, models, **kw)
