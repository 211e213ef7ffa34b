"""`vreason ratings RUN_DIR` and `vreason agreement RUN_DIR`: tables from the run's human annotations.

Both print rich tables and write CSV, Markdown (text escaped as the report writer does) and JSON into
``RUN_DIR/report/human/`` (or ``--out``). Definitions: :mod:`vreason.human.ratings`,
:mod:`vreason.human.agreement`; a guide in docs/human.md.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING

import typer
from rich.table import Table

from vreason.console import make_console
from vreason.core.errors import ConfigError

if TYPE_CHECKING:
    import pandas as pd

console = make_console(stderr=True)
out = make_console()


def _out_dir(run_dir: str, out_dir: str | None) -> str:
    path = out_dir or os.path.join(run_dir, "report", "human")
    os.makedirs(path, exist_ok=True)
    return path


def _markdown(title: str, tables: dict[str, pd.DataFrame], notes: list[str]) -> str:
    import pandas as pd

    from vreason.report.cells import text_frame
    from vreason.report.writer import md_text

    lines = [f"# {md_text(title)}", ""] + [f"- {md_text(n)}" for n in notes] + [""]
    for name, df in tables.items():
        lines.append(f"## {md_text(name)}\n")
        if df.empty:
            lines.append("_(empty)_\n")
            continue
        text, _ = text_frame(df)  # each column with one precision (vreason.report.cells), not one per value
        shown = pd.DataFrame({md_text(c): [md_text(v) for v in text[c]] for c in text.columns})
        lines.append(shown.to_markdown(index=False, disable_numparse=True) + "\n")
    return "\n".join(lines)


def _jsonable(df: pd.DataFrame) -> list[dict]:
    return json.loads(df.to_json(orient="records"))


def _write(dest: str, stem: str, title: str, tables: dict[str, pd.DataFrame], notes: list[str]) -> list[str]:
    paths = []
    for name, df in tables.items():
        p = os.path.join(dest, f"{name}.csv")
        df.to_csv(p, index=False)
        paths.append(p)
    p = os.path.join(dest, f"{stem}.md")
    with open(p, "w", encoding="utf-8") as fh:
        fh.write(_markdown(title, tables, notes))
    paths.append(p)
    p = os.path.join(dest, f"{stem}.json")
    with open(p, "w", encoding="utf-8") as fh:
        json.dump({"notes": notes, "tables": {k: _jsonable(v) for k, v in tables.items()}}, fh, indent=2)
    paths.append(p)
    return paths


def _print(name: str, df: pd.DataFrame, columns: list[str] | None = None) -> None:
    cols = [c for c in (columns or list(df.columns)) if c in df.columns]
    from vreason.report.cells import text_frame

    table = Table(title=name)
    text, numeric = text_frame(df[cols])
    for c, num in zip(cols, numeric, strict=True):
        table.add_column(c, justify="right" if num else "left", overflow="fold")
    for row in text.itertuples(index=False):
        table.add_row(*[str(v) for v in row])
    out.print(table)


def ratings_cmd(
    run_dir: str = typer.Argument(..., help="A run directory with pairwise votes (vreason annotate --task pairwise)."),
    dimension: list[str] = typer.Option(None, "--dimension", help="Only these dimensions (repeatable).",
                                        show_default="all voted"),
    boot: int = typer.Option(1000, "--boot", help="Bootstrap rounds for the intervals (0: none)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap."),
    auto: str = typer.Option(None, "--auto", help="The automatic score to rank against, as scorer:metric.",
                             show_default="the scorer:metric with the most ok scores"),
    out_dir: str = typer.Option(None, "--out", help="Where to write.", show_default="RUN_DIR/report/human"),
) -> None:
    """Ratings from pairwise votes: PAI-Bench's ELO per dimension and overall, Bradley–Terry with bootstrap
    intervals, in the layout of PAI-Bench Table 8, and their rank correlation with the automatic scores."""
    from vreason.human.ratings import rank_correlations, rate_votes, ratings_long, table8
    from vreason.human.store import AnnotationStore
    from vreason.store import RunStore

    with AnnotationStore(run_dir) as ann:
        votes = ann.votes()
    given = [v for v in votes if v.verdict is not None]
    if not given:
        raise ConfigError(f"{run_dir}: no pairwise votes (collect them with `vreason annotate {run_dir} "
                          "--task pairwise` or `vreason annotate import`)")
    dims = list(dimension) if dimension else None
    if dims and not any(v.dimension in dims for v in given):
        raise ConfigError(f"no votes on dimension(s) {', '.join(dims)}; voted: "
                          f"{', '.join(sorted({v.dimension for v in given}))}")
    results = rate_votes(votes, dimensions=dims, n_boot=boot, seed=seed)
    with RunStore(run_dir, create=False) as store:
        frame = store.scores_frame()
    from vreason.human.ratings import auto_model_scores

    sc, _, met = (auto or "").partition(":")
    auto_scores, auto_name = auto_model_scores(frame, sc or None, met or None)
    t8 = table8(results, auto_scores)
    tables = {"ratings_table8": t8, "ratings_long": ratings_long(results),
              "ratings_correlation": rank_correlations(results, auto_scores)}
    overall = results["overall"]
    notes = [f"{len(given)} votes ({len(votes) - len(given)} skipped), {overall.n} comparisons, "
             f"{len(overall.models)} models, dimensions: {', '.join(d for d in results if d != 'overall')}",
             "ELO as PAI-Bench A.4: start 1000, K 32, preference 1/0, both good / both bad 0.5; overall from the "
             "preference averaged over the dimensions of each comparison; votes in the order given",
             f"{overall.partial} comparison(s) lacked a verdict on some dimension (overall averages the others)",
             "Bradley–Terry: maximum likelihood (choix), ties half a win each, ELO scale (1000 + 400·θ/ln 10)",
             f"intervals: {boot} bootstrap rounds over votes, 95% percentile; rank = 1 + models whose lower bound "
             "is above this one's upper bound",
             f"automatic score: {auto_name or 'none (no ok scores)'} (mean normalised ×100)"]
    _print("PAI-Bench Table 8 layout", t8)
    _print("rank correlation with the automatic score", tables["ratings_correlation"])
    for n in notes:
        console.print(n, soft_wrap=True, markup=False)
    paths = _write(_out_dir(run_dir, out_dir), "ratings", "Ratings from pairwise human votes", tables, notes)
    out.print(f"wrote {len(paths)} files under {os.path.dirname(paths[0])}")


def agreement_cmd(
    run_dir: str = typer.Argument(..., help="A run directory with rubric labels (vreason annotate --task rubric)."),
    metric: list[str] = typer.Option(None, "--metric", help="Only these label metrics, e.g. rise:tc (repeatable).",
                                     show_default="all labelled"),
    boot: int = typer.Option(1000, "--boot", help="Bootstrap rounds for the intervals (0: none)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap."),
    out_dir: str = typer.Option(None, "--out", help="Where to write.", show_default="RUN_DIR/report/human"),
) -> None:
    """Judge vs humans (MAE/STD as RISE Table 3; ACC, Kendall, Spearman, Pearson as RULER Table 3) and
    humans vs humans (Krippendorff's α, Cohen's / Fleiss' κ) per protocol metric, with bootstrap intervals."""
    from vreason.human.agreement import agreement_tables
    from vreason.human.agreement_links import METRIC_LINKS
    from vreason.human.store import AnnotationStore
    from vreason.store import RunStore

    with AnnotationStore(run_dir) as ann:
        labels = ann.labels()
    if metric:
        unknown = sorted(set(metric) - {lab.metric for lab in labels})
        if unknown:
            raise ConfigError(f"no labels for metric(s) {', '.join(unknown)}; labelled: "
                              f"{', '.join(sorted({lab.metric for lab in labels})) or 'none'}")
    if not any(not lab.skipped for lab in labels):
        raise ConfigError(f"{run_dir}: no rubric labels (collect them with `vreason annotate {run_dir} "
                          "--task rubric` or `vreason annotate import`)")
    with RunStore(run_dir, create=False) as store:
        scores = store.scores()
    tables = agreement_tables(labels, scores, metrics=metric or None, n_boot=boot, seed=seed)
    notes = ["judge vs humans: human value = mean of the annotators per item; MAE and STD of |judge − human| on "
             "the native scale (RISE Table 3); ACC = exact label match (RULER Table 3); Kendall τ-b, Spearman ρ, "
             "Pearson r (RULER KRCC/SRCC/PLCC)",
             "labels whose item the judge left unscored / error, or never scored, are counted in judge_unscored, "
             "judge_error and no_judge — not in the statistics and never as 0",
             "humans vs humans: items with >= 2 annotators; Krippendorff's α; Cohen's κ (2 annotators) or Fleiss' κ "
             "(>= 3)",
             f"intervals: {boot} bootstrap rounds over items, 95% percentile",
             "metric mapping: " + "; ".join(f"{k} → {'/'.join(v.scorers)}:{v.metric}" for k, v in
                                             METRIC_LINKS.items())]
    if not tables["unmapped"].empty:
        notes.append("no judge metric mapped for: " + ", ".join(tables["unmapped"]["metric"]))
    _print("judge vs humans", tables["judge_vs_human"],
           ["metric", "n", "mae", "std", "acc", "kendall", "spearman", "pearson", "judge_unscored", "judge_error",
            "no_judge"])
    _print("humans vs humans", tables["human_vs_human"],
           ["metric", "n", "annotators", "alpha", "cohen_kappa", "fleiss_kappa", "pair_agree"])
    for n in notes[:-1] if tables["unmapped"].empty else notes:
        console.print(n, soft_wrap=True, markup=False)
    named = {"agreement_judge": tables["judge_vs_human"], "agreement_human": tables["human_vs_human"]}
    paths = _write(_out_dir(run_dir, out_dir), "agreement", "Agreement with human labels", named, notes)
    out.print(f"wrote {len(paths)} files under {os.path.dirname(paths[0])}")


def register(app: typer.Typer) -> None:
    app.command("ratings")(ratings_cmd)
    app.command("agreement")(agreement_cmd)
