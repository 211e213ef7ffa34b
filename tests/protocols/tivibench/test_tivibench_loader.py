"""TiViBench loader: the release layout, prompt-file shapes, annotations, defaults and per-record errors."""

from __future__ import annotations

import json
import os

import pytest

from _tivibench_fixtures import BOX, QA, annotation, png, release
from vreason.core.errors import ConfigError
from vreason.protocols.tivibench.data import load_tivibench, normalise_key, task_of_key
from vreason.protocols.tivibench.protocol import TiviBenchProtocol


def _errors(res) -> str:
    return "\n".join(f"{e['where']} [{e['field']}] {e['reason']}" for e in res.errors)


def test_release_layout_loads_every_shape(tmp_path):
    res = load_tivibench(release(str(tmp_path)))
    assert not res.errors, _errors(res)
    by = {s.id: s for s in res.samples}
    assert sorted(by) == ["AT_easy_tool_001", "SL_medium_gamerule_001", "SV_easy_shape_001", "SV_hard_counting_002"]
    s = by["SV_easy_shape_001"]
    assert (s.benchmark, s.category, s.task, s.difficulty, s.mode.value) == ("tivibench", "SV", "shape", "easy", "i2v")
    assert s.prompt == "Fit the shape into the hole."
    assert s.input_image == "images/SV/easy_shape_001.png" and os.path.isfile(s.resolve(s.input_image))
    assert s.reference_image == "eval_cache/SV/easy_shape_001/end.png"
    assert s.metadata["metric"]["family"] == "region" and s.metadata["metric"]["threshold"] == 0.9
    assert s.metadata["metric_source"] == "annotation" and s.metadata["task_name"] == "Shape Fitting"
    # match-3 needs no per-sample parameters: the task type's default applies without an annotation
    g = by["SL_medium_gamerule_001"]
    assert g.metadata["metric_family"] == "match3" and g.metadata["metric_source"] == "default"
    assert by["AT_easy_tool_001"].metadata["metric"]["questions"][1]["expected"] == "no"


def test_missing_annotation_for_a_family_with_parameters_is_a_record_error(tmp_path):
    root = release(str(tmp_path), annotations=[annotation("SV", "hard_counting_002",
                                                          {"family": "grounding", "label": "ball"}),
                                               annotation("AT", "easy_tool_001", QA)])
    res = load_tivibench(root)
    assert {s.id for s in res.samples} == {"SV_hard_counting_002", "AT_easy_tool_001", "SL_medium_gamerule_001"}
    (err,) = res.errors
    assert err["field"] == "annotation" and "SV_easy_shape_001" in err["reason"]
    assert "region" in err["reason"] and "box" in err["reason"]


def test_bad_records_are_reported_one_by_one(tmp_path):
    prompts = {"SV": {"easy_shape_001": "a", "medium_shape_002": "", "tricky_shape_003": "c",
                      "easy_pattern_004": "d", "easy_analogy_005": "e"},
               "SS": [{"key": "easy_graph_001", "prompt": "x"}, {"key": "SS_easy_graph_001", "prompt": "dup"},
                      {"prompt": "no key"}, 7, {"key": "easy_gamerule_002", "prompt": "wrong dim"}]}
    anns = [annotation("SV", "easy_shape_001", {"family": "region", "box": BOX}),
            "{not json",
            annotation("SV", "easy_pattern_004", {"family": "region", "box": BOX}, task_type="shapes"),
            annotation("SV", "easy_analogy_005", {"family": "region", "box": BOX}, difficulty="hard"),
            annotation("SS", "easy_graph_001", {"family": "grounding", "label": "node"}),
            annotation("SS", "easy_graph_001", {"family": "grounding", "label": "node"}),
            annotation("SL", "easy_sudoku_009", {"family": "sudoku", "solution": [[1, 2], [2, 1]]}),
            annotation("AT", "hard_tool_003", QA)]
    root = release(str(tmp_path), prompts, anns)
    os.remove(os.path.join(root, "images", "SV", "easy_shape_001.png"))
    res = load_tivibench(root)
    text = _errors(res)
    assert [s.id for s in res.samples] == ["SS_easy_graph_001"]
    for needle in ("no first frame images/SV/easy_shape_001.png",  # image missing
                   "prompt of medium_shape_002 must be non-empty",
                   "'tricky_shape_003' is not a TiViBench key",
                   "not valid JSON",
                   "unknown task type 'shapes'; did you mean shape",
                   "annotation says hard, the key says easy",
                   "duplicate annotation for SS_easy_graph_001",
                   "duplicate key easy_graph_001",
                   "no key field",
                   "expected a prompt string or an object, got int",
                   "task type gamerule belongs to dimension SL, not SS",
                   "4×4, 6×6 or 9×9",
                   "annotation for AT_hard_tool_003, which no prompt file lists",
                   "easy_pattern_004: no annotation"):
        assert needle in text, f"{needle!r} not in:\n{text}"


def test_field_map_reads_other_spellings_and_a_missing_prompt_names_the_fields(tmp_path):
    prompts = {"SL": [{"sample": "easy_gamerule_001", "instruction_en": "Match three."},
                      {"sample": "hard_gamerule_002", "other": "x"}]}
    root = release(str(tmp_path), prompts, [])
    for k in ("easy_gamerule_001", "hard_gamerule_002"):
        png(os.path.join(root, "images", "SL", f"{k}.png"))
    res = load_tivibench(root)
    assert not res.samples and "no key field" in _errors(res)
    res = load_tivibench(root, field_map={"key": "sample", "prompt": ["instruction_en"]})
    assert [s.id for s in res.samples] == ["SL_easy_gamerule_001"] and res.samples[0].prompt == "Match three."
    assert "fields found: other, sample" in _errors(res)
    fm = tmp_path / "fm.yaml"
    fm.write_text("key: sample\nprompt: instruction_en\n")
    proto = TiviBenchProtocol(data=root, field_map=str(fm))
    assert [s.id for s in proto.load().samples] == ["SL_easy_gamerule_001"]


def test_empty_or_missing_data_is_an_error(tmp_path):
    res = load_tivibench(str(tmp_path / "nope"))
    assert not res.samples and "does not exist" in res.errors[0]["reason"]
    (tmp_path / "empty").mkdir()
    res = load_tivibench(str(tmp_path / "empty"))
    assert "no <DIM>_prompt.json" in res.errors[0]["reason"]
    with pytest.raises(ConfigError, match="needs --data"):
        TiviBenchProtocol().load()
    bad = tmp_path / "bad"
    (bad / "eval_cache").mkdir(parents=True)
    (bad / "eval_cache" / "SS_prompt.json").write_text("[1, 2")
    assert "not valid JSON" in load_tivibench(str(bad)).errors[0]["reason"]


def test_keys_and_dimension_filter(tmp_path):
    assert normalise_key("images/SS/SS_easy_graph_001.png", "SS") == "easy_graph_001"
    assert normalise_key("SV_easy_graph_001", "SS") is None and normalise_key(3, "SS") is None
    assert task_of_key("easy_odd_one_out_003") == "oddoneout" and task_of_key("easy_nosuch_001") is None
    root = release(str(tmp_path))
    proto = TiviBenchProtocol(data=root, dimensions="AT")
    assert [s.id for s in proto.load().samples] == ["AT_easy_tool_001"]
    assert json.loads(json.dumps(proto.resolved_options()))["dimensions"] == ["AT"]
