"""A loopback fake of video-generation APIs for tests and benchmarks.

It speaks both shapes vreason's API generators use, on ``127.0.0.1`` (a free port):

* OpenAI videos (``base + "/v1"``): ``POST /v1/videos`` (multipart or JSON), ``GET /v1/videos/{id}``
  (``queued`` → ``in_progress`` → ``completed`` / ``failed``), ``GET /v1/videos/{id}/content``;
* Gemini / Veo (``base + "/v1beta"``): ``POST /v1beta/models/{model}:predictLongRunning``,
  ``GET /v1beta/models/{model}/operations/{id}``, ``GET /v1beta/files/{id}:download``.

Jobs are ready ``latency`` seconds after their create. ``policy(request) -> Behavior`` decides per request
(``request`` has ``prompt``, ``model``, ``image`` bytes, ``seed``, ``shape``) whether the job is refused at
create (HTTP 400 content policy), refused or failed when it ends, never finishes (``hang``), or has its own
latency. ``transient`` injects HTTP errors per route (``create``, ``poll``, ``download``), consumed in
order (``429`` carries ``Retry-After: retry_after``). Every create is counted per request key
(:meth:`request_key`: prompt + image) and per API key; :meth:`release` makes pending jobs ready now.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlparse


@dataclass
class Behavior:
    latency: float | None = None
    refuse_at_create: str | None = None
    refuse: str | None = None
    fail: str | None = None
    hang: bool = False


@dataclass
class _Job:
    id: str
    shape: str
    request: dict[str, Any]
    behavior: Behavior
    ready_at: float
    polls: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


def tiny_mp4() -> bytes:
    """A valid 8-frame 64×64 H.264 clip (made once)."""
    global _TINY
    if _TINY is None:
        import os
        import tempfile

        import numpy as np

        from vreason.frames.write import write_video

        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "v.mp4")
            write_video(p, [np.full((64, 64, 3), 16 * i, np.uint8) for i in range(8)], fps=8)
            with open(p, "rb") as f:
                _TINY = f.read()
    return _TINY


_TINY: bytes | None = None


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 256

    def handle_error(self, request: Any, client_address: Any) -> None:
        return  # clients that hang up (a killed run) are expected


class FakeVideoAPI:
    def __init__(self, *, latency: float = 0.1, video: bytes | Callable[[dict[str, Any]], bytes] | None = None,
                 policy: Callable[[dict[str, Any]], Behavior | None] | None = None,
                 transient: dict[str, list[int]] | None = None, retry_after: float = 0.0,
                 api_key: str | None = None):
        self.latency, self.video, self.policy = latency, video, policy
        self.transient = {k: list(v) for k, v in (transient or {}).items()}
        self.retry_after, self.api_key = retry_after, api_key
        self.jobs: dict[str, _Job] = {}
        self.creates: Counter[str] = Counter()
        self.creates_by_api_key: Counter[str] = Counter()
        self.calls: Counter[str] = Counter()
        self.auth_seen: set[str] = set()
        self._lock = threading.Lock()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> FakeVideoAPI:
        self._server = _Server(("127.0.0.1", 0), _handler(self))
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="fake-video-api", daemon=True)
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

    def __enter__(self) -> FakeVideoAPI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base(self) -> str:
        assert self._server is not None, "server not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def openai_url(self) -> str:
        return f"{self.base}/v1"

    @property
    def veo_url(self) -> str:
        return f"{self.base}/v1beta"

    # ------------------------------------------------------------------ control
    @staticmethod
    def request_key(prompt: str, image: bytes | None) -> str:
        return hashlib.sha256(prompt.encode() + b"\0" + (image or b"")).hexdigest()[:16]

    @property
    def total_creates(self) -> int:
        return sum(self.creates.values())

    def release(self) -> None:
        """Every pending job that is not hanging becomes ready now."""
        with self._lock:
            for j in self.jobs.values():
                j.ready_at = min(j.ready_at, time.monotonic())

    def _inject(self, route: str) -> int | None:
        with self._lock:
            queue = self.transient.get(route)
            return queue.pop(0) if queue else None

    def _create(self, shape: str, req: dict[str, Any], auth: str) -> tuple[int, Any]:
        beh = (self.policy(req) if self.policy else None) or Behavior()
        with self._lock:
            self.creates[self.request_key(req["prompt"], req.get("image"))] += 1
            self.creates_by_api_key[auth] += 1
        if beh.refuse_at_create:
            return 400, _error(shape, 400, beh.refuse_at_create, refusal=True)
        jid = ("video_" if shape == "openai" else "") + uuid.uuid4().hex[:20]
        if shape == "veo":
            jid = f"models/{req['model']}/operations/{jid}"
        lat = self.latency if beh.latency is None else beh.latency
        ready = float("inf") if beh.hang else time.monotonic() + lat
        with self._lock:
            self.jobs[jid] = _Job(jid, shape, req, beh, ready)
        if shape == "veo":
            return 200, {"name": jid}
        return 200, {"id": jid, "object": "video", "model": req["model"], "status": "queued", "progress": 0,
                     "created_at": int(time.time()), "seconds": req.get("seconds"), "size": req.get("size")}

    def _status(self, job: _Job) -> tuple[str, Any]:
        """``(state, reply body)``; state is pending / done / refused / failed."""
        job.polls += 1
        done = time.monotonic() >= job.ready_at
        b = job.behavior
        state = "pending" if not done else ("refused" if b.refuse else "failed" if b.fail else "done")
        if job.shape == "openai":
            body: dict[str, Any] = {"id": job.id, "object": "video", "model": job.request["model"]}
            if state == "pending":
                body.update(status="in_progress" if job.polls > 1 else "queued", progress=min(99, 10 * job.polls))
            elif state == "done":
                body.update(status="completed", progress=100)
            else:
                code = "moderation_blocked" if state == "refused" else "internal_error"
                body.update(status="failed", error={"code": code, "message": b.refuse or b.fail})
            return state, body
        body = {"name": job.id, "done": state != "pending"}
        if state == "done":
            fid = job.id.rsplit("/", 1)[-1]
            body["response"] = {"@type": "type.googleapis.com/google.ai.generativelanguage.v1beta."
                                         "PredictLongRunningResponse",
                                "generateVideoResponse": {"generatedSamples": [
                                    {"video": {"uri": f"{self.veo_url}/files/{fid}:download?alt=media"}}]}}
        elif state == "refused":
            body["response"] = {"generateVideoResponse": {"raiMediaFilteredCount": 1,
                                                          "raiMediaFilteredReasons": [b.refuse]}}
        elif state == "failed":
            body["error"] = {"code": 13, "message": b.fail}
        return state, body

    def _content(self, job: _Job) -> bytes:
        if callable(self.video):
            return self.video(job.request)
        return self.video if self.video is not None else tiny_mp4()

    def find(self, jid: str) -> _Job | None:
        with self._lock:
            if jid in self.jobs:
                return self.jobs[jid]
            return next((j for j in self.jobs.values() if j.id.endswith("/" + jid)), None)


def _error(shape: str, status: int, message: str, refusal: bool = False) -> dict[str, Any]:
    if shape == "openai":
        code = "moderation_blocked" if refusal else ("rate_limit_exceeded" if status == 429 else "server_error")
        return {"error": {"message": message, "type": "invalid_request_error", "code": code}}
    st = "INVALID_ARGUMENT" if refusal else ("RESOURCE_EXHAUSTED" if status == 429 else "UNAVAILABLE")
    return {"error": {"code": status, "message": message, "status": st}}


def _parse_multipart(ctype: str, raw: bytes) -> dict[str, Any]:
    msg = BytesParser(policy=HTTP).parsebytes(b"Content-Type: " + ctype.encode() + b"\r\n\r\n" + raw)
    out: dict[str, Any] = {}
    for part in msg.iter_parts():
        name = part.get_param("name", header="content-disposition")
        payload = part.get_payload(decode=True) or b""
        out[name] = payload if part.get_filename() else payload.decode()
    return out


_VEO_CREATE = re.compile(r"^/v1beta/models/([^/:]+):predictLongRunning$")


def _handler(api: FakeVideoAPI) -> type[BaseHTTPRequestHandler]:
    import base64

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True
        wbufsize = -1

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            return

        def _send(self, status: int, payload: Any, ctype: str = "application/json",
                  headers: dict[str, str] | None = None) -> None:
            data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()

        def _auth(self, shape: str) -> str | None:
            auth = self.headers.get("x-goog-api-key") if shape == "veo" else \
                (self.headers.get("Authorization") or "").removeprefix("Bearer ")
            auth = auth or ""
            with api._lock:
                api.auth_seen.add(auth)
            if api.api_key is not None and auth != api.api_key:
                self._send(401, _error(shape, 401, "invalid API key"))
                return None
            return auth

        def _count(self, route: str) -> None:
            with api._lock:
                api.calls[route] += 1

        def _fault(self, route: str, shape: str) -> bool:
            status = api._inject(route)
            if status is None:
                return False
            headers = {"Retry-After": f"{api.retry_after:g}"} if status == 429 else None
            self._send(status, _error(shape, status, f"fake transient HTTP {status}"), headers=headers)
            return True

        def do_POST(self) -> None:  # noqa: N802
            self._guard(self._post)

        def do_GET(self) -> None:  # noqa: N802
            self._guard(self._get)

        def _guard(self, fn: Callable[[], None]) -> None:
            try:
                fn()
            except (ConnectionError, TimeoutError):
                return
            except Exception as exc:  # a bug in the fake answers 500 with the reason instead of hanging up
                self._send(500, {"error": {"message": f"fake crashed: {type(exc).__name__}: {exc}"}})

        def _post(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            path = urlparse(self.path).path
            shape = "veo" if path.startswith("/v1beta/") else "openai"
            self._count("create")
            auth = self._auth(shape)
            if auth is None or self._fault("create", shape):
                return
            m = _VEO_CREATE.match(path)
            if path == "/v1/videos":
                ctype = self.headers.get("Content-Type") or ""
                if ctype.startswith("multipart/"):
                    form = _parse_multipart(ctype, raw)
                elif ctype.startswith("application/json"):
                    form = json.loads(raw or b"{}")
                else:
                    self._send(400, _error(shape, 400, f"unsupported content type {ctype!r}"))
                    return
                req = {"shape": "openai", "model": form.get("model"), "prompt": form.get("prompt", ""),
                       "image": form.get("input_reference"), "seconds": form.get("seconds"),
                       "size": form.get("size"), "seed": None}
            elif m:
                body = json.loads(raw or b"{}")
                inst = (body.get("instances") or [{}])[0]
                img = inst.get("image", {}).get("bytesBase64Encoded")
                params = body.get("parameters") or {}
                req = {"shape": "veo", "model": m.group(1), "prompt": inst.get("prompt", ""),
                       "image": base64.b64decode(img) if img else None, "parameters": params,
                       "seed": params.get("seed")}
            else:
                self._send(404, _error(shape, 404, f"no route {path}"))
                return
            status, reply = api._create(shape, req, auth)
            self._send(status, reply)

        def _get(self) -> None:
            path = urlparse(self.path).path
            shape = "veo" if path.startswith("/v1beta/") else "openai"
            download = path.endswith("/content") or path.endswith(":download")
            self._count("download" if download else "poll")
            auth = self._auth(shape)
            if auth is None or self._fault("download" if download else "poll", shape):
                return
            if path.startswith("/v1/videos/"):
                jid = path[len("/v1/videos/"):].removesuffix("/content")
            elif path.startswith("/v1beta/files/"):
                jid = path[len("/v1beta/files/"):].removesuffix(":download")
            else:
                jid = path[len("/v1beta/"):]
            job = api.find(jid)
            if job is None:
                self._send(404, _error(shape, 404, f"no job {jid}"))
                return
            state, body = api._status(job)
            if not download:
                self._send(200, body)
            elif state != "done":
                self._send(404, _error(shape, 404, f"job {jid} has no video ({state})"))
            else:
                self._send(200, api._content(job), ctype="video/mp4")

    return Handler
