"""The video APIs' HTTP client (vreason.generate.http_client, on aiohttp) against loopback servers: reply
framings, keep-alive, gzip, redirects (no credentials to another origin), streamed downloads, and failures
raised as httpx's classes so the create rule's classification (sent / not sent) holds; polling backoff and
the API's Retry-After hint through the engine."""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import socket
import time

import httpx
import pytest

from vreason.generate.http_client import AiohttpClient, make_client
from vreason.http_retry import classify_exception
from vreason.testing.fake_video_api import FakeVideoAPI, _parse_multipart


async def _server(handler):
    """A raw HTTP server on 127.0.0.1: ``handler(method, target, headers, body) -> bytes | None`` (None:
    hang up without a reply); it also records every connection."""
    seen: dict[str, list] = {"conns": [], "requests": []}

    async def conn(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen["conns"].append(writer)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head[:-4].decode().split("\r\n")
                method, target, _ = lines[0].split(" ")
                hdrs = {k.lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:])}
                body = await reader.readexactly(int(hdrs.get("content-length", 0)))
                seen["requests"].append((method, target, hdrs, body))
                out = await handler(method, target, hdrs, body)
                if out is None:
                    writer.transport.abort()
                    return
                writer.write(out)
                await writer.drain()
                if b"Connection: close" in out:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    srv = await asyncio.start_server(conn, "127.0.0.1", 0)
    return srv, f"http://127.0.0.1:{srv.sockets[0].getsockname()[1]}", seen


def _reply(status: int, body: bytes, *headers: str) -> bytes:
    head = [f"HTTP/1.1 {status} X", f"Content-Length: {len(body)}", *headers]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


def test_framings_keep_alive_and_json():
    async def handler(method, target, hdrs, body):
        if target == "/chunked":
            return (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n"
                    b"5\r\n{\"a\":\r\n4;ext=1\r\n 12}\r\n0\r\nX-Trailer: t\r\n\r\n")
        if target == "/close":  # no length: the body ends with the connection
            return b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil the end"
        if target == "/gzip":  # a compressed reply (the lean codec could not read one)
            return _reply(200, gzip.compress(b'{"zipped": true}'), "Content-Encoding: gzip")
        return _reply(200, b'{"id": "video_1", "status": "queued"}', "Content-Type: application/json",
                      "Retry-After: 3")

    async def main():
        srv, url, seen = await _server(handler)
        c = AiohttpClient()
        try:
            r = [await c.request("GET", f"{url}/v1/videos/x") for _ in range(3)]
            assert len(seen["conns"]) == 1  # one keep-alive connection for three calls
            assert r[0].status_code == 200 and r[0].json() == {"id": "video_1", "status": "queued"}
            assert r[0].headers.get("retry-after") == "3" and r[0].headers.get("RETRY-AFTER") == "3"
            chunked = await c.request("GET", f"{url}/chunked")
            assert chunked.json() == {"a": 12}
            assert (await c.request("GET", f"{url}/gzip")).json() == {"zipped": True}
            closed = await c.request("GET", f"{url}/close")
            assert closed.text == "until the end"
            again = await c.request("GET", f"{url}/v1/videos/x")  # the closed one is not reused
            assert again.status_code == 200 and len(seen["conns"]) == 2
            assert seen["requests"][0][2]["host"] == url.removeprefix("http://")
        finally:
            await c.aclose()
            srv.close()

    asyncio.run(main())


def test_redirect_drops_credentials_for_another_origin_and_streams_2xx_to_the_sink(tmp_path):
    async def main():
        async def storage(method, target, hdrs, body):
            return _reply(200, b"\x00\x01video-bytes" * 1000) if target == "/blob" else _reply(404, b"nope")

        srv2, url2, seen2 = await _server(storage)

        async def api(method, target, hdrs, body):
            if target == "/same":
                return _reply(307, b"", "Location: /final")
            if target == "/final":
                return _reply(200, b"{}")
            return _reply(302, b"", f"Location: {url2}/blob")

        srv1, url1, seen1 = await _server(api)
        c = AiohttpClient()
        try:
            auth = {"Authorization": "Bearer sk-secret", "x-goog-api-key": "AIza-secret"}
            await c.request("GET", f"{url1}/same", headers=auth)
            assert seen1["requests"][-1][1] == "/final" and seen1["requests"][-1][2]["authorization"] == \
                "Bearer sk-secret"  # same origin: kept
            with open(tmp_path / "v.part", "wb") as f:
                r = await c.request("GET", f"{url1}/content", headers=auth, sink=f)
            assert r.status_code == 200 and r.content == b""  # the body went to the file
            assert (tmp_path / "v.part").read_bytes() == b"\x00\x01video-bytes" * 1000
            _, target, hdrs, _ = seen2["requests"][-1]
            assert target == "/blob" and "authorization" not in hdrs and "x-goog-api-key" not in hdrs
            with open(tmp_path / "e.part", "wb") as f:  # an error body is the reply's, not the file's
                r = await c.request("GET", f"{url2}/missing", sink=f)
            assert r.status_code == 404 and r.text == "nope" and os.path.getsize(tmp_path / "e.part") == 0
        finally:
            await c.aclose()
            srv1.close()
            srv2.close()

    asyncio.run(main())


def test_failures_are_httpx_classes_with_the_create_rules_meaning():
    async def main():
        async def handler(method, target, hdrs, body):
            if target == "/drop":
                return None  # received, then hung up without a reply: may have been acted on
            if target == "/ok":
                return _reply(200, b"{}")
            if target == "/half":
                return b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\nConnection: close\r\n\r\nshort"  # cut
            await asyncio.sleep(5)  # silent
            return _reply(200, b"late")

        srv, url, seen = await _server(handler)
        c = AiohttpClient()
        try:
            await c.request("GET", f"{url}/ok")  # the POST below goes over this kept-alive connection
            with pytest.raises(httpx.RemoteProtocolError) as e1:
                await c.request("POST", f"{url}/drop", data={"prompt": "p"})
            assert classify_exception(e1.value).kind == "connection" and classify_exception(e1.value).sent
            assert len(seen["conns"]) == 1 and [r[1] for r in seen["requests"]] == ["/ok", "/drop"]  # not resent
            with pytest.raises(httpx.RemoteProtocolError):
                await c.request("GET", f"{url}/half")
            t0 = time.monotonic()
            with pytest.raises(httpx.ReadTimeout) as e2:
                await c.request("POST", f"{url}/silent", json={"a": 1}, timeout=0.3)
            assert time.monotonic() - t0 < 3
            assert classify_exception(e2.value).kind == "timeout" and classify_exception(e2.value).sent
        finally:
            await c.aclose()
            srv.close()
        with socket.socket() as s:  # a port nobody listens on: nothing was sent
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        c = AiohttpClient()
        try:
            with pytest.raises(httpx.ConnectError) as e3:
                await c.request("POST", f"http://127.0.0.1:{port}/v1/videos", json={})
            assert not classify_exception(e3.value).sent
            with pytest.raises(httpx.LocalProtocolError):  # no header injection
                await c.request("GET", f"http://127.0.0.1:{port}/", headers={"X": "a\r\nInjected: 1"})
        finally:
            await c.aclose()

    asyncio.run(main())


def test_multipart_form_and_json_bodies_read_back_as_sent():
    async def main():
        async def echo(method, target, hdrs, body):
            return _reply(200, b"{}")

        srv, url, seen = await _server(echo)
        c = AiohttpClient()
        try:
            files = {"prompt": (None, "a maze ✓"), "input_reference": ("in.png", b"\x89PNG\r\n", "image/png")}
            await c.request("POST", f"{url}/m", data={"model": "sora-2"}, files=files)
            await c.request("POST", f"{url}/f", data={"a": "b c"})
            await c.request("POST", f"{url}/j", json={"a": [1]})
        finally:
            await c.aclose()
            srv.close()
        (_, _, hm, bm), (_, _, hf, bf), (_, _, hj, bj) = seen["requests"]
        assert _parse_multipart(hm["content-type"], bm) == {"model": "sora-2", "prompt": "a maze ✓",
                                                            "input_reference": b"\x89PNG\r\n"}
        assert b'filename="in.png"' in bm and b"image/png" in bm
        assert (hf["content-type"], bf) == ("application/x-www-form-urlencoded", b"a=b+c")
        assert hj["content-type"].startswith("application/json") and json.loads(bj) == {"a": [1]}

    asyncio.run(main())


def test_proxies_come_from_the_environment(monkeypatch):
    """An ``HTTP_PROXY`` in the environment carries the call (the proxy sees the absolute URL)."""
    async def main():
        async def proxy(method, target, hdrs, body):
            return _reply(200, b'{"via": "proxy"}')

        srv, purl, seen = await _server(proxy)
        monkeypatch.setenv("HTTP_PROXY", purl)
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        c = make_client("auto")
        try:
            r = await c.request("GET", "http://api.invalid/v1/videos/x")
        finally:
            await c.aclose()
            srv.close()
        assert r.json() == {"via": "proxy"} and seen["requests"][0][1] == "http://api.invalid/v1/videos/x"

    asyncio.run(main())


def test_a_netrc_entry_for_the_host_does_not_break_calls_with_an_authorization_header(tmp_path, monkeypatch):
    """aiohttp's ``trust_env`` would add the netrc login and refuse the call (ValueError); not used here. The
    environment's NO_PROXY is honoured (the loopback call goes direct despite HTTP_PROXY)."""
    async def main():
        srv, url, seen = await _server(lambda *a: asyncio.sleep(0, _reply(200, b"{}")))
        host = url.removeprefix("http://").split(":")[0]
        (tmp_path / ".netrc").write_text(f"machine {host} login u password p\n")
        os.chmod(tmp_path / ".netrc", 0o600)
        monkeypatch.setenv("NETRC", str(tmp_path / ".netrc"))
        monkeypatch.setenv("HOME", str(tmp_path))
        monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # nothing listens there
        monkeypatch.setenv("NO_PROXY", host)
        c = AiohttpClient()
        try:
            r = await c.request("GET", f"{url}/x", headers={"Authorization": "Bearer sk-secret"})
        finally:
            await c.aclose()
            srv.close()
        assert r.status_code == 200 and seen["requests"][0][2]["authorization"] == "Bearer sk-secret"

    asyncio.run(main())


def _polls(tmp_path, api: FakeVideoAPI, **params) -> tuple[int, float]:
    from vreason.core.records import Mode, Sample
    from vreason.generate.base import GenContext
    from vreason.generate.sora import SoraGenerator

    gen = SoraGenerator("sora-2", None, base_url=api.openai_url, retry_base_s=0.01, **params)
    gen.bind(GenContext(run_dir=str(tmp_path / f"run{time.monotonic_ns()}")))
    s = Sample(id="s0", benchmark="t", prompt="a maze", mode=Mode.t2v)
    before = api.calls["poll"]
    t0 = time.monotonic()
    video = gen.generate(s, 0, str(tmp_path / f"{time.monotonic_ns()}.mp4"))
    assert video.status.value == "ok", video.reason
    return api.calls["poll"] - before, time.monotonic() - t0


def test_polling_backs_off_and_honours_the_apis_hint(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-poll")
    with FakeVideoAPI(latency=0.6) as api:
        fixed, _ = _polls(tmp_path, api, poll_s=0.02, poll_first_s=0)
        backoff, _ = _polls(tmp_path, api, poll_s=1.0, poll_min_s=0.02, poll_first_s=0)
    assert backoff <= 8 < fixed  # 0, .02, .06, .14, .30, .62 s … against one every 20 ms
    with FakeVideoAPI(latency=0.6, poll_hint=True) as api:  # pending polls carry retry-after-ms
        hinted, secs = _polls(tmp_path, api, poll_s=30.0, poll_first_s=0)
    assert hinted <= 3 and secs < 10  # without the hint the second poll would come 30 s later


def test_the_httpx_client_makes_the_same_video(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-httpx")
    with FakeVideoAPI(latency=0.05) as api:
        polls, _ = _polls(tmp_path, api, poll_s=0.05, poll_first_s=0.05, http_client="httpx")
        assert polls >= 1 and api.calls["download"] == 1 and api.total_creates == 1


@pytest.mark.parametrize(("exc", "cls", "sent"), [
    ("ConnectionTimeoutError", httpx.ConnectTimeout, False),  # TCP/TLS not done in time: nothing written
    ("SocketTimeoutError", httpx.ReadTimeout, True),  # silence after the request went out
    ("ServerDisconnectedError", httpx.RemoteProtocolError, True),
    ("ClientPayloadError", httpx.RemoteProtocolError, True),  # a body cut short
    ("ClientOSError", httpx.ReadError, True),  # reset / broken pipe on an open connection
])
def test_aiohttp_failures_map_to_the_httpx_class_of_the_same_phase(exc, cls, sent):
    import aiohttp

    from vreason.generate.http_client import _translate

    err = _translate(getattr(aiohttp, exc)("x"))
    assert type(err) is cls and classify_exception(err).sent is sent
    assert classify_exception(_translate(TimeoutError())).sent  # a bare timeout: after sending, may have acted
