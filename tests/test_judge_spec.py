"""Judge specs (strings and YAML), key handling, shared limits, retry policy and the loopback server."""

from __future__ import annotations

import asyncio
import time
import urllib.request

import pytest

from vreason.core.errors import ConfigError
from vreason.judge import parsers
from vreason.judge.base import JudgeRequest, TextPart
from vreason.judge.limits import Limiter, shared_limiter
from vreason.judge.retry import JudgeTransportError, RetryPolicy, parse_retry_after
from vreason.judge.spec import GEMINI_URL, make_judge, parse_spec
from vreason.testing.loopback import LoopbackServer, Reply


def test_parse_spec_strings():
    assert parse_spec("openai:gpt-5") == {"backend": "openai", "model": "gpt-5"}
    assert parse_spec("openai:gpt-4o@https://example.org/v1") == {
        "backend": "openai",
        "model": "gpt-4o",
        "base_url": "https://example.org/v1",
    }
    assert (
        parse_spec("vllm:Qwen/Qwen3-VL-8B-Instruct@http://localhost:8000/v1")["model"]
        == "Qwen/Qwen3-VL-8B-Instruct"
    )
    assert parse_spec("transformers:/models/qwen") == {"backend": "transformers", "path": "/models/qwen"}
    assert parse_spec("scripted:replies.jsonl") == {"backend": "scripted", "script": "replies.jsonl"}
    for bad in ("gpt-5", "claude:x", "openai:"):
        with pytest.raises(ConfigError):
            parse_spec(bad)


def test_openai_and_gemini_identities(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-a")
    monkeypatch.setenv("GEMINI_API_KEY", "g-b")
    c = make_judge("openai:gpt-5")
    assert c.identity == "openai:gpt-5@api.openai.com" and c.judge.reasoning
    g = make_judge("gemini:gemini-2.5-pro")
    assert (
        g.judge.base_url == GEMINI_URL
        and g.identity == "gemini:gemini-2.5-pro@generativelanguage.googleapis.com"
    )
    assert g.judge.api_key_env == "GEMINI_API_KEY"
    monkeypatch.delenv("GEMINI_API_KEY")
    with pytest.raises(ConfigError, match="GEMINI_API_KEY"):
        make_judge("gemini:gemini-2.5-pro")
    # a local server needs no key
    monkeypatch.delenv("VLLM_API_KEY", raising=False)
    assert make_judge("vllm:qwen@http://127.0.0.1:8000/v1").identity == "vllm:qwen@127.0.0.1:8000"


def test_yaml_config(tmp_path, monkeypatch):
    monkeypatch.setenv("MY_KEY", "k")
    f = tmp_path / "judge.yaml"
    f.write_text(
        "backend: openai\nmodel: gpt-4o\nbase_url: https://proxy.example/v1\napi_key_env: MY_KEY\n"
        "max_concurrency: 4\nrpm: 600\nprice: {input: 2.5, output: 10}\nimage: {max_side: 512, quality: 80}\n"
        "repeats: 3\nreduce: median\nretries: 2\n"
    )
    c = make_judge(str(f))
    assert c.identity == "openai:gpt-4o@proxy.example" and c.repeats == 3 and c.reduce == "median"
    assert c.judge.max_side == 512 and c.judge.jpeg_quality == 80 and c.retry.max_retries == 2
    assert c.price.input == 2.5 and c.limiter.rpm == 600
    f.write_text("backend: openai\nmodel: gpt-4o\napi_key: sk-inline\n")
    with pytest.raises(ConfigError, match="environment"):
        make_judge(str(f))
    f.write_text("backend: openai\nmodel: gpt-4o\nmodle: typo\n")
    with pytest.raises(ConfigError, match="unknown keys"):
        make_judge(str(f))


def test_price_table_prefix(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-a")
    c = make_judge("openai:gpt-4o-2024-08-06", price_table={"gpt-4o": {"input": 2.5, "output": 10.0}})
    assert c.price.cost(1_000_000, 100_000) == pytest.approx(3.5)


def test_shared_limiter_per_endpoint():
    a = shared_limiter("test-endpoint-x", 8)
    b = shared_limiter("test-endpoint-x", 4, rpm=60)
    assert a is b and a.max_concurrency == 4 and a.rpm == 60
    assert shared_limiter("test-endpoint-x", 16).rpm is None  # the last configuration wins
    assert shared_limiter("test-endpoint-y", 8) is not a


def test_rpm_spacing():
    lim = Limiter(8, rpm=600)  # one start every 0.1 s

    async def go():
        starts = []

        async def one():
            async with lim.slot():
                starts.append(time.monotonic())

        await asyncio.gather(*(one() for _ in range(4)))
        return starts

    starts = sorted(asyncio.run(go()))
    # The limiter schedules the k-th start at the first's time + k × 0.1 s; a task woken late (a busy machine) only
    # records a later time, so a single gap may be short after a long one, but the k-th start is never early.
    since_first = [s - starts[0] for s in starts]
    assert all(d >= 0.1 * k - 0.005 for k, d in enumerate(since_first)), since_first


def test_retry_policy():
    p = RetryPolicy(base=1.0, cap=10.0, jitter=0.5, seed=1)
    server = JudgeTransportError("server", "x")
    delays = [p.delay(i, server) for i in range(6)]
    for i, d in enumerate(delays):
        full = min(10.0, 2.0**i)
        assert full * 0.5 <= d <= full
    assert p.delay(0, JudgeTransportError("rate_limit", "x", retry_after=3.0)) == 3.0
    assert p.delay(0, JudgeTransportError("rate_limit", "x", retry_after=99.0)) == 10.0
    assert parse_retry_after({"retry-after": "2"}) == 2.0
    assert parse_retry_after({"retry-after-ms": "250"}) == 0.25
    assert parse_retry_after({}) is None
    assert not JudgeTransportError("fatal", "x").retryable


def test_loopback_server_scripts():
    with LoopbackServer(["a", Reply(status=503)], model="m") as srv:
        with urllib.request.urlopen(f"{srv.base_url}/models") as r:
            assert b'"m"' in r.read()
        c = make_judge(
            {"backend": "vllm", "model": "m", "base_url": srv.base_url, "timeout": 2},
            retry=RetryPolicy(max_retries=0),
        )
        o1 = asyncio.run(c.ask(JudgeRequest([TextPart("x")]), lambda t: t))
        o2 = asyncio.run(c.ask(JudgeRequest([TextPart("y")]), lambda t: t))
        o3 = asyncio.run(c.ask(JudgeRequest([TextPart("z")]), lambda t: t))
        assert srv.count == 3 and [r["messages"][0]["content"][0]["text"] for r in srv.requests] == [
            "x",
            "y",
            "z",
        ]
    assert o1.value == "a" and "HTTP 503" in o2.reason and "HTTP 500" in o3.reason  # script exhausted → 500

    with LoopbackServer(lambda body: body["messages"][-1]["content"][0]["text"].upper()) as srv:
        c = srv.client()
        assert asyncio.run(c.ask(JudgeRequest([TextPart("yes")]), parsers.yes_no())).value is True
        assert c.identity == f"vllm:loopback@127.0.0.1:{srv.port}"


def test_missing_api_key_refuses_a_real_judge_but_not_a_dry_run(monkeypatch):
    import os

    from vreason.judge.spec import make_judge

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        make_judge("openai:gpt-5")
    client = make_judge("openai:gpt-5", dry_run=True)  # sends nothing, so needs no key
    assert client is not None
    assert "OPENAI_API_KEY" not in os.environ  # and no key was placed in the environment
