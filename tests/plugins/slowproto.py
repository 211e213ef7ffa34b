"""A tiny protocol for runner tests: loaded with `vreason --plugin tests/plugins/slowproto.py`.

Samples ``s000…``; the built-in model ``counter`` writes an 8-frame 32×32 video whose
brightness encodes (sample index, seed); the cpu scorer reads it back (so a wrong file would
give a wrong value); the io scorer answers after a short sleep. Sample ``s003`` makes the cpu
scorer fail (error) and ``s004`` makes the io scorer unscored — both until the env var
``SLOWPROTO_HEAL`` is set, which lets `--retry-failed` be tested.
"""

from __future__ import annotations

import asyncio
import os
import time

import numpy as np
import pandas as pd

from vreason.core.protocol import AggregateResult, LoadResult, Protocol
from vreason.core.records import Evidence, Sample, ScoreStatus, Video
from vreason.core.registry import benchmarks
from vreason.core.scoring import Scorer
from vreason.frames import read_all, write_video
from vreason.generate.base import Generator


class Counter(Generator):
    name = "counter"

    def generate(self, sample: Sample, seed: int, out_path: str) -> Video:
        level = int(sample.metadata["index"]) * 5 + seed * 2
        write_video(out_path, [np.full((32, 32, 3), level, np.uint8)] * 8, fps=8)
        return Video(sample_id=sample.id, model="counter", seed=seed, path=out_path, manifest=self.manifest(sample))


class Brightness(Scorer):
    name = "brightness"
    metrics = ("brightness",)

    def score(self, sample, video, ctx):
        time.sleep(float(ctx.options.get("delay", 0.02)))
        if sample.id == "s003" and not os.environ.get("SLOWPROTO_HEAL"):
            raise RuntimeError("deliberate failure for s003")
        frames = read_all(video.path)
        val = round(float(np.mean(frames[0])))
        return [self.ok(sample, video, "brightness", val, min(1.0, val / 255),
                        evidence=Evidence(frame_policy="all", frame_indices=list(range(len(frames)))))]


class Echo(Scorer):
    name = "echo"
    kind = "io"
    metrics = ("echo",)

    async def ascore(self, sample, video, ctx):
        await asyncio.sleep(0.005)
        if sample.id == "s004" and not os.environ.get("SLOWPROTO_HEAL"):
            return self.fail(sample, video, "judge reply never parsed: 'maybe'", status=ScoreStatus.unscored)
        return [self.ok(sample, video, "echo", int(sample.metadata["index"]), 1.0)]


@benchmarks.register("slowtest")
class SlowProtocol(Protocol):
    name = "slowtest"

    def __init__(self, n: int = 12, delay: float = 0.02, **options):
        super().__init__(n=n, delay=delay, **options)

    def load(self) -> LoadResult:
        n = int(self.options["n"])
        return LoadResult(samples=[Sample(id=f"s{i:03d}", benchmark="slowtest", category="c", metadata={"index": i})
                                   for i in range(n)])

    def scorers(self):
        return [Brightness(), Echo()]

    def generator(self, model):
        return Counter() if model == "counter" else None

    def aggregate(self, scores: pd.DataFrame, samples, out_dir) -> AggregateResult:
        ok = scores[scores["status"] == "ok"]
        table = ok.groupby(["model", "metric"], as_index=False)["value"].mean()
        return AggregateResult(tables={"means": table}, summary={"n": int(len(ok))})
