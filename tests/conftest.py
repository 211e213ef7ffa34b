from __future__ import annotations

import os
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PLUGIN = os.path.join(ROOT, "tests", "plugins", "slowproto.py")


@pytest.fixture(scope="session")
def slow_plugin() -> str:
    """Path of the test protocol plugin, imported once into this process too."""
    from vreason.cli.main import load_plugin

    if "slowproto" not in sys.modules:
        load_plugin(PLUGIN)
    return PLUGIN


def gradient_frames(n: int, h: int = 48, w: int = 64) -> list[np.ndarray]:
    """Frames that differ strongly from each other: frame i has a bar at a position set by i
    and a brightness set by i, so decoding the wrong frame is detectable after compression."""
    frames = []
    for i in range(n):
        img = np.full((h, w, 3), (i * 37) % 200 + 20, np.uint8)
        x = (i * 5) % (w - 8)
        img[:, x:x + 8] = (255, 40, 40)
        frames.append(img)
    return frames
