"""Transport errors by class, and the retry policy (exponential backoff with jitter).

Backends turn their own exceptions into :class:`JudgeTransportError` with a ``kind``:

* ``rate_limit`` — HTTP 429; ``retry_after`` (seconds) when the server sent ``Retry-After``;
* ``server`` — HTTP 5xx (and 408/409);
* ``timeout`` — the request timed out;
* ``connection`` — the connection dropped or could not be opened;
* ``bad_reply`` — HTTP 200 whose body is no usable chat completion (an HTML page, a truncated or
  malformed JSON body, an empty ``choices`` list, a ``null`` message content); ``raw`` keeps the body;
* ``fatal`` — anything a retry will not fix (400, 401, 403, 404, bad config).

The client retries every kind but ``fatal``, waiting ``Retry-After`` for a 429 when given
and an exponentially growing, jittered delay otherwise.

:class:`TokenCaps` is the other retry: a reply cut off by the completion-token cap
(``finish_reason == "length"``) is asked again with a larger cap, up to a ceiling.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Literal

ErrorKind = Literal["rate_limit", "server", "timeout", "connection", "bad_reply", "fatal"]
RETRYABLE: frozenset[str] = frozenset({"rate_limit", "server", "timeout", "connection", "bad_reply"})


class JudgeTransportError(Exception):
    """A judge request that did not produce a reply."""

    def __init__(
        self,
        kind: ErrorKind,
        message: str,
        *,
        retry_after: float | None = None,
        status: int | None = None,
        raw: str | None = None,
    ):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.retry_after = retry_after
        self.status = status
        self.raw = raw
        """What came back, when something did (``bad_reply``): kept as the score's raw reply."""

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


@dataclass(frozen=True)
class TokenCaps:
    """The completion-token cap of a request: a floor, growth after a cut-off reply, a ceiling.

    ``floor`` raises a request's ``max_tokens`` before the first ask (reasoning models spend their
    thinking inside ``max_completion_tokens``, so a protocol's answer-sized cap would cut them off);
    after a reply with ``finish_reason == "length"`` the cap is multiplied by ``growth`` (at most
    ``ceiling``) and the question asked again; a reply cut off at the ceiling is unscored.
    """

    floor: int | None = None
    ceiling: int = 32768
    growth: float = 2.0

    def __post_init__(self) -> None:
        if self.ceiling < 1:
            raise ValueError(f"completion_tokens.ceiling must be ≥ 1, got {self.ceiling}")
        if self.growth <= 1.0:
            raise ValueError(f"completion_tokens.growth must be > 1, got {self.growth}")
        if self.floor is not None and not 1 <= self.floor <= self.ceiling:
            raise ValueError(f"completion_tokens.floor must be in [1, ceiling={self.ceiling}], got {self.floor}")

    @classmethod
    def from_config(cls, value: object, base: TokenCaps | None = None) -> TokenCaps:
        """From the judge spec's ``completion_tokens: {floor, ceiling, growth}`` (unknown keys rejected)
        over the defaults ``base`` (:data:`PLAIN_TOKEN_CAPS` when not given)."""
        base = base or PLAIN_TOKEN_CAPS
        if value is None:
            return base
        if not isinstance(value, dict):
            raise ValueError(f"completion_tokens: expected a mapping with floor/ceiling/growth, got {value!r}")
        unknown = set(value) - {"floor", "ceiling", "growth"}
        if unknown:
            raise ValueError(f"completion_tokens: unknown keys {sorted(unknown)} (floor, ceiling, growth)")
        floor = value.get("floor", base.floor)
        return cls(
            floor=None if floor is None else int(floor),
            ceiling=int(value.get("ceiling", base.ceiling)),
            growth=float(value.get("growth", base.growth)),
        )

    def initial(self, cap: int | None) -> int | None:
        """The cap to send first for a request that asks for ``cap`` (``None``: the server's default)."""
        if self.floor is not None and (cap is None or cap < self.floor):
            return self.floor
        return cap

    def grow(self, cap: int | None) -> int | None:
        """The next, larger cap after a reply cut off at ``cap``; ``None`` when ``cap`` is the ceiling."""
        if cap is None:
            return self.ceiling  # the server's own default cut it off: ask for the ceiling explicitly
        if cap >= self.ceiling:
            return None
        return min(self.ceiling, max(cap + 1, int(cap * self.growth)))


PLAIN_TOKEN_CAPS = TokenCaps(floor=None, ceiling=32768)
"""Non-reasoning judges: the protocol's cap is sent as is (faithful); a cut-off reply doubles it."""
LOCAL_TOKEN_CAPS = TokenCaps(floor=None, ceiling=8192)
"""A local checkpoint (transformers): every token is generated on this machine, so the ceiling is lower."""
REASONING_TOKEN_CAPS = TokenCaps(floor=25000, ceiling=100000)
"""o1/o3/o4/GPT-5-class judges: ``max_completion_tokens`` counts the hidden reasoning tokens too, so
at least 25,000 are sent (OpenAI's suggested starting reserve for reasoning + output), up to 100,000."""


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
