import json

import pytest

from conftest import gradient_frames
from vreason.core.records import Sample
from vreason.data.importer import read_manifest, scan
from vreason.data.preflight import preflight
from vreason.frames import write_video


def _vid(path, n=8):
    path.parent.mkdir(parents=True, exist_ok=True)
    write_video(str(path), gradient_frames(n, 32, 32), fps=8)


def test_rise_convention_with_missing_extra_corrupt_short(tmp_path):
    root = tmp_path / "videos"
    _vid(root / "m1" / "logical" / "log_1.mp4")
    _vid(root / "m1" / "temporal" / "tem_2.mp4", n=1)  # too short
    (root / "m1" / "temporal").mkdir(parents=True, exist_ok=True)
    (root / "m1" / "temporal" / "tem_3.mp4").write_bytes(b"garbage" * 50)  # undecodable
    _vid(root / "m1" / "temporal" / "zzz_9.mp4")  # extra: not in the benchmark
    res = scan(root, "rise")
    assert not res.errors
    samples = [Sample(id=i, benchmark="rise") for i in ("log_1", "tem_2", "tem_3", "com_4")]
    rep = preflight(samples, res.videos, min_frames=2)
    (m,) = rep.models
    assert m.model == "m1" and m.expected == 4 and m.ok == 1
    assert m.missing == ["com_4#0"]
    assert [d["video"] for d in m.too_short] == ["tem_2#0"]
    assert [d["video"] for d in m.undecodable] == ["tem_3#0"] and "tem_3.mp4" in m.undecodable[0]["reason"]
    assert len(m.extra) == 1 and "zzz_9" in m.extra[0]
    assert m.fps == {"8": 2} and m.resolution == {"32x32": 2}  # every decodable video
    assert not rep.clean


def test_ruler_tivibench_pai_conventions(tmp_path):
    _vid(tmp_path / "r" / "m" / "Chess Move" / "3.mp4")
    _vid(tmp_path / "r" / "m" / "Chess Move" / "notanindex.mp4")
    res = scan(tmp_path / "r", "ruler")
    assert [v.sample_id for v in res.videos] == ["Chess_Move-3"]
    assert len(res.errors) == 1 and "notanindex" in res.errors[0]["where"]

    for k in range(3):
        _vid(tmp_path / "t" / "SPA_easy_maze_001" / f"SPA_easy_maze_001-{k}.mp4")
    _vid(tmp_path / "t" / "SPA_easy_maze_001" / "OTHER_002-0.mp4")
    res = scan(tmp_path / "t", "tivibench", model="wan")
    assert sorted(v.seed for v in res.videos) == [0, 1, 2]
    assert {v.sample_id for v in res.videos} == {"SPA_easy_maze_001"} and len(res.errors) == 1

    _vid(tmp_path / "p" / "vid7__0.mp4")
    _vid(tmp_path / "p" / "vid7__4.mp4")
    _vid(tmp_path / "p" / "..__1.mp4")
    res = scan(tmp_path / "p", "pai", model="cosmos")
    assert sorted((v.sample_id, v.seed) for v in res.videos) == [("vid7", 0), ("vid7", 4)]
    assert any("odd id" in e["reason"] for e in res.errors)
    with pytest.raises(ValueError, match="--model"):
        scan(tmp_path / "p", "pai")


def test_ambiguous_files_are_both_rejected(tmp_path):
    _vid(tmp_path / "m" / "a__0.mp4")
    _vid(tmp_path / "m" / "a__0.webm")
    res = scan(tmp_path, "vreason")
    assert res.videos == [] and len(res.errors) == 2 and "ambiguous" in res.errors[0]["reason"]


def test_manifest_jsonl_and_csv(tmp_path):
    _vid(tmp_path / "v" / "one.mp4")
    lines = [
        {"sample_id": "a", "model": "m", "seed": 0, "path": "v/one.mp4"},
        {"sample_id": "../x", "model": "m", "path": "v/one.mp4"},
        {"sample_id": "b", "model": "m", "path": "v/absent.mp4"},
        {"sample_id": "c", "path": "v/one.mp4"},
        {"sample_id": "d", "model": "m", "seed": "two", "path": "v/one.mp4"},
    ]
    man = tmp_path / "m.jsonl"
    man.write_text("\n".join(json.dumps(x) for x in lines) + "\n{not json\n")
    res = read_manifest(man)
    ok = {v.sample_id: v for v in res.videos}
    assert ok["a"].status.value == "ok" and ok["a"].path.endswith("one.mp4")
    assert ok["b"].status.value == "missing" and "absent.mp4" in ok["b"].reason
    reasons = " | ".join(e["where"] + " " + e["reason"] for e in res.errors)
    assert "m.jsonl:2" in reasons and "odd id" in reasons
    assert "m.jsonl:4" in reasons and "model" in reasons
    assert "m.jsonl:5" in reasons and "seed" in reasons
    assert "m.jsonl:6" in reasons and "malformed" in reasons
    # missing listed file → missing in preflight, never another file
    rep = preflight([Sample(id="a", benchmark="x"), Sample(id="b", benchmark="x")], res.videos)
    assert rep.models[0].missing == ["b#0"] and rep.models[0].ok == 1

    csvp = tmp_path / "m.csv"
    csvp.write_text("sample_id,model,seed,path\na,m,1,v/one.mp4\n")
    res = read_manifest(csvp)
    assert [(v.sample_id, v.seed) for v in res.videos] == [("a", 1)]
