"""One classification of HTTP failures and one retry policy, shared by the judge and the video APIs.

:func:`classify` turns a failed call — an exception (httpx's, the OpenAI SDK's) or an HTTP status with its
headers — into a :class:`Failure`:

=============================================  ============  =======  ===================================
what came back                                 ``kind``      ``sent``  a create (:attr:`Failure.for_create`)
=============================================  ============  =======  ===================================
HTTP 429                                       rate_limit    no       retryable (``Retry-After`` honoured)
HTTP 408 (the server gave up on the request)   server        no       retryable
HTTP 409, 5xx                                  server        yes      ambiguous (503 may send Retry-After)
read/write timeout                             timeout       yes      ambiguous
connection refused, connect/pool timeout       connection    no       retryable
connection dropped after sending               connection    yes      ambiguous
any other 4xx, anything else                   fatal         no       fatal
=============================================  ============  =======  ===================================

``sent`` is False when the request certainly did not take effect. Everything but ``fatal`` is retried by a
plain call (a poll, a download, a judge question); a create that may cost money is resent only when it
certainly did not happen (:mod:`vreason.generate.api_create` resolves an *ambiguous* one). The judge adds one
kind of its own, ``bad_reply`` (HTTP 200 whose body is no chat completion), retried like a 5xx.

:class:`RetryPolicy` is the wait between tries: ``Retry-After`` (seconds, milliseconds or an HTTP date) when
the server sent one, capped at ``cap``; otherwise exponential backoff from ``base`` with jitter.
:meth:`RetryPolicy.retrying` is the tenacity loop built on it.
"""

from __future__ import annotations

import email.utils
import math
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt

Kind = Literal["rate_limit", "server", "timeout", "connection", "bad_reply", "fatal"]
RETRYABLE: frozenset[str] = frozenset({"rate_limit", "server", "timeout", "connection", "bad_reply"})
CreateOutcome = Literal["retryable", "ambiguous", "fatal"]


@dataclass(frozen=True)
class Failure:
    """What a failed HTTP call proves: its ``kind``, whether it may have taken effect (``sent``), the
    status and the server's ``Retry-After`` (seconds) when there was a reply."""

    kind: Kind
    sent: bool = True
    status: int | None = None
    retry_after: float | None = None

    @property
    def retryable(self) -> bool:
        return self.kind in RETRYABLE

    @property
    def for_create(self) -> CreateOutcome:
        """A call that creates something billable: ``retryable`` only when it certainly did not happen."""
        if not self.retryable:
            return "fatal"
        return "ambiguous" if self.sent else "retryable"


def parse_retry_after(headers: Any) -> float | None:
    """Seconds from ``retry-after-ms`` / ``retry-after`` headers (a number of seconds or an HTTP date; a date
    in the past is 0), else ``None`` (absent, unreadable, negative or not finite)."""
    get = getattr(headers, "get", None)
    if get is None:
        return None
    ms = _number(get("retry-after-ms"))
    if ms is not None:
        return ms / 1000.0
    value = get("retry-after")
    if not value:
        return None
    seconds = _number(value)
    if seconds is not None:
        return seconds
    try:
        when = email.utils.parsedate_to_datetime(str(value))
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # an HTTP date is GMT; parsedate_to_datetime leaves "-0000" naive
        import datetime as _dt

        when = when.replace(tzinfo=_dt.timezone.utc)
    return max(0.0, when.timestamp() - time.time())


def _number(value: Any) -> float | None:
    if value is None or value == "":
        return None
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) and x >= 0 else None


def classify_status(status: int, headers: Any = None) -> Failure | None:
    """The failure an HTTP ``status`` reply means (``None`` for a success, < 400)."""
    if status < 400:
        return None
    if status == 429:  # rate limits are checked before a request is processed
        return Failure("rate_limit", sent=False, status=429, retry_after=parse_retry_after(headers))
    if status == 408:  # the server gave up waiting for the request: not processed
        return Failure("server", sent=False, status=408)
    if status >= 500 or status == 409:  # 409: e.g. the same idempotency key in flight
        after = parse_retry_after(headers) if status == 503 else None
        return Failure("server", sent=True, status=status, retry_after=after)
    return Failure("fatal", sent=False, status=status)


def classify_exception(exc: BaseException) -> Failure:
    """The failure an exception raised by a call means (httpx's transport errors, the OpenAI SDK's errors;
    anything else is ``fatal``)."""
    openai = sys.modules.get("openai")
    if openai is not None:
        if isinstance(exc, openai.APIStatusError):
            return classify_status(exc.status_code, exc.response.headers) or Failure("fatal", sent=False)
        if isinstance(exc, openai.APITimeoutError):
            return Failure("timeout", sent=True)
        if isinstance(exc, openai.APIConnectionError):
            cause = exc.__cause__
            return classify_exception(cause) if cause is not None and _is_httpx(cause) else Failure("connection")
    httpx = sys.modules.get("httpx")
    if httpx is not None and isinstance(exc, httpx.HTTPError):
        if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout | httpx.PoolTimeout):
            return Failure("connection", sent=False)  # nothing was sent
        if isinstance(exc, httpx.TimeoutException):  # the request may have been received and acted on
            return Failure("timeout", sent=True)
        if isinstance(exc, httpx.TransportError):  # dropped after (part of) the request was sent
            return Failure("connection", sent=True)
        if isinstance(exc, httpx.HTTPStatusError):
            return classify_status(exc.response.status_code, exc.response.headers) or Failure("fatal", sent=False)
    return Failure("fatal", sent=False)


def _is_httpx(exc: BaseException) -> bool:
    httpx = sys.modules.get("httpx")
    return httpx is not None and isinstance(exc, httpx.HTTPError)


def classify(what: BaseException | int | Any, headers: Any = None) -> Failure | None:
    """:func:`classify_exception` of an exception, :func:`classify_status` of a status code or of a response
    (anything with ``status_code`` and ``headers``)."""
    if isinstance(what, BaseException):
        return classify_exception(what)
    if isinstance(what, int):
        return classify_status(what, headers)
    return classify_status(int(what.status_code), getattr(what, "headers", headers))


@dataclass
class RetryPolicy:
    """How often and how long to retry a failed call (per call)."""

    max_retries: int = 5
    base: float = 1.0
    """First backoff in seconds; doubles each retry."""
    cap: float = 60.0
    """Longest single wait (also caps ``Retry-After``)."""
    jitter: float = 0.5
    """Fraction of the delay drawn at random (0 = none, 1 = full jitter)."""
    seed: int | None = None

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)

    def delay(self, attempt: int, error: Any = None) -> float:
        """Seconds to wait before retry number ``attempt`` (0-based) after ``error`` (anything with a
        ``retry_after``, e.g. a :class:`Failure`): its ``Retry-After`` capped at ``cap``, else backoff."""
        after = getattr(error, "retry_after", None)
        if after is not None:
            return float(min(max(after, 0.0), self.cap))
        d = min(self.cap, self.base * (2.0**attempt))
        return d * (1.0 - self.jitter * self._rng.random())

    def retrying(self, retryable: Callable[[BaseException], bool],
                 before_sleep: Callable[[Any], Any] | None = None) -> AsyncRetrying:
        """A tenacity loop: up to ``max_retries`` retries of an exception ``retryable`` accepts, waiting
        :meth:`delay` (the exception's ``retry_after`` when it has one); the last exception is re-raised."""

        def wait(state: Any) -> float:
            exc = state.outcome.exception() if state.outcome else None
            return self.delay(state.attempt_number - 1, exc)

        kw: dict[str, Any] = {"before_sleep": before_sleep} if before_sleep is not None else {}
        return AsyncRetrying(stop=stop_after_attempt(max(0, self.max_retries) + 1), wait=wait,
                             retry=retry_if_exception(retryable), reraise=True, **kw)
