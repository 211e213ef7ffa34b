"""Every registered benchmark keeps the Protocol contract (parametrised over the registry), and the old
module paths of moved code still import (the same module object) with a DeprecationWarning."""

from __future__ import annotations

import importlib
import subprocess
import sys
import warnings

import pytest

from vreason._moved import MOVED, new_name
from vreason.core.human import Question
from vreason.core.options import OptionsError, ProtocolOptions, resolve_options
from vreason.core.protocol import Protocol
from vreason.core.records import RubricItem, Sample
from vreason.core.registry import benchmarks, frame_presets, layouts, load_builtins, scorers, template_packages
from vreason.data.layout import VideoLayout
from vreason.frames.policy import PRESETS, policy
from vreason.judge.templates import get_template, list_templates

load_builtins()


@pytest.mark.parametrize("name", benchmarks.names())
def test_protocol_declares_its_contract(name):
    cls = benchmarks.get(name)
    assert issubclass(cls, Protocol) and cls.name == name
    assert cls.options_model is not None and issubclass(cls.options_model, ProtocolOptions)
    with pytest.raises(OptionsError, match="surely_not_an_option"):  # unknown keys are rejected
        resolve_options(name, cls.options_model, {"surely_not_an_option": 1})
    if cls.layout is not None:
        assert cls.layout in layouts, f"{name} names layout {cls.layout!r}, which is not registered"
    sample = Sample(id="s1", benchmark=name, prompt="p", rubric=[RubricItem(text="is it right?", kind="step")])
    qs = cls.human_questions(sample, ["tc", "pr", "vq", "ra", "RS"])
    assert isinstance(qs, list) and all(isinstance(q, Question) and q.metric.startswith(f"{name}:") for q in qs)


@pytest.mark.parametrize("name", scorers.names())
def test_declared_scorers_resolve(name):
    assert scorers.get(name) is not None


@pytest.mark.parametrize("name", sorted(set(layouts.names()) | {"vreason"}))
def test_layouts_are_video_layouts(name, tmp_path):
    from vreason.data.importer import ImportResult, layout

    lay = layout(name)
    assert isinstance(lay, VideoLayout) and lay.pattern
    sample = Sample(id="abc", benchmark="b", prompt="p", category="cat", task="task", metadata={"index": 3})
    expected = lay.path(str(tmp_path), "m1", sample, 0)
    assert expected.startswith(str(tmp_path))
    (tmp_path / "junk").mkdir()
    res = ImportResult()
    lay.scan(tmp_path, "m1" if lay.needs_model else None, res)  # an empty layout scans to nothing
    assert res.videos == []


def test_every_preset_parses_and_comes_from_a_package():
    assert "rise.tc" in PRESETS and "pai.u" in PRESETS and "last" in PRESETS
    for family in frame_presets.names():
        for preset_name in frame_presets.get(family):
            assert preset_name.split(".")[0] == family
            policy(preset_name)


def test_protocol_templates_load_from_their_packages():
    names = list_templates()
    assert template_packages.names()
    for n in ("rise_ra", "ruler_checklist", "mmecof_step", "pai_g_vqa", "pai_u_mcq", "tivibench_qa", "videotpo_loss"):
        assert n in names
        assert get_template(n).name == n


def test_old_paths_import_the_same_module_with_a_warning():
    assert MOVED
    for old in sorted(MOVED):
        new = new_name(old)
        if old in PACKAGES_NOW:  # the name is a benchmark package now: the old module's names forward
            continue
        sys.modules.pop(old, None)
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            mod = importlib.import_module(old)
        assert mod is importlib.import_module(new), old
        assert mod.__spec__.name == new
        assert any(issubclass(w.category, DeprecationWarning) and new in str(w.message) for w in got), old


PACKAGES_NOW = {f"vreason.protocols.{b}" for b in ("rise", "ruler", "mmecof", "tivibench", "synth")}


@pytest.mark.parametrize("old", sorted(PACKAGES_NOW))
def test_a_module_that_became_a_package_forwards_its_names(old):
    pkg = importlib.import_module(old)
    new = importlib.import_module(new_name(old))
    public = next(n for n in vars(new) if n.endswith("Protocol") and n != "Protocol")
    with pytest.warns(DeprecationWarning, match=public):
        assert getattr(pkg, public) is getattr(new, public)
    with pytest.raises(AttributeError):
        pkg.surely_not_a_name  # noqa: B018


def test_a_plugin_importing_an_old_path_runs(tmp_path):
    plugin = tmp_path / "plug.py"
    plugin.write_text("from vreason.protocols.base import Protocol\nfrom vreason.registry import benchmarks\n"
                      "from vreason.protocols.rise import RiseProtocol\n"
                      "print(Protocol.__module__, RiseProtocol.__module__)\n")
    out = subprocess.run([sys.executable, "-W", "default", str(plugin)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "vreason.core.protocol" in out.stdout
    assert "DeprecationWarning" in out.stderr


def test_a_plugin_protocol_with_the_old_convention_attribute_keeps_its_layout():
    from vreason.core.protocol import AggregateResult, LoadResult, Protocol

    with pytest.warns(DeprecationWarning, match="layout"):
        class Old(Protocol):
            name = "old"
            convention = "rise"

            def load(self):
                return LoadResult()

            def scorers(self):
                return []

            def aggregate(self, scores, samples, out_dir):
                return AggregateResult()

    assert Old.layout == "rise"
    old = Old()
    assert old.layout == "rise" and old.load().samples == [] and old.locate_video("m", None, 0) is None
