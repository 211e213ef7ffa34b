"""A loopback OpenAI-compatible chat-completions server for tests.

It listens on ``127.0.0.1`` (a free port), answers ``POST /v1/chat/completions`` from a script and
records every request body. Use it as a context manager::

    with LoopbackServer(["Yes", Reply(status=429, headers={"Retry-After": "0.05"}), "No"]) as srv:
        client = srv.client()                 # a JudgeClient for this server (fast retries)
        outcome = asyncio.run(client.ask(request, parsers.yes_no()))
        assert srv.count == 3
        body = srv.requests[0]          # the parsed JSON body of the first request

The script is a list (consumed in order; when it runs out the server answers HTTP 500 "script
exhausted", unless ``default`` is given) or a callable ``body -> reply``. A reply is a string (the
assistant text, HTTP 200) or a :class:`Reply` (status, headers, delay, dropped connection, finish
reason, usage, refusal, raw body).
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    text: str | None = ""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    """Seconds to wait before answering (after ``latency``)."""
    drop: bool = False
    """Close the connection without any response."""
    finish_reason: str = "stop"
    usage: dict[str, int] | None = None
    refusal: str | None = None
    body: Any = None
    """A raw body (dict → JSON, str → as is) sent instead of a chat completion."""
    content_type: str = "application/json"
    """The ``Content-Type`` of the response (e.g. ``text/html`` for a proxy's error page)."""


ReplyLike = str | Reply
Script = list[ReplyLike] | Callable[[dict[str, Any]], ReplyLike]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 256

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that timed out and hung up is expected in tests; stay quiet about it.
        import sys

        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)


class LoopbackServer:
    def __init__(
        self,
        script: Script | None = None,
        *,
        latency: float = 0.0,
        default: ReplyLike | None = None,
        model: str = "loopback",
    ):
        self.script = script if script is not None else []
        self.latency = latency
        self.default = default
        self.model = model
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.count = 0
        self._pos = 0
        self._lock = threading.Lock()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> LoopbackServer:
        handler = _make_handler(self)
        self._server = _Server(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="vreason-loopback",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._server is not None, "server not started"
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def client(self, *, timeout: float = 2.0, retries: int = 2, **make_judge_kw: Any) -> Any:
        """A :class:`~vreason.judge.client.JudgeClient` pointed at this server, with fast retries
        (10 ms backoff) and a short timeout — for tests. Extra keywords go to ``make_judge``."""
        from vreason.judge.retry import RetryPolicy
        from vreason.judge.spec import make_judge

        make_judge_kw.setdefault("retry", RetryPolicy(max_retries=retries, base=0.01, cap=0.5, seed=0))
        cfg = {"backend": "vllm", "model": self.model, "base_url": self.base_url, "timeout": timeout}
        return make_judge(cfg, **make_judge_kw)

    # ------------------------------------------------------------------ scripting
    def _next_reply(self, body: dict[str, Any]) -> ReplyLike:
        if callable(self.script):
            return self.script(body)
        with self._lock:
            if self._pos < len(self.script):
                r = self.script[self._pos]
                self._pos += 1
                return r
        if self.default is not None:
            return self.default
        return Reply(
            status=500, body={"error": {"message": "loopback: script exhausted", "type": "server_error"}}
        )

    def completion(self, reply: Reply, body: dict[str, Any]) -> dict[str, Any]:
        usage = reply.usage or {"prompt_tokens": 100, "completion_tokens": max(1, len(reply.text or "") // 4)}
        usage = {**usage, "total_tokens": usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0)}
        message: dict[str, Any] = {"role": "assistant", "content": reply.text}
        if reply.refusal is not None:
            message["refusal"] = reply.refusal
        return {
            "id": f"chatcmpl-loop{self.count}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", self.model),
            "choices": [
                {"index": 0, "message": message, "finish_reason": reply.finish_reason, "logprobs": None}
            ],
            "usage": usage,
        }


def _make_handler(server: LoopbackServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # As real servers do: no Nagle delay (else a small response written in two segments waits
        # for the client's delayed ACK, ~40 ms per request), and each response goes out in one write.
        disable_nagle_algorithm = True
        wbufsize = -1  # buffered: headers and body leave together when the handler flushes

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - silence the default log
            return

        def _send_json(
            self,
            status: int,
            payload: Any,
            headers: dict[str, str] | None = None,
            content_type: str = "application/json",
        ) -> None:
            data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()

        def do_GET(self) -> None:  # noqa: N802
            if self.path.rstrip("/").endswith("/models"):
                self._send_json(200, {"object": "list", "data": [{"id": server.model, "object": "model"}]})
            else:
                self._send_json(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._send_json(404, {"error": {"message": f"no route {self.path}"}})
                return
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                self._send_json(400, {"error": {"message": "body is not JSON"}})
                return
            with server._lock:
                server.count += 1
                server.requests.append(body)
                server.headers.append({k.lower(): v for k, v in self.headers.items()})
            reply = server._next_reply(body)
            if isinstance(reply, str):
                reply = Reply(text=reply)
            wait = server.latency + reply.delay
            if wait:
                time.sleep(wait)
            if reply.drop:
                self.close_connection = True
                try:
                    self.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                return
            if reply.body is not None:
                self._send_json(reply.status, reply.body, reply.headers, reply.content_type)
            elif reply.status != 200:
                err = {
                    "error": {"message": f"loopback status {reply.status}", "type": "loopback", "code": None}
                }
                self._send_json(reply.status, err, reply.headers)
            else:
                self._send_json(200, server.completion(reply, body), reply.headers)

    return Handler
