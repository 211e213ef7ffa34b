"""JSONL loaders read line by line with each line bounded (issue 22 item 6): a 100 MB line is one per-record
error that costs about twice the 16 MiB bound in memory at most, not ten times the line (tracemalloc); the lines
around it load."""

from __future__ import annotations

import json
import tracemalloc

from vreason.data import loaderrors
from vreason.data.loaderrors import MAX_RECORD_BYTES, jsonl_file_records, jsonl_records


def _write(path, huge: int) -> None:
    with open(path, "wb") as fh:
        fh.write(json.dumps({"id": "a"}).encode() + b"\n")
        fh.write(b'{"id": "big", "x": "')
        chunk = b"y" * (1 << 20)
        for _ in range(huge // len(chunk)):
            fh.write(chunk)
        fh.write(b'"}\n\n')
        fh.write(json.dumps({"id": "b\u00e9"}).encode() + b"\n")
        fh.write(b"\xff{not json\n")
        fh.write(json.dumps({"id": "last"}).encode())  # no final newline


def test_a_100mb_line_is_an_error_row_within_the_bound(tmp_path):
    path = str(tmp_path / "data.jsonl")
    _write(path, 100 << 20)
    tracemalloc.start()
    try:
        rows = list(jsonl_file_records(path))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2 * MAX_RECORD_BYTES + (8 << 20), f"peak {peak / 2**20:.0f} MiB for a 100 MiB line"
    assert [(w.rsplit(":", 1)[1], r) for w, r, _, e in rows if e is None] == [
        ("1", {"id": "a"}), ("4", {"id": "bé"}), ("6", {"id": "last"})]
    errors = {w.rsplit(":", 1)[1]: e for w, _, _, e in rows if e is not None}
    assert set(errors) == {"2", "5"}
    assert errors["2"]["reason"] == f"record of {(100 << 20) + 22} bytes is longer than the {MAX_RECORD_BYTES} allowed"
    assert errors["2"]["where"] == f"{path}:2" and errors["2"]["field"] == "record"
    bad = next(b for w, _, b, _ in rows if w.endswith(":5"))
    assert bad and "ff" in bad  # the undecodable byte is named


def test_streamed_and_in_memory_readers_agree(tmp_path, monkeypatch):
    monkeypatch.setattr(loaderrors, "MAX_RECORD_BYTES", 64)  # a small bound: the long-line path is exercised
    path = str(tmp_path / "small.jsonl")
    lines = [b'{"a": 1}', b"", b'{"b": "' + b"z" * 100 + b'"}', b"[[[", b'{"c": "\xc3"}', b'{"d": 2}', b""]
    data = b"\n".join(lines)
    with open(path, "wb") as fh:
        fh.write(data)
    assert list(jsonl_file_records(path)) == list(jsonl_records(path, data))
    assert [w.rsplit(":", 1)[1] for w, r, _, e in jsonl_file_records(path) if e is None] == ["1", "5", "6"]
