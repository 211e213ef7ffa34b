"""RULER-Bench loader: data.jsonl and the parquet variant, per-record errors, video layout."""

from __future__ import annotations

import json
import os

import pytest

from _ruler_mmecof_fixtures import RULER_RECORDS, ruler_dataset
from vreason.protocols.ruler.data import CATEGORIES, load_ruler, metrics_for, parse_checklist, ruler_video_path


def test_jsonl_loads_every_field(tmp_path):
    path = ruler_dataset(str(tmp_path))
    res = load_ruler(path)
    assert res.errors == []
    by_id = {s.id: s for s in res.samples}
    assert sorted(by_id) == ["color-1", "maze-3", "physics-0"]
    phys, maze, color = by_id["physics-0"], by_id["maze-3"], by_id["color-1"]
    assert (phys.category, phys.task, phys.mode.value) == ("science", "physics", "t2v")
    assert (maze.mode.value, color.mode.value) == ("i2v", "v2v")
    assert phys.input_image is None and phys.reference_image is None
    assert maze.resolve(maze.input_image) == os.path.join(str(tmp_path), "images/maze_3.png")
    assert maze.reference_image == "gt/maze_3.png"
    assert color.input_video == "videos/color_1.mp4"
    assert phys.metadata["implicit_explanation"].startswith("Communicating vessels")
    assert phys.metadata["index"] == 0
    assert [(i.id, i.kind, i.dimension) for i in phys.rubric] == [
        ("q1", "checklist", "Instruction Following"), ("q2", "checklist", "Visual Consistency"),
        ("q3", "checklist", "Visual Fidelity"), ("q4", "checklist", "Rule Coherence"),
        ("q5", "checklist", "Rule Coherence")]
    assert phys.rubric[3].text == "Do the two levels end equal?"
    assert {i.dimension for i in color.rubric} == {"Visual Consistency", "Visual Fidelity", "Rule Coherence"}


def test_parquet_variant_with_string_checklist_matches_jsonl(tmp_path):
    a = load_ruler(ruler_dataset(str(tmp_path / "j")))
    b = load_ruler(ruler_dataset(str(tmp_path / "p"), parquet=True))
    assert b.errors == []
    strip = lambda s: s.model_dump(exclude={"root"})  # noqa: E731
    assert [strip(s) for s in a.samples] == [strip(s) for s in b.samples]


def test_folder_path_and_categories_constant(tmp_path):
    ruler_dataset(str(tmp_path))
    assert len(load_ruler(str(tmp_path)).samples) == 3
    assert sum(len(t) for t in CATEGORIES.values()) == 40 and len(CATEGORIES) == 6
    assert metrics_for("vision rule") == ("VC", "VF", "RC")
    assert metrics_for("science") == ("IF", "VC", "VF", "RC")


def test_bad_records_give_clear_errors_and_the_rest_loads(tmp_path):
    good = dict(RULER_RECORDS[0], index=7)
    bad_metric = dict(RULER_RECORDS[0], index=8, checklist=[{"Aesthetics": "Is it pretty?"}])
    two_keys = dict(RULER_RECORDS[0], index=9, checklist=[{"Rule Coherence": "a", "Visual Fidelity": "b"}])
    no_prompt = {k: v for k, v in RULER_RECORDS[0].items() if k != "prompt"}
    missing_img = dict(RULER_RECORDS[1], index=10, input_image_path="images/nope.png")
    lines = [json.dumps(good), "{not json", json.dumps(bad_metric), json.dumps(two_keys), json.dumps(no_prompt),
             json.dumps(missing_img), json.dumps(RULER_RECORDS[0])]
    path = ruler_dataset(str(tmp_path), extra_lines=lines)
    res = load_ruler(path)
    assert "physics-7" in {s.id for s in res.samples}
    reasons = {e["where"].rsplit(":", 1)[-1]: e["reason"] for e in res.errors}
    assert all(e["where"].startswith(path) for e in res.errors)
    assert "not valid JSON" in reasons["5"]
    assert "unknown metric 'Aesthetics'" in reasons["6"]
    assert "exactly one key" in reasons["7"]
    assert "missing field(s) prompt" in reasons["8"] and "fields found" in reasons["8"]
    assert "input_image_path 'images/nope.png' does not exist" in reasons["9"]
    assert "duplicate id physics-0" in reasons["10"]
    assert len(res.samples) == 4


def test_parse_checklist_accepts_python_literal_and_rejects_empty():
    assert parse_checklist("[{'Rule Coherence': 'Q?'}]") == [("RC", "Q?")]
    assert parse_checklist([{"rule coherence": " Q? "}]) == [("RC", "Q?")]
    with pytest.raises(ValueError, match="non-empty list"):
        parse_checklist("[]")
    with pytest.raises(ValueError, match="empty question"):
        parse_checklist([{"Visual Fidelity": ""}])


def test_video_layout_and_pe_variant(tmp_path):
    rec = dict(RULER_RECORDS[0], enhanced_prompt="Water flows until both arms are level.")
    (tmp_path / "data.jsonl").write_text(json.dumps(rec) + "\n")
    s = load_ruler(str(tmp_path)).samples[0]
    assert s.prompt_variants == {"pe": "Water flows until both arms are level."}
    assert s.prompt_for("pe").startswith("Water flows")
    assert ruler_video_path("/v", "veo", s) == os.path.join("/v", "veo", "physics", "0.mp4")


def test_missing_file_is_one_error(tmp_path):
    res = load_ruler(str(tmp_path / "absent.jsonl"))
    assert res.samples == [] and "no such file" in res.errors[0]["reason"]
