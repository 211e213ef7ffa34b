"""The OpenAI-compatible backend against a loopback server (real HTTP, the real ``openai`` client)."""

from __future__ import annotations

import asyncio
import base64
import io
import json
import logging
import time

import numpy as np
import pytest
from PIL import Image

from vreason.judge import parsers
from vreason.judge.base import Decoding, ImagePart, JudgeRequest, TextPart, VideoPart
from vreason.judge.retry import RetryPolicy
from vreason.judge.spec import make_judge
from vreason.testing.loopback import LoopbackServer, Reply

FAST = RetryPolicy(max_retries=3, base=0.01, cap=1.0, seed=0)
KEY = "sk-test-SECRET-0123456789abcdef"


def frames(n=3, h=24, w=32):
    """Frames with distinct solid colours so their order is checkable after JPEG."""
    return [np.full((h, w, 3), (40 * i + 20, 200 - 40 * i, 100), np.uint8) for i in range(n)]


def request(n=3, text="Does the ball reach the goal?", **kw):
    parts = [TextPart(text)] + [ImagePart(f, label=f"Frame {i + 1}") for i, f in enumerate(frames(n))]
    return JudgeRequest(
        parts=parts, system="You judge videos.", template="generic_yes_no", template_version="1", **kw
    )


def judge_for(srv, tmp_path=None, **kw):
    kw.setdefault("retry", FAST)
    cfg = {"backend": "vllm", "model": "qwen-test", "base_url": srv.base_url, "timeout": 0.5}
    cfg.update(kw.pop("cfg", {}))
    cache = str(tmp_path / "judge.sqlite") if tmp_path is not None else None
    return make_judge(cfg, cache_path=cache, **kw)


def ask(client, req, parser):
    async def go():
        try:
            return await client.ask(req, parser)
        finally:
            await client.judge.aclose()

    return asyncio.run(go())


def decode_data_url(url: str) -> np.ndarray:
    assert url.startswith("data:image/jpeg;base64,")
    return np.asarray(Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).convert("RGB"))


def test_request_shape():
    with LoopbackServer(["Yes"]) as srv:
        c = judge_for(srv)
        o = ask(c, request(3, decoding=Decoding(temperature=0.0, seed=7, max_tokens=64)), parsers.yes_no())
        assert o.ok and o.value is True
        body = srv.requests[0]
    assert body["model"] == "qwen-test"
    assert body["temperature"] == 0.0 and body["seed"] == 7 and body["max_tokens"] == 64
    sys_msg, user = body["messages"]
    assert sys_msg == {"role": "system", "content": "You judge videos."}
    content = user["content"]
    assert [p["type"] for p in content] == ["text"] + ["text", "image_url"] * 3
    assert content[0]["text"] == "Does the ball reach the goal?"
    assert [p["text"] for p in content[1::2]] == ["Frame 1", "Frame 2", "Frame 3"]
    for i, part in enumerate(content[2::2]):  # frames in order: each decodes to its own colour
        img = decode_data_url(part["image_url"]["url"])
        assert img.shape == (24, 32, 3)
        assert np.abs(img.astype(int) - frames(3)[i].astype(int)).mean() < 4
    assert o.evidence(request()).decoding == {"temperature": 0.0, "seed": 7, "max_tokens": 64}


def test_image_settings_and_video_part(tmp_path):
    video = tmp_path / "v.mp4"
    video.write_bytes(b"\x00\x00\x00\x18ftypmp42fake")
    req = JudgeRequest(
        parts=[TextPart("q"), ImagePart(np.zeros((100, 200, 3), np.uint8)), VideoPart(str(video))]
    )
    with LoopbackServer(["Yes"]) as srv:
        c = judge_for(srv, cfg={"image": {"format": "png", "max_side": 50}})
        assert ask(c, req, parsers.yes_no()).ok
        content = srv.requests[0]["messages"][0]["content"]
    url = content[1]["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    assert Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).size == (50, 25)
    assert content[2]["type"] == "video_url"
    assert base64.b64decode(content[2]["video_url"]["url"].split(",", 1)[1]) == video.read_bytes()


def test_reasoning_models_get_their_parameters():
    """o-series / GPT-5: no temperature, ``max_completion_tokens`` (it counts the hidden reasoning
    tokens too) raised to the reasoning floor so that thinking is not cut off; recorded as sent."""
    with LoopbackServer(["Yes"]) as srv:
        c = judge_for(srv, cfg={"model": "gpt-5-mini"})
        o = ask(c, request(1), parsers.yes_no())
        assert o.ok
        body = srv.requests[0]
    assert "temperature" not in body and "max_tokens" not in body and body["seed"] == 0
    assert body["max_completion_tokens"] == 25000
    assert o.evidence().decoding["max_completion_tokens"] == 25000
    with LoopbackServer(["Yes"]) as srv:  # a protocol cap above the floor is kept; the floor is configurable
        c = judge_for(srv, cfg={"model": "o3", "completion_tokens": {"floor": 4000}})
        assert ask(c, request(1, decoding=Decoding(max_tokens=8192)), parsers.yes_no()).ok
        assert srv.requests[0]["max_completion_tokens"] == 8192
    with LoopbackServer(["Yes"]) as srv:  # a plain model gets the protocol's cap as is (faithful)
        assert ask(judge_for(srv), request(1, decoding=Decoding(max_tokens=1024)), parsers.yes_no()).ok
        assert srv.requests[0]["max_tokens"] == 1024


LABELS = parsers.answer_labels(["Good", "Medium", "Poor"], 3)


@pytest.mark.parametrize(
    "replies, parser, value, n_requests",
    [
        (['<answer>["Good", "Poor", "Medium"]</answer>'], LABELS, ["Good", "Poor", "Medium"], 1),
        (['```json\n{"score": 4}\n```'], parsers.likert(1, 5, key="score"), 4, 1),
        (
            ['Sure! Here is my evaluation.\nThe video is smooth.\n{"score": 5}'],
            parsers.likert(1, 5, key="score"),
            5,
            1,
        ),
        (["{'score': 4"], parsers.json_object(), None, 2),  # malformed twice → unscored
        (
            [Reply('{"score": 4, "reason": "the ba', finish_reason="length"), '{"score": 3}'],
            parsers.likert(1, 5, key="score"),
            3,
            2,
        ),  # truncated, then repaired
        (['<answer>["Good", "Poor"]</answer>', '<answer>["Good", "Poor"]</answer>'], LABELS, None, 2),
        (
            [Reply(None, refusal="I can't help with that."), Reply("I'm sorry, I can't evaluate this.")],
            parsers.yes_no(),
            None,
            2,
        ),
        (["", "Yes"], parsers.yes_no(), True, 2),
    ],
    ids=["valid", "fenced", "preamble", "malformed", "truncated", "wrong-length", "refusal", "empty"],
)
def test_reply_kinds(replies, parser, value, n_requests):
    script = replies if len(replies) >= n_requests else replies * n_requests
    with LoopbackServer(script) as srv:
        o = ask(judge_for(srv), request(1), parser)
        assert srv.count == n_requests
    if value is None:
        assert not o.ok and o.value is None and o.reason and o.raw is not None
    else:
        assert o.ok and o.value == value


def test_truncated_refusal_reasons_are_recorded():
    with LoopbackServer([Reply('{"score": 4', finish_reason="length")] * 2) as srv:
        c = judge_for(srv, cfg={"completion_tokens": {"ceiling": 4096}})
        o = ask(c, request(1, decoding=Decoding(max_tokens=2048)), parsers.likert(1, 5, key="score"))
        assert srv.count == 2 and [b["max_tokens"] for b in srv.requests] == [2048, 4096]
    assert not o.ok and "finish_reason=length" in o.reason and "at 4096 tokens" in o.reason
    assert o.raw == '{"score": 4'
    with LoopbackServer([Reply(None, refusal="I can't help with that.")] * 2) as srv:
        o = ask(judge_for(srv), request(1), parsers.yes_no())
    assert not o.ok and "finish_reason=refusal" in o.reason and o.raw == "I can't help with that."


def test_429_honours_retry_after():
    with LoopbackServer([Reply(status=429, headers={"Retry-After": "0.3"}), "Yes"]) as srv:
        c = judge_for(srv)
        t0 = time.perf_counter()
        o = ask(c, request(1), parsers.yes_no())
        elapsed = time.perf_counter() - t0
        assert srv.count == 2
    assert o.ok and o.value is True and elapsed >= 0.3
    assert c.stats()["retries"] == 1 and c.stats()["errors"] == {"rate_limit": 1}


@pytest.mark.parametrize(
    "failure, kind",
    [
        (Reply(status=500), "server"),
        (Reply(status=503), "server"),
        (Reply("Yes", delay=1.0), "timeout"),
        (Reply(drop=True), "connection"),
    ],
    ids=["500", "503", "timeout", "dropped"],
)
def test_transport_failures_retry_then_value_or_unscored(failure, kind):
    with LoopbackServer([failure, "No"]) as srv:
        c = judge_for(srv)
        o = ask(c, request(1), parsers.yes_no())
        assert srv.count == 2
    assert o.ok and o.value is False and c.stats()["errors"] == {kind: 1}
    with LoopbackServer([failure] * 4) as srv:
        c = judge_for(srv)
        o = ask(c, request(1), parsers.yes_no())
        assert srv.count == 4  # 1 + max_retries
    assert not o.ok and o.value is None and kind in o.reason and "gave up after 4 attempts" in o.reason


def test_client_errors_are_not_retried():
    with LoopbackServer([Reply(status=400), "Yes"]) as srv:
        o = ask(judge_for(srv), request(1), parsers.yes_no())
        assert srv.count == 1
    assert not o.ok and "HTTP 400" in o.reason


def test_cache_second_run_makes_zero_requests(tmp_path):
    replies = ["Yes", '{"score": 4}', "No"]
    questions = [
        (request(2, "q1"), parsers.yes_no()),
        (request(2, "q2"), parsers.likert(1, 5, key="score")),
        (request(3, "q3"), parsers.yes_no()),
    ]

    def run_all(srv):
        c = judge_for(srv, tmp_path)

        async def go():
            outs = await asyncio.gather(*(c.ask(r, p) for r, p in questions))
            await c.aclose()
            return outs

        return c, asyncio.run(go())

    with LoopbackServer(lambda body: replies[int(body["messages"][1]["content"][0]["text"][1]) - 1]) as srv:
        c1, first = run_all(srv)
        assert srv.count == 3
        c2, second = run_all(srv)
        assert srv.count == 3  # zero new requests
    assert [o.value for o in first] == [o.value for o in second] == [True, 4, False]
    assert c2.stats()["cache_hits"] == 3 and c2.stats()["requests"] == 0
    assert all(o.cached for o in second) and not any(o.cached for o in first)
    assert [o.evidence().raw_reply for o in first] == [o.evidence().raw_reply for o in second]


def test_api_key_never_stored_or_logged(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("MY_JUDGE_KEY", KEY)
    caplog.set_level(logging.DEBUG)
    with LoopbackServer(["maybe", "Yes", Reply(status=401), Reply(status=401)]) as srv:
        c = judge_for(srv, tmp_path, cfg={"api_key_env": "MY_JUDGE_KEY"})
        ok = ask(c, request(1), parsers.yes_no())
        c2 = judge_for(srv, cfg={"api_key_env": "MY_JUDGE_KEY"})
        bad = ask(c2, request(1, "other"), parsers.yes_no())
        assert srv.headers[0]["authorization"] == f"Bearer {KEY}"  # it was sent
    assert ok.ok and not bad.ok
    blobs = [json.dumps(o.evidence(request(1)).model_dump()) for o in (ok, bad)]
    blobs += [bad.reason, json.dumps(c.stats()), c.identity, caplog.text, repr(c.judge.settings())]
    for name in tmp_path.iterdir():
        blobs.append(name.read_bytes().decode("latin-1"))
    for blob in blobs:
        assert KEY not in blob and "SECRET" not in blob


def test_missing_key_for_remote_endpoint(monkeypatch):
    from vreason.core.errors import ConfigError

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        make_judge("openai:gpt-5")


def test_concurrency_limit_is_respected():
    with LoopbackServer(latency=0.05, default="Yes") as srv:
        c = judge_for(srv, max_concurrency=3)

        async def go():
            outs = await asyncio.gather(*(c.ask(request(0, f"q{i}"), parsers.yes_no()) for i in range(12)))
            await c.aclose()
            return outs

        outs = asyncio.run(go())
    assert all(o.ok for o in outs) and srv.count == 12
    assert c.limiter.peak_in_flight == 3


def test_extra_decoding_parameters_are_sent_and_recorded():
    fmt = {"type": "json_object"}
    with LoopbackServer(['{"score": 2}']) as srv:
        req = request(0, decoding=Decoding(extra={"response_format": fmt}))
        o = ask(judge_for(srv), req, parsers.likert(1, 5, key="score"))
        body = srv.requests[0]
    assert o.ok and o.value == 2 and body["response_format"] == fmt
    assert o.evidence(req).decoding["response_format"] == fmt
