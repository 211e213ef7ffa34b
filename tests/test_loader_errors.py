"""Malformed benchmark files through the CLI: a line that is not UTF-8, a record missing a required
field, a record with a wrong-typed field. Each is one ``record skipped <file>:<line> [field F]:
<reason>`` line — in ``vreason preflight`` and in ``vreason run`` — never a traceback; the good
records still load."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from conftest import gradient_frames
from vreason.cli.main import app
from vreason.data.importer import read_manifest
from vreason.frames import write_video
from vreason.protocols.rise.data import load_rise
from vreason.protocols.ruler.data import load_ruler

runner = CliRunner()

CHECKLIST = [{"Instruction Following": "Is the piece moved?"}, {"Rule Coherence": "Is the move legal?"}]


def _ruler_line(index, **over):
    rec = {"task_name": "chess", "index": index, "category": "game", "prompt": "Move the knight.",
           "implicit_explanation": "", "input_image_path": "", "gt_image_path": "", "input_video_path": "",
           "checklist": CHECKLIST}
    rec.update(over)
    return json.dumps(rec, ensure_ascii=False).encode()


def ruler_file(tmp_path):
    """Line 1 good; 2 invalid UTF-8 inside the prompt; 3 no checklist; 4 prompt is a number; 5 good."""
    missing = json.loads(_ruler_line(2))
    del missing["checklist"]
    lines = [
        _ruler_line(0),
        _ruler_line(1, prompt="Move the XX.").replace(b"XX", b"\xff\xfe"),
        json.dumps(missing).encode(),
        _ruler_line(3, prompt=42),
        _ruler_line(4),
    ]
    path = tmp_path / "data.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def rise_file(tmp_path):
    """Items 0 and 4 good; 1 has extra_frame 0; 2 has no questions; 3 has invalid UTF-8 in its text."""
    (tmp_path / "img.png").write_bytes(b"png")

    def rec(i, **over):
        r = {"task_id": f"log_{i}", "text": "Solve the puzzle.", "image_path": "img.png",
             "sub_task": "Logical Capability", "questions": ["Is it solved?"], "extra_frame": 8}
        r.update(over)
        return r

    records = [rec(0), rec(1, extra_frame=0), rec(2), rec(3, text="Solve the QQ."), rec(4)]
    del records[2]["questions"]
    text = json.dumps(records, indent=2, ensure_ascii=False).encode().replace(b"QQ", b"\xc3\x28")
    path = tmp_path / "v5.json"
    path.write_bytes(text)
    return path


def _line_of(path, needle: bytes) -> int:
    return path.read_bytes()[: path.read_bytes().index(needle)].count(b"\n") + 1


def _no_traceback(res):
    assert "Traceback" not in res.output
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)


def test_ruler_loader_errors_name_file_line_field_and_reason(tmp_path):
    path = ruler_file(tmp_path)
    res = load_ruler(str(path))
    assert [s.id for s in res.samples] == ["chess-0", "chess-4"]
    by_where = {e["where"]: e for e in res.errors}
    assert set(by_where) == {f"{path}:2", f"{path}:3", f"{path}:4"}
    assert by_where[f"{path}:2"]["field"] == "prompt" and "invalid UTF-8" in by_where[f"{path}:2"]["reason"]
    assert by_where[f"{path}:3"]["field"] == "checklist" and "missing" in by_where[f"{path}:3"]["reason"]
    assert by_where[f"{path}:4"]["field"] == "prompt" and "must be a string" in by_where[f"{path}:4"]["reason"]


def test_preflight_ruler_prints_each_bad_record_without_traceback(tmp_path):
    path = ruler_file(tmp_path)
    (tmp_path / "videos").mkdir()
    res = runner.invoke(app, ["preflight", "ruler", "--data", str(path), "--root", str(tmp_path / "videos"),
                              "--convention", "ruler"])
    _no_traceback(res)
    assert res.exit_code == 1
    out = " ".join(res.output.split())  # undo any wrapping
    assert f"record skipped {path}:2 [field prompt]: invalid UTF-8" in out
    assert f"record skipped {path}:3 [field checklist]: missing field(s) checklist" in out
    assert f"record skipped {path}:4 [field prompt]: prompt must be a string, got int 42" in out
    assert "3 record(s) of the benchmark data skipped" in out


def test_rise_loader_errors_name_file_line_item_field_and_reason(tmp_path):
    path = rise_file(tmp_path)
    res = load_rise(str(tmp_path))
    assert [s.id for s in res.samples] == ["log_0", "log_4"]
    errs = {e["item"]: e for e in res.errors}
    assert set(errs) == {"1", "2", "3"}
    assert errs["1"]["field"] == "extra_frame" and "not an fps > 0" in errs["1"]["reason"]
    assert errs["2"]["field"] == "questions" and "missing key(s) questions" in errs["2"]["reason"]
    assert errs["3"]["field"] == "text" and "not valid UTF-8" in errs["3"]["reason"]
    for item, e in errs.items():
        line = _line_of(path, f'"task_id": "log_{item}"'.encode()) - 1  # the record's "{" line
        assert e["where"] == f"{path}:{line} (item {item})" and e["task_id"] == f"log_{item}"


def test_preflight_and_run_rise_print_bad_records_without_traceback(tmp_path):
    path = rise_file(tmp_path)
    (tmp_path / "videos").mkdir()
    res = runner.invoke(app, ["preflight", "rise", "--data", str(tmp_path), "--root", str(tmp_path / "videos"),
                              "--convention", "rise"])
    _no_traceback(res)
    assert res.exit_code == 1
    out = " ".join(res.output.split())
    line1 = _line_of(path, b'"task_id": "log_1"') - 1
    assert f"record skipped {path}:{line1} (item 1) [field extra_frame]: extra_frame 0 is not an fps" in out
    assert "(item 2) [field questions]: missing key(s) questions" in out
    assert "(item 3) [field text]: text that is not valid UTF-8" in out

    # `vreason run` reports the same dicts (its printing is the runner's): file, line, item, field, reason
    write_video(str(tmp_path / "videos" / "m" / "logical" / "log_0.mp4"), gradient_frames(8, 32, 32), fps=8)
    (tmp_path / "judge.jsonl").write_text('"Yes"\n')
    res = runner.invoke(app, ["run", "rise", "--data", str(tmp_path), "--videos", str(tmp_path / "videos"),
                              "--models", "m", "--judge", f"scripted:{tmp_path / 'judge.jsonl'}", "--dry-run",
                              "--runs", str(tmp_path / "runs"), "--name", "r"])
    _no_traceback(res)
    out = " ".join(res.output.split())
    assert f"record skipped {path}:{line1} (item 1) [field extra_frame]:" in out
    assert "record skipped ?" not in out


def test_manifest_with_invalid_utf8_and_bad_rows(tmp_path):
    m = tmp_path / "videos.jsonl"
    m.write_bytes(b'{"sample_id": "a", "model": "m", "path": "a.mp4"}\n'
                  b'{"sample_id": "b\xff", "model": "m", "path": "b.mp4"}\n'
                  b'{"sample_id": "c", "model": "m", "path": "c.mp4", "seed": "x"}\n')
    res = read_manifest(m)
    assert [v.sample_id for v in res.videos] == ["a"]
    assert [(e["where"], e["field"]) for e in res.errors] == [(f"{m}:2", "sample_id"), (f"{m}:3", "seed")]
    assert "invalid UTF-8" in res.errors[0]["reason"]
    c = tmp_path / "videos.csv"
    c.write_bytes(b"sample_id,model,path\na,m,a.mp4\nb,m,b\xe9.mp4\n")
    res = read_manifest(c)
    assert [v.sample_id for v in res.videos] == ["a"]
    assert [(e["where"], e["field"]) for e in res.errors] == [(f"{c}:3", "path")]
