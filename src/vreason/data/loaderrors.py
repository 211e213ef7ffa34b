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

from collections.abc import Iterator
from typing import Any

from vreason.errors import RecordError

WHOLE_RECORD = "record"


class RecordFieldError(RecordError):
    """A malformed record, naming the field at fault."""

    def __init__(self, where: str, field: str, reason: str):
        super().__init__(where, reason)
        self.field = field

    def as_dict(self) -> dict[str, str]:
        return load_error(self.where, self.field, self.reason)


def load_error(where: str, field: str, reason: str, **extra: Any) -> dict[str, str]:
    """A loader's error dict (see the module docstring)."""
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
    (the record is still parsed, so the caller can name the field holding them)."""
    import json

    for n, line, bad_utf8 in utf8_lines(data):
        if not line.strip():
            continue
        where = f"{path}:{n}"
        try:
            yield where, json.loads(line), bad_utf8, None
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

    with open(path, "rb") as fh:
        data = fh.read()
    if path.endswith(".jsonl"):
        return [(where, rec, err) for where, rec, _, err in jsonl_records(path, data)]
    try:
        items = json.loads(decode_utf8(data))
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

    from vreason.errors import ConfigError

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
