"""The example of docs/new_protocol.md works end to end: a benchmark package outside vreason (its own folder,
nothing else touched) declares its protocol, scorer, video layout, frame preset and judge template, and
`vreason run` loads, imports videos by its layout, scores with its preset and aggregates it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np

from vreason.frames.write import write_video

PACKAGE = {
    "__init__.py": '''
        from vreason.core.registry import PackageDeclaration

        FRAME_PRESETS = {"mybench": "uniform:4"}
        DECLARES = PackageDeclaration(
            benchmarks={"mybench": ("mybench.protocol:MyBench", "example benchmark")},
            scorers={"mybench_bright": ("mybench.protocol:Bright", "is the last frame bright")},
            layouts={"mybench": "mybench.layout:LAYOUT"},
            frame_presets=FRAME_PRESETS,
            templates=("mybench",),
        )
    ''',
    "layout.py": '''
        import os
        from vreason.core.registry import layouts
        from vreason.data.importer import add_video, is_video
        from vreason.data.layout import VideoLayout

        class MyLayout(VideoLayout):
            name = "mybench"
            pattern = "{model}-{sample_id}.mp4"
            identity = "model and sample from the name, seed 0"

            def scan(self, root, model, res):
                for f in sorted(root.iterdir()):
                    if is_video(f) and "-" in f.stem:
                        m, sid = f.stem.split("-", 1)
                        if model in (None, m):
                            add_video(sid, m, 0, f, res)

            def path(self, root, model, sample, seed):
                return os.path.join(root, f"{model}-{sample.id}.mp4")

        LAYOUT = layouts.register("mybench")(MyLayout())
    ''',
    "protocol.py": '''
        import json
        import pandas as pd
        from pydantic import Field
        from vreason.core.options import ProtocolOptions
        from vreason.core.protocol import AggregateResult, Protocol
        from vreason.core.records import Evidence, LoadResult, Sample
        from vreason.core.registry import benchmarks
        from vreason.core.scoring import Scorer
        from vreason.frames.policy import FramePolicyField
        from vreason.frames import sample_frames
        from vreason.judge.templates import get_template

        class MyOptions(ProtocolOptions):
            data: str | None = Field(None, description="samples JSONL")
            frame_policy: FramePolicyField = Field("mybench", description="frames read")

        class Bright(Scorer):
            name = "mybench_bright"
            version = "1"
            metrics = ("bright",)

            def __init__(self, policy="mybench"):
                self.policy = policy

            def score(self, sample, video, ctx):
                got = sample_frames(video.path, self.policy)
                v = float(got.frames[-1].mean() / 255.0)
                ev = Evidence(frame_policy=got.policy, frame_indices=got.indices)
                return [self.ok(sample, video, "bright", v, v, passed=v > 0.5, evidence=ev)]

        @benchmarks.register("mybench")
        class MyBench(Protocol):
            name = "mybench"
            options_model = MyOptions
            layout = "mybench"

            def load(self):
                rows = [json.loads(x) for x in open(self.opts.data) if x.strip()]
                get_template("mybench_ask")  # its template folder is found
                return LoadResult(samples=[Sample(id=r["id"], benchmark="mybench", prompt=r["prompt"]) for r in rows])

            def scorers(self):
                return [Bright(self.opts.frame_policy)]

            def aggregate(self, scores, samples, out_dir):
                t = scores.groupby("model")["value"].mean().reset_index()
                return AggregateResult(tables={"bright": t}, summary={"n": int(len(scores))})
    ''',
    "templates/mybench_ask.yaml": '''
        name: mybench_ask
        version: "1"
        user: "Is the video bright?"
    ''',
}


def test_example_package_runs_end_to_end(tmp_path):
    pkg = tmp_path / "mybench"
    for rel, text in PACKAGE.items():
        (pkg / rel).parent.mkdir(parents=True, exist_ok=True)
        (pkg / rel).write_text(textwrap.dedent(text).lstrip())
    data = tmp_path / "samples.jsonl"
    data.write_text("".join(json.dumps({"id": f"s{i}", "prompt": "p"}) + "\n" for i in range(2)))
    videos = tmp_path / "videos"
    videos.mkdir()
    for sid, level in (("s0", 230), ("s1", 20)):
        frames = np.full((6, 32, 32, 3), level, np.uint8)
        write_video(str(videos / f"m1-{sid}.mp4"), frames, fps=6)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    cmd = [sys.executable, "-m", "vreason.cli.main", "--plugin", "mybench", "run", "mybench", "--models", "m1",
           "--data", str(data), "--videos", str(videos), "--runs", str(tmp_path / "runs"), "--name", "ex"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    rows = [json.loads(x) for x in (tmp_path / "runs" / "ex" / "scores.jsonl").read_text().splitlines()]
    by = {r["sample_id"]: r for r in rows}
    assert set(by) == {"s0", "s1"}
    assert by["s0"]["passed"] is True and by["s1"]["passed"] is False
    assert by["s0"]["evidence"]["frame_policy"].startswith("uniform:4")
