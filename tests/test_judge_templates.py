"""Prompt templates: package files with versions; user overrides by folder, env var or path."""

from __future__ import annotations

import pytest

from vreason.core.errors import ConfigError
from vreason.judge.templates import ENV_DIR, get_template, list_templates, load_template


def test_package_template_renders():
    t = get_template("generic_yes_no")
    assert t.name == "generic_yes_no" and t.version == "1" and t.source == "package"
    system, user = t.render(question="Does the ball reach the goal?", context="")
    assert "Yes or No" in system
    assert user.startswith("Question: Does the ball reach the goal?")
    _, user2 = t.render(question="Q?", context="A maze.")
    assert user2.startswith("Context: A maze.")
    assert "generic_yes_no" in list_templates()


def test_missing_variable_is_an_error():
    with pytest.raises(ConfigError, match="question"):
        get_template("generic_yes_no").render(context="")


def test_unknown_template():
    with pytest.raises(ConfigError, match="no judge template 'nope'"):
        get_template("nope")


def _write(path, name="generic_yes_no", version="7-local", user="Q: {{ question }}"):
    path.write_text(f"name: {name}\nversion: '{version}'\nsystem: be brief\nuser: '{user}'\n")
    return path


def test_override_by_env_dir(tmp_path, monkeypatch):
    _write(tmp_path / "generic_yes_no.yaml")
    monkeypatch.setenv(ENV_DIR, str(tmp_path))
    t = get_template("generic_yes_no")
    assert t.version == "7-local" and t.source.endswith("generic_yes_no.yaml")
    assert t.render(question="x") == ("be brief", "Q: x")


def test_override_by_dir_and_path(tmp_path):
    f = _write(tmp_path / "generic_yes_no.yaml", version="2")
    assert get_template("generic_yes_no", template_dir=tmp_path).version == "2"
    assert get_template("generic_yes_no", path=f).version == "2"
    other = _write(tmp_path / "other.yaml", name="other")
    with pytest.raises(ConfigError, match="named 'other'"):
        get_template("generic_yes_no", path=other)


def test_bad_template_files(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\nuser: hi\n")
    with pytest.raises(ConfigError, match="version"):
        load_template(bad)
    bad.write_text("name: bad\nversion: 1\nuser: hi\nprompt: x\n")
    with pytest.raises(ConfigError, match="unknown keys"):
        load_template(bad)
    with pytest.raises(ConfigError, match="does not exist"):
        load_template(tmp_path / "nothing.yaml")


def test_request_from_template():
    import numpy as np

    from vreason.judge.base import ImagePart, TextPart

    t = get_template("generic_yes_no")
    frames = [np.zeros((4, 4, 3), np.uint8), np.ones((4, 4, 3), np.uint8)]
    r = t.request(frames, labels=["Frame 1", "Frame 2"], question="Q?", context="")
    assert r.template == "generic_yes_no" and r.template_version == "1" and "Yes or No" in r.system
    assert isinstance(r.parts[0], TextPart) and r.parts[0].text.startswith("Question: Q?")
    assert [p.label for p in r.parts[1:]] == ["Frame 1", "Frame 2"]
    assert all(isinstance(p, ImagePart) for p in r.parts[1:])
    assert isinstance(t.request(frames, images_first=True, question="Q?", context="").parts[0], ImagePart)
    with pytest.raises(ConfigError, match="labels"):
        t.request(frames, labels=["only one"], question="Q?", context="")
