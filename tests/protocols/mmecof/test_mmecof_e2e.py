"""MME-CoF-Pro end to end: three hint runs (load → ascore against the loopback judge), then one
aggregate() over them writing Tables 1/2/5/6 and the paired hint deltas."""

from __future__ import annotations

import asyncio
import json

import pytest

from _ruler_mmecof_fixtures import client_for, keyed_script, moving_video, scores_frame
from test_mmecof_loader import RECORDS, write
from vreason.core.records import Video
from vreason.core.registry import benchmarks, load_builtins
from vreason.core.scoring import ScoreContext
from vreason.protocols.mmecof.protocol import MmeCofProtocol
from vreason.store import RunStore
from vreason.testing.loopback import LoopbackServer

Y, N = json.dumps({"reason": "r", "completed": "yes"}), json.dumps({"reason": "r", "completed": "no"})
Q = json.dumps({"consistency": 9, "temporal_consistency": 9, "visual_stability": 0, "hallucination": 9,
                "physics_grounding": 0})
QT = json.dumps({"consistency": 0, "temporal_consistency": 9, "visual_stability": 0, "hallucination": 9,
                 "physics_grounding": 0})
STEPS = {  # hint → step text → reply
    "none": {"camera moves": N, "fills the frame": N, "legible": N, "detaches": Y, "apple falls": N, "lands": N},
    "text": {"camera moves": Y, "fills the frame": Y, "legible": N, "detaches": Y, "apple falls": Y, "lands": Y},
    "visual": {"camera moves": Y, "fills the frame": Y, "legible": Y},
}


async def _run(proto, samples, videos, client):
    ctx = ScoreContext(judges={"default": client})
    out = []
    for scorer in proto.scorers():
        for s in samples:
            out += await scorer.ascore(s, Video(sample_id=s.id, model="vm", path=videos[s.id]), ctx)
    return out


def test_mmecof_three_hint_runs_end_to_end(tmp_path):
    load_builtins()
    assert benchmarks.get("mmecof") is MmeCofProtocol
    data = write(str(tmp_path / "d"), RECORDS)
    frames = {}
    for hint in ("none", "text", "visual"):
        proto = MmeCofProtocol(data=data, hint=hint)
        samples = proto.load().samples
        videos = {s.id: moving_video(str(tmp_path / hint / f"{s.id}.mp4"), n=30, fps=24) for s in samples}
        rules = [(step, [reply]) for step, reply in STEPS[hint].items()]
        rules.append(("rate the visual quality", [QT if hint == "text" else Q]))
        with LoopbackServer(keyed_script(rules)) as srv:
            scores = asyncio.run(_run(proto, samples, videos, client_for(srv)))
        assert all(s.status.value == "ok" for s in scores)
        frames[hint] = scores_frame(scores, samples)
        if hint == "text":  # the text-hint run is read back from a run directory's result store
            with RunStore(str(tmp_path / "runs" / "text")) as store:
                store.put_samples(samples)
                for s in scores:
                    store.put_unit((s.sample_id, s.model, s.seed, s.scorer),
                                   [x for x in scores if (x.sample_id, x.scorer) == (s.sample_id, s.scorer)])
    base = MmeCofProtocol(data=data, hint="none", n_boot=200,
                          compare_runs={"text": str(tmp_path / "runs" / "text"), "visual": frames["visual"]})
    samples = base.load().samples
    res = base.aggregate(frames["none"], samples, str(tmp_path / "out"))
    t1 = _shown(res, "mmecof_table1").set_index(["Category", "Metric"])["vm"]
    assert t1[("Visual Detail", "RS")] == "0.0(+66.7)"
    assert t1[("Physics-based", "RS")] == "33.3(+66.7)"
    assert t1[("Average", "RS")] == "16.7(+66.7)"
    assert t1[("Visual Detail", "CS")] == "100.0(-100.0)"  # text-hint video judged inconsistent
    assert t1[("Visual Detail", "Avg")] == "60.0(-20.0)"
    t2 = _shown(res, "mmecof_table2").set_index(["Category", "Metric"])["vm"]
    assert t2[("Visual Detail", "RS")] == "0.0(+100.0)" and ("Physics-based", "RS") not in t2.index
    t5 = _shown(res, "mmecof_table5").set_index(["Category", "Metric"])["vm"]
    assert t5[("Visual Detail", "VS")] == "0.0(0.0)"
    d = res.tables["mmecof_hint_deltas"].set_index(["comparison", "metric"])
    assert d.loc[("text - none", "RS"), "delta_macro"] == pytest.approx(200 / 3)
    assert d.loc[("visual - none", "RS"), "delta_macro"] == pytest.approx(100)
    assert d.loc[("visual - none", "RS"), "n_pairs"] == 1
    for f in ("mmecof_table1.csv", "mmecof_table2.csv", "mmecof_table5.csv", "mmecof_table6.csv",
              "mmecof_hint_deltas.csv", "mmecof_tables.md"):
        assert (tmp_path / "out" / f).exists()


def _shown(res, name):
    """The table as the report prints it (the paper's ``none(Δhint)`` cells from its numeric columns)."""
    from vreason.report.cells import formats_of, text_frame

    return text_frame(res.tables[name], formats_of(res.summary, name))[0]
