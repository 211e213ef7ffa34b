"""VideoTPO: the loop, its stored steps, resume, unparseable replies, the comparison image, the CLI."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from conftest import SMALL_SYNTH, SMALL_SYNTH_ARGS
from vreason.frames.write import write_video
from vreason.judge.parsers import ParseFailure
from vreason.optimize.tpo_run import run_tpo
from vreason.optimize.videotpo import TpoConfig, TpoLog, count_tokens, free_text, improved_prompt, judge_image

LOSS = {"match": "Evaluate the text prompt", "reply": "Video 1 moves the agent through a wall; video 2 stays still."}
GRAD = {"match": "actionable suggestions", "reply": "Say explicitly that the agent must stay inside the corridors."}


def _script(path, updates) -> str:
    with open(path, "w", encoding="utf-8") as f:
        for e in [LOSS, GRAD, *updates]:
            f.write(json.dumps(e) + "\n")
    return f"scripted:{path}"


def _cfg(tmp_path, judge: str, **kw) -> TpoConfig:
    base = dict(protocol="synth", model="random", optimizer=judge, run_dir=str(tmp_path / "run"),
                options={"families": ["maze"], "per_task": 1, "difficulties": ["easy"], **SMALL_SYNTH}, iterations=2,
                concurrency=1)
    base.update(kw)
    return TpoConfig(**base)


def test_improved_prompt_parser():
    p = improved_prompt()
    assert p("thinking…\n<IMPROVED_VARIABLE> Move the red dot. </IMPROVED_VARIABLE>") == "Move the red dot."
    assert p("<IMPROVED_VARIABLE>old</IMPROVED_VARIABLE> then <IMPROVED_VARIABLE>new</IMPROVED_VARIABLE>") == "new"
    for bad in ("Move the red dot.", "<IMPROVED_VARIABLE>   </IMPROVED_VARIABLE>", "<IMPROVED_VARIABLE>open only"):
        with pytest.raises(ParseFailure):
            p(bad)
    limited = improved_prompt(limit=5)
    assert limited("<IMPROVED_VARIABLE>a b c</IMPROVED_VARIABLE>") == "a b c"
    with pytest.raises(ParseFailure, match="over the limit"):
        limited("<IMPROVED_VARIABLE>one two three four five six</IMPROVED_VARIABLE>")
    with pytest.raises(ParseFailure):
        free_text("<think>only thoughts</think>  ")
    assert count_tokens("Move the dot, then stop.") == 7


def test_judge_image_stacks_first_and_last_frames(tmp_path):
    colours = {"a": ((255, 0, 0), (0, 255, 0)), "b": ((0, 0, 255), (255, 255, 0))}
    paths = []
    for name, (first, last) in colours.items():
        frames = [np.full((64, 96, 3), first, np.uint8)] * 4 + [np.full((64, 96, 3), last, np.uint8)] * 4
        paths.append(write_video(str(tmp_path / f"{name}.mp4"), frames, fps=8) and str(tmp_path / f"{name}.mp4"))
    img = judge_image(paths, 256)
    assert img.shape == (256, 256, 3)
    quarters = [img[i * 64 + 16:(i + 1) * 64 - 16].reshape(-1, 3).mean(0) for i in range(4)]
    expected = [colours["a"][0], colours["b"][0], colours["a"][1], colours["b"][1]]
    for got, want in zip(quarters, expected, strict=True):
        assert np.abs(got - np.array(want)).max() < 40, (got, want)


def test_loop_stores_every_step_and_resumes(tmp_path):
    updates = [{"reply": f"<IMPROVED_VARIABLE>prompt v{i}</IMPROVED_VARIABLE>"} for i in (1, 2)]
    judge = _script(tmp_path / "s.jsonl", updates)
    s = run_tpo(_cfg(tmp_path, judge))
    assert (s.samples, s.complete, s.steps_run) == (1, 1, 2)
    recs = TpoLog(str(tmp_path / "run")).records()
    assert [r.status for r in recs] == ["ok", "ok"]
    assert recs[0].prompt_out == "prompt v1" and recs[1].prompt_in == "prompt v1" and recs[1].prompt_out == "prompt v2"
    assert recs[0].critique.startswith("Video 1") and recs[0].gradient.startswith("Say explicitly")
    assert recs[0].templates == {"videotpo_loss": "1", "videotpo_gradient": "1", "videotpo_update": "1"}
    assert recs[0].optimizer.startswith("scripted:") and recs[0].raw["update"].startswith("<IMPROVED")
    for r in recs:
        assert len(r.videos) == 2 and all(os.path.getsize(v) > 0 for v in r.videos)
        assert os.path.exists(r.judge_image)
        folder = os.path.dirname(r.videos[0])
        assert open(os.path.join(folder, "optimized_prompt.txt"), encoding="utf-8").read() == r.prompt_out
    rows = [json.loads(line) for line in open(s.prompts_file, encoding="utf-8")]
    assert rows[0]["prompt"] == "prompt v2" and rows[0]["variant"] == "videotpo" and rows[0]["steps"] == 2
    assert rows[0]["original"] != rows[0]["prompt"]
    # the same command again: nothing is generated or asked (the script has no update replies left)
    again = run_tpo(_cfg(tmp_path, judge))
    assert again.steps_run == 0 and again.complete == 1
    assert len(TpoLog(str(tmp_path / "run")).records()) == 2


def test_unparseable_rewrite_stops_the_sample_and_keeps_its_prompt(tmp_path):
    updates = [{"reply": "I would say: move the dot carefully."}] * 6  # never inside the tags
    s = run_tpo(_cfg(tmp_path, _script(tmp_path / "s.jsonl", updates), iterations=3))
    assert s.complete == 0 and len(s.failed) == 1
    (why,) = s.failed.values()
    assert "step 0" in why and "IMPROVED_VARIABLE" in why
    (rec,) = TpoLog(str(tmp_path / "run")).records()
    assert rec.status == "failed" and rec.prompt_out is None and "move the dot carefully" in rec.raw["update"]
    row = json.loads(open(s.prompts_file, encoding="utf-8").readline())
    assert row["prompt"] == row["original"] and row["complete"] is False


def test_failed_generation_is_recorded(tmp_path):
    cfg = _cfg(tmp_path, _script(tmp_path / "s.jsonl", []), model="no-such-model")
    from vreason.core.errors import ConfigError

    with pytest.raises((ConfigError, KeyError)):
        run_tpo(cfg)


def test_cli_runs_and_exits_3_when_a_sample_stops(tmp_path):
    from typer.testing import CliRunner

    from vreason.cli.main import app

    judge = _script(tmp_path / "s.jsonl", [{"reply": "no tags"}] * 6)
    res = CliRunner().invoke(app, ["tpo", "--protocol", "synth", "--model", "random", "--optimizer", judge,
                                   "--runs", str(tmp_path), "--name", "t", "--iterations", "1", "--opt",
                                   'families=["maze"]', "--opt", "per_task=1", *SMALL_SYNTH_ARGS, "--limit", "1"])
    assert res.exit_code == 3, res.output
    assert os.path.exists(tmp_path / "t" / "tpo" / "optimized_prompts.jsonl")


def test_run_with_optimised_prompts_reports_the_paired_difference(tmp_path):
    from typer.testing import CliRunner

    from vreason.cli.main import app
    from vreason.store import RunStore

    updates = [{"reply": f"<IMPROVED_VARIABLE>better prompt {i}</IMPROVED_VARIABLE>"} for i in range(4)]
    judge = _script(tmp_path / "s.jsonl", updates)
    s = run_tpo(_cfg(tmp_path, judge, iterations=1, options={"families": ["maze"], "per_task": 2,
                                                              "difficulties": ["easy"], **SMALL_SYNTH}))
    assert s.complete == 2
    # keep only one sample's prompt: the other sample's variant video is missing, with the reason
    first = open(s.prompts_file, encoding="utf-8").readline()
    one = tmp_path / "one.jsonl"
    one.write_text(first, encoding="utf-8")
    args = ["run", "synth", "--models", "oracle,static", "--runs", str(tmp_path), "--name", "pv", "--families",
            "maze", "--per-task", "2", "--opt", 'difficulties=["easy"]', *SMALL_SYNTH_ARGS, "-j", "1", "--prompts",
            str(one), "--prompt-variants", "default,videotpo"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 3, res.output  # a variant prompt is missing for one sample
    store = RunStore(str(tmp_path / "pv"))
    vids = {(v.sample_id, v.model): v for v in store.videos()}
    sid = json.loads(first)["sample_id"]
    other = next(k[0] for k in vids if k[0] != sid)
    assert vids[(sid, "oracle_videotpo")].manifest.prompt == json.loads(first)["prompt"]
    assert vids[(sid, "oracle")].manifest.prompt == json.loads(first)["original"]
    assert vids[(other, "oracle_videotpo")].status.value == "missing"
    assert "videotpo" in vids[(other, "oracle_videotpo")].reason
    pairs = store.get_meta("prompt_variants")
    store.close()
    assert {p["run_name"] for p in pairs} == {"oracle_videotpo", "static_videotpo"}
    import pandas as pd

    table = pd.read_csv(tmp_path / "pv" / "report" / "prompt_variants_paired.csv")
    row = table[(table["model"] == "oracle") & (table["metric"] == table["metric"].iloc[0])].iloc[0]
    assert row["n_pairs"] == 1 and row["delta"] == 0  # the built-in oracle ignores its prompt
    # the same command resumes (same plan); another prompts file is a plan change and is refused
    assert CliRunner().invoke(app, args).exit_code == 3
    other_file = tmp_path / "other.jsonl"
    other_file.write_text(first.replace("better prompt", "another prompt"), encoding="utf-8")
    refused = CliRunner().invoke(app, args[:-4] + ["--prompts", str(other_file), "--prompt-variants",
                                                     "default,videotpo"])
    from vreason.runner.guard import PlanMismatchError

    assert isinstance(refused.exception, PlanMismatchError), refused.output
    assert "prompt" in str(refused.exception)


def test_prompt_file_errors_and_variant_names(tmp_path):
    from vreason.core.errors import ConfigError
    from vreason.data.prompt_variants import expand_models, read_prompts

    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"sample_id": "a", "variant": "v", "prompt": "x"}\n{"sample_id": "b"}\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="bad.jsonl:2"):
        read_prompts(str(bad))
    names = [vm.run_name for vm in expand_models(["wan", "cog"], ["default", "videotpo"])]
    assert names == ["wan", "wan_videotpo", "cog", "cog_videotpo"]
    with pytest.raises(ConfigError, match="collide"):
        expand_models(["a_v", "a"], ["default", "v"])  # a + variant v collides with the model named a_v
