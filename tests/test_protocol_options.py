"""Typed protocol options: unknown keys and bad values refused with the accepted ones named, CLI strings
coerced, defaults as the docs state, resolved options in the manifest, and every option the code reads
declared (end to end on the fixtures, with options that refuse undeclared reads)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import typing

import pytest
from typer.testing import CliRunner

from vreason.cli.main import _parse_opts, app
from vreason.core.options import DeclaredOptions, OptionsError, public_keys
from vreason.core.scoring import ScoreContext
from vreason.protocols.mmecof.protocol import VISUAL_PROMPT_MODES, MmeCofOptions, MmeCofProtocol
from vreason.protocols.rise.protocol import RELEASED_DEFAULTS, RiseOptions, RiseProtocol
from vreason.protocols.ruler.protocol import RulerOptions, RulerProtocol
from vreason.protocols.synth.protocol import SynthOptions, SynthProtocol
from vreason.runner.run import RunConfig, Runner, make_protocol
from vreason.store import RunStore

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROTOCOLS = {"synth": (SynthProtocol, SynthOptions), "rise": (RiseProtocol, RiseOptions),
             "ruler": (RulerProtocol, RulerOptions), "mmecof": (MmeCofProtocol, MmeCofOptions)}
TINY_SYNTH = {"families": "maze", "difficulties": "easy", "per_task": 1, "width": 160, "height": 96, "seconds": 1.0}


@pytest.mark.parametrize("name", sorted(PROTOCOLS))
def test_unknown_key_is_rejected_with_the_accepted_keys(name):
    cls, model = PROTOCOLS[name]
    with pytest.raises(OptionsError) as err:
        cls(n_bot=10)
    msg = str(err.value)
    assert msg.startswith(f"{name}: unknown option 'n_bot'")
    known = msg.split("(known: ")[1].rstrip(")").split(", ")
    assert known == public_keys(model) and "run_dir" not in known
    if "n_boot" in known:  # difflib's closest match comes first
        assert "did you mean n_boot" in msg


@pytest.mark.parametrize("cls, key, bad, allowed", [
    (RiseProtocol, "maze_mode", "lenient", ("official", "strict")),
    (RiseProtocol, "ra_yes", "maybe", ("contains", "strict")),
    (RiseProtocol, "ra_count", "some", ("asked", "returned")),
    (RiseProtocol, "ra_mode", "other", ("paper", "code")),
    (RiseProtocol, "table_rounding", "floor", ("released", "none")),
    (RulerProtocol, "win_rate", "1/k", ("pairwise_strict", "best_share", "pairwise_half")),
    (RulerProtocol, "missing_metric", "nan", ("zero", "skip")),
    (MmeCofProtocol, "hint", "both", ("none", "text", "visual")),
    (MmeCofProtocol, "visual_prompt", "guess", ("require", "text_hint")),
    (SynthProtocol, "shortcut_mode", "wipe", ("fade", "cut")),
])
def test_bad_value_names_the_option_and_the_allowed_values(cls, key, bad, allowed):
    with pytest.raises(OptionsError) as err:
        cls(**{key: bad})
    msg = str(err.value)
    assert f"{key} must be one of" in msg and repr(bad) in msg
    assert all(f"'{a}'" in msg for a in allowed), msg


@pytest.mark.parametrize("cls, opts, key", [
    (RiseProtocol, {"n_boot": "many"}, "n_boot"),
    (RiseProtocol, {"n_boot": 0}, "n_boot"),
    (RiseProtocol, {"sym_jpeg": "perhaps"}, "sym_jpeg"),
    (RulerProtocol, {"level": 1.5}, "level"),
    (RulerProtocol, {"frame_policy": "bogus:3"}, "frame_policy"),
    (MmeCofProtocol, {"quality_scale": "9-0"}, "quality_scale"),
    (MmeCofProtocol, {"quality_scale": "ten"}, "quality_scale"),
    (MmeCofProtocol, {"compare_runs": {"both": "runs/x"}}, "compare_runs"),
    (SynthProtocol, {"difficulties": "easy,extreme"}, "difficulties"),
    (SynthProtocol, {"per_task": -1}, "per_task"),
])
def test_other_bad_values_name_the_option(cls, opts, key):
    with pytest.raises(OptionsError, match=rf"option {key}\b|{key} must be one of"):
        cls(**opts)


def test_cli_strings_are_coerced():
    opts = _parse_opts(["sym_jpeg=false", "n_boot=200", "ci_seed=7", "check_files=0", "maze_mode=strict",
                        "ra_yes=strict", "data=some/folder"])
    o = RiseProtocol(**opts).opts
    assert (o.sym_jpeg, o.n_boot, o.ci_seed, o.check_files, o.maze_mode, o.ra_yes, o.data) == \
        (False, 200, 7, False, "strict", "strict", "some/folder")
    # the same values as raw strings (Python callers, YAML) coerce too
    o = RiseProtocol(sym_jpeg="false", n_boot="200", check_files="true").opts
    assert (o.sym_jpeg, o.n_boot, o.check_files) == (False, 200, True)
    r = RulerProtocol(**_parse_opts(["level=0.9", "boot_seed=3", "prompt_variant=1", "check_files=false"])).opts
    assert (r.level, r.boot_seed, r.prompt_variant, r.check_files) == (0.9, 3, "1", False)
    m = MmeCofProtocol(**_parse_opts(["quality=false", 'compare_runs={"text": "runs/t"}', "quality_scale=1-5"])).opts
    assert (m.quality, m.compare_runs, m.quality_scale) == (False, {"text": "runs/t"}, "1-5")
    s = SynthProtocol(**_parse_opts(["families=maze,sorting", "difficulties=easy", "per_task=2", "seconds=2",
                                     "write_videos=1"]))
    assert (s.families, s.difficulties, s.per_task, s.cfg.seconds, s.opts.write_videos) == \
        (["maze", "sorting"], ["easy"], 2, 2.0, True)


def _doc(name: str) -> str:
    with open(os.path.join(ROOT, "docs", name), encoding="utf-8") as fh:
        return fh.read()


def test_defaults_are_the_documented_faithful_ones():
    rise, ruler, mme = RiseProtocol().opts, RulerProtocol().opts, MmeCofProtocol().opts
    assert (rise.maze_mode, rise.ra_yes, rise.ra_count, rise.ra_mode, rise.sym_jpeg, rise.table_rounding) == \
        ("official", "contains", "returned", "paper", True, "released")
    assert (rise.n_boot, rise.ci_seed, rise.check_files) == (1000, 0, True)
    assert (ruler.win_rate, ruler.missing_metric, ruler.frame_policy, ruler.template) == \
        ("pairwise_strict", "zero", "ruler", "ruler_judge")
    assert (mme.hint, mme.visual_prompt, mme.frame_policy, mme.quality, mme.quality_scale) == \
        ("none", "require", "mmecof", True, "0-9")
    # the docs state the same defaults
    rise_md, rm_md = _doc("rise.md"), _doc("ruler_mmecof.md")
    for text in ("`maze_mode=official`", "`ra_yes=contains`", "`ra_count=returned`", "`sym_jpeg=true`",
                 "`table_rounding=released`", "`ra_mode` — `paper` (default)", "`n_boot` (1000)"):
        assert text in rise_md, text
    for text in ("`pairwise_strict` (default)", "(`missing_metric=zero`)", "`frame_policy=ruler`",
                 "`n_boot` (1000), `level` (0.95), `boot_seed` (0)"):
        assert text in rm_md, text
    assert RELEASED_DEFAULTS == {"ra_mode": "paper", "ra_count": "returned", "ra_yes": "contains",
                                 "maze_mode": "official", "sym_jpeg": True, "table_rounding": "released"}


def test_literals_match_the_values_the_code_implements():
    from vreason.protocols.mmecof.data import HINTS
    from vreason.protocols.rise.aggregate import ROUNDINGS
    from vreason.protocols.rise.scorers import RA_YES
    from vreason.protocols.ruler.tables import DEFAULT_WIN_RATE, WIN_RATE_DEFINITIONS

    def args(model, key):
        return typing.get_args(model.model_fields[key].annotation)

    assert set(args(RulerOptions, "win_rate")) == set(WIN_RATE_DEFINITIONS)
    assert RulerOptions.model_fields["win_rate"].default == DEFAULT_WIN_RATE
    assert set(args(MmeCofOptions, "hint")) == set(HINTS)
    assert set(args(MmeCofOptions, "visual_prompt")) == set(VISUAL_PROMPT_MODES)
    assert set(args(RiseOptions, "table_rounding")) == set(ROUNDINGS)
    assert set(args(RiseOptions, "ra_yes")) == set(RA_YES)


def test_list_options_shows_every_protocols_options_and_defaults():
    res = CliRunner().invoke(app, ["list", "--options"], env={"COLUMNS": "400"})
    assert res.exit_code == 0, res.output
    for name, (_, model) in PROTOCOLS.items():
        assert f"{name} options" in res.output
        for key in public_keys(model):
            assert key in res.output, (name, key)
    assert "pairwise_strict" in res.output and "official" in res.output and "list[easy | medium | hard]" in res.output
    one = CliRunner().invoke(app, ["list", "--options", "ruler"], env={"COLUMNS": "400"})
    assert "ruler options" in one.output and "rise options" not in one.output


def test_bad_option_value_from_the_cli_exits_2_before_scoring(tmp_path):
    res = subprocess.run([sys.executable, "-m", "vreason.cli.main", "run", "rise", "--models", "m", "--opt",
                          "ra_yes=sometimes", "--runs", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert res.returncode == 2, res.stderr
    assert "ra_yes must be one of 'contains' or 'strict' (got 'sometimes')" in res.stderr
    assert not os.path.exists(tmp_path / "rise" / "results.sqlite")


def test_resolved_options_are_recorded_in_the_manifest(tmp_path):
    run_dir = str(tmp_path / "run")
    s = Runner(RunConfig(protocol="synth", run_dir=run_dir, models=["static"], workers=1, aggregate=False,
                         options={**TINY_SYNTH, "max_frames": "64"})).run()
    assert s.units_final == {"ok": 1}
    with RunStore(run_dir) as st:
        man = st.read_manifest()
    resolved = man["config"]["resolved_options"]
    assert set(resolved) == set(public_keys(SynthOptions))
    assert resolved["max_frames"] == 64 and resolved["families"] == ["maze"] and resolved["seed"] == 0
    assert resolved["fps"] == 16 and resolved["shortcut_mode"] is None and "run_dir" not in resolved
    assert man["config"]["options"]["max_frames"] == "64"  # the options as given stay beside them
    json.dumps(resolved)


def test_declared_options_refuse_an_undeclared_read():
    proto = RulerProtocol()
    assert isinstance(proto.options, DeclaredOptions) and proto.options.get("win_rate") == "pairwise_strict"
    with pytest.raises(OptionsError, match="'winrate' is read but not declared"):
        proto.options.get("winrate", "pairwise_half")
    with pytest.raises(AttributeError):
        proto.opts.winrate  # noqa: B018


@pytest.fixture
def strict_worker_ctx(monkeypatch):
    """CPU scorers get the same refusing options as io scorers (the runner copies them for workers)."""
    monkeypatch.setattr(ScoreContext, "for_worker",
                        lambda self: ScoreContext(run_dir=self.run_dir, options=self.options, judges={}))


def _assert_all_ok(summary):
    assert summary.units_final and set(summary.units_final) == {"ok"}, summary.failure_reasons


def test_every_option_synth_reads_is_declared(tmp_path, strict_worker_ctx):
    """End to end through the runner: the protocols read their options from the model (an undeclared
    attribute raises) and the scorers from options that refuse undeclared keys; a read of an undeclared
    option would end a unit in error (or stop the run)."""
    s = Runner(RunConfig(protocol="synth", run_dir=str(tmp_path / "synth"), models=["shortcut"], workers=1,
                         options={**TINY_SYNTH, "shortcut_mode": "cut"})).run()
    _assert_all_ok(s)


def test_every_option_rise_reads_is_declared(tmp_path, strict_worker_ctx):
    from fixtures_rise import write_dataset, write_videos
    from test_rise_e2e import judge_script
    from vreason.testing.loopback import LoopbackServer

    data = write_dataset(str(tmp_path / "RISE"))
    videos = str(tmp_path / "videos")
    write_videos(videos, "good", good=True)
    with LoopbackServer(judge_script(True)) as srv:
        s = Runner(RunConfig(protocol="rise", run_dir=str(tmp_path / "rise"), models=["good"], workers=1,
                             options={"data": data, "videos": videos, "n_boot": 20, "sym_jpeg": "false"},
                             judges={"default": f"vllm:judge@{srv.base_url}"})).run()
    _assert_all_ok(s)
    assert isinstance(make_protocol("rise", {"data": data}).options, DeclaredOptions)


def test_every_option_ruler_reads_is_declared(tmp_path, strict_worker_ctx):
    from _ruler_mmecof_fixtures import keyed_script, ruler_dataset, ruler_videos
    from test_ruler_e2e import SCRIPTS
    from vreason.testing.loopback import LoopbackServer

    data = ruler_dataset(str(tmp_path / "ruler"))
    samples = RulerProtocol(data=data).load().samples
    ruler_videos(str(tmp_path / "rv"), ["m1"], samples)
    with LoopbackServer(keyed_script(SCRIPTS["m1"])) as srv:
        s = Runner(RunConfig(protocol="ruler", run_dir=str(tmp_path / "r1"), models=["m1"], workers=1,
                             options={"data": data, "n_boot": 20, "win_rate": "best_share",
                                      "missing_metric": "skip"}, videos_dir=str(tmp_path / "rv"),
                             judges={"default": f"vllm:judge@{srv.base_url}"})).run()
    _assert_all_ok(s)


def test_every_option_mmecof_reads_is_declared(tmp_path, strict_worker_ctx):
    from _ruler_mmecof_fixtures import keyed_script, moving_video
    from test_mmecof_e2e import STEPS
    from test_mmecof_loader import RECORDS, write
    from vreason.testing.loopback import LoopbackServer

    mdata = write(str(tmp_path / "mme"), RECORDS)
    msamples = MmeCofProtocol(data=mdata, hint="text").load().samples
    manifest = tmp_path / "mme.jsonl"
    manifest.write_text("".join(json.dumps({"sample_id": x.id, "model": "vm", "seed": 0,
                                            "path": moving_video(str(tmp_path / "mv" / f"{x.id}.mp4"), n=30, fps=24)})
                                + "\n" for x in msamples))
    quality = json.dumps({"consistency": 9, "temporal_consistency": 9, "visual_stability": 9, "hallucination": 9,
                          "physics_grounding": 9})
    rules = [*((step, [reply]) for step, reply in STEPS["text"].items()), ("consistency", [quality])]
    with LoopbackServer(keyed_script(rules)) as srv:
        s = Runner(RunConfig(protocol="mmecof", run_dir=str(tmp_path / "m1"), models=["vm"], workers=1,
                             options={"data": mdata, "hint": "text", "n_boot": 20, "quality_scale": [0, 9]},
                             manifest=str(manifest), judges={"default": f"vllm:judge@{srv.base_url}"})).run()
    _assert_all_ok(s)
