"""Progress when the output is not a terminal: plain lines every few seconds with done/total, ok/failed
counts and an ETA, and a last line per stage (issue 21 item 6)."""

import io
import os
import re
import subprocess
import sys
import time

from conftest import PLUGIN
from vreason.console import make_console
from vreason.runner.progress import PlainProgress, RichProgress, interval_seconds, make_progress, unit_ok

VREASON = [sys.executable, "-m", "vreason.cli.main"]
LINE = re.compile(r"^(\w+): (\d+)/(\d+) done \(\d+%\), ok (\d+), failed (\d+), [\d.]+/s, elapsed \d+:\d\d:\d\d, "
                  r"(eta \d+:\d\d:\d\d|eta –|done)$")


def _lines(text: str, stage: str) -> list[re.Match]:
    return [m for m in (LINE.match(ln.strip()) for ln in text.splitlines()) if m and m.group(1) == stage]


def test_a_piped_run_prints_plain_progress_lines_with_counts_and_eta(tmp_path):
    env = {**os.environ, "VREASON_PROGRESS_SECONDS": "0.3", "COLUMNS": "200"}
    res = subprocess.run([*VREASON, "--plugin", PLUGIN, "run", "slowtest", "--runs", str(tmp_path / "runs"),
                          "--name", "x", "--models", "counter", "--opt", "n=6", "--opt", "delay=0.4", "--workers", "1",
                          "--no-report"], capture_output=True, text=True, env=env, timeout=300)
    assert res.returncode == 3, res.stderr  # s003 fails and s004 is unscored on purpose
    assert "\x1b[" not in res.stderr  # no live bar, no escape codes
    score = _lines(res.stderr, "score")
    assert len(score) >= 3, res.stderr  # periodic lines while scoring, then the last one
    done = [int(m.group(2)) for m in score]
    assert done == sorted(done)  # counts only grow
    last = score[-1]
    total = int(last.group(3))
    assert int(last.group(2)) == total and last.group(6) == "done"
    assert int(last.group(4)) + int(last.group(5)) == total and int(last.group(5)) >= 2  # the error and unscored
    assert any(m.group(6).startswith("eta ") and m.group(6) != "eta –" for m in score[:-1]), res.stderr


def test_plain_progress_ticks_without_units_finishing_and_says_eta_unknown():
    buf = io.StringIO()
    console = make_console(file=buf)
    with PlainProgress(console, interval=0.05) as prog:
        t = prog.add_task("generate", total=4)
        time.sleep(0.3)  # nothing finished yet: lines still come, with an unknown ETA
        prog.advance(t, ok=True)
        prog.advance(t, ok=False)
    lines = _lines(buf.getvalue(), "generate")
    assert len(lines) >= 3 and lines[0].group(6) == "eta –"
    assert (lines[-1].group(2), lines[-1].group(4), lines[-1].group(5)) == ("2", "1", "1")
    assert lines[-1].group(6).startswith("eta ")  # ended early (interrupted): not "done"


def test_interval_setting_and_the_kind_of_progress(monkeypatch):
    monkeypatch.setenv("VREASON_PROGRESS_SECONDS", "12")
    assert interval_seconds() == 12
    for bad in ("x", "-1"):
        monkeypatch.setenv("VREASON_PROGRESS_SECONDS", bad)
        assert interval_seconds() == 5.0
    buf = io.StringIO()
    assert isinstance(make_progress(make_console(file=buf)), PlainProgress)
    assert isinstance(make_progress(make_console(file=buf, force_terminal=True)), RichProgress)
    with PlainProgress(make_console(file=buf), interval=0) as prog:  # 0: only the last line
        prog.advance(prog.add_task("score", total=1))
    assert len(_lines(buf.getvalue(), "score")) == 1


def test_rich_progress_counts_ok_and_failed():
    buf = io.StringIO()
    with RichProgress(make_console(file=buf, force_terminal=True, width=200)) as prog:
        t = prog.add_task("score", total=3)
        prog.advance(t, ok=True)
        prog.advance(t, ok=False)
        prog.advance(t, ok=True)
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", buf.getvalue())
    assert "3/3" in text and "2 ok" in text and "1 failed" in text


def test_unit_ok():
    from vreason.core.records import Score, ScoreStatus

    def score(status):
        value = 1.0 if status == ScoreStatus.ok else None
        return Score(sample_id="s", model="m", seed=0, scorer="x", metric="x", status=status, value=value,
                     reason=None if value is not None else "why")

    assert unit_ok([score(ScoreStatus.ok), score(ScoreStatus.ok)])
    assert not unit_ok([score(ScoreStatus.ok), score(ScoreStatus.unscored)])
    assert not unit_ok([]) and not unit_ok(None)
