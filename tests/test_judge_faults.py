"""Judge faults against the loopback server: replies cut off by the token cap (finish_reason=length)
and garbage HTTP 200 replies (HTML, empty choices, null content, truncated JSON) — never cached as
answers, named for what they are, and asked again by the next run (``--retry-failed``)."""

from __future__ import annotations

import asyncio
import json

import pytest

from vreason.judge import parsers
from vreason.judge.base import Decoding, JudgeReply, JudgeRequest, TextPart
from vreason.judge.cache import ReplyCache, request_key
from vreason.judge.retry import RetryPolicy, TokenCaps
from vreason.judge.spec import make_judge
from vreason.testing.loopback import LoopbackServer, Reply

FAST = RetryPolicy(max_retries=2, base=0.01, cap=0.1, seed=0)
HTML = "<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"


def request(max_tokens=1024, text="Does the ball reach the goal? Answer Yes or No."):
    return JudgeRequest(parts=[TextPart(text)], system="You judge videos.", template="t", template_version="1",
                        decoding=Decoding(max_tokens=max_tokens))


def judge_for(srv, cache=None, model="qwen-test", **cfg):
    spec = {"backend": "vllm", "model": model, "base_url": srv.base_url, "timeout": 2.0, **cfg}
    return make_judge(spec, cache_path=cache, retry=FAST)


def ask(client, req=None, parser=None):
    async def go():
        try:
            return await client.ask(req or request(), parser or parsers.yes_no())
        finally:
            await client.judge.aclose()

    return asyncio.run(go())


def cap_of(body):
    return body.get("max_completion_tokens", body.get("max_tokens"))


# ---------------------------------------------------------------- item 7: the completion-token cap
def test_cut_off_reply_is_asked_again_with_a_larger_cap_then_succeeds(tmp_path):
    cache = str(tmp_path / "c.sqlite")
    script = [Reply("Let me think about the ball. It starts at", finish_reason="length"), "Yes"]
    with LoopbackServer(script) as srv:
        o = ask(judge_for(srv, cache))
        assert o.ok and o.value is True and o.length_retries == 1 and o.requests == 2
        assert [cap_of(b) for b in srv.requests] == [1024, 2048]
        ev = o.evidence(request())
        assert ev.decoding["max_tokens"] == 2048 and ev.model_extra["length_retries"] == 1
        # the answer is cached under the question as first asked, with the cap it took: no request again
        again = ask(judge_for(srv, cache))
        assert srv.count == 2 and again.cached and again.value is True
        assert again.evidence(request()).decoding["max_tokens"] == 2048


def test_reasoning_model_that_spends_its_cap_thinking_gets_more(tmp_path):
    """o3 / GPT-5 answer nothing visible (content null or "") when the reasoning used the whole cap."""
    script = [Reply(None, finish_reason="length", usage={"prompt_tokens": 900, "completion_tokens": 25000}),
              Reply("", finish_reason="length"), "No"]
    with LoopbackServer(script) as srv:
        o = ask(judge_for(srv, model="o3"))
        assert o.ok and o.value is False
        caps = [b["max_completion_tokens"] for b in srv.requests]
        assert caps == [25000, 50000, 100000] and all("max_tokens" not in b for b in srv.requests)
    assert o.usage.completion_tokens >= 25000


def test_reply_that_stays_cut_off_is_unscored_with_reason_and_raw():
    cut = Reply('[{"question": "q1", "answer": "Ye', finish_reason="length")
    with LoopbackServer(default=cut) as srv:
        client = judge_for(srv, completion_tokens={"ceiling": 3000})
        o = ask(client, parser=parsers.json_list())
        assert [cap_of(b) for b in srv.requests] == [1024, 2048, 3000]
    assert not o.ok and o.value is None and o.raw == cut.text
    assert "cut off by the completion-token cap (finish_reason=length) at 3000 tokens" in o.reason
    assert o.evidence(request()).raw_reply == cut.text and client.stats()["length_retries"] == 2


def test_token_cap_config_is_checked():
    from vreason.core.errors import ConfigError

    with LoopbackServer([]) as srv:
        with pytest.raises(ConfigError, match="unknown keys"):
            judge_for(srv, completion_tokens={"max": 5})
        with pytest.raises(ConfigError, match="growth"):
            judge_for(srv, completion_tokens={"growth": 1})
    assert TokenCaps(ceiling=100).grow(60) == 100 and TokenCaps(ceiling=100).grow(100) is None
    assert TokenCaps(floor=500, ceiling=1000).initial(64) == 500 and TokenCaps().initial(64) == 64


# ---------------------------------------------------------------- item 2: garbage replies
GARBAGE = {
    "html": (Reply(body=HTML, content_type="text/html"), "HTML page (text/html) instead of JSON"),
    "html-as-json": (Reply(body=HTML), "HTML page (application/json) instead of JSON"),
    "empty-choices": (Reply(body={"id": "x", "choices": []}), "choices list empty"),
    "null-content": (Reply(None), "message content null (finish_reason=stop)"),
    "no-choices": (Reply(body={"id": "x", "object": "chat.completion"}), "no 'choices' in the reply"),
    "error-200": (Reply(body={"error": {"message": "upstream overloaded"}}), "error object in an HTTP 200"),
    "truncated-json": (Reply(body='{"id": "x", "choices": [{"message": {"content": "Ye'), "truncated JSON body"),
    "plain-text": (Reply(body="Service Unavailable", content_type="text/plain"), "non-JSON body (text/plain)"),
}


@pytest.mark.parametrize("name", list(GARBAGE))
def test_garbage_is_retried_named_and_never_cached(name, tmp_path):
    bad, what = GARBAGE[name]
    cache = str(tmp_path / "c.sqlite")
    with LoopbackServer(default=bad) as srv:
        client = judge_for(srv, cache)
        o = ask(client)
        assert srv.count == 1 + FAST.max_retries  # retried like a 5xx, then given up
    assert not o.ok and o.value is None and what in o.reason and "empty reply" not in o.reason
    assert "gave up after 3 attempts" in o.reason and o.raw  # what came back is kept as the raw reply
    assert client.stats()["errors"] == {"bad_reply": 3}
    assert len(ReplyCache(cache)) == 0
    # the next run (--retry-failed) sends the question again, and a good reply is then cached
    with LoopbackServer(["Yes"]) as srv:
        o2 = ask(judge_for(srv, cache))
        assert srv.count == 1 and o2.ok and o2.value is True and not o2.cached
    assert len(ReplyCache(cache)) == 1


def test_truncated_json_then_whole_reply_is_a_value():
    trunc = Reply(body='{"choices": [{"index": 0, "message": {"role": "assistant", "content": "Ye')
    with LoopbackServer([trunc, Reply(status=503), "Yes"]) as srv:
        client = judge_for(srv)
        o = ask(client)
        assert o.ok and o.value is True and srv.count == 3
    assert client.stats()["errors"] == {"bad_reply": 1, "server": 1} and client.stats()["retries"] == 2


def test_unparseable_reply_is_not_cached_and_old_garbage_rows_are_misses(tmp_path):
    cache_path = str(tmp_path / "c.sqlite")
    with LoopbackServer(["maybe", "perhaps"]) as srv:  # unparseable, re-asked, unparseable again
        o = ask(judge_for(srv, cache_path))
        assert not o.ok and srv.count == 2
    assert len(ReplyCache(cache_path)) == 0
    # a cache written by an older version holds an empty reply for the question: it is not an answer
    with LoopbackServer(["Yes"]) as srv:
        client = judge_for(srv, cache_path)
        settings = client.judge.settings()
        key = request_key(client.identity, request(), settings)
        client.cache.put(key, JudgeReply(text="", finish_reason="no_choices"), judge=client.identity,
                         request=request())
        o = ask(client)
        assert srv.count == 1 and o.ok and not o.cached and client.stats()["cache_hits"] == 0
    assert ReplyCache(cache_path).get(key).text == "Yes"


def test_retry_failed_through_the_runner_sends_garbage_questions_again(tmp_path):
    """A judged run whose judge answered HTML: units unscored; the same command again skips them;
    ``--retry-failed`` asks the judge again (nothing was cached) and scores them."""
    from fixtures_rise import write_dataset, write_videos
    from test_rise_e2e import judge_script
    from vreason.runner.run import RunConfig, Runner
    from vreason.store import RunStore

    data = write_dataset(str(tmp_path / "RISE"))
    videos = str(tmp_path / "videos")
    write_videos(videos, "good", good=True)
    run_dir = str(tmp_path / "runs" / "rise")
    mode = {"garbage": True}
    good = judge_script(True)

    def script(body):
        return Reply(body=HTML, content_type="text/html") if mode["garbage"] else good(body)

    with LoopbackServer(script) as srv:
        spec = tmp_path / "judge.yaml"
        spec.write_text(json.dumps({"backend": "vllm", "model": "judge", "base_url": srv.base_url,
                                    "retries": 0, "backoff": 0.01, "timeout": 5}))

        def cfg(**kw):
            return RunConfig(protocol="rise", run_dir=run_dir, models=["good"],
                             options={"data": data, "videos": videos, "n_boot": 50},
                             judges={"default": str(spec)}, workers=1, **kw)

        first = Runner(cfg()).run()
        failed = sum(n for status, n in first.units_run.items() if status != "ok")
        assert failed > 0 and srv.count > 0
        with RunStore(run_dir) as st:
            df = st.scores_frame()
        judged = df[df.judge.notna()]
        assert (judged.status == "unscored").all()
        assert judged.evidence.str.contains("HTML page (text/html) instead of JSON", regex=False).all()

        sent = srv.count
        Runner(cfg()).run()  # the same command: failed units are not re-run
        assert srv.count == sent

        mode["garbage"] = False
        retry = Runner(cfg(retry_failed=True)).run()
        assert srv.count > sent and retry.units_run.get("ok", 0) >= failed
        with RunStore(run_dir) as st:
            df = st.scores_frame()
        assert (df[df.judge.notna()].status == "ok").all()
