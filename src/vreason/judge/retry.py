"""Transport errors by class, and the retry policy (exponential backoff with jitter).

Backends turn their own exceptions into :class:`JudgeTransportError` with a ``kind``:

* ``rate_limit`` — HTTP 429; ``retry_after`` (seconds) when the server sent ``Retry-After``;
* ``server`` — HTTP 5xx (and 408/409);
* ``timeout`` — the request timed out;
* ``connection`` — the connection dropped or could not be opened;
* ``fatal`` — anything a retry will not fix (400, 401, 403, 404, bad config).

The client retries every kind but ``fatal``, waiting ``Retry-After`` for a 429 when given
and an exponentially growing, jittered delay otherwise.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Literal

ErrorKind = Literal["rate_limit", "server", "timeout", "connection", "fatal"]
RETRYABLE: frozenset[str] = frozenset({"rate_limit", "server", "timeout", "connection"})


class JudgeTransportError(Exception):
    """A judge request that did not produce a reply."""

    def __init__(
        self, kind: ErrorKind, message: str, *, retry_after: float | None = None, status: int | None = None
    ):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.retry_after = retry_after
        self.status = status

    @property
    def retryable(self) -> bool:
        return self.kind in RETRYABLE

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"


@dataclass
class RetryPolicy:
    """How often and how long to retry a failed request (per request, not per question)."""

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

    def delay(self, attempt: int, error: JudgeTransportError) -> float:
        """Seconds to wait before retry number ``attempt`` (0-based) after ``error``."""
        if error.kind == "rate_limit" and error.retry_after is not None:
            return float(min(max(error.retry_after, 0.0), self.cap))
        d = min(self.cap, self.base * (2.0**attempt))
        return d * (1.0 - self.jitter * self._rng.random())


def parse_retry_after(headers: object) -> float | None:
    """Seconds from ``retry-after-ms`` / ``retry-after`` headers (number or HTTP date), else ``None``."""
    get = getattr(headers, "get", None)
    if get is None:
        return None
    ms = get("retry-after-ms")
    if ms:
        try:
            return float(ms) / 1000.0
        except ValueError:
            pass
    value = get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        import email.utils
        import time

        ts = email.utils.parsedate_to_datetime(value).timestamp()
        return max(0.0, ts - time.time())
    except (TypeError, ValueError, IndexError):
        return None
