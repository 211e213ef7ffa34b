"""Malformed MME-CoF-Pro files: every skipped record is one error naming file, line (or item),
field and reason — invalid UTF-8, not JSON, not an object, a missing or wrong-typed field, bad
steps, a missing image, a duplicate id — in the loader and in ``vreason preflight``, never a
traceback; the good records still load."""

from __future__ import annotations

import json

import pandas as pd
from typer.testing import CliRunner

from _ruler_mmecof_fixtures import image
from vreason.cli.main import app
from vreason.protocols.mmecof.data import load_mmecof

runner = CliRunner()


def _rec(i, **over):
    r = {"id": f"vd-{i}", "category": "Visual Detail", "image": "img/a.png", "prompt_no_hint": "Read the sign.",
         "text_hint": "It is at the top.", "reasoning_steps": ["The camera moves", "The sign is legible"]}
    r.update(over)
    return r


def _line(rec) -> bytes:
    return json.dumps(rec, ensure_ascii=False).encode()


def jsonl_file(tmp_path):
    """1 good; 2 invalid UTF-8 in the prompt; 3 not JSON; 4 a list; 5 no steps; 6 prompt is a number;
    7 steps not text; 8 image missing on disk; 9 id is a list; 10 duplicate of 1; 11 good."""
    image(str(tmp_path / "img" / "a.png"))
    no_steps = _rec(5)
    del no_steps["reasoning_steps"]
    lines = [
        _line(_rec(1)),
        _line(_rec(2, prompt_no_hint="Read the QQ.")).replace(b"QQ", b"\xff\xfe"),
        b'{"id": "vd-3", ',
        b'["not", "an", "object"]',
        _line(no_steps),
        _line(_rec(6, prompt_no_hint=42)),
        _line(_rec(7, reasoning_steps=[3, 4])),
        _line(_rec(8, image="img/none.png")),
        _line(_rec(9, id=["x"])),
        _line(_rec(1)),
        _line(_rec(11)),
    ]
    path = tmp_path / "data.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


EXPECTED = {  # line → (field, words of the reason)
    2: ("prompt_no_hint", "invalid UTF-8 (byte(s) ff at column"),
    3: ("record", "not valid JSON"),
    4: ("record", "expected a JSON object, got list"),
    5: ("steps", "no field for 'steps' (tried reasoning_steps"),
    6: ("prompt_no_hint", "prompt_no_hint must be a string, got int 42"),
    7: ("reasoning_steps", "step 3 is not text"),
    8: ("image", "'img/none.png' does not exist"),
    9: ("id", "id must be a string or an integer, got list"),
    10: ("id", "duplicate id vd-1 (first at"),
}


def test_jsonl_errors_name_file_line_field_and_reason(tmp_path):
    path = jsonl_file(tmp_path)
    res = load_mmecof(str(path))
    assert [s.id for s in res.samples] == ["vd-1", "vd-11"]
    got = {e["where"]: (e["field"], e["reason"]) for e in res.errors}
    assert set(got) == {f"{path}:{n}" for n in EXPECTED}
    for n, (field, words) in EXPECTED.items():
        assert got[f"{path}:{n}"][0] == field, (n, got[f"{path}:{n}"])
        assert words in got[f"{path}:{n}"][1], (n, got[f"{path}:{n}"])
    assert res.samples[0].metadata["record"] == f"{path}:1"


def test_json_list_errors_name_line_and_item_and_bad_utf8_is_per_record(tmp_path):
    image(str(tmp_path / "img" / "a.png"))
    records = [_rec(0), _rec(1, category=7), _rec(2, text_hint="QQ"), _rec(3)]
    text = json.dumps(records, indent=2).encode().replace(b'"QQ"', b'"\xc3\x28"')
    path = tmp_path / "data.json"
    path.write_bytes(text)
    res = load_mmecof(str(path))
    assert [s.id for s in res.samples] == ["vd-0", "vd-3"]

    def line_of(needle: bytes) -> int:
        return text[: text.index(needle)].count(b"\n")  # the line of the record's "{"

    errs = {e["where"]: e for e in res.errors}
    wheres = [f"{path}:{line_of(needle)} (item {i})" for i, needle in ((1, b'"vd-1"'), (2, b'"vd-2"'))]
    assert set(errs) == set(wheres)
    e1, e2 = (errs[w] for w in wheres)
    assert e1["field"] == "category" and "must be a string, got int 7" in e1["reason"]
    assert e2["field"] == "text_hint" and "not valid UTF-8" in e2["reason"]


def test_parquet_rows_are_named_by_index(tmp_path):
    image(str(tmp_path / "img" / "a.png"))
    rows = [_rec(0), _rec(1, image="img/none.png")]
    pd.DataFrame([{**r, "reasoning_steps": json.dumps(r["reasoning_steps"])} for r in rows]).to_parquet(
        tmp_path / "data.parquet")
    res = load_mmecof(str(tmp_path / "data.parquet"))
    assert [s.id for s in res.samples] == ["vd-0"]
    [e] = res.errors
    assert e["where"] == f"{tmp_path / 'data.parquet'}[1]" and e["field"] == "image"


def test_unreadable_file_is_one_error_with_a_field(tmp_path):
    path = tmp_path / "data.json"
    path.write_bytes(b'[{"id": 1,\n oops}]')
    res = load_mmecof(str(path))
    assert res.samples == [] and len(res.errors) == 1
    assert res.errors[0]["field"] == "record" and f"{path}:2: not valid JSON" in res.errors[0]["reason"]
    res = load_mmecof(str(tmp_path / "absent.jsonl"))
    assert res.errors == [{"where": str(tmp_path / "absent.jsonl"), "field": "record", "reason": "no such file"}]


def test_preflight_prints_each_bad_record_without_traceback(tmp_path):
    path = jsonl_file(tmp_path)
    (tmp_path / "videos").mkdir()
    res = runner.invoke(app, ["preflight", "mmecof", "--data", str(path), "--root", str(tmp_path / "videos"),
                              "--convention", "vreason"])
    assert "Traceback" not in res.output
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    assert res.exit_code == 1
    out = " ".join(res.output.split())
    assert f"record skipped {path}:2 [field prompt_no_hint]: invalid UTF-8" in out
    assert f"record skipped {path}:6 [field prompt_no_hint]: prompt_no_hint must be a string" in out
    assert f"record skipped {path}:10 [field id]: duplicate id vd-1" in out
    assert f"{len(EXPECTED)} record(s) of the benchmark data skipped" in out
