"""Fixture datasets in the released PAI-Bench-G and PAI-Bench-U layouts, small videos, a keyed loopback script."""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np

from vreason.frames import write_video

G_RECORDS: list[dict[str, Any]] = [
    {"video_id": "av_0001", "prompt_en": "A car drives along a road QID_AV", "image_name": "av_0001.png"},
    {"video_id": "robot_0002", "prompt_en": "A robot arm picks up a box QID_ROBOT", "image_name": "robot_0002.png"},
    {"video_id": "physics_0003", "prompt": {"en": "A ball falls QID_PHYS"}, "image_name": "physics_0003.png"},
    {"video_id": "space_0004", "prompt_en": "Unknown prefix", "image_name": "av_0001.png"},  # bad category
    {"video_id": "human_0005", "prompt_en": "A person waves QID_HUMAN", "image_name": "human_0005.png"},
]
G_QUESTIONS: dict[str, list[dict[str, Any]]] = {
    "av_0001": [
        {"uid": "av1-q1", "question": "Does the car stay on the road? QID_AV_1", "answer": "A",
         "index2ans": {"A": "Yes", "B": "No"}, "task": "av"},
        {"uid": "av1-q2", "question": "Does the car fly? QID_AV_2", "answer": "B",
         "index2ans": {"A": "Yes", "B": "No"}, "task": "av"},
    ],
    "robot_0002": [
        {"uid": "r2-q1", "question": "Is the box lifted? QID_ROBOT_1", "answer": "A",
         "index2ans": {"A": "Yes", "B": "No"}, "task": "robot"},
    ],
    "physics_0003": [
        {"uid": "p3-q1", "question": "Does the ball fall down? QID_PHYS_1", "answer": "A",
         "index2ans": {"A": "Yes", "B": "No"}, "task": "physics"},
        {"uid": "p3-q2", "question": "Does the ball bounce upward forever? QID_PHYS_2", "answer": "B",
         "index2ans": {"A": "Yes", "B": "No"}, "task": "physics"},
    ],
    "human_0005": [  # malformed: the answer is not a key of index2ans
        {"uid": "h5-q1", "question": "Does the person wave?", "answer": "C", "index2ans": {"A": "Yes", "B": "No"},
         "task": "human"},
    ],
}


def image(path: str, w: int = 64, h: int = 48, seed: int = 0) -> str:
    from PIL import Image

    rng = np.random.default_rng(seed)
    arr = np.zeros((h, w, 3), np.uint8)
    arr[:] = rng.integers(30, 200, 3)
    arr[h // 4: h // 2, w // 4: w // 2] = 250
    os.makedirs(os.path.dirname(path), exist_ok=True)
    Image.fromarray(arr).save(path)
    return path


def square_frames(n: int = 16, w: int = 64, h: int = 48, step: int = 2) -> list[np.ndarray]:
    """A bright square gliding right over a gradient background (smooth, consistent)."""
    base = np.tile(np.linspace(40, 120, w, dtype=np.float32)[None, :, None], (h, 1, 3)).astype(np.uint8)
    out = []
    for i in range(n):
        f = base.copy()
        x = 4 + i * step
        f[h // 2 - 6: h // 2 + 6, x: x + 12] = (240, 220, 40)
        out.append(f)
    return out


def write_g_dataset(root: str) -> str:
    os.makedirs(os.path.join(root, "vqa"), exist_ok=True)
    for i, rec in enumerate(G_RECORDS):
        image(os.path.join(root, "condition_image", rec["image_name"]), seed=i)
    with open(os.path.join(root, "cosmos_predict2_bench_full_info.json"), "w", encoding="utf-8") as fh:
        json.dump(G_RECORDS, fh, indent=1)
    for vid, qs in G_QUESTIONS.items():
        with open(os.path.join(root, "vqa", f"{vid}.json"), "w", encoding="utf-8") as fh:
            json.dump(qs, fh)
    return root


def write_g_videos(folder: str, ids: list[str], seeds: tuple[int, ...] = (0,), corrupt: str | None = None) -> None:
    """Flat ``{video_id}__{seed}.mp4`` files; ``corrupt`` names a video id written as garbage bytes."""
    os.makedirs(folder, exist_ok=True)
    for vid in ids:
        for s in seeds:
            path = os.path.join(folder, f"{vid}__{s}.mp4")
            if vid == corrupt:
                with open(path, "wb") as fh:
                    fh.write(b"\x00\x00\x00\x18ftypmp42" + os.urandom(400))
                continue
            write_video(path, square_frames(n=12), fps=8)


U_ITEMS: list[dict[str, Any]] = [
    {"question": "Where does the square move? QU_1", "index2ans": {"A": "left", "B": "right", "C": "up", "D": None},
     "answer": "B", "video_path": "videos/u1.mp4", "category": "space_direction", "subcategory": "direction"},
    {"question": "Does the square speed up? QU_2", "index2ans": {"A": "yes", "B": "no"}, "answer": "B",
     "video_path": "videos/u2.mp4", "category": "time_speed", "subcategory": "speed"},
    {"question": "Which colour is the square? QU_3", "index2ans": {"A": "yellow", "B": "blue"}, "answer": "A",
     "video_path": "videos/u3.mp4", "category": "space_attribute", "subcategory": "colour"},
    {"question": "What happens first? QU_4", "index2ans": {"A": "it moves", "B": "it stops"}, "answer": "A",
     "video_path": "videos/u4.mp4", "category": "time_order", "subcategory": "order"},
    {"question": "Bad item without an answer", "index2ans": {"A": "x"}, "video_path": "videos/u1.mp4",
     "category": "space_direction", "subcategory": "direction"},
    {"question": "Answer not an option", "index2ans": {"A": "x", "B": "y"}, "answer": "E",
     "video_path": "videos/u1.mp4", "category": "space_direction", "subcategory": "direction"},
]


def write_u_dataset(root: str, corrupt: str | None = "u4") -> str:
    os.makedirs(os.path.join(root, "videos"), exist_ok=True)
    for k in ("u1", "u2", "u3", "u4"):
        path = os.path.join(root, "videos", f"{k}.mp4")
        if k == corrupt:
            with open(path, "wb") as fh:
                fh.write(b"not a video at all")
        else:
            write_video(path, square_frames(n=8), fps=8)
    with open(os.path.join(root, "test.jsonl"), "w", encoding="utf-8") as fh:
        for it in U_ITEMS:
            fh.write(json.dumps(it) + "\n")
        fh.write("{not json\n")
    return root
