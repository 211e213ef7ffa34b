"""A small TiViBench release folder written by the tests (the real data is not public)."""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np

from vreason.frames import write_video

BOX = {"x0": 0.25, "y0": 0.25, "x1": 0.75, "y1": 0.75}
QA = {"family": "vlm_qa", "questions": [{"text": "Is the wrench picked up?", "expected": "yes"},
                                        {"text": "Does the nut fall off?", "expected": "no"}]}


def png(path: str, colour=(200, 30, 30), w: int = 64, h: int = 36) -> str:
    from PIL import Image

    os.makedirs(os.path.dirname(path), exist_ok=True)
    Image.fromarray(np.full((h, w, 3), colour, np.uint8)).save(path)
    return path


def video(path: str, n: int = 12, fps: float = 8, w: int = 64, h: int = 36, colour=(30, 30, 200)) -> str:
    """A short video whose frames brighten over time (frame i has value 10·i in the red channel)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    frames = []
    for i in range(n):
        f = np.full((h, w, 3), colour, np.uint8)
        f[..., 0] = min(255, 10 * i)
        frames.append(f)
    write_video(path, frames, fps)
    return path


def annotation(dim: str, key: str, metric: dict[str, Any], **kw: Any) -> dict[str, Any]:
    diff, rest = key.split("_", 1)
    task = rest.rsplit("_", 1)[0]
    return {"key": key, "dimension": dim, "task_type": kw.pop("task_type", task),
            "difficulty": kw.pop("difficulty", diff), "metric": metric, **kw}


DEFAULT_PROMPTS: dict[str, Any] = {
    # dict key → prompt text (one plausible shape)
    "SV": {"easy_shape_001": "Fit the shape into the hole.", "hard_counting_002": "Count the balls."},
    # a list of records with another key spelling (image file name)
    "SL": [{"image": "images/SL/SL_medium_gamerule_001.png", "prompt": "Make a match of three."}],
    # an object holding one list
    "AT": {"data": [{"id": "easy_tool_001", "text": "Pick up the wrench and loosen the nut."}]},
}
DEFAULT_ANNOTATIONS = [
    annotation("SV", "easy_shape_001", {"family": "region", "box": BOX, "threshold": 0.9}),
    annotation("SV", "hard_counting_002", {"family": "grounding", "label": "ball", "expected_count": 3}),
    annotation("AT", "easy_tool_001", QA),
]


def release(root: str, prompts: dict[str, Any] | None = None, annotations: list[Any] | None = None, *,
            images: bool = True, ends: bool = True) -> str:
    """Write ``eval_cache/<DIM>_prompt.json``, ``images/<DIM>/<key>.png``, ``eval_cache/<DIM>/<key>/end.png`` and
    ``vreason_annotations.jsonl`` (raw strings in ``annotations`` are written as they are)."""
    from vreason.protocols.tivibench.data import normalise_key

    prompts = DEFAULT_PROMPTS if prompts is None else prompts
    annotations = DEFAULT_ANNOTATIONS if annotations is None else annotations
    os.makedirs(os.path.join(root, "eval_cache"), exist_ok=True)
    for dim, body in prompts.items():
        with open(os.path.join(root, "eval_cache", f"{dim}_prompt.json"), "w", encoding="utf-8") as fh:
            json.dump(body, fh, indent=1)
        items = body if isinstance(body, list) else body.get("data", body)
        raws = list(items) if isinstance(items, dict) else [
            next((r[k] for k in ("key", "id", "image") if k in r), None) for r in items if isinstance(r, dict)]
        for raw in raws:
            key = normalise_key(raw, dim)
            if key and images:
                png(os.path.join(root, "images", dim, f"{key}.png"))
            if key and ends:
                png(os.path.join(root, "eval_cache", dim, key, "end.png"), colour=(30, 200, 30))
    with open(os.path.join(root, "vreason_annotations.jsonl"), "w", encoding="utf-8") as fh:
        for a in annotations:
            fh.write((a if isinstance(a, str) else json.dumps(a)) + "\n")
    return root
