"""The HTTP client of the video-API job engine: one per engine and event loop, keep-alive connections.

Two implementations behind one small interface (``request(...) -> response`` with ``status_code``,
``headers``, ``content``, ``json()``, ``text``; ``aclose()``):

* :class:`LeanClient` (default) — HTTP/1.1 over asyncio streams (a small codec: Content-Length, chunked or
  to-the-close bodies),
  http and https (the system's CA bundle through ``httpx.create_ssl_context``), a keep-alive pool per
  origin, redirects followed (credentials dropped when the origin changes), replies to 2xx optionally
  streamed to a file. One request costs ≈ 0.25 ms of client CPU against a loopback server where a
  request through httpx's pool costs 3–5 ms (measured by ``benchmarks/bench_generate.py``): the pool's
  per-request scan of every connection and the anyio layers, not the wire, dominated the client's CPU;
* :class:`HttpxClient` — ``httpx.AsyncClient`` (used when a proxy is configured in the environment, which
  the lean client does not speak, or when a model sets ``http_client: httpx``).

Failures are raised as httpx's exception classes (``ConnectError``, ``ConnectTimeout``, ``ReadTimeout``,
``WriteError``, ``ReadError``, ``RemoteProtocolError``), so :func:`vreason.http_retry.classify_exception`
tells "certainly not sent" (no connection) from "may have been acted on" exactly as with httpx.
"""

from __future__ import annotations

import asyncio
import json as _json
import ssl
import urllib.request
from typing import Any, BinaryIO, Protocol
from urllib.parse import urlencode, urljoin, urlsplit

import httpx

_REDIRECTS = (301, 302, 303, 307, 308)
_CREDENTIALS = ("authorization", "x-goog-api-key", "api-key", "cookie", "proxy-authorization")
_CHUNK = 1 << 20
"""Read size: a download arrives in (up to) 1 MiB pieces, written to the file as they come."""


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


class LeanResponse:
    __slots__ = ("status_code", "headers", "content")

    def __init__(self, status_code: int, headers: httpx.Headers, content: bytes):
        self.status_code, self.headers, self.content = status_code, headers, content

    def json(self) -> Any:
        return _json.loads(self.content)

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", "replace")


def encode_body(json: Any = None, data: dict[str, str] | None = None,
                files: dict[str, Any] | None = None) -> tuple[bytes, str | None]:
    """(body, content type) of a JSON, form or multipart request; files are ``(None, text)`` fields or
    ``(filename, bytes[, content type])`` parts, as httpx takes them."""
    if files:
        boundary = "vreason-" + __import__("secrets").token_hex(12)
        parts: list[bytes] = []
        for name, value in [*(data or {}).items(), *files.items()]:
            fname, content, ctype = (*value, None)[:3] if isinstance(value, tuple) else (None, value, None)
            head = f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"'
            if fname is not None:
                head += f'; filename="{fname}"\r\nContent-Type: {ctype or "application/octet-stream"}'
            body = content if isinstance(content, bytes) else str(content).encode()
            parts.append(head.encode() + b"\r\n\r\n" + body + b"\r\n")
        return b"".join(parts) + f"--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"
    if data is not None:
        return urlencode(data).encode(), "application/x-www-form-urlencoded"
    if json is not None:
        return _json.dumps(json, separators=(",", ":")).encode(), "application/json"
    return b"", None


class _Conn:
    __slots__ = ("reader", "writer", "expired")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.reader, self.writer, self.expired = reader, writer, False

    def expire(self) -> None:  # the read/write timeout fired: the connection is cut, the call raises
        self.expired = True
        self.writer.transport.abort()

    def usable(self) -> bool:  # the server may have closed an idle keep-alive connection
        return not (self.reader.at_eof() or self.writer.is_closing())

    def close(self) -> None:
        self.writer.transport.abort()


class _Cut(Exception):
    """The connection ended (or broke) before the reply did; ``got``: some of the reply had arrived."""

    def __init__(self, got: bool, message: str):
        super().__init__(message)
        self.got = got


def _head(method: str, target: str, headers: list[tuple[str, str]]) -> bytes:
    lines = [f"{method} {target} HTTP/1.1"]
    for k, v in headers:
        if "\r" in k or "\n" in k or "\r" in v or "\n" in v or ":" in k:
            raise httpx.LocalProtocolError(f"invalid header {k!r}")  # no header injection
        lines.append(f"{k}: {v}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


async def _read_reply(conn: _Conn, method: str, sink: BinaryIO | None,
                      on_read: Any) -> tuple[int, list[tuple[bytes, bytes]], bytes, bool]:
    """(status, raw headers, body, keep-alive) of one HTTP/1.1 reply: Content-Length, chunked, or until
    the connection closes; 1xx replies skipped; a 2xx body goes to ``sink`` when given."""
    r = conn.reader
    got = False
    try:
        while True:
            block = await r.readuntil(b"\r\n\r\n")
            got = True
            on_read()
            lines = block[:-4].split(b"\r\n")
            parts = lines[0].split(b" ", 2)
            if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or not parts[1].isdigit():
                raise _Cut(True, f"not an HTTP/1.x status line: {lines[0][:80]!r}")
            status = int(parts[1])
            if status >= 200 or status == 101:
                break
        raw: list[tuple[bytes, bytes]] = []
        length: int | None = None
        chunked = close = False
        for line in lines[1:]:
            k, sep, v = line.partition(b":")
            if not sep:
                raise _Cut(True, f"bad header line {line[:80]!r}")
            k, v = k.strip(), v.strip()
            raw.append((k, v))
            lk = k.lower()
            if lk == b"content-length":
                length = int(v)
            elif lk == b"transfer-encoding":
                chunked = v.lower().endswith(b"chunked")
            elif lk == b"connection":
                close = b"close" in v.lower()
        close = close or parts[0] == b"HTTP/1.0"
        to_file = sink is not None and 200 <= status < 300
        chunks: list[bytes] = []

        def take(data: bytes) -> None:
            if to_file:
                sink.write(data)  # type: ignore[union-attr]
            else:
                chunks.append(data)

        if method == "HEAD" or status in (204, 304):
            pass
        elif chunked:
            while True:
                size = int((await r.readuntil(b"\r\n")).split(b";", 1)[0].strip() or b"0", 16)
                on_read()
                if size == 0:
                    while (await r.readuntil(b"\r\n")) != b"\r\n":  # trailers
                        pass
                    break
                while size:
                    piece = await r.read(min(size, _CHUNK))
                    if not piece:
                        raise _Cut(True, "connection closed inside a chunk")
                    on_read()
                    take(piece)
                    size -= len(piece)
                await r.readexactly(2)
        elif length is not None:
            left = length
            while left:
                piece = await r.read(min(left, _CHUNK))
                if not piece:
                    raise _Cut(True, f"connection closed {left} bytes before the reply's end")
                on_read()
                take(piece)
                left -= len(piece)
        else:  # delimited by the end of the connection
            close = True
            while piece := await r.read(_CHUNK):
                on_read()
                take(piece)
        return status, raw, b"".join(chunks), not close
    except asyncio.IncompleteReadError as e:
        raise _Cut(got or bool(e.partial), "server disconnected without sending a reply" if not (got or e.partial)
                   else "connection closed mid-reply") from None
    except asyncio.LimitOverrunError:
        raise _Cut(True, "reply header too long") from None
    except ValueError as e:
        raise _Cut(True, f"bad reply framing: {e}") from None


class LeanClient:
    """HTTP/1.1 with keep-alive; ``keepalive`` idle connections are kept per origin (more are closed)."""

    def __init__(self, *, ssl_context: ssl.SSLContext | None = None, connect_timeout: float = 30.0,
                 keepalive: int = 32, max_redirects: int = 5, user_agent: str = "vreason"):
        self._ssl, self.connect_timeout, self.keepalive = ssl_context, connect_timeout, keepalive
        self.max_redirects, self.user_agent = max_redirects, user_agent
        self._idle: dict[tuple[str, str, int], list[_Conn]] = {}

    async def request(self, method: str, url: str, *, json: Any = None, data: dict[str, str] | None = None,
                      files: dict[str, Any] | None = None, headers: dict[str, str] | None = None,
                      timeout: float = 120.0, sink: BinaryIO | None = None) -> LeanResponse:
        body, ctype = encode_body(json, data, files)
        hdrs = dict(headers or {})
        if ctype:
            hdrs.setdefault("Content-Type", ctype)
        for hop in range(self.max_redirects + 1):
            resp = await self._send(method, url, body, hdrs, timeout, sink)
            loc = resp.headers.get("location")
            if resp.status_code not in _REDIRECTS or not loc or hop == self.max_redirects:
                return resp
            new = urljoin(url, loc)
            if urlsplit(new)[:2] != urlsplit(url)[:2]:  # another origin: no credentials follow
                hdrs = {k: v for k, v in hdrs.items() if k.lower() not in _CREDENTIALS}
            if resp.status_code == 303 or (resp.status_code in (301, 302) and method == "POST"):
                method, body = "GET", b""
                hdrs = {k: v for k, v in hdrs.items() if k.lower() != "content-type"}
            url = new
        raise AssertionError("unreachable")  # pragma: no cover

    async def _connect(self, scheme: str, host: str, port: int) -> _Conn:
        tls = None
        if scheme == "https":
            if self._ssl is None:
                self._ssl = httpx.create_ssl_context()
            tls = self._ssl
        try:
            r, w = await asyncio.wait_for(asyncio.open_connection(
                host, port, ssl=tls, server_hostname=host if tls else None, limit=_CHUNK), self.connect_timeout)
        except asyncio.TimeoutError:
            raise httpx.ConnectTimeout(f"connecting to {host}:{port} timed out") from None
        except OSError as e:  # refused, unreachable, name not resolved, TLS handshake failed: nothing sent
            raise httpx.ConnectError(f"{type(e).__name__}: {e}") from None
        return _Conn(r, w)

    async def _send(self, method: str, url: str, body: bytes, headers: dict[str, str], timeout: float,
                    sink: BinaryIO | None) -> LeanResponse:
        scheme, netloc, path, query, _ = urlsplit(url)
        if scheme not in ("http", "https"):
            raise httpx.UnsupportedProtocol(f"unsupported URL scheme {scheme!r} in {url!r}")
        host = netloc.rsplit("@", 1)[-1]
        hostname, _, port_s = host.rpartition(":") if host.rsplit(":", 1)[-1].isdigit() else (host, "", "")
        port = int(port_s) if port_s else (443 if scheme == "https" else 80)
        key = (scheme, hostname.strip("[]"), port)
        target = (path or "/") + (f"?{query}" if query else "")
        head = [("Host", host), ("User-Agent", self.user_agent), ("Accept", "*/*"),
                ("Accept-Encoding", "identity"), *headers.items()]
        if body or method in ("POST", "PUT", "PATCH"):
            head.append(("Content-Length", str(len(body))))
        wire = _head(method, target, head) + body  # checked before any connection is made
        idle = self._idle.get(key)
        while idle:
            conn = idle.pop()
            if conn.usable():
                try:
                    return await self._exchange(conn, key, method, wire, timeout, sink)
                except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as e:
                    # a reused connection the server had closed: a GET is simply sent again on a new one;
                    # anything else may have been received, the caller classifies it
                    if method != "GET" or getattr(e, "got_bytes", True):
                        raise
                    break
            conn.close()
        conn = await self._connect(*key)
        return await self._exchange(conn, key, method, wire, timeout, sink)

    async def _exchange(self, conn: _Conn, key: tuple[str, str, int], method: str, wire: bytes, timeout: float,
                        sink: BinaryIO | None) -> LeanResponse:
        # one timer, re-armed after every read, instead of a wait_for task per read: the timeout is the
        # longest silence (as httpx's read timeout), and firing cuts the connection
        loop = asyncio.get_running_loop()
        timer = [loop.call_later(timeout, conn.expire)]

        def rearm() -> None:
            timer[0].cancel()
            timer[0] = loop.call_later(timeout, conn.expire)

        try:
            conn.writer.write(wire)
            try:
                await conn.writer.drain()
            except OSError as e:
                if conn.expired:
                    raise httpx.WriteTimeout(f"sending took over {timeout:g} s") from None
                raise httpx.WriteError(f"{type(e).__name__}: {e}") from None
            status, raw, content, keep = await _read_reply(conn, method, sink, rearm)
        except _Cut as e:
            conn.close()
            if conn.expired:
                raise httpx.ReadTimeout(f"no reply within {timeout:g} s") from None
            err = httpx.RemoteProtocolError(str(e))
            err.got_bytes = e.got  # type: ignore[attr-defined]
            raise err from None
        except OSError as e:
            conn.close()
            if conn.expired:
                raise httpx.ReadTimeout(f"no reply within {timeout:g} s") from None
            err2 = httpx.ReadError(f"{type(e).__name__}: {e}")
            err2.got_bytes = False  # type: ignore[attr-defined]
            raise err2 from None
        except BaseException as e:
            conn.close()
            if isinstance(e, httpx.WriteError):
                e.got_bytes = False  # type: ignore[attr-defined]
            raise
        finally:
            timer[0].cancel()
        if keep and len(self._idle.get(key, ())) < self.keepalive:
            self._idle.setdefault(key, []).append(conn)
        else:
            conn.close()
        return LeanResponse(status, httpx.Headers(raw), content)

    async def aclose(self) -> None:
        for conns in self._idle.values():
            for c in conns:
                c.writer.close()
        self._idle.clear()


class HttpxClient:
    """The same interface over httpx (proxies from the environment). One ``AsyncClient`` per call in flight,
    each with one keep-alive connection, kept idle for the next call: httpx's shared pool scans all its
    connections on every request (measured 15–18 ms of client CPU per video at 16 jobs through one client)."""

    def __init__(self, *, ssl_context: ssl.SSLContext | None = None, keepalive: int = 32):
        self._ssl, self.keepalive = ssl_context, keepalive
        self._idle: list[httpx.AsyncClient] = []

    def _new(self) -> httpx.AsyncClient:
        if self._ssl is None:  # loading the CA bundle costs ~30 ms: once per client, not per connection
            self._ssl = httpx.create_ssl_context()
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


def proxied() -> bool:
    """A proxy is configured in the environment (``HTTPS_PROXY``, ``ALL_PROXY`` …): the lean client does not
    speak to proxies, httpx does."""
    return bool(urllib.request.getproxies())


def make_client(kind: str = "auto", *, ssl_context: ssl.SSLContext | None = None, keepalive: int = 32) -> Client:
    """``lean``, ``httpx``, or ``auto`` (lean unless a proxy is configured)."""
    if kind == "httpx" or (kind == "auto" and proxied()):
        return HttpxClient(ssl_context=ssl_context, keepalive=keepalive)
    return LeanClient(ssl_context=ssl_context, keepalive=keepalive)
