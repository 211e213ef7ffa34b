"""A tiny PAI-Bench-C dataset in the released layout, and generated videos named as the released results.

``write_dataset(root)`` writes ``metadata.csv``, ``videos/``, ``blur/``, ``canny/``, ``depth_npzs/``,
``sam2_pkls/`` (pickled ``SAMV2Detection.to_dict()`` records with COCO-RLE masks) and ``captions/`` for
three videos (one per domain); ``write_results(folder, root, kind)`` writes ``{id}__{k}.mp4`` for
k = 0..5 (copies of the ground truth, noise, a static grey frame, …)."""

from __future__ import annotations

import csv
import json
import os
import pickle
from pathlib import Path

import numpy as np

from vreason.frames.write import write_video
from vreason.protocols.pai.c.masks import encode_mask

IDS = {"task_0001": "agibot", "task_0002": "opendv", "task_0003": "egoexo4d"}
CAPTIONS = {"task_0001": "a red box. a blue ball", "task_0002": "a red box. a blue ball",
            "task_0003": "a red box. a blue ball"}
T, H, W = 10, 48, 64


def boxes(t: int, shift: int = 0) -> tuple[tuple[int, int, int, int], tuple[int, int, int, int]]:
    """(y0, y1, x0, x1) of the red box and the blue ball at frame t."""
    x = 6 + 2 * t + shift
    return (10, 30, x, x + 16), (28, 42, 40 - t, 52 - t)


def scene(n: int = T, shift: int = 0, seed: int = 0) -> list[np.ndarray]:
    """A textured background with a red box moving right and a blue square moving left."""
    rng = np.random.default_rng(seed)
    bg = (np.indices((H, W)).sum(0) * 3 % 200 + 30).astype(np.uint8)
    base = np.stack([bg, bg[::-1], np.roll(bg, 7, 1)], axis=-1)
    base = np.clip(base.astype(int) + rng.integers(-4, 5, base.shape), 0, 255).astype(np.uint8)
    out = []
    for t in range(n):
        f = base.copy()
        (a0, a1, b0, b1), (c0, c1, d0, d1) = boxes(t, shift)
        f[a0:a1, b0:b1] = (220, 30, 30)
        f[c0:c1, d0:d1] = (30, 40, 220)
        out.append(f)
    return out


def masks(n: int = T) -> tuple[np.ndarray, np.ndarray]:
    red, blue = np.zeros((n, H, W), bool), np.zeros((n, H, W), bool)
    for t in range(n):
        (a0, a1, b0, b1), (c0, c1, d0, d1) = boxes(t)
        red[t, a0:a1, b0:b1] = True
        blue[t, c0:c1, d0:d1] = True
    return red, blue


def write_dataset(root: str | os.PathLike, *, ids: dict[str, str] | None = None) -> str:
    root = Path(root)
    ids = ids or IDS
    for d in ("videos", "blur", "canny", "depth_npzs", "sam2_pkls", "captions"):
        (root / d).mkdir(parents=True, exist_ok=True)
    with open(root / "metadata.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["video_id", "dataset", "num_frames"])
        for vid, dom in ids.items():
            w.writerow([vid, dom, T])
    red, blue = masks()
    for i, vid in enumerate(ids):
        frames = scene(seed=i)
        write_video(root / "videos" / f"{vid}.mp4", frames, fps=10)
        write_video(root / "blur" / f"{vid}.mp4", frames, fps=10)
        write_video(root / "canny" / f"{vid}.mp4", frames, fps=10)
        depth = np.stack([np.linspace(1.0, 5.0, W)[None].repeat(H, 0) for _ in range(T)]).astype(np.float64)
        np.savez_compressed(root / "depth_npzs" / f"{vid}.npz", data=depth)
        recs = [{"phrase": "a red box", "segmentation_mask_rle": encode_mask(red)},
                {"phrase": "a blue ball", "segmentation_mask_rle": encode_mask(blue)}]
        (root / "sam2_pkls" / f"{vid}.pkl").write_bytes(pickle.dumps(recs))
        (root / "captions" / f"{vid}.json").write_text(json.dumps({f"{vid}.mp4": CAPTIONS[vid]}))
    return str(root)


def write_results(folder: str | os.PathLike, root: str | os.PathLike, kind: str = "copy", k: int = 6,
                  ids: list[str] | None = None) -> str:
    """``{id}__{v}.mp4`` for v < k: ``copy`` of the ground truth (shifted a little per variant, so variants
    differ), ``noise``, ``static`` (one grey frame)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(1)
    for i, vid in enumerate(ids or list(IDS)):
        for v in range(k):
            if kind == "copy":
                frames = scene(seed=i, shift=v)
            elif kind == "noise":
                frames = [rng.integers(0, 256, (H, W, 3), dtype=np.uint8) for _ in range(T)]
            elif kind == "static":
                frames = [np.full((H, W, 3), 128, np.uint8)] * T
            else:
                raise ValueError(kind)
            write_video(folder / f"{vid}__{v}.mp4", frames, fps=10)
    return str(folder)


__all__ = ["CAPTIONS", "H", "IDS", "T", "W", "masks", "scene", "write_dataset", "write_results"]
