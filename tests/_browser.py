"""Shared pieces of the browser tests: Debian's chromium driven by playwright, a page that collects
console errors, markup that must stay text, and a RISE fixture run judged by a loopback judge whose
every reason carries that markup."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator

from playwright.sync_api import sync_playwright

from fixtures_rise import write_dataset, write_videos
from test_rise_e2e import judge_script
from vreason.runner.run import RunConfig, Runner
from vreason.testing.loopback import LoopbackServer

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]
EVIL = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'


@contextlib.contextmanager
def chromium() -> Iterator:
    """Debian's chromium (installed by the test set-up), headless. Start it after any run a test module
    needs: playwright's sync API keeps an event loop running in this thread."""
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        try:
            yield b
        finally:
            b.close()


def new_page(browser, width: int = 1280, height: int = 900):
    """A page and the list its console errors and page errors are collected in."""
    page = browser.new_page(viewport={"width": width, "height": height})
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    return page, errors


def judged_rise_run(root) -> str:
    """A RISE fixture run (model ``good``) judged through the loopback server; every reply's reason and
    justification carry :data:`EVIL`. Returns the run folder."""
    data = write_dataset(str(root / "RISE"))
    videos = str(root / "videos")
    write_videos(videos, "good", good=True)
    base = judge_script(True)

    def script(body):
        return base(body).replace('"r"', json.dumps(EVIL)).replace('"j"', json.dumps(EVIL))

    run_dir = str(root / "runs" / "rise")
    with LoopbackServer(script) as srv:
        Runner(RunConfig(protocol="rise", run_dir=run_dir, models=["good"],
                         options={"data": data, "videos": videos, "n_boot": 50},
                         judges={"default": f"vllm:judge@{srv.base_url}"}, workers=1, aggregate=False)).run()
    return run_dir
