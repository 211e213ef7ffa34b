"""The shared engine of video-generation APIs: create a job → poll it → download the video.

A provider is a :class:`JobAdapter` (how to build each HTTP call and read each reply); the
:class:`JobEngine` does the rest, the same for every provider:

* **errors by class** — the classification and the retry shared with the judge
  (:mod:`vreason.http_retry`): HTTP 429 (``rate_limit``, waits ``Retry-After`` when sent), 408/409/5xx
  (``server``), timeouts and dropped connections are retried with exponential, jittered backoff
  (the shared policy's waits); any other 4xx is ``fatal`` and not retried. A *create* is different (it may cost money):
  :mod:`vreason.generate.api_create` resends it only when it certainly did not happen, and resolves an
  ambiguous failure (5xx, read timeout, connection dropped after sending) by the provider's idempotency
  key or a look-up of recent jobs, never by a blind second create;
* **refusals** — a content-policy refusal, at create time (a 4xx the adapter recognises) or as the
  job's final state, raises :class:`JobRefused` with the provider's reason: the video is ``blocked``;
* **persistence** — the job id is written to the :class:`~vreason.generate.job_ledger.JobLedger`
  *before* the first poll, so a killed run resumes polling the same job instead of paying for a new
  one, and a finished job is never created again;
* **timeout** — a job still pending after ``timeout_s`` ends ``failed`` with the reason; its id stays
  in the ledger (status ``timeout``) so a ``--retry-failed`` run polls it again instead of re-creating.

Secrets (API keys) are scrubbed from every reason this module produces.
"""

from __future__ import annotations

import asyncio
import os
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Literal

import httpx

from vreason.generate.http_client import Client, make_client
from vreason.generate.job_ledger import JobLedger
from vreason.http_retry import RETRYABLE, Failure, RetryPolicy, classify_exception, classify_status, parse_retry_after
from vreason.http_retry import Kind as ErrorKind
from vreason.store import redact_text


class ApiError(Exception):
    """An HTTP call that did not produce a usable reply; ``kind`` decides whether it is retried."""

    def __init__(self, kind: ErrorKind, message: str, *, status: int | None = None,
                 retry_after: float | None = None, sent: bool = True):
        super().__init__(message)
        self.kind, self.message, self.status, self.retry_after = kind, message, status, retry_after
        self.sent = sent
        """False when the request certainly did not take effect (no connection, 429/408/4xx reply)."""

    @classmethod
    def of(cls, failure: Failure, message: str) -> ApiError:
        """The error of a :func:`vreason.http_retry.classify` result."""
        return cls(failure.kind, message, status=failure.status, retry_after=failure.retry_after,
                   sent=failure.sent)

    @property
    def retryable(self) -> bool:
        return self.kind in RETRYABLE

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"


class JobRefused(Exception):
    """The provider refused the request or its result (content policy): the video is ``blocked``."""


class JobFailed(Exception):
    """The provider reports the job failed (not a refusal): the video is ``failed``."""


@dataclass
class HttpCall:
    method: str
    url: str
    json: Any = None
    data: dict[str, str] | None = None
    files: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class PollResult:
    state: Literal["pending", "done", "failed", "refused"]
    reason: str | None = None
    download: HttpCall | None = None
    progress: float | None = None


@dataclass
class JobRequest:
    """What one video asks of the provider (the adapter turns it into a create call)."""

    prompt: str
    seed: int
    image_png: bytes | None = None
    image_size: tuple[int, int] | None = None
    """(width, height) of ``image_png``."""
    client_ref: str | None = None
    """The create's client reference (run + sample + seed + request; the same on every attempt)."""


class JobAdapter(ABC):
    """One provider's request and reply shapes."""

    provider: str = ""
    idempotency_header: str | None = "Idempotency-Key"
    """Header carrying the client reference on every create (``None``: not sent)."""
    honors_idempotency: bool = False
    """The provider answers a create repeated with the same key with the first one's job (no new job)."""

    @abstractmethod
    def create_call(self, req: JobRequest) -> HttpCall: ...

    @abstractmethod
    def job_id(self, body: Any) -> str:
        """The job id in the create reply (raise ``ValueError`` when absent)."""

    @abstractmethod
    def poll_call(self, job_id: str) -> HttpCall: ...

    @abstractmethod
    def read_status(self, job_id: str, body: Any) -> PollResult: ...

    def refusal(self, status: int, body: Any) -> str | None:
        """The provider's reason when a 4xx reply to a create is a content-policy refusal."""
        return None

    def lookup_call(self, req: JobRequest, since: float) -> HttpCall | None:
        """A call listing the jobs this create may have made (``None``: the provider has no such list)."""
        return None

    def lookup_matches(self, req: JobRequest, since: float, body: Any) -> list[str]:
        """Ids of jobs in a :meth:`lookup_call` reply that ``req`` (sent at or after ``since``) made."""
        return []

    def lookup_identity(self, req: JobRequest) -> str | None:
        """What the job list shows of ``req`` when it cannot show all of it (``None``: the look-up is
        exact, e.g. by client reference). Two unresolved requests with one identity cannot be told apart."""
        return None

    def error_message(self, body: Any) -> str:
        if isinstance(body, dict) and isinstance(body.get("error"), dict):
            err = body["error"]
            return str(err.get("message") or err.get("code") or err)
        return str(body)[:300]


@dataclass
class RetrySettings:
    attempts: int = 6
    """Tries per HTTP call (1 = no retry)."""
    base_s: float = 1.0
    cap_s: float = 60.0

    def policy(self) -> RetryPolicy:
        """The shared retry policy (:mod:`vreason.http_retry`) with full jitter (a wait drawn in [0, backoff])."""
        return RetryPolicy(max_retries=max(1, self.attempts) - 1, base=self.base_s, cap=self.cap_s, jitter=1.0)


@dataclass
class EngineSettings:
    poll_s: float = 10.0
    """The longest wait between polls."""
    poll_first_s: float | None = None
    """Wait before the first poll (default ``poll_s``): set it near the typical render time."""
    poll_min_s: float | None = None
    """First wait after a pending poll, doubled each time up to ``poll_s`` (default ``poll_s``: fixed)."""
    timeout_s: float = 3600.0
    max_in_flight: int | None = None
    retry: RetrySettings = field(default_factory=RetrySettings)
    retry_blocked: bool = False
    """Create a job again for a (sample, seed) whose earlier job was refused (default: keep ``blocked``)."""
    request_timeout_s: float = 120.0
    """Read timeout of one HTTP call (a create that times out is ambiguous: looked up, not resent)."""
    lookup_wait_s: float = 2.0
    """After an ambiguous create, look again this long later before concluding nothing was made."""
    recreate_after_ambiguous: bool = False
    """Without idempotency key or look-up, create again after an ambiguous failure (may pay twice)."""
    http_client: str = "auto"
    """``aiohttp`` (also ``auto``; keep-alive, proxies from the environment) or ``httpx``
    (:mod:`vreason.generate.http_client`)."""
    keepalive: int = 32
    """Connections per host, kept alive between calls (one client per engine and event loop); a call beyond
    waits for a free one."""


@dataclass
class JobOutcome:
    status: Literal["ok", "blocked", "failed"]
    reason: str | None = None
    job_id: str | None = None
    resumed: bool = False
    created: bool = False
    seconds: float = 0.0


def _body(resp: Any) -> Any:
    try:
        return resp.json()
    except ValueError:
        return resp.text[:500]


class JobEngine:
    def __init__(self, adapter: JobAdapter, ledger: JobLedger, settings: EngineSettings,
                 *, secrets: list[str] | None = None):
        self.adapter, self.ledger, self.settings = adapter, ledger, settings
        self.secrets = [s for s in (secrets or []) if s]
        self._clients: dict[int, Client] = {}
        self._running: dict[int, int] = {}
        self._sems: dict[int, asyncio.Semaphore] = {}

    # ------------------------------------------------------------------ plumbing
    def scrub(self, text: str) -> str:
        for s in self.secrets:
            text = text.replace(s, "***")
        return redact_text(text)

    def _client(self) -> Client:
        """The engine's client on the running loop: one for every job, its keep-alive connections shared
        (clients and their connections are bound to the loop that made them)."""
        loop = id(asyncio.get_running_loop())
        client = self._clients.get(loop)
        if client is None:
            client = self._clients[loop] = make_client(self.settings.http_client, keepalive=self.settings.keepalive)
        return client

    def _sem(self) -> asyncio.Semaphore | None:
        if not self.settings.max_in_flight:
            return None
        loop = id(asyncio.get_running_loop())
        return self._sems.setdefault(loop, asyncio.Semaphore(self.settings.max_in_flight))

    async def aclose(self) -> None:
        client = self._clients.pop(id(asyncio.get_running_loop()), None)
        if client is not None:
            await client.aclose()

    async def send(self, call: HttpCall, client: Client, *, create: bool = False, sink: BinaryIO | None = None) -> Any:
        """One call, retried by error class; a create's 4xx refusal raises :class:`JobRefused`. A 2xx reply's
        body goes to ``sink`` when given (emptied before each attempt)."""
        policy = None  # the shared policy (:mod:`vreason.http_retry`), made only when a call fails
        attempts = max(1, self.settings.retry.attempts)
        for i in range(attempts):
            try:
                return await self._send_once(call, client, create, sink)
            except ApiError as e:
                if not e.retryable or i + 1 == attempts:
                    raise
                policy = policy or self.settings.retry.policy()
                await asyncio.sleep(policy.delay(i, e))
        raise AssertionError("unreachable")  # pragma: no cover - the last attempt returns or raises

    async def _send_once(self, call: HttpCall, client: Client, create: bool, sink: BinaryIO | None = None) -> Any:
        if sink is not None:
            sink.seek(0)
            sink.truncate()
        try:
            resp = await client.request(call.method, call.url, json=call.json, data=call.data,
                                        files=call.files, headers=call.headers,
                                        timeout=self.settings.request_timeout_s, sink=sink)
        except httpx.TransportError as e:  # classified: connect failures were not sent, the rest may have been
            where = f"{call.method} {self.scrub(call.url.split('?', 1)[0])}"
            failure = classify_exception(e)
            text = f"timed out ({type(e).__name__})" if failure.kind == "timeout" else \
                f"{type(e).__name__}: {self.scrub(str(e))}"
            raise ApiError.of(failure, f"{where}: {text}") from None
        failure = classify_status(resp.status_code, resp.headers)
        if failure is None:
            return resp
        body = _body(resp)
        where = f"{call.method} {self.scrub(call.url.split('?', 1)[0])}"
        msg = f"{where}: HTTP {resp.status_code}: {self.scrub(self.adapter.error_message(body))}"
        if failure.kind == "fatal" and create:
            refused = self.adapter.refusal(resp.status_code, body)
            if refused is not None:
                raise JobRefused(self.scrub(refused))
        raise ApiError.of(failure, msg)

    # ------------------------------------------------------------------ one job
    async def run(self, key: str, req: JobRequest, out_path: str, *, meta: dict[str, Any],
                  started: float | None = None) -> JobOutcome:
        """One video's job; ``started`` (``time.monotonic()``) is when the caller's clock for the timeout
        began (default: now), so the engine gives up before a caller enforcing the same limit cancels it."""
        t0 = time.monotonic() if started is None else started
        loop = id(asyncio.get_running_loop())
        self._running[loop] = self._running.get(loop, 0) + 1
        try:
            sem = self._sem()
            if sem is None:
                return await self._run(key, req, out_path, meta, t0)
            async with sem:
                return await self._run(key, req, out_path, meta, t0)
        finally:  # the last job on this loop closes its client: no session outlives the jobs (nor the loop)
            self._running[loop] -= 1
            if not self._running[loop]:
                del self._running[loop]
                await self.aclose()

    async def _run(self, key: str, req: JobRequest, out_path: str, meta: dict[str, Any], t0: float) -> JobOutcome:
        return await self._job(self._client(), key, req, out_path, meta, t0)

    async def _job(self, client: Client, key: str, req: JobRequest, out_path: str,
                   meta: dict[str, Any], t0: float) -> JobOutcome:
        row = self.ledger.get(key)
        if row and row["status"] == "blocked" and not self.settings.retry_blocked:
            return JobOutcome("blocked", row["reason"], row["job_id"], resumed=True)
        resumed = bool(row and row["job_id"] and row["status"] in ("running", "timeout", "done"))
        if resumed:
            job_id = row["job_id"]  # type: ignore[index]
        else:
            from vreason.generate.api_create import CreateUnresolved, create_job

            try:
                job_id = await create_job(self, client, key, req, meta, row)
            except JobRefused as e:
                self.ledger.finish(key, "blocked", str(e))
                return JobOutcome("blocked", str(e))
            except CreateUnresolved as e:
                reason = self.scrub(str(e))
                self.ledger.finish(key, "unknown", reason)
                return JobOutcome("failed", reason)
            except (ApiError, ValueError) as e:
                reason = self.scrub(f"create failed: {e}")
                self.ledger.finish(key, "failed", reason)
                return JobOutcome("failed", reason)
        out = await self._follow(client, key, job_id, out_path, t0, resumed)
        out.resumed, out.created, out.seconds = resumed, not resumed, time.monotonic() - t0
        return out

    async def _follow(self, client: Client, key: str, job_id: str, out_path: str, t0: float,
                      resumed: bool) -> JobOutcome:
        s = self.settings
        first = s.poll_s if resumed or s.poll_first_s is None else s.poll_first_s
        await asyncio.sleep(0 if resumed else first)
        state = "queued"
        wait = min(s.poll_min_s or s.poll_s, s.poll_s)
        while True:
            try:
                resp = await self.send(self.adapter.poll_call(job_id), client)
                res = self.adapter.read_status(job_id, _body(resp))
            except ApiError as e:
                reason = self.scrub(f"polling job {job_id} failed: {e}")
                self.ledger.finish(key, "timeout" if e.retryable else "failed", reason)
                return JobOutcome("failed", reason, job_id)
            if res.state == "refused":
                reason = self.scrub(res.reason or "refused by the provider (no reason given)")
                self.ledger.finish(key, "blocked", reason)
                return JobOutcome("blocked", reason, job_id)
            if res.state == "failed":
                reason = self.scrub(f"job {job_id} failed: {res.reason or 'no reason given'}")
                self.ledger.finish(key, "failed", reason)
                return JobOutcome("failed", reason, job_id)
            if res.state == "done":
                return await self._download(client, key, job_id, res, out_path)
            state = res.reason or "pending"
            hint = parse_retry_after(resp.headers)  # the API's own "ask again in …", capped at poll_s
            step = min(s.poll_s, hint) if hint is not None and hint > 0 else wait
            wait = min(s.poll_s, wait * 2)
            margin = min(1.0, 0.1 * s.timeout_s)  # finish (and say why) before a caller's own cut at timeout_s
            if time.monotonic() - t0 + step + margin > s.timeout_s:
                reason = (f"timed out after {s.timeout_s:g} s waiting for job {job_id} (last status: "
                          f"{self.scrub(state)}); the job id is kept, --retry-failed polls it again")
                self.ledger.finish(key, "timeout", reason)
                return JobOutcome("failed", reason, job_id)
            await asyncio.sleep(step)

    async def _download(self, client: Client, key: str, job_id: str, res: PollResult,
                        out_path: str) -> JobOutcome:
        if res.download is None:
            reason = f"job {job_id} finished without a video to download"
            self.ledger.finish(key, "failed", reason)
            return JobOutcome("failed", reason, job_id)
        os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
        tmp = f"{out_path}.part"
        try:  # streamed to the file in large pieces, never held whole in memory
            with open(tmp, "wb", buffering=0) as f:
                await self.send(res.download, client, sink=f)
                size = f.tell()
        except ApiError as e:
            _remove(tmp)
            reason = self.scrub(f"download of job {job_id} failed: {e}")
            self.ledger.finish(key, "timeout" if e.retryable else "done", reason)  # done: re-download, no re-create
            return JobOutcome("failed", reason, job_id)
        except BaseException:
            _remove(tmp)
            raise
        if not size:
            _remove(tmp)
            reason = f"job {job_id}: the download was empty"
            self.ledger.finish(key, "done", reason)
            return JobOutcome("failed", reason, job_id)
        os.replace(tmp, out_path)
        self.ledger.finish(key, "done", None, path=out_path)
        return JobOutcome("ok", None, job_id)


def _remove(path: str) -> None:
    try:
        os.remove(path)
    except OSError:
        pass
