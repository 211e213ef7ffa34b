"""`vreason view RUN_DIR [RUN_DIR…]`: serve the runs' HTML reports on 127.0.0.1 and compare runs or models.

Each run folder is served under ``/r/<i>/`` (its report at ``/r/<i>/report/index.html``; a run without
one gets it built first). ``/compare.json?a=<i>:<model>&b=<j>:<model>`` gives the paired per-sample
deltas of the normalised score (pairs: same sample and seed, both ok) with the paired bootstrap
interval of :func:`vreason.aggregate.stats.paired_delta_ci`; ``/compare`` is a page over it.
Needs the ``web`` extra (fastapi, uvicorn).
"""

from __future__ import annotations

import os
from typing import Any

import pandas as pd
import typer

from vreason.errors import ConfigError


def _frame(run_dir: str) -> pd.DataFrame:
    from vreason.store import RunStore

    with RunStore(run_dir, create=False) as store:
        return store.scores_frame()


def compare(a: pd.DataFrame, b: pd.DataFrame, *, scorer: str | None = None, metric: str | None = None,
            n_boot: int = 2000, level: float = 0.95) -> dict[str, Any]:
    """Paired deltas ``a − b`` of ``normalized`` per (sample, seed), both ok; bootstrap CI over pairs."""
    from vreason.aggregate.stats import paired_delta_ci

    ok_a = a[a["status"] == "ok"]
    if scorer is None or metric is None:
        top = ok_a.groupby(["scorer", "metric"]).size().sort_values(ascending=False)
        if top.empty:
            raise ConfigError("no ok scores to compare")
        scorer, metric = top.index[0]
    keys = ["sample_id", "seed"]

    def pick(df: pd.DataFrame) -> pd.DataFrame:
        sel = df[(df["status"] == "ok") & (df["scorer"] == scorer) & (df["metric"] == metric)]
        return sel.groupby(keys)["normalized"].mean().reset_index()

    joined = pick(a).merge(pick(b), on=keys, suffixes=("_a", "_b")).sort_values(keys)
    delta, lo, hi = paired_delta_ci(joined["normalized_a"], joined["normalized_b"], n_boot=n_boot, level=level)
    pairs = [{"sample_id": r.sample_id, "seed": int(r.seed), "a": round(float(r.normalized_a), 4),
              "b": round(float(r.normalized_b), 4), "delta": round(float(r.normalized_a - r.normalized_b), 4)}
             for r in joined.itertuples(index=False)]

    def num(x: float) -> float | None:
        return None if pd.isna(x) else round(float(x), 4)

    return {"scorer": scorer, "metric": metric, "n_pairs": len(pairs), "delta": num(delta), "ci_low": num(lo),
            "ci_high": num(hi), "level": level, "pairs": pairs}


def make_app(run_dirs: list[str]) -> Any:
    """The FastAPI app serving ``run_dirs`` (reports built when missing)."""
    from fastapi import FastAPI, HTTPException
    from fastapi.responses import HTMLResponse
    from fastapi.staticfiles import StaticFiles
    from markupsafe import escape

    from vreason.report.html import script_json

    runs = [os.path.abspath(d) for d in run_dirs]
    for d in runs:
        if not os.path.exists(os.path.join(d, "report", "index.html")):
            _build(d)
    frames: dict[int, pd.DataFrame] = {}

    def frame(i: int) -> pd.DataFrame:
        if i not in frames:
            frames[i] = _frame(runs[i])
        return frames[i]

    choices = [{"key": f"{i}:{m}", "label": f"{os.path.basename(d)} / {m}"}
               for i, d in enumerate(runs) for m in sorted(frame(i)["model"].unique())]
    app = FastAPI(title="vreason view")

    @app.get("/", response_class=HTMLResponse)
    def home() -> str:
        items = "".join(f'<li><a href="/r/{i}/report/index.html">{escape(os.path.basename(d))}</a></li>'
                        for i, d in enumerate(runs))
        return (f'<!doctype html><html><head><meta charset="utf-8"><title>vreason view</title></head><body>'
                f'<h1>vreason runs</h1><ul>{items}</ul><p><a href="/compare">compare runs or models</a></p>'
                f'</body></html>')

    @app.get("/compare", response_class=HTMLResponse)
    def compare_page() -> str:
        from vreason.report.html import environment

        return environment().get_template("compare.html.j2").render(choices=script_json(choices))

    def side(key: str) -> tuple[int, str]:
        run, _, model = key.partition(":")
        if not run.isdigit() or int(run) >= len(runs):
            raise HTTPException(404, f"no run {run!r}")
        return int(run), model

    @app.get("/compare.json")
    def compare_json(a: str, b: str, scorer: str | None = None, metric: str | None = None) -> dict[str, Any]:
        (ia, ma), (ib, mb) = side(a), side(b)
        fa, fb = frame(ia), frame(ib)
        try:
            out = compare(fa[fa["model"] == ma], fb[fb["model"] == mb], scorer=scorer, metric=metric)
        except ConfigError as exc:
            raise HTTPException(404, str(exc)) from exc
        return {"a": a, "b": b, **out}

    for i, d in enumerate(runs):
        # symlinks are followed: the report links imported videos and data files (only those) under report/media/linked/
        app.mount(f"/r/{i}", StaticFiles(directory=d, html=True, follow_symlink=True), name=f"run{i}")
    return app


def _build(run_dir: str) -> None:
    from vreason.report.build import build_report
    from vreason.runner.run import make_protocol
    from vreason.store import RunStore

    with RunStore(run_dir, create=False) as store:
        cfg = store.read_manifest().get("config", {})
        if not cfg.get("protocol"):
            raise ConfigError(f"{run_dir}: manifest.json names no protocol")
        build_report(store, make_protocol(cfg["protocol"], cfg.get("options", {}), run_dir=run_dir))


def view(
    run_dirs: list[str] = typer.Argument(..., help="One or more run directories."),
    port: int = typer.Option(8765, "--port", help="Port on 127.0.0.1."),
) -> None:
    """Serve the runs' HTML reports on 127.0.0.1 with a paired comparison page (needs the `web` extra)."""
    try:
        import uvicorn
    except ImportError as exc:
        raise ImportError("vreason view needs the web extra: pip install 'vreason[web]'") from exc
    app = make_app(run_dirs)
    typer.echo(f"serving {len(run_dirs)} run(s) on http://127.0.0.1:{port}/ (Ctrl-C stops)")
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


def register(app: typer.Typer) -> None:
    app.command("view")(view)
