"""Creating a provider job without paying twice: every attempt recorded, no blind second create.

A create may cost money, so its failures are split by what they prove:

* **certainly not done** — no connection was made (connection refused, connect timeout), or the reply
  is 429 / 408 / another 4xx: nothing was created. 429 and connection errors are resent (backoff,
  ``Retry-After``); other 4xx end the video (a refusal is ``blocked``);
* **ambiguous** — a 5xx or 409, a read timeout, a connection dropped after the request was sent: the
  provider may have made (and will bill) the job. The create is then resolved, never blindly resent:

  1. when the provider honours the idempotency key (every create carries the row's client reference in
     ``Idempotency-Key``, derived from the run, the sample, the seed and the request), it is resent with
     the same key: the provider answers with the first attempt's job;
  2. else, when the provider can list recent jobs, they are looked up (now, and once more
     ``lookup_wait_s`` later); a job that matches and no other row of the ledger holds is taken over;
     only when none is found is the create resent;
  3. else the row ends ``unknown`` (the video ``failed`` with the reason) and nothing is resent, unless
     the model's ``recreate_after_ambiguous`` option accepts paying twice.

A row found ``creating`` or ``unknown`` when a run starts (the previous run died mid-create, or could not
resolve it) goes through the same resolution *before* anything is sent. Every attempt and look-up is a
row of the ledger's ``create_attempts`` with its outcome and job id.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import TYPE_CHECKING, Any

from vreason.generate.api_jobs import ApiError, JobRefused, JobRequest, _body

if TYPE_CHECKING:
    from vreason.generate.api_jobs import JobEngine
    from vreason.generate.http_client import Client


class CreateUnresolved(Exception):
    """A create may have made a job that cannot be found: not created again (the row is ``unknown``)."""


def _backoff(engine: JobEngine, i: int, exc: ApiError) -> float:
    """The shared policy's wait (:mod:`vreason.http_retry`): ``Retry-After`` capped, else full-jitter backoff."""
    return engine.settings.retry.policy().delay(i, exc)


async def _lookup(engine: JobEngine, client: Client, key: str, gen: int, ref: str,
                  req: JobRequest, since: float) -> str | None:
    """The job this create made, if the provider lists it and no other row holds it (claimed atomically)."""
    call = engine.adapter.lookup_call(req, since)
    if call is None:
        return None
    n = engine.ledger.attempt(key, gen, "lookup", ref)
    try:
        resp = await engine.send(call, client)
        ids = engine.adapter.lookup_matches(req, since, _body(resp))
    except ApiError as e:
        engine.ledger.attempt_done(key, gen, n, "lookup_failed", http_status=e.status, detail=engine.scrub(str(e)))
        raise CreateUnresolved(engine.scrub(f"a create may have reached the provider and the look-up failed "
                                            f"({e}); not created again: --retry-failed looks it up again")) from None
    identity = engine.adapter.lookup_identity(req)
    if ids and identity and engine.ledger.rivals(key, identity, str((engine.ledger.get(key) or {}).get(
            "request_hash"))):
        engine.ledger.attempt_done(key, gen, n, "ambiguous_match", detail=f"{len(ids)} matching job(s)")
        if engine.settings.recreate_after_ambiguous:
            return None
        raise CreateUnresolved("a create may have reached the provider; its job list shows matching jobs, but "
                               "another video with the same prompt and a different input is being created too "
                               "and the list cannot tell them apart; not created again: --retry-failed looks "
                               "it up again (or recreate_after_ambiguous: true creates a new job)")
    for jid in ids:
        if engine.ledger.claim(key, jid):
            engine.ledger.attempt_done(key, gen, n, "found", job_id=jid, detail=f"{len(ids)} matching job(s)")
            return jid
    engine.ledger.attempt_done(key, gen, n, "not_found", detail=f"{len(ids)} matching job(s), all held by others")
    return None


async def _resolve(engine: JobEngine, client: Client, key: str, gen: int, ref: str, req: JobRequest,
                   since: float, why: str) -> str | None:
    """After an ambiguous create (or a run that died mid-create): the job, or ``None`` when it is safe to
    send the create (again). Raises :class:`CreateUnresolved` when it is not."""
    a = engine.adapter
    if a.honors_idempotency:
        return None  # resending with the same key returns the first job
    if a.lookup_call(req, since) is not None:
        for delay in (0.0, engine.settings.lookup_wait_s):
            await asyncio.sleep(delay)
            jid = await _lookup(engine, client, key, gen, ref, req, since)
            if jid:
                return jid
        return None
    if engine.settings.recreate_after_ambiguous:
        return None
    raise CreateUnresolved(
        f"{why}; the provider may have made (and bill) this job, and {a.provider or 'this API'} offers no "
        f"idempotency key or job list to find out, so it is not created again (check the provider's console; "
        f"the model option recreate_after_ambiguous: true accepts a possible second job)")


async def create_job(engine: JobEngine, client: Client, key: str, req: JobRequest,
                     meta: dict[str, Any], row: dict[str, Any] | None) -> str:
    """Create ``key``'s job (or find the one an earlier attempt made); its id, committed to the ledger."""
    led, a = engine.ledger, engine.adapter
    unresolved = bool(row and row["status"] in ("creating", "unknown")
                      and led.sent_in_gen(key, int(row.get("gen") or 0)) > 0)
    gen, ref = led.begin(key, new=not unresolved, provider=a.provider, lookup_identity=a.lookup_identity(req), **meta)
    since = float((led.get(key) or {}).get("gen_started_at") or 0.0)
    req = dataclasses.replace(req, client_ref=ref)
    if unresolved:
        led.close_stale(key, gen)
        jid = await _resolve(engine, client, key, gen, ref, req, since,
                             "an earlier run's create of this video ended without an answer")
        if jid:
            return jid
    attempts = max(1, engine.settings.retry.attempts)
    for i in range(attempts):
        call = a.create_call(req)
        if a.idempotency_header:
            call = dataclasses.replace(call, headers={**call.headers, a.idempotency_header: ref})
        n = led.attempt(key, gen, "create", ref)
        try:
            resp = await engine._send_once(call, client, True)
        except JobRefused as e:
            led.attempt_done(key, gen, n, "refused", detail=str(e))
            raise
        except ApiError as e:
            outcome = "ambiguous" if e.sent else ("fatal" if e.kind == "fatal" else "not_sent")
            led.attempt_done(key, gen, n, outcome, http_status=e.status, detail=engine.scrub(str(e)))
            if e.kind == "fatal":
                raise
            if e.sent:
                jid = await _resolve(engine, client, key, gen, ref, req, since, f"create failed ambiguously: {e}")
                if jid:
                    return jid
            if i + 1 == attempts:
                if e.sent:  # the job may exist: the row stays on this client reference
                    raise CreateUnresolved(f"create failed ambiguously {attempts} times (last: {e}); no job was "
                                           f"found; --retry-failed resolves it before creating") from None
                raise
            await asyncio.sleep(_backoff(engine, i, e))
            continue
        try:
            jid = a.job_id(_body(resp))
        except ValueError as e:  # an answer without an id: a job may exist all the same
            led.attempt_done(key, gen, n, "no_job_id", http_status=resp.status_code, detail=engine.scrub(str(e)))
            raise CreateUnresolved(engine.scrub(f"the create reply names no job ({e}); not created again")) from None
        replayed = resp.headers.get("Idempotent-Replayed", "").lower() == "true"
        with led.batch():  # the job id and the attempt's outcome: one transaction, committed before the first poll
            claimed = led.claim(key, jid)
            if claimed:
                led.attempt_done(key, gen, n, "replayed" if replayed else "created", http_status=resp.status_code,
                                 job_id=jid)
        if claimed:
            return jid
        # a sibling row (same request, another seed) took this job in a look-up while our reply was on its
        # way: the job that sibling's ambiguous create made, if any, is unclaimed and just as good for us
        led.attempt_done(key, gen, n, "created_taken", http_status=resp.status_code, job_id=jid,
                         detail="held by another row after its look-up")
        jid2 = await _lookup(engine, client, key, gen, ref, req, since)
        if jid2:
            return jid2
    raise CreateUnresolved(f"every job made for this video ({attempts} creates) was taken by another row with the "
                           f"same request; --retry-failed resolves it before creating")
