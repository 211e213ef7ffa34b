"""`vreason annotate` in a real browser (playwright driving Debian's chromium) against the app served by uvicorn
on 127.0.0.1: pairs on a small synth run and rubric items on a judged RISE fixture run, answered with the
keyboard; a reload keeps the progress; the export holds the rows of the store; markup in a prompt, a
question or a judge reply stays text; no token, no page."""

from __future__ import annotations

import json

import httpx
import pytest
from typer.testing import CliRunner

from _browser import EVIL, chromium, judged_rise_run, new_page
from _serve import serve
from test_annotate_app import synth_run
from vreason.cli.main import app as cli
from vreason.human.app import make_app
from vreason.human.store import AnnotationStore
from vreason.store import RunStore


def _poison(run_dir: str, question: bool = False) -> None:
    with RunStore(run_dir, create=False) as store:
        samples = store.samples()
        changed = []
        for s in samples:
            upd = {"prompt": s.prompt + " " + EVIL}
            if question and s.rubric:
                upd["rubric"] = [s.rubric[0].model_copy(update={"text": s.rubric[0].text + " " + EVIL}),
                                 *s.rubric[1:]]
            changed.append(s.model_copy(update=upd))
        store.put_samples(changed)


@pytest.fixture(scope="module")
def synth_dir(tmp_path_factory) -> str:
    path = synth_run(str(tmp_path_factory.mktemp("browse") / "synth"))
    _poison(path)
    return path


@pytest.fixture(scope="module")
def rise_dir(tmp_path_factory) -> str:
    root = tmp_path_factory.mktemp("browse_rise")
    run_dir = judged_rise_run(root)  # every judge reply's reason carries EVIL
    _poison(run_dir, question=True)
    return run_dir


@pytest.fixture(scope="module")
def browser(synth_dir, rise_dir):
    """Started after the runs: playwright's sync API keeps an event loop running in this thread."""
    with chromium() as b:
        yield b


def _page(browser):
    return new_page(browser, width=1280)


def _progress(page) -> str:
    return page.inner_text("#progress")


def _wait_progress(page, text: str) -> None:
    page.wait_for_function(f"() => document.getElementById('progress').textContent === {json.dumps(text)}")


def test_pairs_with_the_keyboard_reload_export(browser, synth_dir, tmp_path):
    app = make_app(synth_dir, token="tok-pairs")
    with serve(app) as base:
        # no token, no page: on a page of its own, closed after, because chromium then also asks for
        # /favicon.ico, refused too, and that console error may arrive at any later time
        gone, gone_errors = _page(browser)
        refused = gone.goto(base + "/")
        assert refused.status == 403 and "who-form" not in gone.content()
        assert any("403" in e for e in gone_errors)
        gone.close()
        page, errors = _page(browser)
        page.goto(base + "/?token=tok-pairs")
        page.fill("#who-input", "alice")
        page.press("#who-input", "Enter")
        _wait_progress(page, "0 / 6 done")
        assert EVIL in page.inner_text("#prompt") and page.evaluate("window.__pwned") is None
        assert "token" not in page.url  # the token left the address bar; the cookie carries on
        page.wait_for_function("() => [...document.querySelectorAll('#videos video')].every(v => v.readyState >= 1)",
                               timeout=15000)
        assert page.locator("#videos video").count() == 2
        assert page.evaluate("document.querySelector('#videos video').videoWidth") > 0
        assert page.evaluate("document.querySelector('#input-image').naturalWidth") > 0
        page.keyboard.press("j")  # one frame on, both videos
        page.keyboard.press("j")
        page.wait_for_function("() => [...document.querySelectorAll('#videos video')]"
                               ".every(v => Math.abs(v.currentTime - 2 / 16) < 1e-3)")
        page.keyboard.press("k")
        page.wait_for_function("() => Math.abs(document.querySelector('#videos video').currentTime - 1 / 16) < 1e-3")

        page.keyboard.press("1")  # quality: A better
        page.wait_for_selector(".row[data-q='physics'].current")
        page.keyboard.press("3")  # physics: both good → next pair
        _wait_progress(page, "1 / 6 done")
        page.keyboard.press("2")
        page.wait_for_selector(".row[data-q='physics'].current")
        page.keyboard.press("4")
        _wait_progress(page, "2 / 6 done")
        page.keyboard.press("s")  # skip the third pair
        _wait_progress(page, "3 / 6 done")
        page.keyboard.press("u")  # undo: the skip of physics goes, the pair is back half-done
        _wait_progress(page, "2 / 6 done")
        page.wait_for_selector(".row[data-q='physics'].current")
        page.keyboard.press("2")
        _wait_progress(page, "3 / 6 done")

        page.reload()
        _wait_progress(page, "3 / 6 done")  # the name (local storage) and the progress (the store) survive
        assert page.inner_text("#who-name") == "alice"
        assert errors == [] and page.evaluate("window.__pwned") is None
        page.close()

    out = str(tmp_path / "votes.jsonl")
    res = CliRunner().invoke(cli, ["annotate", "export", synth_dir, "--out", out])
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in open(out, encoding="utf-8")]
    with AnnotationStore(synth_dir) as store:
        mine = store.all(annotator="alice")
    assert [r["id"] for r in rows if r["annotator"] == "alice"] == [r.id for r in mine]
    got = [(v.dimension, v.verdict, v.skipped) for v in mine]
    assert got == [("quality", "a", False), ("physics", "both_good", False), ("quality", "b", False),
                   ("physics", "both_bad", False), ("quality", None, True), ("physics", "b", False)]
    assert len({(v.sample_id, v.left_model, v.right_model) for v in mine[::2]}) == 3
    assert all(v.left_model != v.right_model for v in mine)


def test_rubric_with_the_keyboard_escaped_text_reload(browser, rise_dir):
    app = make_app(rise_dir, task="rubric", token="tok-rubric")
    ann = app.state.annotation
    total = len(ann.videos)
    with serve(app) as base:
        assert httpx.get(base + "/api/state", params={"annotator": "x"}).status_code == 403
        page, errors = _page(browser)
        page.goto(base + "/?token=tok-rubric")
        page.fill("#who-input", "bo")
        page.press("#who-input", "Enter")
        _wait_progress(page, f"0 / {total} done")
        first = ann.state("bo")["item"]
        n_q = len(first["questions"])
        keys = [q["key"] for q in first["questions"]]
        assert n_q >= 2 and EVIL in page.inner_text("#prompt")
        body = page.inner_text("#questions")
        assert any(EVIL in q["text"] for q in first["questions"]) and EVIL in body  # a RISE question, as text
        assert {"rise:tc|", "rise:pr|", "rise:vq|", "rise:ra|0"} <= set(keys)
        page.wait_for_function("() => document.querySelector('#videos video').readyState >= 1", timeout=15000)
        for i in range(n_q):  # the first choice of each question (the top of the scale is the last key)
            page.wait_for_selector(f".row[data-q={json.dumps(keys[i])}].current")
            page.keyboard.press("1")
        _wait_progress(page, f"1 / {total} done")
        page.keyboard.press("2")  # one answer on the second video, then reload
        page.wait_for_function("() => document.querySelectorAll('.row button.chosen').length === 1")
        page.reload()
        _wait_progress(page, f"1 / {total} done")
        page.wait_for_function("() => document.querySelectorAll('.row button.chosen').length === 1")
        assert page.locator(".row.current").get_attribute("data-q") != page.locator(".row").first.get_attribute(
            "data-q")  # the cursor resumes on the first open question
        assert errors == [] and page.evaluate("window.__pwned") is None
        page.close()
    with AnnotationStore(rise_dir) as store:
        labels = store.all(annotator="bo")
    assert len(labels) == n_q + 1
    by_metric = {lab.metric for lab in labels}
    assert by_metric & {"rise:tc", "rise:pr", "rise:vq", "rise:ra"}
    for lab in labels[:n_q]:
        q = next(q for q in first["questions"] if q["key"] == f"{lab.metric}|{lab.item}")
        assert lab.value == q["choices"][0]["value"]
        assert lab.normalized == (1.0 if lab.metric == "rise:ra" else 0.0)  # yes = 1; Likert 1 = bottom
