"""The HTTP client of the video-API job engine: one per engine and event loop, keep-alive connections.

Two implementations behind one small interface (``request(...) -> response`` with ``status_code``,
``headers``, ``content``, ``json()``, ``text``; a 2xx body optionally streamed to a file; ``aclose()``):

* :class:`AiohttpClient` (default) — one ``aiohttp.ClientSession`` (C-accelerated HTTP/1.1 parser) with a
  ``TCPConnector`` of at most ``keepalive`` connections per host, kept alive between calls; proxies from the
  environment (``HTTP(S)_PROXY``, ``NO_PROXY``: the stdlib's ``getproxies`` / ``proxy_bypass``, once per
  host); gzip/deflate replies decoded; no cookie jar. Not aiohttp's ``trust_env``: it also reads
  ``~/.netrc`` on every call (a thread hop each) and then refuses any call that carries an
  ``Authorization`` header to a host listed there (``ValueError``: every Sora call would fail). Redirects are
  followed here rather than by aiohttp, because aiohttp drops only ``Authorization``, ``Cookie`` and
  ``Proxy-Authorization`` on a change of origin and the video APIs also authenticate with ``x-goog-api-key``
  / ``api-key``: every credential header is dropped when the origin changes;
* :class:`HttpxClient` — ``httpx.AsyncClient`` (``http_client: httpx``).

Failures are raised as httpx's exception classes, so :func:`vreason.http_retry.classify_exception` tells
"certainly not sent" from "may have been acted on" as with httpx (a create is resent only in the first case):

* **certainly not sent** — ``ClientConnectorError`` (connection refused, DNS, TLS handshake or certificate,
  proxy unreachable) and ``ClientHttpProxyError`` (the proxy refused the tunnel) → ``httpx.ConnectError``;
  ``ConnectionTimeoutError`` (TCP connect + TLS past ``sock_connect``) → ``httpx.ConnectTimeout``;
* **may have been acted on** — ``SocketTimeoutError`` and any other timeout (a silence past ``sock_read``)
  → ``httpx.ReadTimeout``; ``ServerDisconnectedError``, ``ClientPayloadError`` (a body cut short) and
  ``ClientResponseError`` (an unreadable reply) → ``httpx.RemoteProtocolError``; ``ClientOSError`` after
  connecting (reset, broken pipe) → ``httpx.ReadError``; any other ``aiohttp.ClientError`` →
  ``httpx.TransportError``.

aiohttp resends an idempotent request (GET, PUT, DELETE …) once when a reused keep-alive connection turns
out closed; a POST (a create) is never resent by it: the failure comes here as "may have been acted on".
"""

from __future__ import annotations

import asyncio
import functools
import json as _json
import ssl
import urllib.request
from typing import Any, BinaryIO, Protocol
from urllib.parse import urljoin, urlsplit

import aiohttp
import httpx
from multidict import CIMultiDictProxy
from yarl import URL

_REDIRECTS = (301, 302, 303, 307, 308)
_CREDENTIALS = ("authorization", "x-goog-api-key", "api-key", "cookie", "proxy-authorization")
_CHUNK = 1 << 20
"""Read size: a download arrives in (up to) 1 MiB pieces, written to the file as they come."""
CONNECT_TIMEOUT_S = 30.0
"""TCP connect + TLS handshake (aiohttp's ``sock_connect``); waiting for a free pooled connection is not
timed (nothing has been sent yet)."""


class Response(Protocol):
    status_code: int
    headers: Any
    content: bytes

    def json(self) -> Any: ...

    @property
    def text(self) -> str: ...


class Client(Protocol):
    async def request(self, method: str, url: str, *, json: Any = None, data: dict[str, str] | None = None,
                      files: dict[str, Any] | None = None, headers: dict[str, str] | None = None,
                      timeout: float = 120.0, sink: BinaryIO | None = None) -> Response: ...

    async def aclose(self) -> None: ...


class Reply:
    """A reply read to its end: ``headers`` is aiohttp's case-insensitive multidict."""

    __slots__ = ("status_code", "headers", "content")

    def __init__(self, status_code: int, headers: CIMultiDictProxy[str], content: bytes):
        self.status_code, self.headers, self.content = status_code, headers, content

    def json(self) -> Any:
        return _json.loads(self.content)

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", "replace")


@functools.cache
def default_ssl_context() -> ssl.SSLContext:
    """The CA bundle httpx (and so the judge's OpenAI SDK) verifies with; loaded once per process (~30 ms)."""
    return httpx.create_ssl_context()


def _check_headers(headers: dict[str, str]) -> None:
    for k, v in headers.items():  # no header injection (refused before anything is sent)
        if "\r" in k or "\n" in k or ":" in k or "\r" in v or "\n" in v:
            raise httpx.LocalProtocolError(f"invalid header {k!r}")


def _body(json: Any, data: dict[str, str] | None, files: dict[str, Any] | None) -> dict[str, Any]:
    """aiohttp's keyword for a JSON, form or multipart body; ``files`` are ``(None, text)`` fields or
    ``(filename, bytes[, content type])`` parts, as httpx takes them. A FormData is consumed by one send:
    built again for each hop of a redirect."""
    if files:
        form = aiohttp.FormData(default_to_multipart=True)
        for name, value in (data or {}).items():
            form.add_field(name, value)
        for name, value in files.items():
            fname, content, ctype = (*value, None)[:3] if isinstance(value, tuple) else (None, value, None)
            if fname is None:
                form.add_field(name, content if isinstance(content, str) else bytes(content).decode())
            else:
                form.add_field(name, content, filename=fname, content_type=ctype or "application/octet-stream")
        return {"data": form}
    if data is not None:
        return {"data": data}
    if json is not None:
        return {"json": json}
    return {}


async def _flat_form(form: aiohttp.FormData, headers: dict[str, str]) -> tuple[dict[str, Any], dict[str, str]]:
    """A multipart form as its bytes (aiohttp's own serialisation, so the same bytes on the wire) with its
    ``Content-Type``: aiohttp writes a bytes body together with the headers in one send, where it writes
    a ``MultipartWriter`` part by part (measured 13 socket sends per Sora create, 1 with the bytes)."""
    mp = form()
    if not hasattr(mp, "as_bytes"):  # aiohttp < 3.12: streamed part by part as before
        return {"data": mp}, headers
    raw = await mp.as_bytes()
    kept = {k: v for k, v in headers.items() if k.lower() != "content-type"}
    return {"data": raw}, {**kept, "Content-Type": mp.content_type}


def _translate(e: BaseException) -> httpx.TransportError:
    """The httpx exception with the same meaning for the retry rules (see the module's table)."""
    msg = f"{type(e).__name__}: {e}"
    if isinstance(e, aiohttp.ClientConnectorError | aiohttp.ClientHttpProxyError):
        return httpx.ConnectError(msg)
    if isinstance(e, aiohttp.ConnectionTimeoutError):
        return httpx.ConnectTimeout(msg)
    if isinstance(e, asyncio.TimeoutError):
        return httpx.ReadTimeout(msg)
    if isinstance(e, aiohttp.ServerDisconnectedError | aiohttp.ClientPayloadError | aiohttp.ClientResponseError):
        return httpx.RemoteProtocolError(msg)
    if isinstance(e, aiohttp.ClientOSError):
        return httpx.ReadError(msg)
    return httpx.TransportError(msg)


class AiohttpClient:
    """One ``aiohttp.ClientSession`` (made on the first call, on the running loop), at most ``keepalive``
    connections per host (a call beyond waits for a free one), kept alive between calls."""

    def __init__(self, *, ssl_context: ssl.SSLContext | None = None, keepalive: int = 32,
                 connect_timeout: float = CONNECT_TIMEOUT_S, max_redirects: int = 5, user_agent: str = "vreason"):
        self._ssl, self.keepalive, self.connect_timeout = ssl_context, keepalive, connect_timeout
        self.max_redirects, self.user_agent = max_redirects, user_agent
        self._session: aiohttp.ClientSession | None = None
        self._timeouts: dict[float, aiohttp.ClientTimeout] = {}
        self._proxies: dict[tuple[str, str], dict[str, Any]] = {}

    def _open(self) -> aiohttp.ClientSession:
        conn = aiohttp.TCPConnector(limit=0, limit_per_host=max(1, self.keepalive))
        self._session = aiohttp.ClientSession(
            connector=conn, cookie_jar=aiohttp.DummyCookieJar(),
            headers={"User-Agent": self.user_agent}, timeout=self._timeout(120.0))
        return self._session

    def _timeout(self, read: float) -> aiohttp.ClientTimeout:
        t = self._timeouts.get(read)
        if t is None:  # the longest silence while reading (as httpx's read timeout); no total
            t = self._timeouts[read] = aiohttp.ClientTimeout(total=None, sock_connect=self.connect_timeout,
                                                             sock_read=read)
        return t

    async def request(self, method: str, url: str, *, json: Any = None, data: dict[str, str] | None = None,
                      files: dict[str, Any] | None = None, headers: dict[str, str] | None = None,
                      timeout: float = 120.0, sink: BinaryIO | None = None) -> Reply:
        hdrs = dict(headers or {})
        _check_headers(hdrs)
        session = self._session or self._open()
        for hop in range(self.max_redirects + 1):
            if not url[:6].lower().startswith(("http:", "https:")):
                raise httpx.UnsupportedProtocol(f"unsupported URL scheme in {url!r}")
            body = _body(json, data, files)
            form = body.get("data")
            if isinstance(form, aiohttp.FormData):  # the parts as one piece: the headers and body in one send
                body, hdrs_send = await _flat_form(form, hdrs)
            else:
                hdrs_send = hdrs
            if url[:6].lower() == "https:":  # the CA bundle is loaded on the first https call (~30 ms), not before
                body["ssl"] = self._ssl = self._ssl or default_ssl_context()
            body.update(self._proxy(url))
            reply = await self._send(session, method, url, body, hdrs_send, timeout, sink)
            loc = reply.headers.get("location")
            if reply.status_code not in _REDIRECTS or not loc or hop == self.max_redirects:
                return reply
            new = urljoin(url, loc)
            if urlsplit(new)[:2] != urlsplit(url)[:2]:  # another origin: no credentials follow
                hdrs = {k: v for k, v in hdrs.items() if k.lower() not in _CREDENTIALS}
            if reply.status_code == 303 or (reply.status_code in (301, 302) and method == "POST"):
                method, json, data, files = "GET", None, None, None
                hdrs = {k: v for k, v in hdrs.items() if k.lower() != "content-type"}
            url = new
        raise AssertionError("unreachable")  # pragma: no cover

    def _proxy(self, url: str) -> dict[str, Any]:
        """aiohttp's ``proxy`` / ``proxy_auth`` for ``url`` from the environment (empty: direct)."""
        scheme, netloc = urlsplit(url)[:2]
        key = (scheme.lower(), netloc)
        got = self._proxies.get(key)
        if got is None:
            host = netloc.rsplit("@", 1)[-1]
            proxies = urllib.request.getproxies()
            proxy = proxies.get(key[0]) or proxies.get("all")
            got = {}
            if proxy and not urllib.request.proxy_bypass(host.rsplit(":", 1)[0] if "]" not in host else host):
                purl = URL(proxy if "://" in proxy else f"http://{proxy}")
                got["proxy"] = purl.with_user(None)
                if purl.user is not None:
                    got["proxy_auth"] = aiohttp.BasicAuth(purl.user, purl.password or "")
            self._proxies[key] = got
        return got

    async def _send(self, session: aiohttp.ClientSession, method: str, url: str, body: dict[str, Any],
                    headers: dict[str, str], timeout: float, sink: BinaryIO | None) -> Reply:
        try:
            async with session.request(method, url, headers=headers, allow_redirects=False,
                                       timeout=self._timeout(timeout), **body) as resp:
                if sink is not None and 200 <= resp.status < 300:
                    async for piece in resp.content.iter_chunked(_CHUNK):
                        sink.write(piece)
                    return Reply(resp.status, resp.headers, b"")
                return Reply(resp.status, resp.headers, await resp.read())
        except (aiohttp.ClientError, asyncio.TimeoutError) as e:
            raise _translate(e) from e

    async def aclose(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            await session.close()


class HttpxClient:
    """The same interface over httpx. One ``AsyncClient`` per call in flight,
    each with one keep-alive connection, kept idle for the next call: httpx's shared pool scans all its
    connections on every request (measured 15–18 ms of client CPU per video at 16 jobs through one client)."""

    def __init__(self, *, ssl_context: ssl.SSLContext | None = None, keepalive: int = 32):
        self._ssl, self.keepalive = ssl_context, keepalive
        self._idle: list[httpx.AsyncClient] = []

    def _new(self) -> httpx.AsyncClient:
        if self._ssl is None:  # loading the CA bundle costs ~30 ms: once per client, not per connection
            self._ssl = default_ssl_context()
        limits = httpx.Limits(max_connections=4, max_keepalive_connections=1)
        return httpx.AsyncClient(verify=self._ssl, limits=limits, follow_redirects=True,
                                 timeout=httpx.Timeout(120.0, connect=30.0))

    async def request(self, method: str, url: str, *, json: Any = None, data: dict[str, str] | None = None,
                      files: dict[str, Any] | None = None, headers: dict[str, str] | None = None,
                      timeout: float = 120.0, sink: BinaryIO | None = None) -> Any:
        c = self._idle.pop() if self._idle else self._new()
        try:
            return await self._request(c, method, url, json, data, files, headers, timeout, sink)
        finally:
            if len(self._idle) < self.keepalive:
                self._idle.append(c)
            else:
                await c.aclose()

    @staticmethod
    async def _request(c: httpx.AsyncClient, method: str, url: str, json: Any, data: dict[str, str] | None,
                       files: dict[str, Any] | None, headers: dict[str, str] | None, timeout: float,
                       sink: BinaryIO | None) -> Any:
        t = httpx.Timeout(timeout, connect=30.0)
        if sink is None:
            return await c.request(method, url, json=json, data=data, files=files, headers=headers, timeout=t)
        async with c.stream(method, url, headers=headers, timeout=t) as resp:
            if 200 <= resp.status_code < 300:
                async for chunk in resp.aiter_bytes(_CHUNK):
                    sink.write(chunk)
            else:
                await resp.aread()
            return resp

    async def aclose(self) -> None:
        idle, self._idle = self._idle, []
        for c in idle:
            await c.aclose()


def make_client(kind: str = "auto", *, ssl_context: ssl.SSLContext | None = None, keepalive: int = 32) -> Client:
    """``aiohttp`` (also ``auto``) or ``httpx``."""
    if kind == "httpx":
        return HttpxClient(ssl_context=ssl_context, keepalive=keepalive)
    return AiohttpClient(ssl_context=ssl_context, keepalive=keepalive)
