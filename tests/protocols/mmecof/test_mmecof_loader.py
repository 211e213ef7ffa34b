"""MME-CoF-Pro loader: default field map, YAML override, misfit message, hint inputs."""

from __future__ import annotations

import json
import os

import pytest

from _ruler_mmecof_fixtures import image
from vreason.core.errors import ConfigError
from vreason.protocols.mmecof.data import (
    CATEGORIES,
    VISUAL_HINT_CATEGORIES,
    canonical_category,
    hint_inputs,
    load_field_map,
    load_mmecof,
    parse_steps,
)

RECORDS = [
    {"id": "vd-001", "category": "Visual Detail Reasoning", "image": "img/vd1.png",
     "visual_hint_image": "img/vd1_hint.png", "prompt_no_hint": "Zoom into the sign and read it.",
     "prompt_text_hint": "Zoom into the sign and read it. First find the sign at the top left.",
     "prompt_visual_hint": "Zoom into the boxed sign and read it. First find the sign at the top left.",
     "reasoning_steps": ["The camera moves to the sign", "The sign fills the frame", "The text is legible"]},
    {"id": "ph-002", "category": "physics-based", "image": "img/ph2.png",
     "prompt_no_hint": "Show the apple falling.", "text_hint": "It accelerates downward.",
     "reasoning_steps": "1. The apple detaches\n2) The apple falls\nStep 3: It lands on the ground"},
]


def write(root, records, name="data.jsonl"):
    for r in records:
        for k in ("image", "visual_hint_image", "img"):
            if k in r:
                image(os.path.join(root, r[k]))
    path = os.path.join(root, name)
    with open(path, "w") as fh:
        for r in records:
            fh.write(json.dumps(r) + "\n")
    return path


def test_default_field_map_loads(tmp_path):
    res = load_mmecof(write(str(tmp_path), RECORDS))
    assert res.errors == []
    vd, ph = res.samples
    assert (vd.id, vd.category, vd.benchmark) == ("vd-001", "Visual Detail", "mmecof")
    assert vd.prompt == "Zoom into the sign and read it."
    assert vd.prompt_variants["text"].endswith("top left.")
    assert vd.prompt_variants["visual"].startswith("Zoom into the boxed")
    assert vd.metadata["has_visual_hint"] and vd.metadata["visual_hint_image"] == "img/vd1_hint.png"
    assert [(i.id, i.kind) for i in vd.rubric] == [("s1", "step"), ("s2", "step"), ("s3", "step")]
    assert ph.category == "Physics-based" and not ph.metadata["has_visual_hint"]
    assert ph.prompt_variants == {"text": "Show the apple falling. It accelerates downward."}
    assert [i.text for i in ph.rubric] == ["The apple detaches", "The apple falls", "It lands on the ground"]


def test_hint_inputs(tmp_path):
    vd, ph = load_mmecof(write(str(tmp_path), RECORDS)).samples
    assert hint_inputs(vd, "none") == (vd.prompt, os.path.join(str(tmp_path), "img/vd1.png"))
    assert hint_inputs(vd, "visual")[1].endswith("vd1_hint.png")
    assert hint_inputs(ph, "text")[0].endswith("accelerates downward.")
    with pytest.raises(KeyError, match="no visual hint"):
        hint_inputs(ph, "visual")
    with pytest.raises(ConfigError):
        hint_inputs(ph, "both")


def test_yaml_field_map_override(tmp_path):
    rec = {"qid": 7, "task_type": "Table and Chart Reasoning", "img": "img/t.png", "instruction": "Find the max.",
           "instruction_th": "Find the max. Look at the bars.", "rubric_steps": ["Bar found", "Value read"]}
    path = write(str(tmp_path), [rec])
    assert "no field for 'prompt_text_hint'" not in str(load_mmecof(path).errors)  # default: other misfit
    fm = tmp_path / "fields.yaml"
    fm.write_text("id: qid\ncategory: task_type\nimage: img\nprompt_no_hint: instruction\n"
                  "prompt_text_hint: [instruction_th]\nsteps: rubric_steps\n")
    res = load_mmecof(path, field_map=str(fm))
    assert res.errors == []
    s = res.samples[0]
    assert (s.id, s.category, s.prompt_variants["text"]) == ("7", "Table & Chart", "Find the max. Look at the bars.")
    assert load_field_map({"id": "uid"}).id == ["uid"] and load_field_map(None).steps[0] == "reasoning_steps"
    bad = tmp_path / "bad.yaml"
    bad.write_text("idd: x\n")
    with pytest.raises(ConfigError, match="bad field map"):
        load_field_map(str(bad))


def test_misfit_record_lists_the_fields_found(tmp_path):
    rec = {"uid": "x1", "kind": "GUI", "picture": "a.png", "question": "Click OK.", "steps_list": ["a"]}
    res = load_mmecof(write(str(tmp_path), [rec, RECORDS[1]]))
    assert len(res.samples) == 1 and len(res.errors) == 1
    err = res.errors[0]
    assert err["where"].endswith("data.jsonl:1")
    assert "no field for 'id'" in err["reason"] and "tried id, sample_id" in err["reason"]
    assert "fields found: kind, picture, question, steps_list, uid" in err["reason"]


def test_missing_image_and_bad_steps_are_errors(tmp_path):
    recs = [dict(RECORDS[1], id="a", image="img/none.png"), dict(RECORDS[1], id="b", reasoning_steps=[3, 4]),
            dict(RECORDS[1], id="c", reasoning_steps=[]), RECORDS[1], dict(RECORDS[1])]
    path = write(str(tmp_path), recs[1:])
    with open(path, "a") as fh:
        fh.write(json.dumps(recs[0]) + "\n")
    res = load_mmecof(path)
    reasons = " | ".join(e["reason"] for e in res.errors)
    assert "img/none.png' does not exist" in reasons and "is not text" in reasons
    assert "duplicate id ph-002" in reasons and [s.id for s in res.samples] == ["ph-002"]
    assert "sample c: no reasoning steps" in reasons


def test_parse_steps_and_categories():
    assert parse_steps('["1. a", "2. b"]') == ["a", "b"]
    assert parse_steps([{"step": "x"}, {"text": "y"}]) == ["x", "y"]
    assert len(CATEGORIES) == 16 and set(VISUAL_HINT_CATEGORIES) <= set(CATEGORIES) and len(VISUAL_HINT_CATEGORIES) == 8
    assert canonical_category("4D Dynamics Reasoning") == "4D Dynamics"
    assert canonical_category("Natural Science Domain") == "Natural Science"
    assert canonical_category("Knitting") is None


def test_parquet_and_json_inputs(tmp_path):
    import pandas as pd

    write(str(tmp_path), RECORDS)
    pd.DataFrame([RECORDS[0]]).to_parquet(tmp_path / "d.parquet")
    assert load_mmecof(str(tmp_path / "d.parquet")).samples[0].id == "vd-001"
    (tmp_path / "d.json").write_text(json.dumps({"data": RECORDS}))
    assert len(load_mmecof(str(tmp_path / "d.json")).samples) == 2
