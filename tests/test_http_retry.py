"""The HTTP failure classification and the retry shared by the judge and the video APIs (issue 23 item 5b):
each status and exception, both ``Retry-After`` forms, the policy's waits, and that a judge question and a video
poll both go through them (a loopback server answering 429 with ``Retry-After``, then 200)."""

from __future__ import annotations

import asyncio
import email.utils
import time

import httpx
import openai
import pytest

import vreason.generate.api_jobs as api_jobs
import vreason.judge.retry as judge_retry
from vreason import http_retry
from vreason.http_retry import Failure, RetryPolicy, classify, classify_exception, classify_status, parse_retry_after


# ---------------------------------------------------------------------------------------------- statuses
@pytest.mark.parametrize("status", [200, 201, 204, 302, 399])
def test_a_success_is_no_failure(status) -> None:
    assert classify_status(status) is None


@pytest.mark.parametrize(("status", "kind", "sent", "for_create"), [
    (400, "fatal", False, "fatal"), (401, "fatal", False, "fatal"), (403, "fatal", False, "fatal"),
    (404, "fatal", False, "fatal"), (422, "fatal", False, "fatal"),
    (408, "server", False, "retryable"),  # the server gave up waiting: not processed
    (429, "rate_limit", False, "retryable"),  # checked before processing
    (409, "server", True, "ambiguous"), (500, "server", True, "ambiguous"), (502, "server", True, "ambiguous"),
    (503, "server", True, "ambiguous"), (504, "server", True, "ambiguous"),
])
def test_each_status(status, kind, sent, for_create) -> None:
    f = classify_status(status, {})
    assert f == Failure(kind, sent=sent, status=status)
    assert f.retryable == (kind != "fatal") and f.for_create == for_create


def test_retry_after_is_read_for_429_and_503_only() -> None:
    assert classify_status(429, {"retry-after": "7"}).retry_after == 7.0
    assert classify_status(503, {"retry-after": "4"}).retry_after == 4.0
    assert classify_status(500, {"retry-after": "4"}).retry_after is None
    resp = httpx.Response(429, headers={"Retry-After": "3"})
    assert classify(resp) == Failure("rate_limit", sent=False, status=429, retry_after=3.0)
    assert classify(404) == Failure("fatal", sent=False, status=404)


# ---------------------------------------------------------------------------------------------- exceptions
def _req() -> httpx.Request:
    return httpx.Request("POST", "http://127.0.0.1:9/x")


@pytest.mark.parametrize(("exc", "kind", "sent"), [
    (httpx.ConnectError("refused"), "connection", False),
    (httpx.ConnectTimeout("slow"), "connection", False),
    (httpx.PoolTimeout("pool"), "connection", False),
    (httpx.ReadTimeout("read"), "timeout", True),
    (httpx.WriteTimeout("write"), "timeout", True),
    (httpx.ReadError("reset"), "connection", True),
    (httpx.RemoteProtocolError("closed without response"), "connection", True),
    (ValueError("a bug"), "fatal", False),
])
def test_each_transport_exception(exc, kind, sent) -> None:
    f = classify_exception(exc)
    assert (f.kind, f.sent) == (kind, sent)


def test_openai_sdk_errors() -> None:
    resp = httpx.Response(429, headers={"retry-after-ms": "1500"}, request=_req())
    f = classify_exception(openai.RateLimitError("slow down", response=resp, body=None))
    assert f == Failure("rate_limit", sent=False, status=429, retry_after=1.5)
    resp = httpx.Response(401, request=_req())
    assert classify_exception(openai.AuthenticationError("no", response=resp, body=None)).kind == "fatal"
    assert classify_exception(openai.APITimeoutError(request=_req())) == Failure("timeout", sent=True)
    never = openai.APIConnectionError(request=_req())
    never.__cause__ = httpx.ConnectError("refused")
    assert classify_exception(never) == Failure("connection", sent=False)
    dropped = openai.APIConnectionError(request=_req())
    dropped.__cause__ = httpx.RemoteProtocolError("dropped")
    assert classify_exception(dropped) == Failure("connection", sent=True)


# ---------------------------------------------------------------------------------------------- Retry-After
def test_retry_after_forms() -> None:
    assert parse_retry_after({"retry-after": "2"}) == 2.0
    assert parse_retry_after({"retry-after": "0.25"}) == 0.25
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25  # ms wins
    later = email.utils.formatdate(time.time() + 30, usegmt=True)  # HTTP-date, seconds resolution
    assert 28.0 <= parse_retry_after({"retry-after": later}) <= 30.0
    earlier = email.utils.formatdate(time.time() - 60, usegmt=True)
    assert parse_retry_after({"retry-after": earlier}) == 0.0
    for bad in ("soon", "-3", "inf", "nan", ""):
        assert parse_retry_after({"retry-after": bad}) is None, bad
    assert parse_retry_after({}) is None and parse_retry_after(None) is None
    assert parse_retry_after(httpx.Headers({"Retry-After": "5"})) == 5.0  # case-insensitive headers


def test_policy_waits_retry_after_capped_else_jittered_backoff() -> None:
    p = RetryPolicy(base=1.0, cap=10.0, jitter=0.5, seed=3)
    assert p.delay(0, Failure("rate_limit", retry_after=3.0)) == 3.0
    assert p.delay(4, Failure("rate_limit", retry_after=99.0)) == 10.0  # capped
    for i in range(6):
        full = min(10.0, 2.0**i)
        assert full * 0.5 <= p.delay(i, Failure("server")) <= full
    full_jitter = RetryPolicy(base=1.0, cap=8.0, jitter=1.0, seed=0)
    draws = [full_jitter.delay(3, None) for _ in range(200)]
    assert 0.0 <= min(draws) < 2.0 and 6.0 < max(draws) <= 8.0  # spread over [0, 8]


def test_tenacity_loop_retries_retryable_only_and_waits_the_policy() -> None:
    class Boom(Exception):
        def __init__(self, failure: Failure):
            super().__init__(failure.kind)
            self.retry_after, self.retryable = failure.retry_after, failure.retryable

    slept: list[float] = []

    async def go(errors: list[Failure]) -> int:
        calls = 0
        policy = RetryPolicy(max_retries=3, base=0.001, cap=0.02, seed=0)
        retrying = policy.retrying(lambda e: isinstance(e, Boom) and e.retryable,
                                   lambda s: slept.append(s.next_action.sleep))
        async for attempt in retrying:
            with attempt:
                calls += 1
                if errors:
                    raise Boom(errors.pop(0))
        return calls

    assert asyncio.run(go([Failure("rate_limit", retry_after=0.015), Failure("server")])) == 3
    assert slept[0] == 0.015 and 0 < slept[1] <= 0.002
    with pytest.raises(Boom, match="fatal"):
        asyncio.run(go([Failure("fatal")]))
    with pytest.raises(Boom, match="server"):  # 1 try + 3 retries, then the last error
        asyncio.run(go([Failure("server")] * 4))


# ---------------------------------------------------------------------------------------------- both clients
@pytest.fixture
def spy(monkeypatch):
    """Every wait of the shared policy: (attempt, the error's kind, its Retry-After, the wait)."""
    seen: list[tuple[int, str, float | None, float]] = []
    real = RetryPolicy.delay

    def delay(self, attempt, error=None):
        d = real(self, attempt, error)
        seen.append((attempt, getattr(error, "kind", None), getattr(error, "retry_after", None), d))
        return d

    monkeypatch.setattr(RetryPolicy, "delay", delay)
    return seen


def test_both_clients_use_the_shared_classifier_and_policy() -> None:
    assert judge_retry.RetryPolicy is RetryPolicy and judge_retry.parse_retry_after is parse_retry_after
    assert judge_retry.classify_exception is http_retry.classify_exception
    assert api_jobs.classify_status is http_retry.classify_status
    assert api_jobs.classify_exception is http_retry.classify_exception
    assert api_jobs.RETRYABLE <= http_retry.RETRYABLE


def test_a_judge_question_waits_retry_after_of_a_429_then_gets_its_answer(spy) -> None:
    from vreason.judge import parsers
    from vreason.judge.base import JudgeRequest, TextPart
    from vreason.testing.loopback import LoopbackServer, Reply

    later = email.utils.formatdate(time.time() + 5, usegmt=True)
    script = [Reply(status=429, headers={"Retry-After": "0.05"}), Reply(status=429, headers={"Retry-After": later}),
              "Yes"]
    with LoopbackServer(script) as srv:
        client = srv.client()
        outcome = asyncio.run(client.ask(JudgeRequest(parts=[TextPart("is it?")]), parsers.yes_no()))
        assert srv.count == 3
    assert outcome.ok and outcome.value is True, outcome
    assert [(a, k, d) for a, k, _, d in spy] == [(0, "rate_limit", 0.05), (1, "rate_limit", 0.5)]  # date, capped
    assert 3.0 <= spy[1][2] <= 5.0  # the HTTP-date form was read


def test_a_video_poll_waits_retry_after_of_a_429_then_finishes(tmp_path, spy, monkeypatch) -> None:
    from PIL import Image

    from vreason.core.records import Mode, Sample, VideoStatus
    from vreason.generate.base import GenContext
    from vreason.generate.sora import SoraGenerator
    from vreason.testing.fake_video_api import FakeVideoAPI

    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-0123456789")
    Image.new("RGB", (64, 64), (200, 30, 30)).save(tmp_path / "s.png")
    sample = Sample(id="s1", benchmark="t", prompt="a ball", mode=Mode.ti2v, input_image=str(tmp_path / "s.png"))
    with FakeVideoAPI(latency=0.02, transient={"poll": [429]}, retry_after=0.07) as api:
        g = SoraGenerator("sora-2", None, base_url=api.openai_url, poll_s=0.02, retry_base_s=0.01, retry_cap_s=0.2)
        g.bind(GenContext(run_dir=str(tmp_path)))
        v = asyncio.run(g._generate_and_close(sample, 0, str(tmp_path / "v.mp4")))
        assert v.status == VideoStatus.ok, v.reason
        assert api.calls["poll"] >= 2 and api.total_creates == 1
    assert (0, "rate_limit", 0.07, 0.07) in spy
