"""Every number labelled right, in a real browser (Debian's chromium via playwright, from file://): the HTML
report of a judged RISE run (loopback judge: Likert scores below full marks) and of a PAI-C run shows each
metric with its own precision, the protocol's headline metric in the sample × model grid, pass / fail badges
only where a metric has a pass threshold, no dead link, and no horizontal page scroll at 1280 px (wide tables
scroll inside their own box)."""

from __future__ import annotations

import json
import os
import re
from urllib.parse import unquote, urlparse

import pandas as pd
import pytest

from _browser import chromium, new_page
from _pai_c_fixtures import write_dataset as write_pai_c
from _pai_c_fixtures import write_results
from conftest import SMALL_SYNTH
from fixtures_rise import write_dataset, write_videos
from test_rise_e2e import judge_script
from vreason.protocols.rise.aggregate import LOGICAL_WEIGHTS, WEIGHTS
from vreason.report.build import build_report
from vreason.runner.run import RunConfig, Runner, make_protocol
from vreason.store import RunStore
from vreason.testing.loopback import LoopbackServer


def _report(run_dir: str) -> str:
    with RunStore(run_dir, create=False) as store:
        cfg = store.read_manifest()["config"]
        build_report(store, make_protocol(cfg["protocol"], cfg.get("options", {}), run_dir=run_dir), workers=1)
    return os.path.join(run_dir, "report", "index.html")


@pytest.fixture(scope="module")
def rise_run(tmp_path_factory) -> str:
    root = tmp_path_factory.mktemp("rise_labels")
    data = write_dataset(str(root / "RISE"))
    write_videos(str(root / "videos"), "good", good=True)
    base = judge_script(True)

    def script(body):  # below full marks on the 1-5 scales: a Likert 4 is no "fail"
        reply = base(body)
        return reply.replace('"Final Score": 5', '"Final Score": 4').replace('"score": 5', '"score": 4')

    run_dir = str(root / "runs" / "rise")
    with LoopbackServer(script) as srv:
        Runner(RunConfig(protocol="rise", run_dir=run_dir, models=["good"],
                         options={"data": data, "videos": str(root / "videos"), "n_boot": 50},
                         judges={"default": f"vllm:judge@{srv.base_url}"}, workers=1, aggregate=False)).run()
    _report(run_dir)
    return run_dir


@pytest.fixture(scope="module")
def pai_c_run(tmp_path_factory) -> str:
    root = tmp_path_factory.mktemp("paic_labels")
    data = write_pai_c(root / "d")
    videos = write_results(root / "r", data, "copy", k=2)
    run_dir = str(root / "runs" / "paic")
    Runner(RunConfig(protocol="pai-c", run_dir=run_dir, models=["gen"], seeds=[0, 1],
                     options={"data": data, "videos": videos, "n_variants": 2, "n_boot": 50, "max_frames": 8},
                     videos_dir=videos, workers=1, aggregate=False)).run()
    _report(run_dir)
    return run_dir


@pytest.fixture(scope="module")
def synth_run(tmp_path_factory) -> str:
    run_dir = str(tmp_path_factory.mktemp("synth_labels") / "small")
    Runner(RunConfig(protocol="synth", run_dir=run_dir, models=["oracle", "static"], workers=1, aggregate=False,
                     options={"per_task": 1, "families": ["maze", "gravity"], "difficulties": ["easy"],
                              **SMALL_SYNTH})).run()
    _report(run_dir)
    return run_dir


@pytest.fixture(scope="module")
def browser(rise_run, pai_c_run, synth_run):
    """Started after the runs: playwright's sync API keeps an event loop running in this thread."""
    with chromium() as b:
        yield b


def _index(run_dir: str) -> str:
    return os.path.join(run_dir, "report", "index.html")


def _cells(page, table: str) -> list[dict[str, str]]:
    """Rows of the table named ``table`` as {column: text}."""
    return page.evaluate("""(name) => {
        const t = document.querySelector(`table.t[data-table="${name}"]`);
        const cols = [...t.tHead.rows[0].cells].map(c => c.textContent);
        return [...t.tBodies[0].rows].map(r =>
            Object.fromEntries([...r.cells].map((c, i) => [cols[i], c.textContent])));
    }""", table)


def _dead_links(page) -> list[str]:
    """Every in-page anchor without its target and every local href whose file (or fragment) is missing."""
    links = page.evaluate("() => [...document.querySelectorAll('a[href]')].map(a => a.href)")
    here = urlparse(page.url)
    dead = []
    for href in links:
        u = urlparse(href)
        if u.scheme != "file":
            dead.append(f"not local: {href}")
            continue
        path = unquote(u.path)
        if path == unquote(here.path):
            if u.fragment and not page.evaluate("(id) => !!document.getElementById(id)", unquote(u.fragment)):
                dead.append(f"no #{u.fragment} on {path}")
            continue
        if not os.path.exists(path):
            dead.append(f"missing file {path}")
        elif u.fragment and path.endswith(".html"):
            html = open(path, encoding="utf-8").read()
            if f'id="{unquote(u.fragment)}"' not in html:
                dead.append(f"no #{u.fragment} in {path}")
    return dead


def _no_page_scroll(page) -> tuple[int, int]:
    return page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")


def test_rise_report_precision_headline_metric_badges_links_and_width(browser, rise_run):
    page, errors = new_page(browser, width=1280)
    page.goto("file://" + _index(rise_run))
    page.wait_for_selector("#grid tr.srow")
    # Table 1: each number with its interval and the paper's 2 decimals, from numeric columns
    t1 = _cells(page, "rise_table1")
    cell = re.compile(r"^\d+\.\d{2} \[\d+\.\d{2}, \d+\.\d{2}\]$")
    assert all(cell.match(t1[0][c]) for c in ("RA", "TC", "PR", "VQ", "W.Score", "Accuracy")), t1[0]
    assert "W.Score low" not in t1[0]  # low / high render inside the value's cell
    nums = pd.read_csv(os.path.join(rise_run, "report", "rise_table1.csv")).set_index("Model")
    assert t1[0]["TC"].startswith(f"{nums.loc['good', 'TC']:.2f} [") and nums.loc["good", "TC"] < 100

    # the grid shows the protocol's headline metric (W.Score per unit), labelled, with 2 decimals
    assert "W.Score" in page.inner_text("#grid-metric") and "W.Score" in t1[0]
    with RunStore(rise_run, create=False) as store:
        cats = {s.id: s.category for s in store.samples()}
        by_unit: dict[str, dict[str, float]] = {}
        for sc in store.scores():
            if sc.status.value == "ok" and sc.normalized is not None:
                by_unit.setdefault(sc.sample_id, {})[sc.metric] = sc.normalized
    expected = {}
    for sid, got in by_unit.items():
        w = LOGICAL_WEIGHTS if cats[sid] == "logical" else WEIGHTS
        if all(m in got for m in w):
            expected[sid] = f"{100 * sum(x * got[m] for m, x in w.items()):.2f}"
    shown = page.evaluate("""() => Object.fromEntries([...document.querySelectorAll('#grid tr.srow')].map(r =>
        [r.dataset.sample, (r.querySelector('.cellnum') || {}).textContent || null]))""")
    assert expected and {s: shown[s] for s in expected} == expected
    assert any(float(v) < 100 for v in expected.values())  # Likert 4 of 5: the headline is below full marks
    # a cell's ✓ / ✗ is the Accuracy verdict (all four at full marks): with TC 4 of 5 no unit counts, as the table
    outcomes = page.evaluate("() => [...document.querySelectorAll('#grid a.cell')].map(a => a.dataset.outcome)")
    assert t1[0]["Accuracy"].startswith("0.00 [") and outcomes and "pass" not in outcomes
    assert _dead_links(page) == []
    width, inner = _no_page_scroll(page)
    assert width <= inner, (width, inner)
    assert page.locator("table.t").count() == page.locator(".scroll > table.t").count()

    # a sample page: Likert metrics have no pass / fail badge; their value reads on its scale
    link = page.locator("#grid tr.srow .sid a").first
    link.click()
    page.wait_for_load_state("load")
    heads = page.evaluate("""() => [...document.querySelectorAll('.score h4')].map(h =>
        [h.textContent, h.querySelector('.badge').className])""")
    likert = [(t, c) for t, c in heads if re.search(r"/ (tc|pr|vq):", t)]
    assert likert and all("fail" not in c and "pass" not in c for _, c in likert), likert
    assert any("value 4 on 1–5" in t for t, _ in likert), likert
    assert _dead_links(page) == []
    width, inner = _no_page_scroll(page)
    assert width <= inner, (width, inner)
    assert errors == []
    page.close()


def test_pai_c_report_precision_no_grid_number_links_and_width(browser, pai_c_run):
    page, errors = new_page(browser, width=1280)
    page.goto("file://" + _index(pai_c_run))
    page.wait_for_selector("#grid tr.srow")
    rows = {r["metric"]: r for r in _cells(page, "pai_c_metrics")}
    csv = pd.read_csv(os.path.join(pai_c_run, "report", "pai_c_metrics.csv")).set_index("metric")
    ssim = csv.loc["blur_ssim"]
    assert 0.5 < ssim["mean"] < 1
    assert rows["blur_ssim"]["mean"] == f"{ssim['mean']:.4f} [{ssim['ci_low']:.4f}, {ssim['ci_high']:.4f}]"
    assert rows["blur_mse"]["mean"].split(" ")[0] == f"{csv.loc['blur_mse', 'mean']:.2f}"
    glob = _cells(page, "pai_c_global")[0]
    assert re.fullmatch(r"0\.\d{4}", glob["blur_ssim"]) and glob["blur_ssim"] != "1.0"
    md = open(os.path.join(pai_c_run, "report", "report.md"), encoding="utf-8").read()
    assert f"{ssim['mean']:.4f} [" in md
    # PAI-C declares no single headline number: the grid shows status, not an unweighted mean of unlike metrics
    assert page.locator(".cellnum").count() == 0 and "no single number" in page.inner_text("#grid-metric")
    titles = page.evaluate("() => [...document.querySelectorAll('#grid a.cell')].map(a => a.title)")
    assert any(re.search(r"blur_ssim 0\.\d{4}", t) for t in titles), titles[:2]
    # long reasons: cut at a word boundary, the full text in the cell's title
    cut = page.evaluate("""() => [...document.querySelectorAll('td[title]')].map(td => [td.textContent, td.title])""")
    for text, full in cut:
        assert text.endswith("…") and full.startswith(text[:-1]) and full[len(text) - 1] in " \n"
    assert _dead_links(page) == []
    for width_px in (1280, 800):
        page.set_viewport_size({"width": width_px, "height": 900})
        width, inner = _no_page_scroll(page)
        assert width <= inner, (width_px, width, inner)
    boxes = page.evaluate("() => [...document.querySelectorAll('.scroll')].map(d => d.scrollWidth > d.clientWidth)")
    assert any(boxes)  # at 800 px a wide table scrolls inside its own box, the page does not
    assert json.loads(open(os.path.join(pai_c_run, "report", "summary.json")).read())["table_formats"]
    assert errors == []
    page.close()


def test_synth_report_links_charts_pass5_and_width(browser, synth_run):
    page, errors = new_page(browser, width=1280)
    page.goto("file://" + _index(synth_run))
    page.wait_for_selector("#grid tr.srow")
    assert page.locator("a[href='#charts']").count() == 1 and page.locator("#charts + .charts img").count() >= 1
    assert _dead_links(page) == []
    board = _cells(page, "leaderboard")
    assert {r["model"]: r["pass rate"] for r in board} == {"oracle": "100.0 [100.0, 100.0]",
                                                           "static": "0.0 [0.0, 0.0]"}
    p5 = _cells(page, "tivibench_pass5")
    assert all(r["measured as"].startswith("not Pass@5") for r in p5)
    assert "NOT a measured Pass@5" in page.inner_text("#table-tivibench_pass5 + p.note")
    assert page.locator(".badge.fail").count() >= 1  # the suite's verdicts have a pass threshold
    nums = page.evaluate("() => [...document.querySelectorAll('#grid .cellnum')].map(n => n.textContent)")
    assert nums and all(re.fullmatch(r"\d+\.\d", n) for n in nums) and "100.0" in nums  # score (%), 1 decimal
    width, inner = _no_page_scroll(page)
    assert width <= inner, (width, inner)
    assert errors == []
    page.close()
