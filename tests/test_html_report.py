"""The HTML report in a real browser (playwright driving Debian's chromium, from file://): a small synth
run and a judged RISE fixture run (loopback judge). Text with ``<script>`` in a prompt and in a judge
reply must show as text and never run."""

from __future__ import annotations

import json
import os

import pytest

from _browser import EVIL, chromium, judged_rise_run, new_page
from conftest import SMALL_SYNTH
from vreason.report.build import build_report
from vreason.report.html import script_json
from vreason.runner.run import RunConfig, Runner, make_protocol
from vreason.store import RunStore


def _report(run_dir: str) -> str:
    with RunStore(run_dir, create=False) as store:
        cfg = store.read_manifest()["config"]
        build_report(store, make_protocol(cfg["protocol"], cfg.get("options", {}), run_dir=run_dir), workers=1)
    return os.path.join(run_dir, "report", "index.html")


@pytest.fixture(scope="module")
def synth_index(tmp_path_factory) -> str:
    run_dir = str(tmp_path_factory.mktemp("html") / "small")
    opts = {"per_task": 1, "families": ["maze", "gravity", "symmetry"], "difficulties": ["easy"], **SMALL_SYNTH}
    Runner(RunConfig(protocol="synth", run_dir=run_dir, models=["oracle", "static", "shortcut"], options=opts,
                     workers=1, aggregate=False)).run()
    with RunStore(run_dir, create=False) as store:
        s = next(x for x in store.samples() if x.id == "maze-easy-000")
        store.put_samples([s.model_copy(update={"prompt": s.prompt + " " + EVIL})])
    return _report(run_dir)


@pytest.fixture(scope="module")
def judged_index(tmp_path_factory) -> str:
    root = tmp_path_factory.mktemp("judged")
    run_dir = judged_rise_run(root)  # every judge reply's reason carries EVIL
    return _report(run_dir)


@pytest.fixture(scope="module")
def browser(synth_index, judged_index):
    """Started after the runs: playwright's sync API keeps an event loop running in this thread."""
    with chromium() as b:
        yield b


def _page(browser):
    return new_page(browser, width=1200)


def test_script_json_cannot_close_the_script_block():
    text = str(script_json({"a": "</script><script>alert(1)</script>", "b": "&<>"}))
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == {"a": "</script><script>alert(1)</script>", "b": "&<>"}


def test_index_filter_open_sample_overlay_video(browser, synth_index):
    page, errors = _page(browser)
    page.goto("file://" + synth_index)
    assert page.locator("table[data-table='headline']").count() == 1
    assert "metric: pass rate" in page.inner_text("body")
    assert page.locator("#grid tr.srow").count() == 3
    page.select_option("#f-cat", "maze")
    page.select_option("#f-pass", "fail")
    rows = page.locator("#grid tr.srow")
    assert rows.count() == 1 and rows.first.get_attribute("data-sample") == "maze-easy-000"
    outcomes = page.eval_on_selector_all("#grid a.cell", "els => els.map(e => e.dataset.outcome)")
    assert outcomes and set(outcomes) == {"fail"}  # static and shortcut fail the maze, oracle is hidden
    page.select_option("#f-pass", "pass")
    assert page.eval_on_selector_all("#grid a.cell", "els => els.map(e => e.dataset.outcome)") == ["pass"]
    page.select_option("#f-pass", "fail")
    thumb = page.locator("#grid a.cell img").first
    thumb.scroll_into_view_if_needed()
    page.wait_for_function("() => { const i = document.querySelector('#grid a.cell img'); "
                           "return i && i.complete && i.naturalWidth > 0; }")

    page.locator("#grid a.cell").first.click()
    page.wait_for_load_state("load")
    assert page.url.split("#")[0].endswith("samples/maze-easy-000.html")
    assert EVIL in page.inner_text("#prompt")  # shown as text
    assert page.evaluate("window.__pwned") is None
    overlay = page.locator("img.overlay-img").first
    overlay.scroll_into_view_if_needed()
    page.wait_for_function("() => { const i = document.querySelector('img.overlay-img'); "
                           "return i.complete && i.naturalWidth >= 480; }")
    assert page.locator("table.checks").first.inner_text().count("\u2713") >= 1
    assert "\u2717" in page.inner_text("body")  # a failing model's failed check
    page.evaluate("document.querySelector('video').load()")
    page.wait_for_function("() => document.querySelector('video').readyState >= 1", timeout=15000)
    assert page.evaluate("document.querySelector('video').videoWidth") > 0
    assert errors == []
    page.close()


def test_index_escapes_prompt_in_embedded_json(synth_index):
    html = open(synth_index, encoding="utf-8").read()
    data = html.split('<script type="application/json" id="grid-data">', 1)[1].split("</script>", 1)[0]
    assert "<" not in data and json.loads(data)["cells"]


def test_judged_run_shows_raw_reply_escaped(browser, judged_index):
    page, errors = _page(browser)
    page.goto("file://" + judged_index)
    assert errors == [] and page.evaluate("window.__pwned") is None
    link = page.locator("#grid tr.srow a").first
    link.click()
    page.wait_for_load_state("load")
    replies = page.locator("pre.raw-reply")
    assert replies.count() >= 1
    texts = [replies.nth(i).inner_text() for i in range(replies.count())]
    assert any("<script>window.__pwned = 1</script>" in t for t in texts), texts[:2]
    assert page.locator("p:has-text('template')").count() >= 1
    assert page.evaluate("window.__pwned") is None
    assert errors == []
    page.close()
