"""Every number labelled right: declared precision and intervals, text cut at a word boundary, secrets
redacted by what they are, pass badges only where a metric has a pass threshold, the grid's headline metric."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from vreason.aggregate.tables import declare_format, default_digits, errors_by_reason, reason_kind, shorten
from vreason.core.protocol import AggregateResult
from vreason.protocols.pai.c.tables import declare_formats as pai_c_formats
from vreason.report.cells import render_table, text_frame
from vreason.report.html import table_view
from vreason.report.html_data import Declared
from vreason.report.writer import print_tables, write_report
from vreason.store import is_secret_key, redact, redact_text


def _pai_c_metrics() -> pd.DataFrame:
    return pd.DataFrame({"model": ["m", "m", "m"], "metric": ["blur_ssim", "blur_mse", "depth_si_rmse"],
                         "mean": [0.97981234, 123.456789, 0.0123456], "ci_low": [0.9701, 110.0, 0.01],
                         "ci_high": [0.99, 130.0, 0.015], "n": [6, 6, 3]})


def test_precision_follows_the_metric_declared_per_row():
    summary: dict = {}
    pai_c_formats(summary)
    cols, rows = render_table(_pai_c_metrics(), summary["table_formats"]["pai_c_metrics"])
    assert cols == ["model", "metric", "mean", "n"]  # low / high render beside the mean
    text = {r[1].text: r[2].text for r in rows}
    assert text["blur_ssim"] == "0.9798 [0.9701, 0.9900]"
    assert text["blur_mse"] == "123.46 [110.00, 130.00]"
    assert text["depth_si_rmse"] == "0.0123 [0.0100, 0.0150]"
    assert [r[3].text for r in rows] == ["6", "6", "3"] and rows[0][2].v == repr(0.97981234)


def test_declared_digits_and_undeclared_columns_keep_their_precision():
    frame = pd.DataFrame({"pct": [36.666667, 50.0], "unit": [0.97981, 0.5], "count": [3.0, np.nan],
                          "name": ["a", None]})
    summary = declare_format({}, "t", digits={"pct": 2})
    shown, numeric = text_frame(frame, summary["table_formats"]["t"])
    assert list(shown["pct"]) == ["36.67", "50.00"]
    assert list(shown["unit"]) == ["0.9798", "0.5000"]  # undeclared, in [-1, 1]: 4 decimals for the column
    assert list(shown["count"]) == ["3", "–"] and list(shown["name"]) == ["a", "–"]
    assert numeric == [True, True, True, False]
    assert default_digits([12.5, 3.25]) == 2 and default_digits([1.0, 2.0]) == 0 and default_digits([]) == 2


def test_markdown_html_and_terminal_print_the_same_declared_number(tmp_path):
    from rich.console import Console

    summary: dict = {}
    pai_c_formats(summary)
    res = AggregateResult(tables={"pai_c_metrics": _pai_c_metrics()}, summary=summary)
    write_report(res, tmp_path, title="T", meta={})
    md = (tmp_path / "report.md").read_text()
    assert "0.9798 [0.9701, 0.9900]" in md and "| 1.0 " not in md
    assert "0.97981234" in (tmp_path / "pai_c_metrics.csv").read_text()  # the CSV keeps full precision
    console = Console(record=True, width=200)
    print_tables(res, console)
    assert "0.9798 [0.9701, 0.9900]" in console.export_text()
    view = table_view("pai_c_metrics", _pai_c_metrics(), fmt=summary["table_formats"]["pai_c_metrics"])
    assert view["rows"][0][2]["text"] == "0.9798 [0.9701, 0.9900]"


def test_long_reasons_are_cut_at_a_word_boundary_with_the_full_text_kept():
    reason = "judge reply unparseable: " + " ".join(f"word{i}" for i in range(80))
    short = shorten(reason, 100)
    assert short.endswith("…") and len(short) <= 100
    assert reason.startswith(short[:-1]) and reason[len(short) - 1] == " "  # cut where a word ends
    assert shorten("short text", 100) == "short text"
    units = pd.DataFrame([{"sample_id": "s1", "model": "m", "seed": 0, "scorer": "x", "status": "unscored",
                           "reason": reason}])
    table = errors_by_reason(units)
    assert table["example"].iloc[0].endswith(reason)  # the table keeps the whole reason
    _, rows = render_table(table)
    cell = rows[0][list(table.columns).index("example")]
    assert cell.text.endswith("…") and cell.title.endswith(reason) and not cell.text.endswith("wor…")
    assert reason_kind("x" * 40 + " " + "y" * 80).endswith("…")


@pytest.mark.parametrize(("key", "secret"), [
    ("max_tokens", False), ("maxTokens", False), ("max_new_tokens", False), ("token_limit", False),
    ("api_key_env", False), ("sort_key", False), ("keyframes", False), ("temperature", False),
    ("api_key", True), ("apiKey", True), ("key", True), ("token", True), ("hf_token", True),
    ("access_token", True), ("password", True), ("Authorization", True), ("x-api-key", True),
    ("client_secret", True), ("cookie", True)])
def test_secrets_are_redacted_by_what_they_are(key, secret):
    assert is_secret_key(key) is secret


def test_redact_keeps_max_tokens_and_hides_credentials_in_text():
    cfg = {"judge": {"max_tokens": 512, "api_key": "sk-abc", "headers": {"Authorization": "Bearer abcdefghijk"}}}
    out = redact(cfg)
    assert out["judge"]["max_tokens"] == 512 and out["judge"]["api_key"] == "***"
    assert out["judge"]["headers"]["Authorization"] == "***"
    text = redact_text('curl -H "Authorization: Bearer sk-abcdefghijkl" https://u:pw@host/x?key=123&a=1')
    assert "sk-abcdefghijkl" not in text and "u:pw" not in text and "123" not in text and "a=1" in text
    assert redact_text("max_tokens=512 tokens used") == "max_tokens=512 tokens used"


def test_pass_badges_only_for_metrics_with_a_threshold_and_the_declared_grid_metric():
    from vreason.protocols.rise.tables import declare

    d = Declared.of(declare({}, pd.DataFrame(), pd.DataFrame()))
    assert d.has_pass("ra") and not d.has_pass("tc") and not d.has_pass("vq") and d.has_pass("other")
    scores = [{"metric": m, "status": "ok", "normalized": v} for m, v in
              (("ra", 1.0), ("tc", 0.75), ("pr", 0.5), ("vq", 0.5))]
    assert d.grid_value("commonsense", scores) == pytest.approx(100 * (0.4 + 0.25 * 0.75 + 0.25 * 0.5 + 0.1 * 0.5))
    assert d.grid_value("logical", scores) == pytest.approx(100 * (0.5 + 0.3 * 0.75 + 0.2 * 0.5))
    scores[1]["status"] = "unscored"
    assert d.grid_value("commonsense", scores) is None  # never a number from a partial unit
    assert Declared().grid_value("x", scores) is None  # nothing declared: no number in the cell
    # the cell's pass / fail is RISE's Accuracy verdict: all four at full marks (PR absent for logical)
    full = [{"metric": m, "status": "ok", "full": f, "passed": None} for m, f in
            (("ra", True), ("tc", True), ("vq", True))]
    assert d.unit_pass(full) == [True, True, True]
    assert not all(d.unit_pass([*full, {"metric": "pr", "status": "ok", "full": False, "passed": None}]))
    assert d.unit_pass([*full, {"metric": "pr", "status": "unscored", "full": None, "passed": None}]) == []


def test_rise_tables_are_numeric_and_n_counts_scored_samples(tmp_path):
    from test_rise_aggregate import row
    from vreason.protocols.rise.protocol import RiseProtocol

    rows = [*[row("m1", "tem_1", m, v) for m, v in (("ra", 1.0), ("tc", 5), ("pr", 5), ("vq", 3))],
            *[row("m1", "tem_2", m, v) for m, v in (("ra", 0.5), ("tc", 3), ("pr", 5), ("vq", 2))],
            *[row("m1", "tem_3", m, None, "error", "video missing") for m in ("ra", "tc", "pr", "vq")]]
    res = RiseProtocol(n_boot=50).aggregate(pd.DataFrame(rows), [], str(tmp_path))
    t1 = res.tables["rise_table1"].set_index("Model").loc["m1"]
    assert t1["Samples"] == 2 and t1["Samples not scored"] == 1  # tem_3 was never scored
    for col in ("RA", "RA low", "RA high", "W.Score", "W.Score low", "Accuracy"):
        assert isinstance(t1[col], float), col
    assert t1["RA"] == 75.0 and t1["RA low"] <= 75.0 <= t1["RA high"]
    fmt = res.summary["table_formats"]["rise_table1"]
    assert fmt["intervals"]["W.Score"] == ["W.Score low", "W.Score high"] and fmt["digits"]["RA"] == 2
    shown, _ = text_frame(res.tables["rise_table1"], fmt)
    assert shown.loc[0, "RA"].startswith("75.00 [") and "RA low" not in shown.columns
    assert "75.00 [" in (tmp_path / "rise_table1.md").read_text()  # the paper's cells in its Markdown
    assert pd.read_csv(tmp_path / "rise_table1.csv")["RA low"].dtype == float


def test_environment_names_are_redacted_by_what_they_hold():
    env = {"HF_TOKEN": "hf_x", "OPENAI_API_KEY": "sk-x", "AWS_SECRET_ACCESS_KEY": "a",
           "TOKENIZERS_PARALLELISM": "false", "CUDA_VISIBLE_DEVICES": "0"}
    out = redact(env)
    assert out["HF_TOKEN"] == out["OPENAI_API_KEY"] == out["AWS_SECRET_ACCESS_KEY"] == "***"
    assert out["TOKENIZERS_PARALLELISM"] == "false" and out["CUDA_VISIBLE_DEVICES"] == "0"
