"""A scripted judge: replies from a list, a callable or a JSONL file (tests, demos, dry runs).

Each script entry is either a reply string or a mapping::

    {"reply": "Yes"}                              # a reply
    {"match": "Is the ball red?", "reply": "No"}  # a rule: used when the request text contains "match"
    {"sample": "rise_0001", "template": "rise_tc", "reply": "..."}  # a rule for one sample and template
    {"error": "rate_limit", "retry_after": 0.1}   # a transport error (kinds: see retry.py)
    {"reply": "...", "finish_reason": "length"}
    {"template": "rise_pr", "reply": {"score": 4, "justification": "ok"}}  # a non-string reply: its JSON text

Rules are entries with at least one of ``match`` (a substring of the request text), ``sample`` (the
request's sample id, exactly) and ``template`` (the template name, exactly); a rule applies when all the
keys it has agree, and the first applicable rule in file order answers. Rules answer the same request
the same way whatever the order of the calls, so they are deterministic under concurrency; the other
entries are consumed in call order (deterministic with one worker only). With ``cycle=True`` the ordered
entries repeat; otherwise running out is a ``fatal`` transport error naming the script, so a test never
gets an invented reply.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from typing import Any

from vreason.core.errors import ConfigError
from vreason.judge.base import ImagePart, Judge, JudgeReply, JudgeRequest, TextPart, Usage
from vreason.judge.retry import JudgeTransportError

Entry = str | dict[str, Any]
RULE_KEYS = ("match", "sample", "template")


def is_rule(entry: Entry) -> bool:
    return isinstance(entry, dict) and any(k in entry for k in RULE_KEYS)


def rule_applies(rule: dict[str, Any], request: JudgeRequest, text: str) -> bool:
    if "sample" in rule and str(rule["sample"]) != (request.sample_id or ""):
        return False
    if "template" in rule and str(rule["template"]) != request.template:
        return False
    return "match" not in rule or str(rule["match"]) in text


def load_script(path: str) -> list[Entry]:
    """Entries of a JSONL script (one JSON string or object per line; blank lines and # comments skipped)."""
    entries: list[Entry] = []
    try:
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                s = line.strip()
                if not s or s.startswith("#"):
                    continue
                try:
                    e = json.loads(s)
                except json.JSONDecodeError as err:
                    raise ConfigError(f"{path}:{n}: not valid JSON ({err.msg})") from None
                if not isinstance(e, (str, dict)):
                    raise ConfigError(f"{path}:{n}: expected a string or an object")
                entries.append(e)
    except FileNotFoundError:
        raise ConfigError(f"scripted judge: no script file {path}") from None
    return entries


def request_text(request: JudgeRequest) -> str:
    return "\n".join([request.system or ""] + [p.text for p in request.parts if isinstance(p, TextPart)])


class ScriptedJudge(Judge):
    backend = "scripted"

    def __init__(
        self,
        script: list[Entry] | Callable[[JudgeRequest], Entry] | str,
        *,
        name: str | None = None,
        cycle: bool = False,
        latency: float = 0.0,
    ):
        if isinstance(script, str):
            self.name = name or os.path.basename(script)
            script = load_script(script)
        else:
            self.name = name or ("callable" if callable(script) else "list")
        self._fn = script if callable(script) else None
        entries = [] if callable(script) else list(script)
        self._rules = [e for e in entries if is_rule(e)]
        self._queue = [e for e in entries if not is_rule(e)]
        # a reply that depends on the sample id is cached under it (judge/client.py reads this)
        self.replies_by_sample = any("sample" in r for r in self._rules)
        self._pos = 0
        self.cycle = cycle
        self.latency = latency
        self.requests: list[JudgeRequest] = []

    @property
    def identity(self) -> str:
        return f"scripted:{self.name}"

    def settings(self) -> dict[str, Any]:
        return {}

    def _next(self, request: JudgeRequest) -> Entry:
        if self._fn is not None:
            return self._fn(request)
        text = request_text(request)
        for rule in self._rules:
            if rule_applies(rule, request, text):
                return rule
        if self._pos >= len(self._queue):
            if not self.cycle or not self._queue:
                raise JudgeTransportError(
                    "fatal", f"scripted judge {self.name}: script exhausted after {self._pos} replies"
                )
            self._pos = 0
        entry = self._queue[self._pos]
        self._pos += 1
        return entry

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        self.requests.append(request)
        if self.latency:
            await asyncio.sleep(self.latency)
        entry = self._next(request)
        if isinstance(entry, str):
            entry = {"reply": entry}
        if "error" in entry:
            raise JudgeTransportError(
                entry["error"], f"scripted {entry['error']}", retry_after=entry.get("retry_after")
            )
        reply = entry.get("reply", "")
        text = reply if isinstance(reply, str) else json.dumps(reply)  # a JSON value is sent as its JSON text
        n_img = sum(isinstance(p, ImagePart) for p in request.parts)
        usage = Usage(len(request_text(request)) // 4 + 85 * n_img, max(1, len(text) // 4))
        return JudgeReply(text=text, usage=usage, finish_reason=entry.get("finish_reason", "stop"))
