"""`vreason view RUN_DIR [RUN_DIR…]`: serve the runs' HTML reports on 127.0.0.1 and compare runs or models.

Each run's report is served under ``/r/<i>/`` (``/r/<i>/report/index.html``; a run without one gets it
built first).

**Served like the annotation app, and only what the report shows**: bound to 127.0.0.1; every request
needs the random access token (``?token=…`` in the printed URL on the first visit, then an HttpOnly
SameSite=Strict cookie) and a ``Host`` of 127.0.0.1 / localhost / [::1] (a DNS-rebinding page gets 403).
Only registered media are served: the files under ``report/`` (not through a symlink leaving it), the
run's own videos and debug images the store records, and under ``report/media/linked/`` only links to a
video or data file the run's store names (the data files already confined to the dataset's root by the
loaders). Never the SQLite store, the judge cache, the manifest or anything else of the run folder.

``/compare.json?a=<i>:<model>&b=<j>:<model>`` gives the paired per-sample
deltas of the normalised score (pairs: same sample and seed, both ok) with the paired bootstrap
interval of :func:`vreason.aggregate.bootstrap.paired_delta_ci`; ``/compare`` is a page over it.
Needs the ``web`` extra (fastapi, uvicorn).
"""

from __future__ import annotations

import os
import secrets
from typing import TYPE_CHECKING, Any

import typer

from vreason.core.errors import ConfigError, MissingExtraError
from vreason.report.serve_guard import COOKIE, LOCAL_HOSTS, guard, host_name  # noqa: F401

if TYPE_CHECKING:
    import pandas as pd


def _frame(run_dir: str) -> pd.DataFrame:
    from vreason.store import RunStore

    with RunStore(run_dir, create=False) as store:
        return store.scores_frame()


def compare(a: pd.DataFrame, b: pd.DataFrame, *, scorer: str | None = None, metric: str | None = None,
            n_boot: int = 2000, level: float = 0.95) -> dict[str, Any]:
    """Paired deltas ``a − b`` of ``normalized`` per (sample, seed), both ok; bootstrap CI over pairs."""
    from vreason.aggregate.bootstrap import paired_delta_ci

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
        import pandas as pd

        return None if pd.isna(x) else round(float(x), 4)

    return {"scorer": scorer, "metric": metric, "n_pairs": len(pairs), "delta": num(delta), "ci_low": num(lo),
            "ci_high": num(hi), "level": level, "pairs": pairs}


def make_app(run_dirs: list[str], *, token: str | None = None) -> Any:
    """The FastAPI app serving ``run_dirs`` (reports built when missing); ``app.state.token`` holds the
    access token (random unless given)."""
    from fastapi import FastAPI, HTTPException
    from fastapi.responses import FileResponse, HTMLResponse
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
    app = FastAPI(title="vreason view", docs_url=None, redoc_url=None, openapi_url=None)
    guard(app, token or secrets.token_urlsafe(24), "vreason view")

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

    media = [_registered_media(d) for d in runs]

    @app.get("/r/{i}/{path:path}")
    def run_file(i: int, path: str) -> Any:
        if i < 0 or i >= len(runs):
            raise HTTPException(404, "no such run")
        found = _served_file(runs[i], path, media[i])
        if found is None:
            raise HTTPException(404, "not a file of this run's report")
        return FileResponse(found)
    return app


def _inside(root: str, path: str) -> bool:
    return os.path.commonpath([root, path]) == root


def _registered_media(run_dir: str) -> set[str]:
    """Real paths of the files the run's report may show outside ``report/``: its videos, their debug
    images, and the samples' data files (images / videos) — as recorded in the run's store."""
    from vreason.store import RunStore

    out: set[str] = set()

    def add(path: str | None, base: str = run_dir) -> None:
        if path:
            out.add(os.path.realpath(path if os.path.isabs(path) else os.path.join(base, path)))

    with RunStore(run_dir, create=False) as store:
        for v in store.videos():
            add(v.path)
        for sc in store.scores():
            for p in getattr(sc.evidence, "debug_images", None) or []:
                add(p)
        for s in store.samples():
            for field in ("input_image", "input_video", "reference_image", "reference_video"):
                value = getattr(s, field, None)
                if value:
                    add(s.resolve(value))
    return out


def _served_file(run_dir: str, path: str, media: set[str]) -> str | None:
    """The file ``/r/<i>/<path>`` may serve, or None: a regular file under ``report/`` (not through a
    symlink leaving it, except a ``report/media/linked/`` link to registered media), or registered
    media inside the run."""
    import posixpath

    if "\0" in path or "\\" in path:
        return None
    rel = posixpath.normpath("/" + path).lstrip("/")
    if not rel or rel.startswith("..") or any(part == ".." for part in path.split("/")):
        return None
    run_real = os.path.realpath(run_dir)
    report_real = os.path.join(run_real, "report")
    full = os.path.join(run_real, *rel.split("/"))
    if os.path.isdir(full):
        full = os.path.join(full, "index.html")
    real = os.path.realpath(full)
    if not os.path.isfile(real):
        return None
    linked = os.path.join(report_real, "media", "linked") + os.sep
    if full.startswith(linked):
        return real if real in media else None
    if _inside(report_real, real):
        return real
    return real if _inside(run_real, real) and real in media else None


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
    port: int = typer.Option(8765, "--port", help="Port on 127.0.0.1 (0: any free port, printed)."),
) -> None:
    """Serve the runs' HTML reports on 127.0.0.1 with a paired comparison page (needs the `web` extra)."""
    try:
        import uvicorn  # noqa: F401  (the web extra: local_server.serve runs it)
    except ImportError as exc:
        raise MissingExtraError("vreason view needs the web extra: pip install 'vreason[web]'") from exc
    from vreason.cli import local_server

    app = make_app(run_dirs)
    sock = local_server.bind(port)
    typer.echo(f"serving {len(run_dirs)} run(s) on http://{local_server.HOST}:{sock.getsockname()[1]}/"
               f"?token={app.state.token} (open this URL; Ctrl-C stops)")
    local_server.serve(app, sock)


def register(app: typer.Typer) -> None:
    app.command("view")(view)
