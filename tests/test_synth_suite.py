"""Suite building, the benchmark folder round trip, and the synth protocol end to end."""

from __future__ import annotations

import json
import os

import pandas as pd
import pytest

from conftest import SMALL_SYNTH
from vreason.core.errors import ConfigError
from vreason.core.protocol import LoadResult
from vreason.synth.base import RenderConfig
from vreason.synth.suite import build_samples, default_families, load_benchmark, write_benchmark


def test_build_samples_fields(tmp_path):
    samples = build_samples(["maze", "connect"], ["easy", "hard"], 2, 5, out_dir=str(tmp_path))
    assert [s.id for s in samples][:3] == ["maze-easy-000", "maze-easy-001", "maze-hard-000"]
    assert len(samples) == 8
    for s in samples:
        assert s.benchmark == "synth" and s.category == s.task == s.metadata["family"]
        assert s.mode.value == "ti2v" and s.prompt and s.difficulty in ("easy", "hard")
        assert os.path.isfile(s.resolve(s.input_image)) and os.path.isfile(s.resolve(s.reference_image))
        assert s.reference_video is None
        md = s.metadata
        assert {"family", "difficulty", "index", "instance_seed", "suite_seed", "render", "state",
                "directional", "process_rule", "family_version"} <= set(md)
        json.dumps(md)  # JSON-able
    assert "solution" not in samples[0].prompt.lower()


def test_write_and_load_round_trip(tmp_path):
    d = tmp_path / "bench"
    cfg = RenderConfig()
    written = write_benchmark(str(d), ["symmetry", "sorting"], ["medium"], 2, 9, cfg, write_videos=True)
    assert (d / "manifest.jsonl").is_file() and (d / "prompts.txt").is_file() and (d / "suite.json").is_file()
    lines = (d / "manifest.jsonl").read_text().splitlines()
    assert len(lines) == 4 and all("root" not in json.loads(x) for x in lines)
    assert all(str(tmp_path) not in x for x in lines)  # the folder can be moved and shared
    assert (d / "prompts.txt").read_text().count("\n") == 4
    assert os.path.isfile(d / "videos" / "sorting-medium-001.mp4")
    res = load_benchmark(str(d))
    assert isinstance(res, LoadResult) and not res.errors
    assert [s.id for s in res.samples] == [s.id for s in written]
    for a, b in zip(res.samples, written, strict=True):
        assert a.model_dump(exclude={"root"}) == b.model_dump(exclude={"root"})
        assert a.root == os.path.abspath(d)
    meta = json.loads((d / "suite.json").read_text())
    assert meta["seed"] == 9 and meta["families"] == ["symmetry", "sorting"] and meta["samples"] == 4


def test_same_seed_same_suite_other_seed_differs(tmp_path):
    a = write_benchmark(str(tmp_path / "a"), ["maze"], ["easy"], 3, 1)
    b = write_benchmark(str(tmp_path / "b"), ["maze"], ["easy"], 3, 1)
    c = write_benchmark(str(tmp_path / "c"), ["maze"], ["easy"], 3, 2)
    assert (tmp_path / "a" / "manifest.jsonl").read_text() == (tmp_path / "b" / "manifest.jsonl").read_text()
    assert (tmp_path / "a" / "images" / "maze-easy-002.png").read_bytes() == \
        (tmp_path / "b" / "images" / "maze-easy-002.png").read_bytes()
    assert [s.metadata["state"] for s in a] != [s.metadata["state"] for s in c]
    assert [s.metadata["state"] for s in a] == [s.metadata["state"] for s in b]
    # instances don't depend on which other families or how many instances are built
    d = build_samples(["symmetry", "maze"], ["easy"], 1, 1)
    assert d[1].metadata["state"] == a[0].metadata["state"]


def test_malformed_manifest_lines_are_reported(tmp_path):
    d = tmp_path / "bench"
    write_benchmark(str(d), ["maze"], ["easy"], 3, 0)
    lines = (d / "manifest.jsonl").read_text().splitlines()
    bad_id = json.loads(lines[1])
    bad_id["id"] = "../escape"
    no_state = json.loads(lines[2])
    del no_state["metadata"]["state"]
    missing_img = json.loads(lines[0])
    missing_img["id"] = "maze-easy-099"
    missing_img["input_image"] = "images/none.png"
    (d / "manifest.jsonl").write_text("\n".join([
        lines[0], "{not json", json.dumps(bad_id), json.dumps(no_state), "[1, 2]", lines[0],
        json.dumps(missing_img), ""]) + "\n")
    res = load_benchmark(str(d))
    assert [s.id for s in res.samples] == ["maze-easy-000"]
    reasons = {e["where"].rsplit(":", 1)[1]: e["reason"] for e in res.errors}
    assert "invalid JSON" in reasons["2"]
    assert "id" in reasons["3"]
    assert "lacks state" in reasons["4"]
    assert "JSON object" in reasons["5"]
    assert "duplicate" in reasons["6"]
    assert "missing image" in reasons["7"]
    assert all(e["where"].startswith(str(d / "manifest.jsonl")) for e in res.errors)
    with pytest.raises(ConfigError, match="manifest.jsonl"):
        load_benchmark(str(tmp_path / "empty"))


def test_unknown_family_or_difficulty(tmp_path):
    with pytest.raises(KeyError, match="unknown synth family"):
        build_samples(["mazes"], None, 1, 0)
    with pytest.raises(ValueError, match="difficulty"):
        build_samples(["maze"], ["extreme"], 1, 0)
    assert default_families()[:4] == ["maze", "symmetry", "sorting", "connect"]


def test_protocol_end_to_end(tmp_path):
    from vreason.core.registry import benchmarks, load_builtins
    from vreason.core.scoring import ScoreContext

    load_builtins()
    cls = benchmarks.get("synth")
    proto = cls(families="maze,sorting", difficulties="easy", per_task="2", seed="3", run_dir=str(tmp_path),
                **SMALL_SYNTH)
    res = proto.load()
    assert not res.errors and [s.id for s in res.samples] == [
        "maze-easy-000", "maze-easy-001", "sorting-easy-000", "sorting-easy-001"]
    assert all(os.path.isfile(s.resolve(s.input_image)) for s in res.samples)
    assert proto.generator("sora") is None
    (scorer,) = proto.scorers()
    assert scorer.kind == "cpu" and scorer.name == "synth-verifier"
    ctx = ScoreContext(run_dir=str(tmp_path))
    rows = []
    for model in ("oracle", "static"):
        gen = proto.generator(model)
        for s in res.samples:
            v = gen.generate(s, 0, str(tmp_path / "videos" / model / f"{s.id}__0.mp4"))
            for sc in scorer.score(s, v, ctx):
                row = sc.model_dump(mode="json")
                row["evidence"] = json.dumps(row["evidence"])
                row.update(frame_policy="all", judge=None, benchmark="synth", category=s.category, task=s.task,
                           difficulty=s.difficulty, mode="ti2v")
                rows.append(row)
    df = pd.DataFrame(rows)
    assert df.groupby("model")["passed"].mean().to_dict() == {"oracle": 1.0, "static": 0.0}
    agg = proto.aggregate(df, res.samples, str(tmp_path / "report"))
    overall = agg.tables["overall"].set_index("model")
    assert overall.loc["oracle", "pass_rate"] == 100.0 and overall.loc["static", "pass_rate"] == 0.0
    assert overall.loc["oracle", "score"] == 100.0 and overall.loc["static", "score"] == 0.0
    # a written benchmark folder loads through the protocol's `data` option
    write_benchmark(str(tmp_path / "bench"), ["connect"], ["hard"], 1, 0)
    res2 = cls(data=str(tmp_path / "bench")).load()
    assert [s.id for s in res2.samples] == ["connect-hard-000"]
