"""RISE-Video loader: the released v5.json format, optional keys, malformed records, video paths."""

from __future__ import annotations

import json
import os

import pytest

from fixtures_rise import GENERIC, write_dataset
from vreason.protocols.rise.data import category_of, load_rise, parse_extra_frame, rise_video_path
from vreason.protocols.rise.protocol import RiseProtocol


@pytest.fixture()
def data(tmp_path):
    return write_dataset(str(tmp_path / "RISE"))


def test_loads_fixture_exactly(data):
    res = load_rise(data)
    assert res.errors == []
    assert len(res.samples) == len(GENERIC) + 3
    by = {s.id: s for s in res.samples}
    com = by["com_1"]
    assert com.benchmark == "rise" and com.category == "commonsense" and com.task == "Commonsense Knowledge"
    assert com.prompt == "Show what happens next in scene com_1."
    assert [r.text for r in com.rubric] == ["Does the video show step 1 of com_1?",
                                            "Does the video show step 2 of com_1?"]
    assert all(r.kind == "question" and r.expected == "yes" for r in com.rubric)
    assert com.metadata == {"extra_frame": 2, "ref_path": "", "color_name": "", "reverse": False,
                            "intent_classification": "REALISTIC", "sub_task": "Commonsense Knowledge"}
    assert os.path.isfile(com.resolve(com.input_image))
    # optional keys: "reverse": "TRUE" as a string, and defaults when absent
    assert by["dom_1"].metadata["reverse"] is True
    assert by["com_2"].metadata["reverse"] is False
    assert by["com_2"].metadata["intent_classification"] == "REALISTIC"
    assert by["per_2"].metadata["intent_classification"] == "FANTASY"
    assert by["com_2"].metadata["extra_frame"] == -1
    # puzzles
    assert by["log_1"].metadata["extra_frame"] == "maze" and by["log_1"].category == "logical"
    sym = by["log_2"]
    assert sym.metadata["color_name"] == "blue" and os.path.isfile(sym.resolve(sym.reference_image))
    gt = by["log_4"]
    assert gt.metadata["extra_frame"] == "gt" and all(r.kind == "focus" for r in gt.rubric)
    assert {s.category for s in res.samples} == {"commonsense", "subject", "perceptual", "societal",
                                                "logical", "experiential", "spatial", "temporal"}


def test_json_path_or_folder(data):
    assert len(load_rise(os.path.join(data, "v5.json")).samples) == len(load_rise(data).samples)
    with pytest.raises(FileNotFoundError):
        load_rise(os.path.join(data, "nowhere"))


def _write(tmp_path, records):
    p = tmp_path / "v5.json"
    p.write_text(json.dumps(records))
    return str(tmp_path)


def _rec(**kw):
    rec = {"task_id": "tem_9", "text": "t", "image_path": "", "sub_task": "Temporal Knowledge",
           "questions": ["q?"], "extra_frame": 2}
    rec.update(kw)
    return rec


def test_record_without_optional_keys(tmp_path):
    res = load_rise(_write(tmp_path, [_rec()]))
    assert res.errors == [] and res.samples[0].metadata["reverse"] is False
    assert res.samples[0].metadata["ref_path"] == "" and res.samples[0].input_image is None


@pytest.mark.parametrize("bad,needle", [
    ({"task_id": "xyz_1"}, "unknown category prefix 'xyz'"),
    ({"questions": "q?"}, "questions must be a list of strings"),
    ({"extra_frame": "maybe"}, "extra_frame 'maybe'"),
    ({"extra_frame": 0}, "not an fps > 0 or -1"),
    ({"extra_frame": "sym"}, "needs a ref_path"),
    ({"extra_frame": "sym", "ref_path": "gt.png", "color_name": "pink"}, "color_name"),
    ({"image_path": "images/none.png"}, "image_path 'images/none.png' not found"),
    ({"reverse": "sometimes"}, "reverse must be"),
    ({"task_id": "../etc"}, "unsafe task_id"),
])
def test_malformed_record_is_a_clear_error(tmp_path, bad, needle):
    records = [_rec(task_id="tem_1"), _rec(**bad), _rec(task_id="tem_3")]
    res = load_rise(_write(tmp_path, records))
    assert [s.id for s in res.samples] == ["tem_1", "tem_3"]
    [err] = res.errors
    assert err["index"] == "1" and err["file"].endswith("v5.json") and needle in err["reason"]


def test_missing_keys_and_duplicates(tmp_path):
    rec = _rec()
    del rec["questions"]
    res = load_rise(_write(tmp_path, [rec, 7, _rec(task_id="spa_1"), _rec(task_id="spa_1")]))
    reasons = [e["reason"] for e in res.errors]
    assert "missing key(s) questions" in reasons[0]
    assert "not an object" in reasons[1]
    assert "duplicate task_id 'spa_1'" in reasons[2]
    assert [s.id for s in res.samples] == ["spa_1"]


def test_file_level_errors(tmp_path):
    (tmp_path / "v5.json").write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_rise(str(tmp_path))
    (tmp_path / "v5.json").write_text('{"a": 1}')
    with pytest.raises(ValueError, match="expected a JSON list"):
        load_rise(str(tmp_path))


def test_category_and_extra_frame_parsing():
    assert category_of("dom_12") == "subject" and category_of("log_1") == "logical"
    assert parse_extra_frame("2") == 2 and parse_extra_frame("-1") == -1 and parse_extra_frame("GT") == "gt"
    with pytest.raises(ValueError):
        parse_extra_frame(True)


def test_video_paths(tmp_path, data):
    samples = {s.id: s for s in load_rise(data).samples}
    vroot = tmp_path / "videos"
    (vroot / "mA" / "commonsense").mkdir(parents=True)
    (vroot / "mA" / "commonsense" / "com_1.mp4").write_bytes(b"x")
    (vroot / "mA" / "domain_knowledge").mkdir(parents=True)  # the code's folder name
    (vroot / "mA" / "domain_knowledge" / "dom_1.mp4").write_bytes(b"x")
    (vroot / "mA" / "commonsense" / "com_10.mp4").write_bytes(b"x")  # another sample's file
    assert rise_video_path(str(vroot), "mA", samples["com_1"]).endswith(os.path.join("commonsense", "com_1.mp4"))
    assert rise_video_path(str(vroot), "mA", samples["dom_1"]).endswith("dom_1.mp4")
    assert rise_video_path(str(vroot), "mA", samples["com_2"]) is None
    assert rise_video_path(str(vroot), "mB", samples["com_1"]) is None
    # the JSON's video_path: relative to {videos}/{model} or {videos}; never another model's folder
    s = samples["per_1"].model_copy(update={"metadata": {**samples["per_1"].metadata,
                                                         "video_path": "mA/custom/clip.mp4"}})
    (vroot / "mA" / "custom").mkdir()
    (vroot / "mA" / "custom" / "clip.mp4").write_bytes(b"x")
    assert rise_video_path(str(vroot), "mA", s).endswith(os.path.join("mA", "custom", "clip.mp4"))
    assert rise_video_path(str(vroot), "mB", s) is None
    proto = RiseProtocol(data=data, videos=str(vroot))
    assert proto.video_path("mA", samples["com_1"]) is not None


def test_protocol_load_and_options(data):
    proto = RiseProtocol(data=data, videos="v")
    res = proto.load()
    assert len(res.samples) == len(GENERIC) + 3 and res.errors == []
    names = [s.name for s in proto.scorers()]
    assert names == ["rise_ra", "rise_puzzle", "rise_tc", "rise_pr", "rise_vq"]
    from vreason.core.errors import ConfigError

    with pytest.raises(ConfigError):
        RiseProtocol(data=data, ra_mode="other")
    with pytest.raises(ConfigError):
        RiseProtocol().load()


def test_locate_video_for_runner(tmp_path, data):
    samples = {s.id: s for s in load_rise(data).samples}
    vroot = tmp_path / "videos"
    (vroot / "mA" / "temporal").mkdir(parents=True)
    (vroot / "mA" / "temporal" / "tem_1.mp4").write_bytes(b"x")
    proto = RiseProtocol(data=data, videos=str(vroot))
    assert proto.layout == "rise"
    assert proto.locate_video("mA", samples["tem_1"], 0) == str(vroot / "mA" / "temporal" / "tem_1.mp4")
    expected = proto.locate_video("mA", samples["tem_2"], 0)
    assert expected.endswith(os.path.join("mA", "temporal", "tem_2.mp4")) and not os.path.exists(expected)
    assert proto.locate_video("mA", samples["tem_1"], 1) is None
