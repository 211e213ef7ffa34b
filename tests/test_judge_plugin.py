"""A judge backend registered by a plugin (``@judges.register("myjudge")``) is built by ``make_judge`` from
``myjudge:TARGET`` or a YAML ``backend: myjudge`` (issue 23 item 3c: backends resolved through the registry)."""

from __future__ import annotations

import pytest

from vreason.core.errors import ConfigError
from vreason.core.registry import judges
from vreason.judge import parsers
from vreason.judge.base import Judge, JudgeReply, JudgeRequest, TextPart, Usage
from vreason.judge.spec import build_backend, make_judge, parse_spec


class EchoJudge(Judge):
    """Replies "yes" when the question names its target, else "no"."""

    backend = "myjudge"

    def __init__(self, target: str) -> None:
        self.target = target

    @property
    def identity(self) -> str:
        return f"myjudge:{self.target}"

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        text = " ".join(p.text for p in request.parts if isinstance(p, TextPart))
        return JudgeReply("yes" if self.target in text else "no", Usage(3, 1))


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch):
    """The judges registry, restored after the test (entries registered here do not leak)."""
    from vreason.core.registry import load_builtins

    load_builtins()
    monkeypatch.setattr(judges, "_entries", dict(judges._entries))
    return judges


def test_make_judge_builds_and_asks_a_registered_plugin_backend(registry) -> None:
    registry.register("myjudge")(EchoJudge)
    client = make_judge("myjudge:x", no_cache=True)
    assert isinstance(client.judge, EchoJudge) and client.judge.target == "x"
    yes = client.ask_sync(JudgeRequest([TextPart("is x there?")]), parsers.yes_no())
    no = client.ask_sync(JudgeRequest([TextPart("is y there?")]), parsers.yes_no())
    assert (yes.ok, yes.value, yes.judge) == (True, True, "myjudge:x")
    assert (no.ok, no.value) == (True, False)


def test_plugin_backend_from_yaml_and_a_factory(registry, tmp_path) -> None:
    registry.register("MyFactory")(lambda target: EchoJudge(target.upper()))
    cfg = tmp_path / "judge.yaml"
    cfg.write_text("backend: MyFactory\nmodel: abc\nretries: 1\n")
    assert parse_spec(str(cfg)) == {"backend": "MyFactory", "model": "abc", "retries": 1}
    assert make_judge(str(cfg), no_cache=True).judge.target == "ABC"
    assert build_backend(parse_spec("myfactory:q")).target == "Q"  # spec names are case-insensitive


def test_unknown_backend_names_the_plugins_and_a_bad_factory_is_a_config_error(registry) -> None:
    with pytest.raises(ConfigError, match=r"unknown backend 'nojudge' \(openai, .*, suite, or a YAML file\)"):
        parse_spec("nojudge:x")
    registry.register("notajudge")(lambda target: object())
    with pytest.raises(ConfigError, match=r"unknown backend 'nojudge' \(.*suite, notajudge, or a YAML"):
        parse_spec("nojudge:x")
    with pytest.raises(ConfigError, match="returned object, not a vreason.judge.base.Judge"):
        make_judge("notajudge:x", no_cache=True)


def test_builtin_backends_still_resolve(registry) -> None:
    from vreason.judge.mock import MockJudge
    from vreason.judge.openai_backend import OpenAIJudge

    assert isinstance(build_backend(parse_spec("mock:seed=2")), MockJudge)
    j = build_backend(parse_spec("vllm:Qwen/Qwen3-VL-8B-Instruct@http://127.0.0.1:9/v1"), require_key=False)
    assert isinstance(j, OpenAIJudge) and "Qwen/Qwen3-VL-8B-Instruct" in j.identity
