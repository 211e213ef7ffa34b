"""Every judged protocol runs end to end offline with ``--judge mock`` on its tiny fixture: the run exits 0,
every judged unit is scored (no reply failed to parse), the judged scores are not all equal, and the
manifest, the report and the terminal tables say the judge is a mock. Workers 1 and 4 give the same scores."""

from __future__ import annotations

import json
import os

import pytest
from typer.testing import CliRunner

from vreason.cli.main import app
from vreason.store import RunStore


def _rise(root: str) -> list[str]:
    from fixtures_rise import write_dataset, write_videos

    data = write_dataset(os.path.join(root, "RISE"))
    videos = os.path.join(root, "videos")
    write_videos(videos, "good", good=True)
    return ["rise", "--data", data, "--videos", videos, "--models", "good"]


def _ruler(root: str) -> list[str]:
    from _ruler_mmecof_fixtures import ruler_dataset, ruler_videos
    from vreason.protocols.ruler.protocol import RulerProtocol

    data = ruler_dataset(os.path.join(root, "data"))
    videos = os.path.join(root, "videos")
    ruler_videos(videos, ["m1"], RulerProtocol(data=data).load().samples)
    return ["ruler", "--data", data, "--videos", videos, "--models", "m1"]


def _mmecof(root: str) -> list[str]:
    from _ruler_mmecof_fixtures import moving_video
    from test_mmecof_loader import RECORDS, write

    data = write(os.path.join(root, "d"), RECORDS)
    videos = os.path.join(root, "videos")
    for r in RECORDS:
        moving_video(os.path.join(videos, "vm", f"{r['id']}__0.mp4"), n=30, fps=24)
    return ["mmecof", "--data", data, "--videos", videos, "--models", "vm"]


def _tivibench(root: str) -> list[str]:
    from _tivibench_fixtures import release, video

    qs = [{"text": "Is the wrench picked up?", "expected": "yes"}, {"text": "Does the nut fall off?", "expected": "no"}]
    ids = [f"easy_tool_00{i}" for i in range(1, 7)]
    data = release(os.path.join(root, "data"),
                   prompts={"AT": {"data": [{"id": k, "text": f"Pick up the wrench {k}."} for k in ids]}},
                   annotations=[{"key": k, "dimension": "AT", "task_type": "tool", "difficulty": "easy",
                                 "metric": {"family": "vlm_qa", "questions": qs}} for k in ids])
    videos = os.path.join(root, "vids")
    for k in ids:
        video(os.path.join(videos, f"AT_{k}", f"AT_{k}-0.mp4"))
    return ["tivibench", "--data", data, "--videos", videos, "--models", "mine", "--seeds", "0"]


def _pai_g(root: str) -> list[str]:
    from _pai_gu_fixtures import write_g_dataset, write_g_videos

    data = write_g_dataset(os.path.join(root, "G"))
    videos = os.path.join(root, "videos")
    write_g_videos(videos, ["av_0001", "robot_0002", "physics_0003"])
    return ["pai-g", "--data", data, "--videos", videos, "--models", "m1", "--opt", "quality=false"]


def _pai_u(root: str) -> list[str]:
    from _pai_gu_fixtures import U_ITEMS, write_u_dataset

    data = write_u_dataset(os.path.join(root, "U"), corrupt=None)
    with open(os.path.join(data, "test.jsonl"), "w", encoding="utf-8") as fh:  # the four valid items only
        for it in U_ITEMS[:4]:
            fh.write(json.dumps(it) + "\n")
    return ["pai-u", "--data", data, "--models", "cosmos-reason1"]


PROTOCOLS = {"rise": _rise, "ruler": _ruler, "mmecof": _mmecof, "tivibench": _tivibench, "pai-g": _pai_g,
             "pai-u": _pai_u}


_FIXTURES: dict[str, list[str]] = {}
"""Each test's fixture (data + videos), written once: a second write of the same frames may encode to other bytes
(x264's threads), and then the mock judge, whose replies hash the frames' pixels, answers otherwise."""


def _run(tmp_path, name: str, workers: int, quality: float = 0.5):
    root = str(tmp_path / "fixture")
    if root not in _FIXTURES:
        _FIXTURES[root] = PROTOCOLS[name](root)
    args = _FIXTURES[root]
    runs = str(tmp_path / "runs")
    run_name = f"w{workers}"
    res = CliRunner().invoke(app, ["run", *args, "--runs", runs, "--name", run_name, "--judge",
                                   f"mock:quality={quality},seed=1", "--workers", str(workers),
                                   "--opt", "n_boot=50"])
    return res, os.path.join(runs, run_name)


def _judged(run_dir: str):
    with RunStore(run_dir, create=False) as st:
        df = st.scores_frame()
    return df[df.judge.notna()].sort_values(["sample_id", "model", "seed", "scorer", "metric"])


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", sorted(PROTOCOLS))
def test_mock_judge_runs_every_judged_protocol_and_is_labelled(tmp_path, name):
    res, run_dir = _run(tmp_path, name, workers=1)
    assert res.exit_code == 0, res.output
    df = _judged(run_dir)
    assert len(df) >= 2, f"{name}: no judged score"
    assert (df.status == "ok").all(), df[df.status != "ok"][["sample_id", "scorer", "status", "reason"]]
    assert df.judge.str.startswith("mock:").all()
    assert df.value.nunique() > 1, f"{name}: every judged score is {df.value.iloc[0]}"
    manifest = json.load(open(os.path.join(run_dir, "manifest.json")))
    assert "mock" in json.dumps(manifest.get("judges") or manifest)
    assert "judge: mock (not a real model)" in res.output  # the terminal tables
    report = os.path.join(run_dir, "report")
    for f in ("report.md", "index.html"):
        assert "judge: mock (not a real model)" in open(os.path.join(report, f), encoding="utf-8").read(), f
    tables = [f for f in os.listdir(report) if f.endswith(".md") and f != "report.md"]
    assert tables, os.listdir(report)
    for f in tables:  # every table file says so too (once), and the summary
        assert open(os.path.join(report, f), encoding="utf-8").read().count("judge: mock (not a real model)") == 1, f
    assert json.load(open(os.path.join(report, "summary.json")))["judge_note"].startswith("judge: mock")


def test_mock_label_reaches_the_python_api_tables(tmp_path):
    from vreason.api import evaluate

    args = _rise(str(tmp_path / "fixture"))
    opts = dict(zip(args[1::2], args[2::2], strict=True))
    res = evaluate("rise", [opts["--models"]], data=opts["--data"], videos=opts["--videos"],
                   judge="mock:quality=0.5,seed=1", runs=str(tmp_path / "runs"), workers=1,
                   options={"n_boot": 50}, quiet=True)
    assert res.exit_code == 0 and res.tables
    assert res.note and res.note.startswith("judge: mock (not a real model)")
    assert all(t.attrs.get("note") == res.note for t in res.tables.values())
    report = os.path.join(res.run_dir, "report")
    for f in (f for f in os.listdir(report) if f.endswith(".md")):
        assert open(os.path.join(report, f), encoding="utf-8").read().count("judge: mock (not a real model)") == 1, f


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", ["rise", "mmecof"])
def test_mock_scores_do_not_depend_on_workers(tmp_path, name):
    cols = ["sample_id", "model", "seed", "scorer", "metric", "value", "status"]
    one, run1 = _run(tmp_path, name, workers=1)
    four, run4 = _run(tmp_path, name, workers=4)
    assert one.exit_code == 0 and four.exit_code == 0, one.output + four.output
    a, b = _judged(run1)[cols].reset_index(drop=True), _judged(run4)[cols].reset_index(drop=True)
    assert len(a) and a.equals(b)
