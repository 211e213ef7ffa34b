"""Tables printed to a pipe or a file are not squeezed to 80 columns (issue 21, item 6)."""

import subprocess
import sys

from rich.table import Table

from vreason.console import PIPE_WIDTH, make_console


def _wide_table() -> Table:
    t = Table()
    for i in range(12):
        t.add_column(f"column_name_{i}")
    t.add_row(*[f"value_{i}_is_long" for i in range(12)])
    return t


def test_a_console_on_a_pipe_is_wide_unless_columns_says_otherwise(monkeypatch, tmp_path):
    monkeypatch.delenv("COLUMNS", raising=False)
    with open(tmp_path / "out.txt", "w") as fh:
        c = make_console(file=fh)
        assert c.width == PIPE_WIDTH
        c.print(_wide_table())
    text = (tmp_path / "out.txt").read_text()
    assert "column_name_11" in text and "value_11_is_long" in text
    monkeypatch.setenv("COLUMNS", "100")  # read at print time, not when the console was made
    assert c.width == 100


def test_cli_list_options_piped_keeps_long_option_names_whole():
    res = subprocess.run([sys.executable, "-m", "vreason.cli.main", "list", "--options", "mmecof"],
                         capture_output=True, text=True, timeout=120,
                         env={k: v for k, v in __import__("os").environ.items() if k != "COLUMNS"})
    assert res.returncode == 0, res.stderr
    assert "quality_template_path" in res.stdout
    assert max(len(line) for line in res.stdout.splitlines()) > 80
