"""Fixtures for the RULER-Bench and MME-CoF-Pro tests: data in the released formats, small
videos written with vreason.frames.write_video, a loopback judge and the runner's score frame."""

from __future__ import annotations

import base64
import io
import json
import os
import re
from typing import Any

import numpy as np
import pandas as pd

from vreason.core.records import Sample, Score
from vreason.frames import write_video


def image(path: str, w: int = 64, h: int = 48, color=(200, 30, 30)) -> str:
    from PIL import Image

    arr = np.zeros((h, w, 3), np.uint8)
    arr[:] = color
    arr[h // 4: h // 2, w // 4: w // 2] = 255 - np.array(color, np.uint8)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    Image.fromarray(arr).save(path)
    return path


def moving_video(path: str, n: int = 16, fps: float = 8, w: int = 64, h: int = 48) -> str:
    """A square moving left → right (frames differ, so indices are checkable)."""
    frames = []
    for i in range(n):
        f = np.full((h, w, 3), 40, np.uint8)
        x = int(i * (w - 12) / max(1, n - 1))
        f[h // 2 - 6: h // 2 + 6, x: x + 12] = (240, 240, 40)
        frames.append(f)
    write_video(path, frames, fps=fps)
    return path


RULER_RECORDS: list[dict[str, Any]] = [
    {"task_name": "physics", "index": 0, "category": "science",
     "prompt": "Pour water into the left arm of a U-tube PROMPT_PHYS",
     "implicit_explanation": "Communicating vessels: both levels end equal.",
     "input_image_path": "", "gt_image_path": "", "input_video_path": "",
     "checklist": [{"Instruction Following": "Is water poured into the left arm?"},
                   {"Visual Consistency": "Does the tube keep its shape?"},
                   {"Visual Fidelity": "Is the video free of artifacts?"},
                   {"Rule Coherence": "Do the two levels end equal?"},
                   {"Rule Coherence": "Does water flow through the bottom?"}]},
    {"task_name": "maze", "index": 3, "category": "game",
     "prompt": "Move the dot through the maze PROMPT_MAZE",
     "implicit_explanation": "The dot cannot cross walls.",
     "input_image_path": "images/maze_3.png", "gt_image_path": "gt/maze_3.png", "input_video_path": "",
     "checklist": [{"Instruction Following": "Does the dot move?"},
                   {"Visual Consistency": "Do the walls stay fixed?"},
                   {"Visual Fidelity": "Is the maze sharp?"},
                   {"Rule Coherence": "Does the dot avoid walls?"}]},
    {"task_name": "color", "index": 1, "category": "vision rule",
     "prompt": "Continue the colour pattern PROMPT_COLOR",
     "implicit_explanation": "The pattern alternates red and blue.",
     "input_image_path": "images/color_1.png", "gt_image_path": "", "input_video_path": "videos/color_1.mp4",
     "checklist": [{"Visual Consistency": "Do the existing tiles stay?"},
                   {"Visual Fidelity": "Is it clean?"},
                   {"Rule Coherence": "Is the next tile blue?"}]},
]


def ruler_dataset(root: str, *, parquet: bool = False, extra_lines: list[str] | None = None) -> str:
    """Write RULER-Bench files under ``root``; returns the data file path."""
    image(os.path.join(root, "images/maze_3.png"))
    image(os.path.join(root, "gt/maze_3.png"), color=(30, 200, 30))
    image(os.path.join(root, "images/color_1.png"), color=(30, 30, 200))
    moving_video(os.path.join(root, "videos/color_1.mp4"), n=8, fps=8)
    if parquet:
        df = pd.DataFrame([{**r, "checklist": json.dumps(r["checklist"]), "initial_scenario": ""}
                           for r in RULER_RECORDS])
        path = os.path.join(root, "data.parquet")
        df.to_parquet(path)
        return path
    path = os.path.join(root, "data.jsonl")
    with open(path, "w", encoding="utf-8") as fh:
        for r in RULER_RECORDS:
            fh.write(json.dumps(r) + "\n")
        for line in extra_lines or []:
            fh.write(line + "\n")
    return path


def ruler_videos(videos_root: str, models: list[str], samples: list[Sample], **kw: Any) -> dict[tuple[str, str], str]:
    from vreason.protocols.ruler.data import ruler_video_path

    out = {}
    for m in models:
        for s in samples:
            out[(m, s.id)] = moving_video(ruler_video_path(videos_root, m, s), **kw)
    return out


# ----------------------------------------------------------------------------- judge plumbing
def body_text(body: dict[str, Any]) -> str:
    """All text of a chat-completions request body (system + user parts), in order."""
    out = []
    for msg in body.get("messages", []):
        c = msg.get("content")
        if isinstance(c, str):
            out.append(c)
        elif isinstance(c, list):
            out.extend(p.get("text", "") for p in c if p.get("type") == "text")
    return "\n".join(out)


def user_parts(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The content parts of the last user message (text / image_url)."""
    users = [m for m in body["messages"] if m["role"] == "user"]
    c = users[0]["content"]
    return [{"type": "text", "text": c}] if isinstance(c, str) else c


def decode_image(part: dict[str, Any]) -> np.ndarray:
    from PIL import Image

    url = part["image_url"]["url"]
    data = base64.b64decode(url.split(",", 1)[1])
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))


def keyed_script(rules: list[tuple[str, list[str]]]):
    """A loopback script: the first rule whose key (regex) occurs in the request text answers
    with its replies in order (the last one repeats). Re-asks of one question therefore get
    the next reply. Unmatched → HTTP 500 reply."""
    from vreason.testing.loopback import Reply

    counters: dict[int, int] = {}

    def script(body: dict[str, Any]):
        text = body_text(body)
        for i, (key, replies) in enumerate(rules):
            if re.search(key, text):
                k = counters.get(i, 0)
                counters[i] = k + 1
                return replies[min(k, len(replies) - 1)]
        return Reply(status=500, body={"error": {"message": "no rule matched", "type": "server_error"}})

    return script


def client_for(server, *, reasks: int = 1):
    from vreason.judge.client import JudgeClient
    from vreason.judge.openai_backend import OpenAIJudge
    from vreason.judge.retry import RetryPolicy

    judge = OpenAIJudge("loop-judge", base_url=server.base_url, api_key="test-key")
    return JudgeClient(judge, reasks=reasks, retry=RetryPolicy(max_retries=0, base=0.01))


def scores_frame(scores: list[Score], samples: list[Sample], **extra_cols: Any) -> pd.DataFrame:
    """The runner's score table: one row per Score plus the sample's columns, evidence as JSON."""
    by_id = {s.id: s for s in samples}
    rows = []
    for sc in scores:
        s = by_id[sc.sample_id]
        rows.append({
            "sample_id": sc.sample_id, "model": sc.model, "seed": sc.seed, "scorer": sc.scorer,
            "scorer_version": sc.scorer_version, "metric": sc.metric, "value": sc.value,
            "normalized": sc.normalized, "status": sc.status.value, "reason": sc.reason, "passed": sc.passed,
            "frame_policy": sc.evidence.frame_policy,
            "judge": sc.evidence.judge.judge if sc.evidence.judge else None,
            "benchmark": s.benchmark, "category": s.category, "task": s.task, "difficulty": s.difficulty,
            "mode": s.mode.value, "evidence": sc.evidence.model_dump_json(), **extra_cols,
        })
    return pd.DataFrame(rows)
