"""Exit codes (README's table): vreason's own errors are mistakes (exit 2, one line, no traceback); any other
exception is a bug (exit 1 with the traceback), e.g. a ``KeyError`` in a plugin's aggregate (issue 23 item 4)."""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import PLUGIN

VREASON = [sys.executable, "-m", "vreason.cli.main"]

BAD_AGGREGATE = '''
from slowproto import SlowProtocol
from vreason.core.registry import benchmarks


@benchmarks.register("badagg")
class BadAggregate(SlowProtocol):
    name = "badagg"

    def aggregate(self, scores, samples, out_dir):
        return {"tables": {}}["no such key"]  # a bug: KeyError
'''


def _cli(tmp_path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.run([*VREASON, *args], capture_output=True, text=True, env=env, timeout=180, cwd=tmp_path)


def test_a_key_error_in_a_plugin_aggregate_is_a_crash_with_its_traceback(tmp_path) -> None:
    (tmp_path / "badagg.py").write_text(BAD_AGGREGATE)
    r = _cli(tmp_path, "--plugin", PLUGIN, "--plugin", str(tmp_path / "badagg.py"), "run", "badagg",
             "--runs", str(tmp_path / "runs"), "--name", "x", "--opt", "n=2", "--opt", "delay=0", "--workers", "1",
             "--models", "counter")
    assert r.returncode == 1, (r.returncode, r.stderr[-2000:])
    assert "Traceback" in r.stderr and "KeyError: 'no such key'" in r.stderr
    assert "badagg.py" in r.stderr  # the traceback points at the plugin's line


def test_vreason_mistakes_stay_exit_2_in_one_line(tmp_path) -> None:
    unknown = _cli(tmp_path, "list", "--options", "nosuchbench")
    assert unknown.returncode == 2 and "Traceback" not in unknown.stderr
    assert "unknown benchmark 'nosuchbench'" in unknown.stderr and "error: 'unknown" not in unknown.stderr
    no_data = _cli(tmp_path, "run", "ruler", "--data", str(tmp_path / "missing"), "--models", "m",
                   "--judge", "mock", "--runs", str(tmp_path / "runs"))
    assert no_data.returncode == 2 and "Traceback" not in no_data.stderr and "missing" in no_data.stderr
    no_plugin = _cli(tmp_path, "--plugin", "no_such_plugin_module", "list")
    assert no_plugin.returncode == 2 and "Traceback" not in no_plugin.stderr
    assert "no_such_plugin_module" in no_plugin.stderr
