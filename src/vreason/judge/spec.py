"""Build a :class:`~vreason.judge.client.JudgeClient` from one spec string or a small YAML file.

Spec strings::

    openai:gpt-5                        OpenAI, key from OPENAI_API_KEY
    openai:gpt-4o@https://host/v1       any OpenAI-compatible endpoint
    gemini:gemini-2.5-pro               Gemini's OpenAI-compatible endpoint, key from GEMINI_API_KEY
    vllm:Qwen/Qwen3-VL-8B-Instruct@http://localhost:8000/v1   a local server (any key accepted)
    transformers:/path/to/checkpoint    a local Qwen2-VL / Qwen2.5-VL folder (extra ``deep``)
    scripted:/path/replies.jsonl        replies from a file (tests, demos; format: docs/judges.md)
    mock  or  mock:quality=0.7,seed=3   offline made-up replies in every template's format (judge/mock.py)
    path/to/judge.yaml                  a YAML file (below)
    myjudge:TARGET                      a plugin backend registered with ``@judges.register("myjudge")``

Every backend is resolved through the ``judges`` registry (:mod:`vreason.core.registry`): the built-in ones are
declared in :mod:`vreason.catalog`; a plugin (``--plugin file.py``) registers a :class:`~vreason.judge.base.Judge`
class, or a factory returning one, called with the spec's ``TARGET`` (the text after ``myjudge:``, or the
YAML's ``model``).

YAML keys: ``backend`` (openai | gemini | vllm | transformers | scripted | mock), ``model``, ``base_url``,
``api_key_env``, ``timeout``, ``max_concurrency``, ``rpm``, ``price: {input, output}`` (USD per 1M
tokens), ``image: {format, quality, max_side, detail}``, ``video_mode``, ``reasoning``,
``drop_params``, ``extra_body``, ``retries``, ``backoff``, ``reasks``, ``repeats``, ``reduce``,
``completion_tokens: {floor, ceiling, growth}`` (the token cap: see :class:`~vreason.judge.retry.TokenCaps`),
``path``/``device``/``dtype`` (transformers), ``script``/``cycle`` (scripted), ``quality``/``seed`` (mock).
Keys are never read from YAML: only the *name* of the environment variable that holds one.
"""

from __future__ import annotations

import os
from typing import Any

from vreason.core.errors import ConfigError
from vreason.judge.accounting import Price, price_for
from vreason.judge.base import Judge
from vreason.judge.cache import ReplyCache
from vreason.judge.client import JudgeClient
from vreason.judge.limits import shared_limiter
from vreason.judge.retry import (
    LOCAL_TOKEN_CAPS,
    PLAIN_TOKEN_CAPS,
    REASONING_TOKEN_CAPS,
    RetryPolicy,
    TokenCaps,
)

GEMINI_URL = "https://generativelanguage.googleapis.com/v1beta/openai/"
VLLM_URL = "http://localhost:8000/v1"
_BACKENDS = ("openai", "gemini", "vllm", "transformers", "hf", "scripted", "suite", "mock")
_YAML_KEYS = {
    "backend",
    "model",
    "base_url",
    "api_key_env",
    "timeout",
    "max_concurrency",
    "rpm",
    "price",
    "image",
    "video_mode",
    "reasoning",
    "drop_params",
    "extra_body",
    "retries",
    "backoff",
    "reasks",
    "repeats",
    "reduce",
    "path",
    "device",
    "dtype",
    "script",
    "cycle",
    "name",
    "quality",
    "seed",
    "completion_tokens",
}


def parse_spec(spec: str) -> dict[str, Any]:
    """The config mapping a spec string or YAML path stands for."""
    spec = spec.strip()
    if spec.split(":", 1)[0].lower() == "mock":  # offline mock judge (judge/mock.py): mock or mock:quality=Q,seed=N
        from vreason.judge.mock import parse_mock_args

        return parse_mock_args(spec.split(":", 1)[1] if ":" in spec else "")
    if spec.split(":", 1)[0].lower() == "suite":  # the built-in suite's QA answerer (judge/suite_answerer.py)
        return {"backend": "suite", "name": spec.split(":", 1)[1] if ":" in spec else "answerer"}
    if (spec.endswith((".yaml", ".yml")) and spec.split(":", 1)[0].lower() not in _BACKENDS
            and not _plugin_backend(spec.split(":", 1)[0].strip())):
        return _load_yaml(spec)
    if ":" not in spec:
        raise ConfigError(f"judge spec {spec!r}: expected BACKEND:MODEL (e.g. openai:gpt-5) or a YAML file")
    backend, rest = spec.split(":", 1)
    backend = backend.strip().lower()
    if backend in ("transformers", "hf"):
        return {"backend": "transformers", "path": rest}
    if backend == "scripted":
        return {"backend": "scripted", "script": rest}
    if backend not in ("openai", "gemini", "vllm"):
        plugin = _plugin_backend(spec.split(":", 1)[0].strip())
        if plugin:
            return {"backend": plugin, "model": rest}
        others = "".join(f", {n}" for n in _plugin_names())
        raise ConfigError(
            f"judge spec {spec!r}: unknown backend {backend!r} "
            f"(openai, gemini, vllm, transformers, scripted, mock, suite{others}, or a YAML file)"
        )
    model, base_url = rest, None
    if "@" in rest:
        model, base_url = rest.split("@", 1)
    if not model:
        raise ConfigError(f"judge spec {spec!r}: no model name")
    cfg: dict[str, Any] = {"backend": backend, "model": model}
    if base_url:
        cfg["base_url"] = base_url
    return cfg


def _load_yaml(path: str) -> dict[str, Any]:
    import yaml

    try:
        with open(path, encoding="utf-8") as f:
            data = yaml.safe_load(f)
    except FileNotFoundError:
        raise ConfigError(f"judge config {path} does not exist") from None
    except yaml.YAMLError as e:
        raise ConfigError(f"judge config {path} is not valid YAML: {e}") from None
    if not isinstance(data, dict) or "backend" not in data:
        raise ConfigError(f"judge config {path}: expected a mapping with at least 'backend'")
    if "api_key" in data:
        raise ConfigError(
            f"judge config {path}: keys are read from the environment only; use api_key_env: NAME_OF_VARIABLE"
        )
    unknown = set(data) - _YAML_KEYS
    if unknown:
        raise ConfigError(f"judge config {path}: unknown keys {sorted(unknown)}")
    if data.get("backend") == "scripted" and data.get("script"):
        base = os.path.dirname(os.path.abspath(path))
        data["script"] = os.path.join(base, data["script"])
    return data


def _registry() -> Any:
    from vreason.core.registry import judges, load_builtins

    load_builtins()  # declares the built-in backends (lazily: imports nothing heavy)
    return judges


_BUILTIN = frozenset(("openai", "transformers", "scripted", "mock", "suite"))
"""Built-in entries of the ``judges`` registry (``gemini`` and ``vllm`` are providers of ``openai``)."""


def _plugin_names() -> list[str]:
    return [n for n in _registry().names() if n not in _BUILTIN]


def _plugin_backend(name: str) -> str | None:
    """The registered name of a plugin backend ``name`` (exactly, else the one that matches ignoring case),
    or ``None``."""
    plugins = _plugin_names()
    if name in plugins:
        return name
    same = [n for n in plugins if n.casefold() == name.casefold()]
    return same[0] if len(same) == 1 else None


def _backend_class(name: str) -> Any:
    return _registry().get(name)


def build_backend(cfg: dict[str, Any], *, require_key: bool = True) -> Judge:
    """The backend for a parsed judge config; ``require_key=False`` (dry runs) accepts a missing API key."""
    plugin = _plugin_backend(str(cfg.get("backend", "")))
    if plugin:
        factory = _backend_class(plugin)
        judge = factory(str(cfg.get("model") or ""))
        if not isinstance(judge, Judge):
            raise ConfigError(f"judge backend {plugin!r}: the registered factory returned {type(judge).__name__}, "
                              "not a vreason.judge.base.Judge")
        return judge
    backend = str(cfg.get("backend", "")).lower()
    if backend in ("openai", "gemini", "vllm"):
        OpenAIJudge = _backend_class("openai")  # noqa: N806 - a class

        default_url = {"openai": None, "gemini": GEMINI_URL, "vllm": VLLM_URL}[backend]
        default_env = {"openai": "OPENAI_API_KEY", "gemini": "GEMINI_API_KEY", "vllm": "VLLM_API_KEY"}[
            backend
        ]
        image = dict(cfg.get("image") or {})
        unknown = set(image) - {"format", "quality", "max_side", "detail"}
        if unknown:
            raise ConfigError(f"judge image settings: unknown keys {sorted(unknown)}")
        kw: dict[str, Any] = dict(
            base_url=cfg.get("base_url") or default_url,
            api_key_env=cfg.get("api_key_env") or default_env,
            provider=backend,
            image_format=image.get("format", "jpeg"),
            jpeg_quality=image.get("quality", 90),
            max_side=image.get("max_side"),
            image_detail=image.get("detail"),
            video_mode=cfg.get("video_mode", "data"),
            reasoning=cfg.get("reasoning"),
            drop_params=cfg.get("drop_params") or (),
            extra_body=cfg.get("extra_body"),
            require_key=require_key,
        )
        if cfg.get("timeout") is not None:
            kw["timeout"] = float(cfg["timeout"])
        return OpenAIJudge(str(cfg.get("model") or ""), **kw)
    if backend == "transformers":
        TransformersJudge = _backend_class("transformers")  # noqa: N806 - a class

        if not cfg.get("path"):
            raise ConfigError("transformers judge: 'path' to a local checkpoint folder is required")
        return TransformersJudge(
            str(cfg["path"]),
            device=cfg.get("device", "cpu"),
            dtype=cfg.get("dtype"),
            max_side=(cfg.get("image") or {}).get("max_side"),
        )
    if backend == "scripted":
        ScriptedJudge = _backend_class("scripted")  # noqa: N806 - a class

        if not cfg.get("script"):
            raise ConfigError("scripted judge: 'script' (a JSONL file) is required")
        return ScriptedJudge(str(cfg["script"]), name=cfg.get("name"), cycle=bool(cfg.get("cycle", False)))
    if backend == "mock":
        MockJudge = _backend_class("mock")  # noqa: N806 - a class

        return MockJudge(quality=float(cfg.get("quality", 0.5)), seed=int(cfg.get("seed", 0)))
    if backend == "suite":
        SuiteAnswerer = _backend_class("suite")  # noqa: N806 - a class

        return SuiteAnswerer(str(cfg.get("name") or "answerer"))
    others = "".join(f", {n}" for n in _plugin_names())
    raise ConfigError(f"unknown judge backend {backend!r} (openai, gemini, vllm, transformers, scripted, mock, suite"
                      f"{others})")


def _default_caps(judge: Judge) -> TokenCaps:
    if getattr(judge, "reasoning", False):
        return REASONING_TOKEN_CAPS
    return LOCAL_TOKEN_CAPS if getattr(judge, "backend", "") == "transformers" else PLAIN_TOKEN_CAPS


def _endpoint_key(judge: Judge) -> str:
    ident = judge.identity
    if getattr(judge, "backend", "") == "openai":
        return f"{getattr(judge, 'provider', 'openai')}@{getattr(judge, 'base_url', ident)}"
    return ident


def make_judge(
    spec: str | dict[str, Any],
    *,
    cache_path: str | None = None,
    no_cache: bool = False,
    refresh: bool = False,
    max_concurrency: int | None = None,
    rpm: float | None = None,
    repeats: int | None = None,
    reduce: str | None = None,
    price_table: dict[str, Any] | None = None,
    dry_run: bool = False,
    retry: RetryPolicy | None = None,
    reasks: int | None = None,
    token_caps: TokenCaps | None = None,
) -> JudgeClient:
    """A ready :class:`JudgeClient` for ``spec`` (string, YAML path or config mapping).

    ``cache_path`` is the SQLite reply cache (none when ``None`` or ``no_cache``); ``refresh`` asks
    again and overwrites cached replies. Concurrency and rpm limits are shared by every client of the
    same endpoint in this process. ``token_caps`` (else the YAML's ``completion_tokens`` over the
    defaults for a reasoning or a plain model) sets the completion-token floor, growth and ceiling.
    Arguments override the YAML's values.
    """
    cfg = dict(spec) if isinstance(spec, dict) else parse_spec(spec)
    judge = build_backend(cfg, require_key=not dry_run)
    conc = max_concurrency or cfg.get("max_concurrency") or (1 if cfg["backend"] == "transformers" else 8)
    limiter = shared_limiter(_endpoint_key(judge), int(conc), rpm if rpm is not None else cfg.get("rpm"))
    if retry is None:
        retry = RetryPolicy(max_retries=int(cfg.get("retries", 5)), base=float(cfg.get("backoff", 1.0)))
    price = Price.from_any(cfg.get("price")) or price_for(str(cfg.get("model") or ""), price_table)
    if token_caps is None:
        try:
            token_caps = TokenCaps.from_config(cfg.get("completion_tokens"), _default_caps(judge))
        except ValueError as e:
            raise ConfigError(f"judge {judge.identity}: {e}") from None
    cache = None if (no_cache or not cache_path) else ReplyCache(cache_path)
    return JudgeClient(
        judge,
        cache=cache,
        refresh=refresh,
        limiter=limiter,
        retry=retry,
        reasks=int(reasks if reasks is not None else cfg.get("reasks", 1)),
        repeats=int(repeats if repeats is not None else cfg.get("repeats", 1)),
        reduce=reduce or cfg.get("reduce", "majority"),
        price=price,
        dry_run=dry_run,
        token_caps=token_caps,
    )
