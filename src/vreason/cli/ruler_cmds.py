"""`vreason ruler …`: draft checklists and enhanced prompts for RULER-Bench records with an LLM."""

from __future__ import annotations

import asyncio

import typer

from vreason.console import make_console

ruler_app = typer.Typer(help="RULER-Bench tools: draft checklists, enhance prompts (the paper's PE).",
                        no_args_is_help=True)
out = make_console()
err = make_console(stderr=True)


def _run(fn_name: str, data: str, out_path: str, judge: str, only_missing: bool, concurrency: int,
         cache: str | None) -> None:
    from vreason.judge.spec import make_judge
    from vreason.protocols.ruler import tools as ruler_tools

    async def go() -> dict:
        client = make_judge(judge, cache_path=cache, no_cache=cache is None)
        try:
            return await getattr(ruler_tools, fn_name)(client, data, out_path, only_missing=only_missing,
                                                       concurrency=concurrency)
        finally:
            close = getattr(client, "aclose", None)
            if close is not None:
                await close()

    rep = asyncio.run(go())
    out.print(f"{rep['written']} written, {rep['kept']} kept, {len(rep['failed'])} failed → {out_path}",
              soft_wrap=True, markup=False)
    for f in rep["failed"][:20]:
        err.print(f"failed {f['where']}: {f['reason']}", markup=False, soft_wrap=True)
    for f in rep.get("unreadable", [])[:20]:
        err.print(f"unreadable {f['where']}: {f['reason']}", markup=False)


@ruler_app.command("draft-checklist")
def draft_checklist(
    data: str = typer.Option(..., "--data", help="RULER data.jsonl (or parquet) with prompt + implicit_explanation."),
    out_path: str = typer.Option(..., "--out", help="Where to write all records (drafts marked for review)."),
    judge: str = typer.Option(..., "--judge", help="LLM spec, e.g. openai:gpt-5 or vllm:MODEL@URL."),
    all_records: bool = typer.Option(False, "--all", help="Draft for every record, not only those without one."),
    concurrency: int = typer.Option(8, "--concurrency", help="Requests in flight."),
    cache: str = typer.Option(None, "--cache", help="SQLite reply cache path (default: no cache)."),
) -> None:
    """Draft a checklist over the four RULER metrics for new instances, in the released format, for
    human review (drafted records get checklist_status: draft)."""
    _run("draft_checklists", data, out_path, judge, not all_records, concurrency, cache)


@ruler_app.command("enhance")
def enhance(
    data: str = typer.Option(..., "--data", help="RULER data.jsonl (or parquet)."),
    out_path: str = typer.Option(..., "--out", help="Where to write all records with enhanced_prompt added."),
    judge: str = typer.Option(..., "--judge", help="LLM spec, e.g. openai:gpt-5."),
    all_records: bool = typer.Option(False, "--all", help="Rewrite every record, not only those without one."),
    concurrency: int = typer.Option(8, "--concurrency", help="Requests in flight."),
    cache: str = typer.Option(None, "--cache", help="SQLite reply cache path (default: no cache)."),
) -> None:
    """Prompt enhancement (the paper's PE): prompt + implicit explanation → an enhanced generation prompt,
    stored as enhanced_prompt and loaded as the prompt variant `pe` (run with --opt prompt_variant=pe)."""
    _run("enhance_prompts", data, out_path, judge, not all_records, concurrency, cache)
