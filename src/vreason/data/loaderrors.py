"""What a benchmark loader says about a record it skips, and reading text files that may be damaged.

Every loader error is a dict with at least

* ``where`` — ``file:line`` for line-based files (JSONL, CSV), ``file[item]`` for a JSON list or a
  parquet row;
* ``field`` — the record field at fault (``record`` when the record as a whole is unusable: not
  JSON, not an object, invalid UTF-8 outside any field);
* ``reason`` — what is wrong, in words;

so that ``vreason preflight`` and ``vreason run`` can both print
``record skipped <where> [field <field>]: <reason>``. Loaders may add keys (``file``, ``line``,
``item``, ``task_id``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from vreason.core.errors import RecordError
from vreason.core.records import LoadError

WHOLE_RECORD = "record"
MAX_RECORD_BYTES = 16 * 1024 * 1024
"""Largest record (a JSONL line, an item of a JSON list) parsed: a longer one is a per-record error, not
ten times its size in memory. Nesting deeper than Python's parser can follow (``[[[[…`` 100,000 deep) is
a per-record error too, never a ``RecursionError``."""
TOO_DEEP = "nested deeper than can be parsed (hostile or damaged file)"


def too_long(size: int) -> str:
    return f"record of {size} bytes is longer than the {MAX_RECORD_BYTES} allowed"


def loads(text: str | bytes) -> Any:
    """``json.loads`` whose too-deep nesting raises ``ValueError`` (not ``RecursionError``)."""
    import json

    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError(TOO_DEEP) from None


def _value_end(text: str, pos: int) -> int:
    """Where the JSON value starting at ``pos`` ends, found without recursion (strings and brackets
    followed, nothing built) — to step over an item too deep to parse."""
    depth, i, n = 0, pos, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            if depth == 0:
                return i + 1
        elif c in "[{":
            depth += 1
        elif c in "]}":
            depth -= 1
            if depth <= 0:
                return i + (1 if depth == 0 else 0)
        elif depth == 0 and c in ", \t\r\n":
            return i
        i += 1
    return n


def json_list_items(path: str, text: str) -> list[tuple[int, int, Any, str | None]]:
    """``(index, line, item, error)`` for every item of the top-level JSON list in ``text``, parsed one
    by one: an item too deep or too long is an error row (``item`` None) and the others still load.
    Raises ``ValueError`` naming the file and line when the text is not a JSON list."""
    import json

    dec = json.JSONDecoder()
    start = len(text) - len(text.lstrip())
    if not text[start:start + 1] == "[":
        raise ValueError(f"{path}: expected a JSON list of records")
    out: list[tuple[int, int, Any, str | None]] = []
    pos, line, counted = start + 1, 1, 0
    while True:
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= len(text):
            raise ValueError(f"{path}:{line}: not valid JSON (the list is not closed)")
        if text[pos] == "]":
            return out
        line += text.count("\n", counted, pos)
        counted = pos
        try:
            item, end = dec.raw_decode(text, pos)
            err = too_long(end - pos) if end - pos > MAX_RECORD_BYTES else None
            out.append((len(out), line, None if err else item, err))
        except RecursionError:
            end = _value_end(text, pos)
            out.append((len(out), line, None, TOO_DEEP))
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg} at column {exc.colno})") from None
        pos = end


class RecordFieldError(RecordError):
    """A malformed record, naming the field at fault."""

    def __init__(self, where: str, field: str, reason: str):
        super().__init__(where, reason)
        self.field = field

    def as_dict(self) -> LoadError:
        return load_error(self.where, self.field, self.reason)


def load_error(where: str, field: str, reason: str, **extra: Any) -> LoadError:
    """A loader's error (see the module docstring)."""
    return {"where": where, "field": field, "reason": reason, **{k: str(v) for k, v in extra.items()}}


def utf8_lines(data: bytes) -> Iterator[tuple[int, str, str | None]]:
    """``(line_number, text, error)`` per line of ``data``. A line that is not valid UTF-8 is given
    with its undecodable bytes kept as lone surrogates (``surrogateescape``) and the error saying
    where, so that a caller can still find the field that holds them — never an exception."""
    for n, raw in enumerate(data.split(b"\n"), 1):
        try:
            yield n, raw.decode("utf-8"), None
        except UnicodeDecodeError as exc:
            bad = raw[exc.start:exc.end]
            yield n, raw.decode("utf-8", errors="surrogateescape"), (
                f"invalid UTF-8 (byte(s) {bad.hex(' ')} at column {exc.start + 1})"
            )


def jsonl_records(path: str, data: bytes) -> Iterator[tuple[str, Any, str | None, dict[str, str] | None]]:
    """``(where, record, bad_utf8, error)`` per non-blank JSONL line: ``where`` is ``path:line``; a line that
    is not JSON gives ``record=None`` and its load ``error``; ``bad_utf8`` says where undecodable bytes sit
    (the record is still parsed, so the caller can name the field holding them). Reading a file, prefer
    :func:`jsonl_file_records` (line by line, never the whole file in memory)."""
    yield from _jsonl_rows(path, ((n, raw, len(raw)) for n, raw in enumerate(data.split(b"\n"), 1)))


def jsonl_file_records(path: str) -> Iterator[tuple[str, Any, str | None, dict[str, str] | None]]:
    """:func:`jsonl_records` of the file at ``path``, read line by line with every line bounded: a line longer
    than :data:`MAX_RECORD_BYTES` is stepped over in 1 MiB pieces (an error row), so a 100 MB line costs
    about twice the bound in memory (the buffered read joins its pieces), not the file or ten times the line."""
    with open(path, "rb") as fh:
        yield from _jsonl_rows(path, _bounded_lines(fh))


def _bounded_lines(fh: Any) -> Iterator[tuple[int, bytes | None, int]]:
    """``(line number, bytes without the newline or None when too long, size in bytes)``."""
    n = 0
    while True:
        raw = fh.readline(MAX_RECORD_BYTES + 1)
        if not raw:
            return
        n += 1
        if raw.endswith(b"\n"):
            yield n, raw[:-1], len(raw) - 1
            continue
        if len(raw) <= MAX_RECORD_BYTES:  # the last line, without a newline
            yield n, raw, len(raw)
            continue
        size = len(raw)
        del raw
        while True:  # step over the rest of the line without keeping it
            piece = fh.readline(1 << 20)
            size += len(piece)
            if not piece or piece.endswith(b"\n"):
                break
        yield n, None, size - (1 if piece.endswith(b"\n") else 0)


def _jsonl_rows(path: str, lines: Iterable[tuple[int, bytes | None, int]]
                ) -> Iterator[tuple[str, Any, str | None, dict[str, str] | None]]:
    import json

    for n, raw, size in lines:
        where = f"{path}:{n}"
        if raw is None or size > MAX_RECORD_BYTES:
            yield where, None, None, load_error(where, WHOLE_RECORD, too_long(size), file=path, line=n)
            continue
        bad_utf8 = None
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            bad = raw[exc.start:exc.end]
            line = raw.decode("utf-8", errors="surrogateescape")
            bad_utf8 = f"invalid UTF-8 (byte(s) {bad.hex(' ')} at column {exc.start + 1})"
        if not line.strip():
            continue
        try:
            yield where, json.loads(line), bad_utf8, None
        except RecursionError:
            yield where, None, bad_utf8, load_error(where, WHOLE_RECORD, TOO_DEEP, file=path, line=n)
        except json.JSONDecodeError as exc:
            yield where, None, bad_utf8, load_error(where, WHOLE_RECORD, bad_utf8 or f"not valid JSON: {exc}")


def decode_utf8(data: bytes) -> str:
    """``data`` as text; undecodable bytes kept as lone surrogates (see :func:`field_with_bad_text`)."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("utf-8", errors="surrogateescape").removeprefix("\ufeff")


def _has_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        return any("\udc80" <= ch <= "\udcff" for ch in value)
    if isinstance(value, dict):
        return any(_has_surrogate(k) or _has_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_surrogate(v) for v in value)
    return False


def field_with_bad_text(record: Any) -> str | None:
    """The first top-level field of ``record`` holding text that was not valid UTF-8, if any
    (``record`` when a key itself is damaged or ``record`` is not an object)."""
    if not isinstance(record, dict):
        return WHOLE_RECORD if _has_surrogate(record) else None
    for key, value in record.items():
        if _has_surrogate(key):
            return WHOLE_RECORD
        if _has_surrogate(value):
            return str(key)
    return None


def json_items_with_lines(text: str, records: list[Any]) -> list[int]:
    """The line on which each item of the (already parsed) top-level JSON list in ``text`` starts."""
    import json

    dec = json.JSONDecoder()
    lines: list[int] = []
    pos = text.index("[") + 1
    line, counted = 1, 0
    for _ in records:
        while text[pos] in " \t\r\n,":
            pos += 1
        line += text.count("\n", counted, pos)
        counted = pos
        lines.append(line)
        _, pos = dec.raw_decode(text, pos)
    return lines


def json_or_jsonl_records(path: str, unwrap: Any = None) -> list[tuple[str, Any, dict[str, str] | None]]:
    """``(where, record, error)`` for every record of a JSONL file (a bad line is an error row) or of a JSON
    file holding a list. ``unwrap(items)`` may turn another top-level shape into that list first (e.g. a
    ``{id: record}`` mapping, or ``{"test": [...]}``). Raises ``ValueError`` naming the file for invalid JSON
    or a top level that is not a list."""
    import json

    if path.endswith(".jsonl"):
        return [(where, rec, err) for where, rec, _, err in jsonl_file_records(path)]
    with open(path, "rb") as fh:
        data = fh.read()
    text = decode_utf8(data)
    del data
    try:
        items = json.loads(text)
    except RecursionError:
        if unwrap is not None and not text.lstrip().startswith("["):
            raise ValueError(f"{path}: {TOO_DEEP}") from None
        # a list holding a too-deep item: every other item still loads, the deep one is an error row
        return [(f"{path}:{line} (item {i})", item,
                 load_error(f"{path}:{line} (item {i})", WHOLE_RECORD, err, file=path, line=line) if err else None)
                for i, line, item, err in json_list_items(path, text)]
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    if unwrap is not None:
        items = unwrap(items)
    if not isinstance(items, list):
        raise ValueError(f"{path}: expected a JSON list of records, got {type(items).__name__}")
    return [(f"{path}[{i}]", rec, None) for i, rec in enumerate(items)]


def read_field_map(spec: Any, model: Any, default: Any, what: str) -> Any:
    """A field map (pydantic ``model``) from ``None`` (``default``), an instance, a mapping or a YAML file;
    the entries given replace the defaults. Errors are ``ConfigError`` naming ``what``."""
    from pydantic import ValidationError

    from vreason.core.errors import ConfigError

    if spec is None:
        return default
    if isinstance(spec, model):
        return spec
    if isinstance(spec, str):
        import yaml

        try:
            with open(spec, encoding="utf-8") as fh:
                spec = yaml.safe_load(fh) or {}
        except OSError as exc:
            raise ConfigError(f"{what} {spec}: {exc}") from exc
        except yaml.YAMLError as exc:
            raise ConfigError(f"{what}: not valid YAML: {exc}") from None
    if not isinstance(spec, dict):
        raise ConfigError(f"{what} must be a mapping of field → name(s)")
    try:
        return model(**{**default.model_dump(), **spec})
    except ValidationError as exc:
        err = exc.errors()[0]
        raise ConfigError(f"{what}: {err['msg']} ({'.'.join(str(p) for p in err['loc'])})") from None
