"""Report hygiene: text from data cannot break or inject into Markdown; URL credentials never reach the
manifest, the store or the report; files outside the videos folder and unreadable files are reported;
failed units are listed under "Errors", grouped by reason with counts."""

import os
import sqlite3

import numpy as np
import pandas as pd
from rich.console import Console

from vreason.core.protocol import AggregateResult
from vreason.frames import write_video
from vreason.report.writer import md_text, write_report, write_table_bundle
from vreason.runner.run import RunConfig, Runner
from vreason.store import redact

EVIL = "a|b\nline two <script>alert(1)</script> `x`"


def _tables(md: str) -> list[list[str]]:
    """Blocks of consecutive Markdown table lines."""
    blocks: list[list[str]] = [[]]
    for ln in md.splitlines():
        if ln.startswith("|"):
            blocks[-1].append(ln)
        elif blocks[-1]:
            blocks.append([])
    return [b for b in blocks if b]


def test_text_from_data_is_escaped_in_markdown_tables(tmp_path):
    table = pd.DataFrame({"category": [EVIL, "plain"], "task": ["t|1", "t2"], "score": [0.5, 1.0]})
    res = AggregateResult(tables={"by_category": table}, summary={})
    write_report(res, tmp_path, title="r <b>", meta={"run": "x|y", "failures": [
        {"sample_id": "s1", "model": "m", "seed": 0, "scorer": "sc", "status": "error", "reason": EVIL}]})
    write_table_bundle({"bundle": table}, str(tmp_path), "bundle.md")
    for name in ("report.md", "by_category.md", "bundle.md"):
        md = (tmp_path / name).read_text()
        assert "<script>" not in md and "&lt;script&gt;" in md, name
        assert "a\\|b<br>line two" in md, name
        for block in _tables(md):  # every row keeps its column count: no cell split by a raw "|"
            widths = {line.replace("\\|", "").count("|") for line in block}
            assert len(widths) == 1, (name, block)
    report = (tmp_path / "report.md").read_text()
    assert "# r &lt;b&gt;" in report and "- **run**: x\\|y" in report
    assert md_text("ok text") == "ok text"


def test_url_credentials_are_redacted_everywhere(tmp_path, slow_plugin):
    secret_url = "https://alice:sk-SEKRET123@judge.example/v1?api_key=SEKRET456"
    assert "SEKRET" not in str(redact({"judges": {"default": f"vllm:m@{secret_url}"}, "x": [secret_url]}))
    run_dir = tmp_path / "r"
    cfg = RunConfig(protocol="slowtest", run_dir=str(run_dir), models=["counter"], seeds=[0],
                    options={"n": 2, "delay": 0.0, "endpoint": secret_url}, workers=1)
    Runner(cfg).run()
    for path in ("manifest.json", "report/report.md"):
        text = (run_dir / path).read_text()
        assert "SEKRET" not in text and "judge.example" in text, path
    con = sqlite3.connect(str(run_dir / "results.sqlite"))
    meta = " ".join(v for (v,) in con.execute("SELECT value FROM meta"))
    con.close()
    assert "SEKRET" not in meta and "judge.example" in meta


def test_outside_symlinks_unreadable_files_and_errors_by_reason(tmp_path, slow_plugin):
    vids = tmp_path / "vids" / "mine"
    vids.mkdir(parents=True)
    frames = [np.full((32, 32, 3), 0, np.uint8)] * 8
    write_video(str(vids / "s000__0.mp4"), frames, fps=8)
    (vids / "s001__0.mp4").write_bytes(b"this is not a video")
    outside = tmp_path / "elsewhere.mp4"
    write_video(str(outside), [np.full((32, 32, 3), 10, np.uint8)] * 8, fps=8)
    os.symlink(outside, vids / "s002__0.mp4")
    # s003, s004, s005: no file → three missing videos, one reason kind
    console = Console(record=True, width=200)
    run_dir = tmp_path / "r"
    s = Runner(RunConfig(protocol="slowtest", run_dir=str(run_dir), models=["mine"], seeds=[0],
                         options={"n": 6, "delay": 0.0}, workers=1, videos_dir=str(tmp_path / "vids")),
               console=console).run()
    out = console.export_text()
    assert "symlink leads outside" in out and "elsewhere.mp4" in out
    assert s.videos == {"ok": 2, "unreadable": 1, "missing": 3}, s.videos
    assert "unreadable video" in out and "s001" in out
    assert s.finished_with_errors
    report = (run_dir / "report" / "report.md").read_text()
    assert "## Failures" not in report
    errors = report[report.index("## Errors"):]
    assert "symlink leads outside" in errors
    missing_row = next(ln for ln in errors.splitlines() if ln.startswith("| video missing"))
    cells = [c.strip() for c in missing_row.strip("|").split("|")]
    assert cells[1] == "6" and cells[2] == "error"  # 3 samples × 2 scorers, one row with its count
