"""A generic create → poll → download HTTP job API, configured by a YAML file: ``http:my_api.yaml``.

Example (every key is checked; unknown keys are refused)::

    model: my-model-v2                 # recorded in the manifest, and {model} in templates
    base_url: ${MY_API_BASE}           # ${ENV} is replaced from the environment (urls and headers only)
    headers: {Authorization: "Bearer ${MY_API_KEY}"}
    key_env: MY_API_KEY                # required to be set before a real run (not for --dry-run)
    create:
      method: POST
      url: "{base_url}/v1/jobs"
      body: {model: "{model}", prompt: "{prompt}", seed: "{seed}", image: "{image_b64}", duration: 5}
      format: json                     # json | form | multipart
    id_path: id                        # where the job id is in the create reply (dotted, list indices)
    poll: {url: "{base_url}/v1/jobs/{job_id}"}
    status_path: status
    done_values: [succeeded]
    failed_values: [failed]
    refused_values: [content_filtered]
    reason_path: error.message
    download_url_path: output.url      # absent: download_url template below
    download_url: null                 # e.g. "{base_url}/v1/jobs/{job_id}/video"
    video_seconds: 5                   # for the cost ledger (with usd_per_second / usd_per_video)
    refusal_pattern: "content.?policy|safety|moderation"   # a create 4xx whose body matches → blocked
    idempotency_header: Idempotency-Key   # carries the client reference on every create (null: not sent)
    idempotent: false                  # true: the API answers a repeated key with the first job
    lookup: {url: "{base_url}/v1/jobs?client_reference={client_ref}"}   # jobs a create made (optional)
    lookup_list_path: data             # the list of jobs in the look-up reply
    lookup_id_key: id                  # the job id in each of them

After an ambiguous create failure (5xx, timeout, connection dropped after sending) the create is resent
only when ``idempotent`` is true; else the ``lookup`` call (if given) finds the job it made; else the row
stays ``unknown`` and nothing is resent (see :mod:`vreason.generate.api_create`).

In bodies, a string that is exactly one placeholder keeps its type (``"{seed}"`` → an integer;
``"{image_b64}"`` → ``null`` when the sample has no input image; such ``null`` fields are dropped).
Placeholders: ``{prompt}``, ``{seed}``, ``{model}``, ``{image_b64}``, ``{image_data_url}``, ``{base_url}``,
``{job_id}``, ``{client_ref}`` (the create's client reference; usable in the create body too).
Environment values are never written anywhere: they are scrubbed from reasons and logs.
"""

from __future__ import annotations

import base64
import os
import re
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from vreason.core.errors import ConfigError
from vreason.generate.api_generator import ApiGenerator
from vreason.generate.api_jobs import HttpCall, JobAdapter, JobRequest, PollResult
from vreason.generate.base import GenContext

_ENV = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")


class CallConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    method: str = "GET"
    url: str
    body: dict[str, Any] | None = None
    format: Literal["json", "form", "multipart"] = "json"


class HttpJobConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    model: str = ""
    base_url: str = ""
    headers: dict[str, str] = Field(default_factory=dict)
    key_env: str | None = None
    create: CallConfig
    id_path: str
    poll: CallConfig
    status_path: str
    done_values: list[str]
    failed_values: list[str] = Field(default_factory=list)
    refused_values: list[str] = Field(default_factory=list)
    reason_path: str | None = None
    download_url_path: str | None = None
    download_url: str | None = None
    video_seconds: float = 0.0
    refusal_pattern: str = r"content.?policy|safety|moderation"
    idempotency_header: str | None = "Idempotency-Key"
    idempotent: bool = False
    lookup: CallConfig | None = None
    lookup_list_path: str = "data"
    lookup_id_key: str = "id"


def get_path(obj: Any, path: str) -> Any:
    """``a.b.0.c`` in nested dicts / lists (``None`` when any step is missing)."""
    for part in path.split("."):
        if isinstance(obj, dict):
            obj = obj.get(part)
        elif isinstance(obj, list) and part.lstrip("-").isdigit() and -len(obj) <= int(part) < len(obj):
            obj = obj[int(part)]
        else:
            return None
    return obj


def expand_env(text: str, used: list[str]) -> str:
    def sub(m: re.Match[str]) -> str:
        value = os.environ.get(m.group(1))
        if value is None:
            raise ValueError(f"environment variable {m.group(1)} is not set")
        used.append(value)
        return value

    return _ENV.sub(sub, text)


def fill(template: Any, values: dict[str, Any]) -> Any:
    """Placeholders replaced in strings, recursively; a string that is one placeholder keeps the type."""
    if isinstance(template, dict):
        out = {k: fill(v, values) for k, v in template.items()}
        return {k: v for k, v in out.items() if v is not None}
    if isinstance(template, list):
        return [fill(v, values) for v in template]
    if isinstance(template, str):
        whole = _PLACEHOLDER.fullmatch(template)
        if whole and whole.group(1) in values:
            return values[whole.group(1)]
        return _PLACEHOLDER.sub(lambda m: str(values.get(m.group(1), m.group(0))), template)
    return template


class HttpJobAdapter(JobAdapter):
    provider = "http"

    def __init__(self, cfg: HttpJobConfig, base_url: str, headers: dict[str, str]):
        self.cfg, self.base, self.headers = cfg, base_url, headers
        self.refusal_re = re.compile(cfg.refusal_pattern, re.I)
        self.idempotency_header, self.honors_idempotency = cfg.idempotency_header, cfg.idempotent

    def _values(self, **extra: Any) -> dict[str, Any]:
        return {"base_url": self.base, "model": self.cfg.model, **extra}

    def _call(self, call: CallConfig, values: dict[str, Any]) -> HttpCall:
        url = fill(call.url, values)
        body = fill(call.body, values) if call.body is not None else None
        if body is None or call.method.upper() == "GET":
            return HttpCall(call.method.upper(), url, headers=self.headers)
        if call.format == "json":
            return HttpCall(call.method.upper(), url, json=body, headers=self.headers)
        fields = {k: v if isinstance(v, str | bytes) else str(v) for k, v in body.items()}
        if call.format == "form":
            return HttpCall(call.method.upper(), url, data=fields, headers=self.headers)
        return HttpCall(call.method.upper(), url, files={k: (None, v) for k, v in fields.items()}, headers=self.headers)

    def create_call(self, req: JobRequest) -> HttpCall:
        b64 = base64.b64encode(req.image_png).decode("ascii") if req.image_png else None
        values = self._values(prompt=req.prompt, seed=int(req.seed), image_b64=b64, client_ref=req.client_ref,
                              image_data_url=f"data:image/png;base64,{b64}" if b64 else None)
        return self._call(self.cfg.create, values)

    def job_id(self, body: Any) -> str:
        jid = get_path(body, self.cfg.id_path)
        if jid in (None, ""):
            raise ValueError(f"no job id at {self.cfg.id_path!r} in the create reply: {str(body)[:200]}")
        return str(jid)

    def poll_call(self, job_id: str) -> HttpCall:
        return self._call(self.cfg.poll, self._values(job_id=job_id))

    def lookup_call(self, req: JobRequest, since: float) -> HttpCall | None:
        if self.cfg.lookup is None:
            return None
        return self._call(self.cfg.lookup, self._values(client_ref=req.client_ref or ""))

    def lookup_matches(self, req: JobRequest, since: float, body: Any) -> list[str]:
        items = get_path(body, self.cfg.lookup_list_path)
        ids = [get_path(it, self.cfg.lookup_id_key) for it in items] if isinstance(items, list) else []
        return [str(i) for i in ids if i not in (None, "")][::-1]

    def read_status(self, job_id: str, body: Any) -> PollResult:
        status = get_path(body, self.cfg.status_path)
        reason = get_path(body, self.cfg.reason_path) if self.cfg.reason_path else None
        text = f"{status}: {reason}" if reason else str(status)
        if str(status) in self.cfg.refused_values:
            return PollResult("refused", text)
        if str(status) in self.cfg.failed_values:
            return PollResult("failed", text)
        if str(status) not in self.cfg.done_values:
            return PollResult("pending", str(status))
        url = get_path(body, self.cfg.download_url_path) if self.cfg.download_url_path else None
        if url is None and self.cfg.download_url:
            url = fill(self.cfg.download_url, self._values(job_id=job_id))
        if not url:
            return PollResult("failed", f"done, but no download URL at {self.cfg.download_url_path!r}")
        same_host = str(url).startswith(self.base) if self.base else False
        return PollResult("done", download=HttpCall("GET", str(url), headers=self.headers if same_host else {}))

    def refusal(self, status: int, body: Any) -> str | None:
        text = str(body)
        return f"HTTP {status}: {self.error_message(body)}" if self.refusal_re.search(text) else None


class HttpJobGenerator(ApiGenerator):
    """Any create → poll → download HTTP job API described by a YAML file."""

    name = "http"
    provider = "http"

    def __init__(self, target: str, name: str | None = None, **params: Any):
        super().__init__(target, name, **params)
        try:
            with open(target, encoding="utf-8") as fh:
                raw = yaml.safe_load(fh)
            self.cfg = HttpJobConfig.model_validate(raw)
            re.compile(self.cfg.refusal_pattern)
        except OSError as exc:
            raise ValueError(f"http job config {target}: {exc.strerror or exc}") from None
        except (yaml.YAMLError, ValidationError, re.error) as exc:
            raise ValueError(f"http job config {target}: {exc}") from None
        self.key_envs = (self.cfg.key_env,) if self.cfg.key_env else ()  # type: ignore[misc]

    @classmethod
    def default_name(cls, target: str) -> str:
        from vreason.core.records import safe_id_from

        return safe_id_from(os.path.splitext(os.path.basename(target))[0])

    def bind(self, ctx: GenContext) -> None:
        super().bind(ctx)
        if not ctx.dry_run:
            try:
                self._resolved()
            except ValueError as exc:
                raise ConfigError(f"model {self._name} (http:{self.target}): {exc}") from None

    def model_id(self) -> str:
        return f"http/{self.cfg.model or self._name}"

    def _resolved(self) -> tuple[str, dict[str, str], list[str]]:
        used: list[str] = []
        base = expand_env(self.opts.base_url or self.cfg.base_url, used).rstrip("/")
        headers = {k: expand_env(v, used) for k, v in self.cfg.headers.items()}
        return base, headers, used

    def base_url(self) -> str:
        try:
            return self._resolved()[0]
        except ValueError:
            return self.opts.base_url or self.cfg.base_url

    def adapter(self, key: str | None) -> JobAdapter:
        base, headers, _ = self._resolved()
        return HttpJobAdapter(self.cfg, base, headers)

    def engine(self):  # type: ignore[no-untyped-def]
        first = self._engine is None
        eng = super().engine()
        if first:
            eng.secrets.extend(v for v in self._resolved()[2] if v)
        return eng

    def request_params(self) -> dict[str, Any]:
        return {"model": self.cfg.model, "create": self.cfg.create.model_dump()}

    def video_seconds(self) -> float:
        return self.cfg.video_seconds

