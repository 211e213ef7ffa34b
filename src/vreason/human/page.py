"""The annotation page: one HTML file (style and script inline, no network), rendered with autoescape."""

from __future__ import annotations

from functools import lru_cache

from jinja2 import Environment, PackageLoader, select_autoescape

from vreason.report.html import script_json


@lru_cache(maxsize=1)
def _env() -> Environment:
    return Environment(loader=PackageLoader("vreason.human", "templates"),
                       autoescape=select_autoescape(default=True, default_for_string=True))


def render_page(task: str, run_name: str, protocol: str) -> str:
    cfg = {"task": task, "run": run_name, "protocol": protocol}
    return _env().get_template("annotate.html.j2").render(cfg=script_json(cfg), run=run_name, task=task)
