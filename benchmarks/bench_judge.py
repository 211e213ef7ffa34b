"""Judge-layer throughput against the loopback server.

N calls (default 2,000) with a fixed server latency (default 100 ms) at concurrency C (default 32),
through the full stack: JudgeClient → limiter → the real ``openai`` client over HTTP → loopback
server → parser. The ideal is C / latency requests per second (320/s for the defaults); the script
prints the achieved throughput as a ratio of it (target ≥ 0.8).

    python benchmarks/bench_judge.py [--calls 2000] [--latency 0.1] [--concurrency 32]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import time
from contextlib import contextmanager

from vreason.judge import parsers
from vreason.judge.base import JudgeRequest, TextPart
from vreason.judge.retry import RetryPolicy
from vreason.judge.spec import make_judge
from vreason.testing.loopback import LoopbackServer


def _serve(conn, latency: float, default: str) -> None:  # child process
    with LoopbackServer(latency=latency, default=default) as srv:
        conn.send(srv.base_url)
        conn.recv()  # wait for "stop"
        conn.send(srv.count)


class _Remote:
    def __init__(self, base_url: str):
        self.base_url = base_url
        self.count = -1


@contextmanager
def loopback(latency: float, default: str, subprocess: bool):
    """The loopback server, in this process or (default) in a child process so the server's threads
    do not compete with the client for this interpreter's GIL — as a real server would not."""
    if not subprocess:
        with LoopbackServer(latency=latency, default=default) as srv:
            yield srv
        return
    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe()
    proc = ctx.Process(target=_serve, args=(child, latency, default), daemon=True)
    proc.start()
    remote = _Remote(parent.recv())
    try:
        yield remote
    finally:
        parent.send("stop")
        remote.count = parent.recv()
        proc.join(timeout=10)


def run(calls: int, latency: float, concurrency: int, subprocess: bool = True) -> dict[str, float]:
    srv: LoopbackServer | _Remote
    with loopback(latency, '{"score": 4}', subprocess) as srv:
        client = make_judge(
            {"backend": "vllm", "model": "bench", "base_url": srv.base_url, "timeout": 30},
            max_concurrency=concurrency,
            retry=RetryPolicy(max_retries=0),
        )
        parser = parsers.likert(1, 5, key="score")

        async def go() -> float:
            # warm up the connection pool, then time the calls
            await asyncio.gather(
                *(client.ask(JudgeRequest([TextPart(f"warm {i}")]), parser) for i in range(concurrency))
            )
            t0, c0 = time.perf_counter(), time.process_time()
            outs = await asyncio.gather(
                *(client.ask(JudgeRequest([TextPart(f"question {i}")]), parser) for i in range(calls))
            )
            dt, cpu = time.perf_counter() - t0, time.process_time() - c0
            await client.aclose()
            bad = [o.reason for o in outs if not o.ok]
            if bad:
                raise SystemExit(f"{len(bad)} calls failed, e.g. {bad[0]}")
            return dt, cpu

        elapsed, cpu = asyncio.run(go())
    if srv.count != calls + concurrency:
        raise SystemExit(f"server saw {srv.count} requests, expected {calls + concurrency}")
    ideal = concurrency / latency
    rps = calls / elapsed
    return {
        "calls": calls,
        "elapsed_s": elapsed,
        "rps": rps,
        "ideal_rps": ideal,
        "ratio": rps / ideal,
        "client_cpu_ms_per_call": 1000 * cpu / calls,
    }


def run_layer_only(calls: int, latency: float, concurrency: int) -> float:
    """The same calls through JudgeClient with an in-memory backend that sleeps ``latency``:
    the judge layer's own ceiling (limiter, retries, parsing), without HTTP."""
    from vreason.judge.client import JudgeClient
    from vreason.judge.limits import Limiter
    from vreason.judge.scripted import ScriptedJudge

    client = JudgeClient(
        ScriptedJudge(lambda r: '{"score": 4}', latency=latency), limiter=Limiter(concurrency)
    )
    parser = parsers.likert(1, 5, key="score")

    async def go() -> float:
        t0 = time.perf_counter()
        outs = await asyncio.gather(
            *(client.ask(JudgeRequest([TextPart(f"q {i}")]), parser) for i in range(calls))
        )
        assert all(o.ok for o in outs)
        return time.perf_counter() - t0

    return calls / asyncio.run(go()) / (concurrency / latency)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--latency", type=float, default=0.1)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument(
        "--in-process",
        action="store_true",
        help="run the server in this process (its threads then share the client's GIL)",
    )
    a = ap.parse_args()
    r = run(a.calls, a.latency, a.concurrency, subprocess=not a.in_process)
    layer = run_layer_only(a.calls, a.latency, a.concurrency)
    print(
        f"{r['calls']} calls, latency {a.latency * 1000:.0f} ms, concurrency {a.concurrency}: "
        f"{r['elapsed_s']:.2f} s, {r['rps']:.1f} req/s of ideal {r['ideal_rps']:.0f} "
        f"→ ratio {r['ratio']:.3f} "
        f"(target ≥ 0.8; server {'in process' if a.in_process else 'in a child process'})"
    )
    print(
        f"client CPU {r['client_cpu_ms_per_call']:.2f} ms per call over HTTP "
        "(openai SDK + httpx2 + judge layer) "
        f"→ CPU-bound ceiling ≈ {1000 / r['client_cpu_ms_per_call']:.0f} req/s on one free core"
    )
    print(f"judge layer alone (in-memory backend, same latency/concurrency): ratio {layer:.3f}")


if __name__ == "__main__":
    main()
