"""A loopback fake of video-generation APIs for tests and benchmarks.

It speaks both shapes vreason's API generators use, on ``127.0.0.1`` (a free port):

* OpenAI videos (``base + "/v1"``): ``POST /v1/videos`` (multipart or JSON), ``GET /v1/videos/{id}``
  (``queued`` → ``in_progress`` → ``completed`` / ``failed``), ``GET /v1/videos/{id}/content``;
* Gemini / Veo (``base + "/v1beta"``): ``POST /v1beta/models/{model}:predictLongRunning``,
  ``GET /v1beta/models/{model}/operations/{id}``, ``GET /v1beta/files/{id}:download``.

Jobs are ready ``latency`` seconds after their create. ``policy(request) -> Behavior`` decides per request
(``request`` has ``prompt``, ``model``, ``image`` bytes, ``seed``, ``shape``) whether the job is refused at
create (HTTP 400 content policy), refused or failed when it ends, never finishes (``hang``), or has its own
latency. ``transient`` injects HTTP errors per route (``create``, ``poll``, ``download``, ``list``), consumed in
order (``429`` carries ``Retry-After: retry_after``). Every create is counted per request key
(:meth:`request_key`: prompt + image) and per API key; :meth:`release` makes pending jobs ready now.

Ambiguous create failures: ``after_create`` is a list of faults consumed one per create that made a job
— ``"500"`` (the job exists, the reply is HTTP 500), ``"drop"`` (the job exists, the connection is cut
without a reply), ``"stall"`` (the job exists, no reply for ``stall_s`` seconds, then the connection is
cut) or ``None`` (a normal reply). With ``idempotency=True`` a create repeated with an
``Idempotency-Key`` already seen makes no job and answers the first job (``Idempotent-Replayed: true``).
``create_delay_s`` holds every create that long before it is handled (creates in flight at once).
With ``poll_hint=True`` a pending poll carries ``retry-after-ms`` (the time the job still needs).
``GET /v1/videos`` lists the OpenAI-shape jobs newest first (``limit``, ``order``, and — an extension
of the fake — ``client_reference``, the ``Idempotency-Key`` a job was created with).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

import h11


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


class FakeVideoAPI:
    def __init__(self, *, latency: float = 0.1, video: bytes | Callable[[dict[str, Any]], bytes] | None = None,
                 policy: Callable[[dict[str, Any]], Behavior | None] | None = None,
                 transient: dict[str, list[int]] | None = None, retry_after: float = 0.0,
                 api_key: str | None = None, after_create: list[str | None] | None = None,
                 idempotency: bool = False, stall_s: float = 30.0, poll_hint: bool = False,
                 create_delay_s: float = 0.0):
        self.latency, self.video, self.policy = latency, video, policy
        self.transient = {k: list(v) for k, v in (transient or {}).items()}
        self.retry_after, self.api_key = retry_after, api_key
        self.after_create = list(after_create or [])
        self.idempotency, self.stall_s, self.poll_hint = idempotency, stall_s, poll_hint
        self.create_delay_s = create_delay_s
        self.by_idempotency_key: dict[str, tuple[int, Any]] = {}
        self.faults_fired: Counter[str] = Counter()
        self.jobs: dict[str, _Job] = {}
        self.creates: Counter[str] = Counter()
        self.creates_by_api_key: Counter[str] = Counter()
        self.calls: Counter[str] = Counter()
        self.auth_seen: set[str] = set()
        self._lock = threading.Lock()
        self._server: asyncio.AbstractServer | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> FakeVideoAPI:
        ready = threading.Event()

        def serve() -> None:
            loop = asyncio.new_event_loop()
            asyncio.set_event_loop(loop)
            self._loop = loop
            self._server = loop.run_until_complete(asyncio.start_server(
                lambda r, w: _connection(self, r, w), "127.0.0.1", 0, backlog=256))
            ready.set()
            loop.run_forever()
            self._server.close()
            pending = asyncio.all_tasks(loop)  # open keep-alive connections: end them before closing the loop
            for task in pending:
                task.cancel()
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.run_until_complete(self._server.wait_closed())
            loop.close()

        self._thread = threading.Thread(target=serve, name="fake-video-api", daemon=True)
        self._thread.start()
        ready.wait(10)
        return self

    def stop(self) -> None:
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=5)
        self._thread = self._loop = self._server = None

    def __enter__(self) -> FakeVideoAPI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base(self) -> str:
        assert self._server is not None, "server not started"
        return f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"

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

    def _after_create_fault(self) -> str | None:
        with self._lock:
            fault = self.after_create.pop(0) if self.after_create else None
            if fault:
                self.faults_fired[fault] += 1
            return fault

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
            self.jobs[jid] = _Job(jid, shape, req, beh, ready, extra={"created_at": time.time()})
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
    """Fields of a ``multipart/form-data`` body: text for plain fields, bytes for files. (A small parser:
    the stdlib's email parser costs ~1.4 ms per body, which capped the fake at ~300 creates/s.)"""
    m = re.search(r'boundary="?([^";]+)"?', ctype)
    if not m:
        raise ValueError("multipart body without a boundary")
    out: dict[str, Any] = {}
    for part in raw.split(b"--" + m.group(1).encode())[1:]:
        if part.startswith(b"--"):
            break
        head, _, body = part.partition(b"\r\n\r\n")
        disp = next((h for h in head.decode("utf-8", "replace").split("\r\n")
                     if h.lower().startswith("content-disposition")), "")
        name = re.search(r'\bname="([^"]*)"', disp)
        if name:
            body = body[:-2] if body.endswith(b"\r\n") else body
            out[name.group(1)] = body if re.search(r'\bfilename="', disp) else body.decode()
    return out


_VEO_CREATE = re.compile(r"^/v1beta/models/([^/:]+):predictLongRunning$")


Answer = tuple[int, Any, str, dict[str, str]]
"""(status, payload: bytes or JSON-able, content type, extra headers)."""


def _json(status: int, payload: Any, headers: dict[str, str] | None = None) -> Answer:
    return status, payload, "application/json", headers or {}


def handle(api: FakeVideoAPI, method: str, target: str, headers: dict[str, str], raw: bytes) -> Answer:
    """One HTTP request to the fake (transport-free, so tests can also call it directly)."""
    path = urlparse(target).path
    shape = "veo" if path.startswith("/v1beta/") else "openai"
    if method == "POST":
        route = "create"
    else:
        route = "download" if path.endswith(("/content", ":download")) else "list" if path == "/v1/videos" else "poll"
    with api._lock:
        api.calls[route] += 1
    auth = headers.get("x-goog-api-key", "") if shape == "veo" else \
        headers.get("authorization", "").removeprefix("Bearer ")
    with api._lock:
        api.auth_seen.add(auth)
    if api.api_key is not None and auth != api.api_key:
        return _json(401, _error(shape, 401, "invalid API key"))
    status = api._inject(route)
    if status is not None:
        extra = {"Retry-After": f"{api.retry_after:g}"} if status == 429 else None
        return _json(status, _error(shape, status, f"fake transient HTTP {status}"), extra)
    if method == "POST":
        idem = headers.get("idempotency-key") if api.idempotency else None
        with api._lock:
            seen = api.by_idempotency_key.get(idem) if idem else None
        if seen is not None:
            return _json(seen[0], seen[1], {"Idempotent-Replayed": "true"})
        answer = _create_route(api, shape, path, headers, raw, auth)
        if answer[0] == 200:
            job = api.find(answer[1].get("id") or answer[1].get("name"))
            if job is not None:
                job.extra["client_reference"] = headers.get("idempotency-key")
            if idem:
                with api._lock:
                    api.by_idempotency_key[idem] = (answer[0], answer[1])
            fault = api._after_create_fault()
            if fault == "500":
                return _json(500, _error(shape, 500, "fake: the job was made, then the server failed"))
            if fault in ("drop", "stall"):
                return 0, fault, "", {}
        return answer
    if method != "GET":
        return _json(405, _error(shape, 405, f"method {method} not allowed"))
    if path == "/v1/videos":
        return _json(200, _list(api, target))
    if path.startswith("/v1/videos/"):
        jid = path[len("/v1/videos/"):].removesuffix("/content")
    elif path.startswith("/v1beta/files/"):
        jid = path[len("/v1beta/files/"):].removesuffix(":download")
    else:
        jid = path[len("/v1beta/"):]
    job = api.find(jid)
    if job is None:
        return _json(404, _error(shape, 404, f"no job {jid}"))
    state, body = api._status(job)
    if route == "poll":
        left = job.ready_at - time.monotonic()
        hint = {"retry-after-ms": f"{max(1, round(left * 1000))}"} if api.poll_hint and state == "pending" and \
            left != float("inf") else None
        return _json(200, body, hint)
    if state != "done":
        return _json(404, _error(shape, 404, f"job {jid} has no video ({state})"))
    return 200, api._content(job), "video/mp4", {}


def _list(api: FakeVideoAPI, target: str) -> dict[str, Any]:
    from urllib.parse import parse_qs

    q = {k: v[-1] for k, v in parse_qs(urlparse(target).query).items()}
    with api._lock:
        jobs = [j for j in api.jobs.values() if j.shape == "openai"]
    jobs.sort(key=lambda j: j.extra["created_at"], reverse=q.get("order", "desc") == "desc")
    if q.get("client_reference"):
        jobs = [j for j in jobs if j.extra.get("client_reference") == q["client_reference"]]
    data = [{"id": j.id, "object": "video", "model": j.request["model"], "prompt": j.request["prompt"],
             "seconds": j.request.get("seconds"), "size": j.request.get("size"),
             "created_at": int(j.extra["created_at"])} for j in jobs[: int(q.get("limit", 20))]]
    return {"object": "list", "data": data, "has_more": len(jobs) > len(data)}


def _create_route(api: FakeVideoAPI, shape: str, path: str, headers: dict[str, str], raw: bytes,
                  auth: str) -> Answer:
    import base64

    m = _VEO_CREATE.match(path)
    if path == "/v1/videos":
        ctype = headers.get("content-type", "")
        if ctype.startswith("multipart/"):
            form = _parse_multipart(ctype, raw)
        elif ctype.startswith("application/json"):
            form = json.loads(raw or b"{}")
        else:
            return _json(400, _error(shape, 400, f"unsupported content type {ctype!r}"))
        req = {"shape": "openai", "model": form.get("model"), "prompt": form.get("prompt", ""),
               "image": form.get("input_reference"), "seconds": form.get("seconds"), "size": form.get("size"),
               "seed": None}
    elif m:
        body = json.loads(raw or b"{}")
        inst = (body.get("instances") or [{}])[0]
        img = inst.get("image", {}).get("bytesBase64Encoded")
        params = body.get("parameters") or {}
        req = {"shape": "veo", "model": m.group(1), "prompt": inst.get("prompt", ""),
               "image": base64.b64decode(img) if img else None, "parameters": params, "seed": params.get("seed")}
    else:
        return _json(404, _error(shape, 404, f"no route {path}"))
    status, reply = api._create(shape, req, auth)
    return _json(status, reply)


async def _connection(api: FakeVideoAPI, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """HTTP/1.1 with keep-alive over one connection (h11, the parser httpx itself uses)."""
    conn = h11.Connection(h11.SERVER)
    try:
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                conn.receive_data(await reader.read(65536))
                continue
            if not isinstance(event, h11.Request):
                break  # ConnectionClosed, or a protocol state we do not serve
            chunks = []
            while True:
                ev = conn.next_event()
                if ev is h11.NEED_DATA:
                    conn.receive_data(await reader.read(65536))
                elif isinstance(ev, h11.Data):
                    chunks.append(bytes(ev.data))
                elif isinstance(ev, h11.EndOfMessage):
                    break
                else:
                    raise ConnectionError("connection closed mid-request")
            hdrs = {k.decode().lower(): v.decode() for k, v in event.headers}
            if api.create_delay_s and event.method == b"POST":  # creates in flight together, for tests
                await asyncio.sleep(api.create_delay_s)
            try:
                status, payload, ctype, extra = handle(api, event.method.decode(), event.target.decode(), hdrs,
                                                       b"".join(chunks))
            except Exception as exc:  # a bug in the fake answers 500 with the reason instead of hanging up
                status, payload, ctype, extra = _json(500, {"error": {"message": f"fake crashed: {exc!r}"}})
            if status == 0:  # an injected fault: the job was made, the reply never comes
                if payload == "stall":
                    await asyncio.sleep(api.stall_s)
                writer.transport.abort()
                break
            data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            head = [("Content-Type", ctype), ("Content-Length", str(len(data))), *extra.items()]
            writer.write(conn.send(h11.Response(status_code=status, headers=head)) + conn.send(h11.Data(data=data))
                         + conn.send(h11.EndOfMessage()))
            await writer.drain()
            if conn.our_state is h11.MUST_CLOSE:
                break
            conn.start_next_cycle()
    except (ConnectionError, h11.ProtocolError, asyncio.IncompleteReadError, asyncio.CancelledError):
        pass  # clients that hang up (a killed run) are expected; cancelled: the fake is stopping
    finally:
        writer.close()
