"""Issue 9, item 9: a visual-hint run never silently uses the text hint."""

from __future__ import annotations

import copy

import pytest

from test_mmecof_loader import RECORDS, write
from vreason.core.errors import ConfigError
from vreason.protocols.mmecof.data import hint_inputs, load_mmecof
from vreason.protocols.mmecof.protocol import MmeCofProtocol


def _records(drop: tuple[str, ...] = (), extra: list[dict] | None = None) -> list[dict]:
    recs = copy.deepcopy(RECORDS)
    for r in recs:
        for k in drop:
            r.pop(k, None)
    return recs + (extra or [])


def test_no_visual_hint_field_refuses_to_start(tmp_path):
    data = write(str(tmp_path), _records(drop=("visual_hint_image", "prompt_visual_hint")))
    with pytest.raises(ConfigError, match="no record has a visual-hint image .*visual_hint_image"):
        MmeCofProtocol(data=data, hint="visual").load()
    # the other settings do not need it
    assert len(MmeCofProtocol(data=data, hint="text").load().samples) == 2


def test_visual_image_without_visual_prompt_is_a_per_sample_error(tmp_path):
    data = write(str(tmp_path), _records(drop=("prompt_visual_hint",)))
    sample = load_mmecof(data).samples[0]
    assert "visual" not in sample.prompt_variants  # the loader no longer fills in the text hint
    with pytest.raises(KeyError, match="no visual-hint prompt"):
        hint_inputs(sample, "visual")
    res = MmeCofProtocol(data=data, hint="visual").load()
    assert res.samples == []
    reasons = {e["sample_id"]: e["reason"] for e in res.errors}
    assert "no visual-hint prompt" in reasons["vd-001"] and "visual_prompt=text_hint" in reasons["vd-001"]
    assert "no visual-hint setting" in reasons["ph-002"]
    # each names the record's file and line and the field at fault
    where = {e["sample_id"]: (e["where"], e["field"]) for e in res.errors}
    assert where == {"vd-001": (f"{data}:1", "prompt_visual_hint"), "ph-002": (f"{data}:2", "visual_hint_image")}


def test_text_hint_fallback_only_when_asked_and_recorded(tmp_path):
    data = write(str(tmp_path), _records(drop=("prompt_visual_hint",)))
    [s] = MmeCofProtocol(data=data, hint="visual", visual_prompt="text_hint").load().samples
    assert s.prompt == RECORDS[0]["prompt_text_hint"] and s.input_image == "img/vd1_hint.png"
    assert s.metadata["visual_prompt_source"] == "text_hint"
    with pytest.raises(ConfigError, match="visual_prompt"):
        MmeCofProtocol(data=data, hint="visual", visual_prompt="guess").load()


def test_mini_category_sample_without_hint_image_is_reported(tmp_path):
    gui = {"id": "gui-003", "category": "GUI", "image": "img/g3.png", "prompt_no_hint": "Click the button.",
           "text_hint": "It is at the top.", "reasoning_steps": ["The cursor moves", "The button is pressed"]}
    res = MmeCofProtocol(data=write(str(tmp_path), _records(extra=[gui])), hint="visual").load()
    assert [s.id for s in res.samples] == ["vd-001"]
    assert res.samples[0].metadata["visual_prompt_source"] == "visual_hint"
    reasons = {e["sample_id"]: e["reason"] for e in res.errors}
    assert reasons["gui-003"] == "sample gui-003 not run under --hint visual: has no visual-hint image"


def test_tables_header_names_departing_options():
    from vreason.protocols.mmecof.tables import header_lines

    assert header_lines()[0].endswith("paper defaults (no departing option)")
    assert header_lines({"frame_policy": "every:5"})[0].endswith("options departing from it: frame_policy=every:5")
