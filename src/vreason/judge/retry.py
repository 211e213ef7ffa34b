"""Transport errors by class, and the retry policy (exponential backoff with jitter).

Backends turn their own exceptions into :class:`JudgeTransportError` with a ``kind``:

* ``rate_limit`` — HTTP 429; ``retry_after`` (seconds) when the server sent ``Retry-After``;
* ``server`` — HTTP 5xx (and 408/409);
* ``timeout`` — the request timed out;
* ``connection`` — the connection dropped or could not be opened;
* ``bad_reply`` — HTTP 200 whose body is no usable chat completion (an HTML page, a truncated or
  malformed JSON body, an empty ``choices`` list, a ``null`` message content); ``raw`` keeps the body;
* ``fatal`` — anything a retry will not fix (400, 401, 403, 404, bad config).

The classes are :mod:`vreason.http_retry`'s (shared with the video APIs), and so is the retry:
:class:`RetryPolicy` (re-exported here) retries every kind but ``fatal``, waiting ``Retry-After`` when the
server sent one and an exponentially growing, jittered delay otherwise.

:class:`TokenCaps` is the other retry: a reply cut off by the completion-token cap
(``finish_reason == "length"``) is asked again with a larger cap, up to a ceiling.
"""

from __future__ import annotations

from dataclasses import dataclass

from vreason.http_retry import RETRYABLE, Failure, RetryPolicy, classify_exception, parse_retry_after
from vreason.http_retry import Kind as ErrorKind

__all__ = ["RETRYABLE", "ErrorKind", "JudgeTransportError", "RetryPolicy", "TokenCaps", "parse_retry_after",
           "transport_error", "PLAIN_TOKEN_CAPS", "LOCAL_TOKEN_CAPS", "REASONING_TOKEN_CAPS"]


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


def transport_error(exc: BaseException, message: str) -> JudgeTransportError:
    """``exc`` (raised by a backend's HTTP call) as a :class:`JudgeTransportError` of the shared
    classification (:func:`vreason.http_retry.classify_exception`), with ``message``."""
    f: Failure = classify_exception(exc)
    return JudgeTransportError(f.kind, message, retry_after=f.retry_after, status=f.status)


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

