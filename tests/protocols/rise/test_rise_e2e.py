"""End to end on the fixture dataset: load → every scorer (judge = loopback server) → both tables."""

from __future__ import annotations

import asyncio
import json
import os

import numpy as np
import pandas as pd
import pytest

from fixtures_rise import write_dataset, write_videos
from vreason.core.records import Score, ScoreStatus, Video
from vreason.core.scoring import ScoreContext
from vreason.judge.retry import RetryPolicy
from vreason.judge.spec import make_judge
from vreason.protocols.rise.protocol import RiseProtocol
from vreason.testing.loopback import LoopbackServer

FAST = RetryPolicy(max_retries=2, base=0.01, cap=0.1, seed=0)


def judge_script(good: bool):
    """Replies by template (recognised from the system prompt)."""

    def script(body):
        system = body["messages"][0]["content"]
        texts = [p["text"] for p in body["messages"][-1]["content"] if p["type"] == "text"]
        if "answer questions about a video" in system:
            return json.dumps([{"question": t, "answer": "Yes" if good else "No", "reason": "r"} for t in texts])
        if "ground-truth (reference) image" in system:
            return json.dumps({"Question": texts[-1], "Score": 5 if good else 1, "Reason": "r"})
        if "Final Score" in system:
            return json.dumps({"Instruction": "i", "Final Score": 5 if good else 2, "Reason": "r"})
        if "physics" in system:
            return json.dumps({"score": 5 if good else 3, "justification": "j"})
        if "image quality" in system:
            return json.dumps({"score": 3, "justification": "j"}) if good else "cannot tell"
        return "unexpected request"

    return script


def _rows(scores: list[Score], sample) -> list[dict]:
    out = []
    for s in scores:
        d = s.model_dump(mode="json")
        ev = d.pop("evidence")
        d.update(frame_policy=ev.get("frame_policy"), judge=(ev.get("judge") or {}).get("judge"),
                 benchmark=sample.benchmark, category=sample.category, task=sample.task,
                 difficulty=sample.difficulty, mode=sample.mode.value, evidence=json.dumps(ev))
        out.append(d)
    return out


async def _score_model(proto, samples, model, client, run_dir):
    ctx = ScoreContext(run_dir=run_dir, judges={"default": client})
    rows = []
    try:
        for sample in samples:
            path = proto.video_path(model, sample)
            for scorer in proto.scorers():
                if not scorer.applies(sample):
                    continue
                if path is None:  # what the runner does for a missing video
                    got = [Score.failed(ScoreStatus.error, f"video missing for {sample.id}", sample_id=sample.id,
                                        model=model, seed=0, scorer=scorer.name, metric=m) for m in scorer.metrics]
                else:
                    video = Video(sample_id=sample.id, model=model, path=path)
                    if scorer.kind == "io":
                        got = await scorer.ascore(sample, video, ctx)
                    else:
                        got = scorer.score(sample, video, ctx.for_worker())
                rows += _rows(got, sample)
    finally:
        await client.judge.aclose()
    return rows


def test_end_to_end(tmp_path):
    data = write_dataset(str(tmp_path / "RISE"))
    videos = str(tmp_path / "videos")
    write_videos(videos, "good", good=True)
    write_videos(videos, "weak", good=False)
    os.remove(os.path.join(videos, "weak", "temporal", "tem_2.mp4"))
    proto = RiseProtocol(data=data, videos=videos, n_boot=200)
    load = proto.load()
    assert load.errors == [] and len(load.samples) == 18
    rows = []
    for model, good in (("good", True), ("weak", False)):
        with LoopbackServer(judge_script(good)) as srv:
            client = make_judge({"backend": "vllm", "model": f"judge-{model}", "base_url": srv.base_url,
                                 "timeout": 5}, retry=FAST, reasks=1)
            rows += asyncio.run(_score_model(proto, load.samples, model, client, str(tmp_path / "run")))
    df = pd.DataFrame(rows)
    # 18 samples: RA for all, TC + VQ for all, PR for the 14 non-logical → 68 rows per model
    assert (df.groupby("model").size() == 68).all()
    good = df[df.model == "good"]
    assert (good.status == "ok").all() and (good.normalized == 1.0).all()
    weak = df[df.model == "weak"]
    assert set(weak[weak.metric == "vq"].status) == {"unscored", "error"}
    assert set(weak[weak.sample_id == "tem_2"].status) == {"error"}
    maze = weak[(weak.sample_id == "log_1") & (weak.metric == "ra")].iloc[0]
    assert maze.value == 0.5  # the static maze video: no wall crossed, goal not reached (released rule)
    out = str(tmp_path / "report")
    res = proto.aggregate(df, load.samples, out)
    t1 = res.tables["rise_table1"].set_index("Model")
    assert t1.loc["good", "W.Score"] == 100.0 and t1.loc["good", "Accuracy"] == 100.0  # numbers, not text
    assert np.isnan(t1.loc["weak", "VQ"]) and t1.loc["weak", "Accuracy"] == 0.0
    assert t1.loc["weak", "Accuracy low"] <= t1.loc["weak", "Accuracy"] <= t1.loc["weak", "Accuracy high"]
    assert "VQ 18" in t1.loc["weak", "Unscored/error"]
    nums = pd.read_csv(os.path.join(out, "rise_table1_numeric.csv")).set_index("model")
    assert nums.loc["weak", "RA_error"] == 1 and nums.loc["weak", "VQ_unscored"] == 17
    assert nums.loc["weak", "TC"] == pytest.approx(25.0)  # TC 2 everywhere → (2 − 1)/4
    t2 = pd.read_csv(os.path.join(out, "rise_table2.csv")).set_index("Model")
    assert t2.loc["good", "Logical WS"] == 100.0
    assert "100.00 [" in open(os.path.join(out, "rise_table2.md")).read()  # the paper's cells in Markdown
    for f in ("rise_table1.md", "rise_table2.md", "rise_table1.csv", "rise_table2.csv"):
        assert os.path.getsize(os.path.join(out, f)) > 0
    recs = [json.loads(x) for x in open(os.path.join(out, "rise_samples.jsonl"))]
    assert len(recs) == 36
    com = next(r for r in recs if r["model"] == "good" and r["sample_id"] == "com_1")
    assert json.loads(com["metrics"]["ra"]["judge"]["raw_reply"])[0]["answer"] == "Yes"
    assert com["metrics"]["ra"]["frame_policy"] == "fps:2+linspace"
    board = next(r for r in recs if r["model"] == "good" and r["sample_id"] == "log_4")
    assert board["metrics"]["ra"]["details"]["mode"] == "reference"
    vq = next(r for r in recs if r["model"] == "weak" and r["sample_id"] == "com_1")["metrics"]["vq"]
    assert vq["status"] == "unscored" and vq["judge"]["raw_reply"] == "cannot tell"
