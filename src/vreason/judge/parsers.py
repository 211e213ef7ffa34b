"""Reply parsers: turn a judge's raw text into a value, or raise :class:`ParseFailure`.

Judge replies are untrusted. Each factory here returns a callable ``str -> value`` that either
returns a well-formed value or raises :class:`ParseFailure` with a short reason. A parser never
guesses: an out-of-range score, an ambiguous Yes/No or a list of the wrong length is a failure
(which the client turns into a re-ask and finally an ``unscored`` score), never a 0.

* :func:`json_object` / :func:`json_list` — strict JSON (whole reply, fences tolerated);
* :func:`find_last_list` — the last JSON list in a reply with prose, fences or ``<think>`` blocks;
* :func:`last_json_object` — the last valid JSON object in fenced blocks or prose;
* :func:`answer_labels` — ``<answer>[...]</answer>`` holding a JSON list of labels, length checked;
* :func:`yes_no` — a Yes/No verdict, refusing replies that contain both;
* :func:`likert` — an integer on a declared scale (optionally read from a JSON field);
* :func:`option_letter` — one option letter such as ``A``–``D``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any

Parser = Callable[[str], Any]


class ParseFailure(ValueError):
    """A reply that does not have the required form. ``reason`` says why (short, human-readable)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n?(.*?)```", re.DOTALL)


def _strip_fence(text: str) -> str:
    """The body of a reply that is exactly one fenced block, else the stripped reply."""
    t = text.strip()
    m = _FENCE.fullmatch(t)
    return m.group(2).strip() if m else t


def _need_text(text: Any) -> str:
    if not isinstance(text, str):
        raise ParseFailure(f"reply is not text ({type(text).__name__})")
    if not text.strip():
        raise ParseFailure("empty reply")
    return text


def _strict_json(text: str) -> Any:
    body = _strip_fence(_need_text(text))
    try:
        return json.loads(body)
    except json.JSONDecodeError as e:
        raise ParseFailure(f"not valid JSON ({e.msg} at char {e.pos})") from None


def json_object() -> Parser:
    """The whole reply (optionally one fenced block) is a JSON object."""

    def parse(text: str) -> dict[str, Any]:
        value = _strict_json(text)
        if not isinstance(value, dict):
            raise ParseFailure(f"expected a JSON object, got {type(value).__name__}")
        return value

    parse.__name__ = "json_object"
    return parse


def json_list() -> Parser:
    """The whole reply (optionally one fenced block) is a JSON list."""

    def parse(text: str) -> list[Any]:
        value = _strict_json(text)
        if not isinstance(value, list):
            raise ParseFailure(f"expected a JSON list, got {type(value).__name__}")
        return value

    parse.__name__ = "json_list"
    return parse


def _objects_in(text: str) -> list[dict[str, Any]]:
    """Every top-level JSON object that decodes somewhere in ``text``, in order."""
    dec = json.JSONDecoder()
    found: list[dict[str, Any]] = []
    i = text.find("{")
    while i != -1:
        try:
            obj, end = dec.raw_decode(text, i)
        except json.JSONDecodeError:
            i = text.find("{", i + 1)
            continue
        if isinstance(obj, dict):
            found.append(obj)
        i = text.find("{", end)
    return found


_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)


def strip_think(text: str) -> str:
    """The reply without its ``<think>…</think>`` blocks (an unclosed ``<think>`` drops the rest)."""
    out = _THINK.sub("", text)
    i = out.lower().find("<think>")
    return out[:i] if i != -1 else out


def _lists_in(text: str) -> list[list[Any]]:
    """Every top-level JSON list that decodes somewhere in ``text``, in order."""
    dec = json.JSONDecoder()
    found: list[list[Any]] = []
    i = text.find("[")
    while i != -1:
        try:
            val, end = dec.raw_decode(text, i)
        except json.JSONDecodeError:
            i = text.find("[", i + 1)
            continue
        if isinstance(val, list):
            found.append(val)
        i = text.find("[", end)
    return found


def find_last_list(text: str, accept: Callable[[list[Any]], bool] | None = None) -> list[Any]:
    """The JSON list a reply carries: the whole reply (or its one fenced block) if it is a list,
    else the last acceptable list in fenced blocks, else in the prose. ``<think>`` blocks are
    ignored. ``accept`` filters candidates (e.g. lists of objects), so a ``[1]`` in prose is not
    taken for the answer."""
    ok = accept or (lambda v: True)
    body = strip_think(_need_text(text))
    try:
        whole = json.loads(_strip_fence(body))
    except json.JSONDecodeError:
        whole = None
    if isinstance(whole, list) and ok(whole):
        return whole
    for m in reversed(list(_FENCE.finditer(body))):
        cands = [v for v in _lists_in(m.group(2)) if ok(v)]
        if cands:
            return cands[-1]
    cands = [v for v in _lists_in(body) if ok(v)]
    if not cands:
        raise ParseFailure("no JSON list in the reply")
    return cands[-1]


def find_last_object(text: str) -> dict[str, Any]:
    """The last valid JSON object: fenced blocks first, then anywhere in the prose."""
    _need_text(text)
    for m in reversed(list(_FENCE.finditer(text))):
        objs = _objects_in(m.group(2))
        if objs:
            return objs[-1]
    objs = _objects_in(text)
    if not objs:
        raise ParseFailure("no valid JSON object in the reply")
    return objs[-1]


def last_json_object(required: Sequence[str] = ()) -> Parser:
    """The last valid JSON object in the reply (inside markdown fences or prose).

    ``required`` keys must be present, else the reply fails.
    """

    def parse(text: str) -> dict[str, Any]:
        obj = find_last_object(text)
        missing = [k for k in required if k not in obj]
        if missing:
            raise ParseFailure(f"JSON object lacks required key(s) {missing}")
        return obj

    parse.__name__ = "last_json_object"
    return parse


_ANSWER = re.compile(r"<answer>(.*?)</answer>", re.DOTALL | re.IGNORECASE)


def answer_labels(labels: Sequence[str], n: int | None = None) -> Parser:
    """``<answer>[...]</answer>`` holding a JSON list of labels (case-insensitive), of length ``n``.

    Returns the list with each label in its canonical spelling from ``labels``.
    """
    canon = {str(lab).strip().lower(): str(lab) for lab in labels}

    def parse(text: str) -> list[str]:
        _need_text(text)
        tags = _ANSWER.findall(text)
        if not tags:
            raise ParseFailure("no <answer>...</answer> block")
        body = _strip_fence(tags[-1])
        try:
            value = json.loads(body)
        except json.JSONDecodeError as e:
            raise ParseFailure(f"<answer> does not hold valid JSON ({e.msg})") from None
        if not isinstance(value, list):
            raise ParseFailure(f"<answer> holds a {type(value).__name__}, not a list")
        if n is not None and len(value) != n:
            raise ParseFailure(f"<answer> list has {len(value)} labels, expected {n}")
        out = []
        for i, item in enumerate(value):
            key = str(item).strip().lower() if isinstance(item, str) else None
            if key not in canon:
                raise ParseFailure(f"label {i} {item!r} is not one of {list(canon.values())}")
            out.append(canon[key])
        return out

    parse.__name__ = "answer_labels"
    return parse


_YES = re.compile(r"\byes\b", re.IGNORECASE)
_NO = re.compile(r"\bno\b", re.IGNORECASE)


_VERDICT_LINE = re.compile(r"^(?:(?:final\s+)?answer\s*[:=]\s*)?(yes|no)[.!]?$", re.IGNORECASE)


def yes_no() -> Parser:
    """``True`` for Yes, ``False`` for No.

    The verdict is read from the last ``<answer>`` block if there is one, else from a first line that
    is only a verdict (``Yes.``, ``**No**``, ``Answer: Yes``), else from the whole reply. In the
    block or the whole reply, containing both words (or neither) is a failure.
    """

    def parse(text: str) -> bool:
        _need_text(text)
        tags = _ANSWER.findall(text)
        if tags:
            scope = tags[-1]
        else:
            first = text.strip().splitlines()[0].strip().strip("*_`'\" ")
            m = _VERDICT_LINE.match(first)
            if m:
                return m.group(1).lower() == "yes"
            scope = text
        has_yes, has_no = bool(_YES.search(scope)), bool(_NO.search(scope))
        if has_yes and has_no:
            raise ParseFailure("reply contains both 'yes' and 'no'")
        if not (has_yes or has_no):
            raise ParseFailure("reply contains neither 'yes' nor 'no'")
        return has_yes

    parse.__name__ = "yes_no"
    return parse


_INT_TOKEN = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?(?!\.?\w)")
_LABELLED = re.compile(r"\b(?:score|rating|grade)\b\s*[:=]?\s*\**\s*([-+]?\d+(?:\.\d+)?)", re.IGNORECASE)


def _as_int(value: Any, lo: int, hi: int) -> int:
    if isinstance(value, bool):
        raise ParseFailure(f"score {value!r} is a boolean, not an integer")
    if isinstance(value, str):
        s = value.strip()
        try:
            value = float(s) if "." in s else int(s)
        except ValueError:
            raise ParseFailure(f"score {value!r} is not a number") from None
    if isinstance(value, float):
        if not value.is_integer():
            raise ParseFailure(f"score {value} is not an integer")
        value = int(value)
    if not isinstance(value, int):
        raise ParseFailure(f"score {value!r} is not an integer")
    if not lo <= value <= hi:
        raise ParseFailure(f"score {value} outside the scale [{lo}, {hi}]")
    return value


def likert(lo: int, hi: int, key: str | None = None) -> Parser:
    """An integer in ``[lo, hi]``.

    With ``key``, the value of that field of the last JSON object in the reply. Without, the
    reply must be the number itself, or carry it as ``score: N`` / ``rating: N``, or contain
    exactly one number. Out-of-range values fail; they are never clipped.
    """

    def parse(text: str) -> int:
        _need_text(text)
        if key is not None:
            obj = find_last_object(text)
            if key not in obj:
                raise ParseFailure(f"JSON object has no {key!r} field")
            return _as_int(obj[key], lo, hi)
        body = _strip_fence(text).strip().strip("*`'\". ")
        if re.fullmatch(r"[-+]?\d+(?:\.\d+)?", body):
            return _as_int(body, lo, hi)
        labelled = _LABELLED.findall(text)
        if labelled:
            return _as_int(labelled[-1], lo, hi)
        out_of = re.findall(rf"(?<![\w.])([-+]?\d+(?:\.\d+)?)\s*/\s*{hi}(?![\w.])", text)
        if out_of:
            return _as_int(out_of[-1], lo, hi)
        nums = _INT_TOKEN.findall(text)
        if len(set(nums)) == 1:
            return _as_int(nums[0], lo, hi)
        if not nums:
            raise ParseFailure("no number in the reply")
        raise ParseFailure(f"ambiguous: several numbers {sorted(set(nums))[:5]} and no 'score:' label")

    parse.__name__ = f"likert[{lo},{hi}]"
    return parse


def option_letter(options: str = "ABCD") -> Parser:
    """One option letter from ``options`` (e.g. ``"B"``, ``"(B)"``, ``"Answer: B"``)."""
    letters = "".join(dict.fromkeys(options.upper()))
    cls = f"[{re.escape(letters)}]"
    exact = re.compile(rf"^\(?({cls})\)?[.:)]?$", re.IGNORECASE)
    labelled = re.compile(rf"\banswer\b(?:\s+is)?\s*[:=]?\s*\**\(?({cls})\b\)?", re.IGNORECASE)
    leading = re.compile(rf"^\(?({cls})[.:)]\s")

    def parse(text: str) -> str:
        _need_text(text)
        tags = _ANSWER.findall(text)
        body = (tags[-1] if tags else _strip_fence(text)).strip().strip("*`'\" ")
        for pat in (exact, labelled, leading):
            found = {m.upper() for m in pat.findall(body)}
            if len(found) == 1:
                return found.pop()
            if len(found) > 1:
                raise ParseFailure(f"several option letters {sorted(found)}")
        raise ParseFailure(f"no single option letter from {letters!r}")

    parse.__name__ = "option_letter"
    return parse


__all__ = [
    "ParseFailure",
    "Parser",
    "answer_labels",
    "find_last_list",
    "find_last_object",
    "json_list",
    "json_object",
    "last_json_object",
    "likert",
    "option_letter",
    "strip_think",
    "yes_no",
]
