"""Model specs: the --models grammar, YAML files, names, mistakes refused before any work; plugin generators
generate; a spec's parameters are part of the run's plan."""

import os
import sys

import pytest

from conftest import SMALL_SYNTH
from vreason.core.errors import ConfigError
from vreason.core.records import VideoStatus
from vreason.generate.spec import generator_kinds, parse_entry, parse_models
from vreason.runner.guard import PlanMismatchError
from vreason.runner.run import RunConfig, Runner
from vreason.store import RunStore


@pytest.fixture()
def script(tmp_path):
    p = tmp_path / "my_model.py"
    p.write_text(f"#!{sys.executable}\nimport sys\nsys.exit(1)\n")
    p.chmod(0o755)
    return str(p)


def test_grammar_plain_spec_named_and_yaml(tmp_path, script):
    assert parse_entry("oracle").kind is None and parse_entry("oracle").name == "oracle"
    s = parse_entry(f"cmd:{script}")
    assert (s.kind, s.target, s.name) == ("cmd", script, "my_model")  # name from the script's base name
    s = parse_entry(f"mine=cmd:{script}")
    assert (s.name, s.kind, s.source) == ("mine", "cmd", f"mine=cmd:{script}")
    y = tmp_path / "m.yaml"
    y.write_text("kind: cmd\ntarget: ./my_model.py\nparams: {fps: 8}\nprotocols: {rise: {fps: 24}}\ntimeout: 5\n")
    s = parse_entry(str(y))
    assert s.target == script  # ./ is relative to the YAML file
    assert s.params_for("rise") == {"fps": 24} and s.params_for("synth") == {"fps": 8} and s.timeout_s == 5
    assert parse_entry(f"other={y}").name == "other"
    assert {"cmd", "diffusers"} <= set(generator_kinds())


@pytest.mark.parametrize("entry, words", [
    ("nosuch:thing", ["unknown generator kind 'nosuch'", "cmd", "diffusers"]),
    ("cmd:", ["needs a target"]),
    ("../x=cmd:foo", ["unknown generator kind"]),
    ("bad/name=cmd:x", ["unknown generator kind"]),
    ("name=oracle", ["needs a spec"]),
    ("missing.yaml", ["no such model spec file"]),
])
def test_bad_entries_are_refused_with_the_reason(entry, words):
    with pytest.raises(ConfigError) as e:
        parse_entry(entry)
    for w in words:
        assert w in str(e.value)


def test_yaml_unknown_key_and_duplicate_names(tmp_path, script):
    y = tmp_path / "m.yaml"
    y.write_text(f"kind: cmd\ntarget: {script}\nparamz: {{}}\n")
    with pytest.raises(ConfigError, match="paramz"):
        parse_entry(str(y))
    with pytest.raises(ConfigError, match="both run as 'my_model'"):
        parse_models([f"cmd:{script}", f"my_model=cmd:{script}"])


def test_bad_target_or_params_stop_the_run_before_anything(tmp_path, script):
    for models, words in (([f"cmd:{tmp_path}/nope.sh"], "does not exist"),
                          ([f"diffusers:{tmp_path}"], "not a diffusers pipeline folder")):
        with pytest.raises(ConfigError, match=words):
            Runner(RunConfig(protocol="synth", run_dir=str(tmp_path / "r"), models=models,
                             options={"per_task": 1}, limit=1, workers=1))
    y = tmp_path / "m.yaml"
    y.write_text(f"kind: cmd\ntarget: {script}\nparams: {{concurrency: 0}}\n")
    with pytest.raises(ConfigError, match="concurrency"):
        Runner(RunConfig(protocol="synth", run_dir=str(tmp_path / "r2"), models=[str(y)], options={"per_task": 1}))


def test_a_registered_plugin_generator_generates(tmp_path):
    from _hang_gen import HangingGenerator
    from vreason.core.registry import generators

    generators.register("plugin-gen")(HangingGenerator)
    cfg = RunConfig(protocol="synth", run_dir=str(tmp_path / "r"), models=["plugin-gen"], seeds=[1],
                    options={"per_task": 1, "families": ["maze"], **SMALL_SYNTH}, limit=1, workers=1)
    try:
        summary = Runner(cfg).run()
    finally:
        generators._entries.pop("plugin-gen", None)
    with RunStore(tmp_path / "r") as st:
        (v,) = st.videos()
    assert v.status == VideoStatus.ok and v.model == "plugin-gen" and os.path.exists(v.path)
    assert summary.videos == {"ok": 1}


def test_spec_parameters_are_part_of_the_plan(tmp_path, script):
    good = tmp_path / "good.py"
    good.write_text(f"#!{sys.executable}\nimport json, sys\nimport numpy as np\n"
                    "from vreason.frames.write import write_video\n"
                    "r = json.load(open(sys.argv[1]))\n"
                    "write_video(r['output'], [np.zeros((32, 32, 3), np.uint8)] * 3)\n")
    good.chmod(0o755)
    y = tmp_path / "m.yaml"
    y.write_text(f"kind: cmd\ntarget: {good}\nparams: {{fps: 8}}\n")
    cfg = dict(protocol="synth", run_dir=str(tmp_path / "r"), models=[str(y)], options={"per_task": 1,
               "families": ["maze"]}, limit=1, workers=1)
    Runner(RunConfig(**cfg)).run()
    Runner(RunConfig(**cfg, gen_timeout=30)).run()  # a timeout is not a plan change
    y.write_text(f"kind: cmd\ntarget: {good}\nparams: {{fps: 24}}\n")
    with pytest.raises(PlanMismatchError, match="fps"):
        Runner(RunConfig(**cfg))


def test_list_shows_generator_kinds_apart_from_models():
    from typer.testing import CliRunner

    from vreason.cli.main import app

    out = CliRunner().invoke(app, ["list"], terminal_width=200).output
    models_table, _, rest = out.partition("generator kinds")
    kinds_table = rest.split("scorers")[0]
    assert "oracle" in models_table and "diffusers" not in models_table and "cmd:" not in models_table
    assert "diffusers" in kinds_table and "gen" in kinds_table and "cmd:./my_model.sh" in kinds_table
