"""The judge client: one question in, a parsed value or an honest ``unscored`` out.

``await client.ask(request, parser)`` does, for each of ``repeats`` replies:

1. answer from the SQLite cache when the same question was asked before (unless ``refresh``);
2. otherwise send it through the endpoint's shared :class:`~vreason.judge.limits.Limiter`, retrying
   transport errors by class (429 honouring ``Retry-After``, 5xx, timeouts, dropped connections, an
   HTTP 200 that is no chat completion);
3. a reply cut off by the completion-token cap (``finish_reason == "length"``) is asked again with a
   larger cap (:class:`~vreason.judge.retry.TokenCaps`), up to its ceiling;
4. parse the reply; on a parse failure re-ask up to ``reasks`` times with a repair instruction;
   only a reply that parsed is cached;
5. reduce the repeats by majority or median and report their spread.

A question that never yields a parsed value gives ``JudgeOutcome(ok=False, reason=..., raw=...)``:
the scorer turns it into an ``unscored`` Score — never 0, never the bottom of the scale.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import statistics
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from vreason.core.records import JudgeEvidence
from vreason.judge.accounting import (
    Price,
    Stats,
    completion_estimate,
    estimate_image_tokens,
    estimate_text_tokens,
)
from vreason.judge.base import Decoding, ImagePart, Judge, JudgeReply, JudgeRequest, TextPart, Usage, VideoPart
from vreason.judge.cache import ReplyCache, request_key
from vreason.judge.limits import Limiter
from vreason.judge.parsers import ParseFailure
from vreason.judge.retry import PLAIN_TOKEN_CAPS, JudgeTransportError, RetryPolicy, TokenCaps

Reduce = Literal["majority", "median", "mean"]

REPAIR_INSTRUCTION = (
    "Your previous reply could not be used: {reason}.\n"
    "Your previous reply was:\n<<<\n{raw}\n>>>\n"
    "Answer the same question again, following the required output format exactly."
)


@dataclass
class JudgeOutcome:
    """The result of one question. ``value`` is set only when ``ok``; else ``reason`` says why."""

    ok: bool
    value: Any = None
    reason: str | None = None
    raw: str | None = None
    """The last raw reply (of the last repeat), if any came back."""
    judge: str = ""
    decoding: dict[str, Any] = field(default_factory=dict)
    attempts: int = 0
    """Replies asked for (first asks plus re-asks, over all repeats)."""
    requests: int = 0
    """Requests actually sent (retries included; 0 when everything came from the cache)."""
    cached: bool = False
    """True when every reply came from the cache."""
    usage: Usage = field(default_factory=Usage)
    values: list[Any] = field(default_factory=list)
    """Parsed value of each repeat (``None`` for a repeat that failed)."""
    replies: list[str | None] = field(default_factory=list)
    spread: dict[str, Any] | None = None
    length_retries: int = 0
    """Re-asks with a larger completion-token cap after a reply was cut off (``finish_reason=length``)."""

    def evidence(self, request: JudgeRequest | None = None) -> JudgeEvidence:
        """Judge identity, template + version, decoding, raw reply, attempts and cache flag."""
        extra: dict[str, Any] = {
            "requests": self.requests,
            "usage": {
                "prompt_tokens": self.usage.prompt_tokens,
                "completion_tokens": self.usage.completion_tokens,
            },
        }
        if not self.ok:
            extra["reason"] = self.reason
        if self.length_retries:
            extra["length_retries"] = self.length_retries
        if len(self.replies) > 1:
            extra["repeats"] = len(self.replies)
            extra["raw_replies"] = list(self.replies)
            extra["values"] = [_jsonable(v) for v in self.values]
            extra["spread"] = self.spread
        return JudgeEvidence(
            judge=self.judge,
            template=request.template if request else "",
            template_version=request.template_version if request else "",
            decoding=dict(self.decoding),
            raw_reply=self.raw,
            attempts=self.attempts,
            cached=self.cached,
            **extra,
        )


def _jsonable(v: Any) -> Any:
    return list(v) if isinstance(v, tuple) else v


@dataclass
class _One:
    ok: bool
    value: Any = None
    reason: str | None = None
    raw: str | None = None
    attempts: int = 0
    requests: int = 0
    cached: bool = False
    usage: Usage = field(default_factory=Usage)
    decoding: Decoding = field(default_factory=Decoding)
    """The decoding of the last request (its ``max_tokens`` is the cap the reply came under)."""
    length_retries: int = 0


class JudgeClient:
    """Asks one judge backend questions; shared by every scorer of a run (see module docstring)."""

    def __init__(
        self,
        judge: Judge,
        *,
        cache: ReplyCache | None = None,
        refresh: bool = False,
        limiter: Limiter | None = None,
        retry: RetryPolicy | None = None,
        reasks: int = 1,
        repeats: int = 1,
        reduce: Reduce = "majority",
        price: Price | None = None,
        dry_run: bool = False,
        dry_run_completion_tokens: int = 256,
        image_max_side: int | None = None,
        token_caps: TokenCaps | None = None,
    ):
        if repeats < 1:
            raise ValueError(f"repeats must be ≥ 1, got {repeats}")
        if reduce not in ("majority", "median", "mean"):
            raise ValueError(f"reduce must be majority, median or mean, got {reduce!r}")
        self.judge = judge
        self.cache = cache
        self.refresh = refresh
        self.limiter = limiter or Limiter(8)
        self.retry = retry or RetryPolicy()
        self.reasks = max(0, int(reasks))
        self.repeats = int(repeats)
        self.reduce = reduce
        self.price = price
        self.dry_run = dry_run
        self.dry_run_completion_tokens = dry_run_completion_tokens
        self.image_max_side = (
            image_max_side if image_max_side is not None else getattr(judge, "max_side", None)
        )
        self.token_caps = token_caps or PLAIN_TOKEN_CAPS
        self._stats = Stats(dry_run=dry_run)

    # ------------------------------------------------------------------ public API
    @property
    def identity(self) -> str:
        return self.judge.identity

    def stats(self) -> dict[str, Any]:
        """Requests sent, cache hits, retries, re-asks, unscored, tokens and cost (or dry-run estimates)."""
        return self._stats.as_dict()

    def sent_decoding(self, request: JudgeRequest) -> dict[str, Any]:
        fn = getattr(self.judge, "sent_decoding", None)
        return fn(request.decoding) if fn else request.decoding.as_dict()

    async def ask(
        self,
        request: JudgeRequest,
        parser: Callable[[str], Any],
        *,
        repeats: int | None = None,
        reduce: Reduce | None = None,
    ) -> JudgeOutcome:
        """Ask ``request``; parse each reply with ``parser``; retries and re-asks inside."""
        k = self.repeats if repeats is None else int(repeats)
        how = reduce or self.reduce
        self._stats.questions += 1
        if k == 1:
            ones = [await self._ask_one(request, parser, 0)]
        else:
            ones = list(await asyncio.gather(*(self._ask_one(request, parser, i) for i in range(k))))
        out = JudgeOutcome(
            ok=False,
            judge=self.identity,
            decoding=self.sent_decoding(dataclasses.replace(request, decoding=ones[-1].decoding)),
            attempts=sum(o.attempts for o in ones),
            requests=sum(o.requests for o in ones),
            cached=all(o.cached for o in ones),
            length_retries=sum(o.length_retries for o in ones),
            usage=Usage(
                sum(o.usage.prompt_tokens for o in ones), sum(o.usage.completion_tokens for o in ones)
            ),
            values=[o.value if o.ok else None for o in ones],
            replies=[o.raw for o in ones],
            raw=ones[-1].raw,
        )
        if k == 1:
            out.ok, out.value, out.reason = ones[0].ok, ones[0].value, ones[0].reason
        else:
            out.ok, out.value, out.reason, out.spread = _reduce(ones, how)
        if not out.ok:
            self._stats.unscored += 1
            out.value = None
        return out

    def ask_sync(self, request: JudgeRequest, parser: Callable[[str], Any], **kw: Any) -> JudgeOutcome:
        """``ask`` from synchronous code (not from inside a running event loop)."""
        return asyncio.run(self.ask(request, parser, **kw))

    async def aclose(self) -> None:
        await self.judge.aclose()
        if self.cache is not None:
            self.cache.close()

    # ------------------------------------------------------------------ internals
    async def _ask_one(self, request: JudgeRequest, parser: Callable[[str], Any], repeat: int) -> _One:
        dec = request.decoding
        if repeat and dec.seed is not None:
            dec = dataclasses.replace(dec, seed=dec.seed + repeat)
        cap = self.token_caps.initial(dec.max_tokens)
        if cap != dec.max_tokens:
            dec = dataclasses.replace(dec, max_tokens=cap)
        req = request if dec is request.decoding else dataclasses.replace(request, decoding=dec)
        one = _One(ok=False, decoding=req.decoding)
        key = await self._key(req, repeat)
        if self._from_cache(key, req, parser, one):
            return one
        if self.dry_run:
            self._estimate(req)
            one.attempts, one.reason = 1, "dry run: request not sent"
            return one
        asks = 0
        while True:
            one.attempts += 1
            one.decoding = req.decoding
            try:
                reply = await self._send(req, one)
            except JudgeTransportError as e:
                one.reason = f"judge request failed ({e})"
                if e.raw is not None:
                    one.raw = e.raw
                return one
            one.usage = Usage(
                one.usage.prompt_tokens + reply.usage.prompt_tokens,
                one.usage.completion_tokens + reply.usage.completion_tokens,
            )
            one.raw = reply.text
            if reply.finish_reason == "length":  # cut off by the token cap: ask again with a larger one
                grown = self.token_caps.grow(req.decoding.max_tokens)
                if grown is None:
                    one.reason = (
                        "reply cut off by the completion-token cap (finish_reason=length) at "
                        f"{req.decoding.max_tokens} tokens, the ceiling (completion_tokens.ceiling), "
                        f"after {one.attempts} attempt(s)"
                    )
                    return one
                self._stats.length_retries += 1
                one.length_retries += 1
                req = dataclasses.replace(req, decoding=dataclasses.replace(req.decoding, max_tokens=grown))
                continue
            try:
                one.value = parser(reply.text)
            except ParseFailure as e:
                asks += 1
                note = ""
                if reply.finish_reason in ("content_filter", "refusal"):
                    note = f" (finish_reason={reply.finish_reason})"
                one.reason = f"unparseable reply after {asks} attempt(s): {e.reason}{note}"
                if asks > self.reasks:
                    return one
                self._stats.reasks += 1
                fix = REPAIR_INSTRUCTION.format(reason=f"{e.reason}{note}", raw=(reply.text or "")[:2000])
                req = dataclasses.replace(req, parts=[*req.parts, TextPart(fix)])
                continue
            one.ok, one.reason = True, None
            if self.cache is not None and key is not None:
                # the answer is stored under the question as first asked, with the cap it finally took
                stored = dataclasses.replace(reply, max_tokens=req.decoding.max_tokens)
                self.cache.put(key, stored, judge=self.identity, request=req)
            return one

    async def _key(self, request: JudgeRequest, repeat: int) -> str | None:
        if self.cache is None and not self.dry_run:
            return None
        settings = dict(getattr(self.judge, "settings", lambda: {})())
        if repeat:
            settings["repeat"] = repeat
        if getattr(self.judge, "replies_by_sample", False) and request.sample_id:  # mock, scripted `sample:`
            settings["sample_id"] = request.sample_id
        if any(isinstance(p, (ImagePart, VideoPart)) for p in request.parts):
            return await asyncio.to_thread(request_key, self.identity, request, settings)
        return request_key(self.identity, request, settings)

    def _from_cache(self, key: str | None, req: JudgeRequest, parser: Callable[[str], Any], one: _One) -> bool:
        """Fill ``one`` from a cached answer that (still) parses. A row that does not — written by an
        older version that cached garbage, or before a parser changed — is a miss: the question is sent."""
        if self.cache is None or key is None or self.refresh:
            return False
        hit = self.cache.get(key)
        if hit is None or hit.finish_reason == "length":
            return False
        try:
            value = parser(hit.text)
        except ParseFailure:
            return False
        self._stats.cache_hits += 1
        one.ok, one.value, one.raw, one.attempts, one.cached, one.usage = True, value, hit.text, 1, True, hit.usage
        if hit.max_tokens is not None:
            one.decoding = dataclasses.replace(req.decoding, max_tokens=hit.max_tokens)
        return True

    async def _send(self, request: JudgeRequest, one: _One) -> JudgeReply:
        """One reply from the backend, retrying transport errors by class (counted in ``one.requests``) with
        the shared retry (:meth:`vreason.http_retry.RetryPolicy.retrying`)."""

        def count_retry(state: object) -> None:
            self._stats.retries += 1

        retrying = self.retry.retrying(lambda e: isinstance(e, JudgeTransportError) and e.retryable, count_retry)
        tries = 0
        try:
            async for attempt in retrying:
                with attempt:
                    tries += 1
                    try:
                        async with self.limiter.slot():
                            one.requests += 1
                            self._stats.requests += 1
                            reply = await self.judge.complete(request)
                    except JudgeTransportError as e:
                        self._stats.errors[e.kind] = self._stats.errors.get(e.kind, 0) + 1
                        raise
        except JudgeTransportError as e:
            if e.retryable:  # retries spent
                raise JudgeTransportError(e.kind, f"{e.message}; gave up after {tries} attempts", status=e.status,
                                          raw=e.raw) from None
            raise
        self._account(request, reply)
        return reply

    def _account(self, request: JudgeRequest, reply: JudgeReply) -> None:
        s = self._stats
        s.images += sum(isinstance(p, ImagePart) for p in request.parts)
        s.prompt_tokens += reply.usage.prompt_tokens
        s.completion_tokens += reply.usage.completion_tokens
        if self.price is not None:
            s.cost += self.price.cost(reply.usage.prompt_tokens, reply.usage.completion_tokens)

    def _estimate(self, request: JudgeRequest) -> None:
        s = self._stats
        s.estimated_requests += 1
        tokens = estimate_text_tokens(request.system or "")
        for p in request.parts:
            if isinstance(p, TextPart):
                tokens += estimate_text_tokens(p.text)
            elif isinstance(p, ImagePart):
                s.estimated_images += 1
                h, w = p.image.shape[:2]
                tokens += estimate_image_tokens(h, w, self.image_max_side)
                if p.label:
                    tokens += estimate_text_tokens(p.label)
        s.estimated_prompt_tokens += tokens
        completion, assumption = completion_estimate(
            self.token_caps.floor, request.decoding.max_tokens, self.dry_run_completion_tokens)
        if assumption not in s.completion_assumption.split("; "):  # requests with different caps: each named
            s.completion_assumption = "; ".join(x for x in (s.completion_assumption, assumption) if x)
        s.estimated_completion_tokens += completion
        if self.price is not None:
            s.estimated_cost += self.price.cost(tokens, completion)


def _reduce(ones: list[_One], how: str) -> tuple[bool, Any, str | None, dict[str, Any]]:
    k = len(ones)
    good = [o.value for o in ones if o.ok]
    spread: dict[str, Any] = {"n": k, "n_ok": len(good), "reduce": how}
    need = k // 2 + 1
    if len(good) < need:
        reasons = sorted({o.reason or "?" for o in ones if not o.ok})
        return False, None, f"only {len(good)}/{k} repeats parsed (need {need}): {'; '.join(reasons)}", spread
    numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in good)
    if numeric:
        spread.update(min=min(good), max=max(good), std=statistics.pstdev(good))
    if how in ("median", "mean"):
        if not numeric:
            return False, None, f"cannot take the {how} of non-numeric values {good}", spread
        value = statistics.median(good) if how == "median" else statistics.fmean(good)
        return True, value, None, spread
    # vote on a canonical JSON form, so dicts and lists of dicts (unhashable) count like any value
    keyed = [_vote_key(v) for v in good]
    counts = Counter(keyed).most_common()
    spread["agreement"] = counts[0][1] / len(good)
    if len(counts) > 1 and counts[0][1] == counts[1][1]:
        return False, None, f"no majority among repeats {[_jsonable(v) for v in good]}", spread
    winner = good[keyed.index(counts[0][0])]
    return True, list(winner) if isinstance(winner, tuple) else winner, None, spread


def _vote_key(v: Any) -> str:
    return json.dumps(v, sort_keys=True, default=repr)
