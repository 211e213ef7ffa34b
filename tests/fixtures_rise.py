"""A tiny RISE-Video dataset in the released format, and rendered maze / symmetry videos.

Everything is generated: first-frame images, ground-truth images, a ``v5.json`` with the exact
keys of the release (a few records without the optional keys), and videos per model laid out as
``{model}/{category}/{task_id}.mp4``.
"""

from __future__ import annotations

import json
import os

import numpy as np

from vreason.frames import write_video

# ---------------------------------------------------------------- maze
MAZE = 320
WALL = 6
WHITE = (255, 255, 255)
BLACK = (0, 0, 0)
AGENT_RGB = (0, 200, 0)
GOAL_RGB = (220, 0, 0)
START = (40, 40)
GOAL = (40, 280)
# serpentine: walls at y = 80, 160, 240 with a gap at the right, left, right end
WALLS_H = [(80, "right"), (160, "left"), (240, "right")]
SOLUTION = [START, (290, 40), (290, 120), (30, 120), (30, 200), (290, 200), (290, 280), GOAL]


def maze_background() -> np.ndarray:
    import cv2

    img = np.full((MAZE, MAZE, 3), WHITE, np.uint8)
    cv2.rectangle(img, (0, 0), (MAZE - 1, MAZE - 1), BLACK, WALL)
    for y, gap in WALLS_H:
        x0, x1 = (WALL, MAZE - 60) if gap == "right" else (60, MAZE - WALL)
        img[y - WALL // 2 : y + WALL // 2, x0:x1] = BLACK
    cv2.circle(img, GOAL, 14, GOAL_RGB, -1)
    return img


def maze_frame(pos: tuple[float, float]) -> np.ndarray:
    img = maze_background()
    x, y = int(round(pos[0])), int(round(pos[1]))
    img[y - 8 : y + 8, x - 8 : x + 8] = AGENT_RGB
    return img


def _along(points: list[tuple[int, int]], n: int) -> list[tuple[float, float]]:
    pts = np.array(points, float)
    seg = np.hypot(*np.diff(pts, axis=0).T)
    cum = np.concatenate([[0], np.cumsum(seg)])
    out = []
    for t in np.linspace(0, cum[-1], n):
        i = min(int(np.searchsorted(cum, t, side="right")) - 1, len(seg) - 1)
        f = 0.0 if seg[i] == 0 else (t - cum[i]) / seg[i]
        out.append(tuple(pts[i] + f * (pts[i + 1] - pts[i])))
    return out


def maze_frames(kind: str, n: int = 40) -> list[np.ndarray]:
    """``solved``, ``static``, ``wallcross`` (straight down through the walls), ``teleport``
    (cut from the start to the goal), ``partial`` (valid moves, stops before the goal)."""
    if kind == "solved":
        path = _along(SOLUTION, n - 4) + [GOAL] * 4
    elif kind == "static":
        path = [START] * n
    elif kind == "wallcross":
        path = _along([START, GOAL], n - 4) + [GOAL] * 4
    elif kind == "teleport":
        path = [START] + [GOAL] * (n - 1)
    elif kind == "partial":
        path = _along(SOLUTION[:3], n)
    else:
        raise ValueError(kind)
    return [maze_frame(p) for p in path]


# ---------------------------------------------------------------- symmetry
SYM_COLOR = (30, 60, 220)  # RGB blue: OpenCV hue ~113, in the "blue" range
ROWS, COLS = 10, 16


def sym_pattern(seed: int = 3, n: int = 30) -> list[tuple[int, int]]:
    """``n`` distinct cells in the left half (cols 0–7)."""
    rng = np.random.default_rng(seed)
    cells = [(r, c) for r in range(ROWS) for c in range(COLS // 2)]
    pick = rng.choice(len(cells), size=n, replace=False)
    return sorted(cells[i] for i in pick)


def mirrored(cells: list[tuple[int, int]]) -> list[tuple[int, int]]:
    return [(r, COLS - 1 - c) for r, c in cells]


def sym_image(cells: list[tuple[int, int]], size: tuple[int, int] = (800, 500),
              color: tuple[int, int, int] = SYM_COLOR) -> np.ndarray:
    """White board with grey grid lines and the coloured ``cells``; ``size`` = (w, h)."""
    w, h = size
    img = np.full((h, w, 3), 255, np.uint8)
    ch, cw = h / ROWS, w / COLS
    for r, c in cells:
        img[int(r * ch) : int((r + 1) * ch), int(c * cw) : int((c + 1) * cw)] = color
    for r in range(ROWS + 1):
        y = min(h - 1, int(r * ch))
        img[max(0, y - 1) : y + 1, :] = 150
    for c in range(COLS + 1):
        x = min(w - 1, int(c * cw))
        img[:, max(0, x - 1) : x + 1] = 150
    return img


def sym_frames(kind: str, n: int = 12, size: tuple[int, int] = (480, 300)) -> list[np.ndarray]:
    """``solved`` (mirror half drawn in), ``static``, ``almost`` (3 mirror cells missing),
    ``noise`` (random last frame), ``blank`` (all white at the end)."""
    left = sym_pattern()
    right = mirrored(left)
    first = sym_image(left, size)
    if kind == "static":
        return [first] * n
    if kind == "noise":
        rng = np.random.default_rng(0)
        return [first] * (n - 1) + [rng.integers(0, 256, (size[1], size[0], 3), dtype=np.uint8)]
    if kind == "blank":
        return [first] * (n - 1) + [sym_image([], size)]
    target = right if kind == "solved" else right[3:] if kind == "almost" else None
    if target is None:
        raise ValueError(kind)
    out = []
    for i in range(n):
        k = int(round(len(target) * i / (n - 1)))
        out.append(sym_image(left + target[:k], size))
    return out


# ---------------------------------------------------------------- dataset
def _png(path: str, img: np.ndarray) -> None:
    from PIL import Image

    os.makedirs(os.path.dirname(path), exist_ok=True)
    Image.fromarray(img).save(path)


def _scene(i: int, size: int = 64) -> np.ndarray:
    img = np.full((size, size, 3), (30 + 20 * (i % 8), 90, 160), np.uint8)
    img[20:44, 8 + (i % 4) * 4 : 32 + (i % 4) * 4] = (240, 200, 40)
    return img


GENERIC = [
    # (task_id, sub_task, extra_frame, n_questions, optional keys)
    ("com_1", "Commonsense Knowledge", 2, 2, {"intent_classification": "REALISTIC", "reverse": False}),
    ("com_2", "Commonsense Knowledge", -1, 1, {}),
    ("dom_1", "Subject Knowledge", 2, 3, {"reverse": "TRUE"}),
    ("dom_2", "Subject Knowledge", -1, 2, {}),
    ("per_1", "Perceptual Knowledge", 2, 1, {}),
    ("per_2", "Perceptual Knowledge", 2, 2, {"intent_classification": "FANTASY"}),
    ("soc_1", "Societal Knowledge", 2, 2, {}),
    ("soc_2", "Societal Knowledge", -1, 1, {}),
    ("exp_1", "Experiential Knowledge", 2, 2, {}),
    ("exp_2", "Experiential Knowledge", 2, 1, {}),
    ("spa_1", "Spatial Reasoning", 2, 2, {}),
    ("spa_2", "Spatial Reasoning", -1, 2, {}),
    ("tem_1", "Temporal Knowledge", 2, 1, {}),
    ("tem_2", "Temporal Knowledge", 2, 2, {}),
    ("log_3", "Logical Capability", 2, 2, {}),
]


def write_dataset(root: str) -> str:
    """Write ``root/v5.json`` and its images; returns ``root``."""
    records = []
    for i, (tid, sub, extra, nq, opt) in enumerate(GENERIC):
        img = f"images/{tid}.png"
        _png(os.path.join(root, img), _scene(i))
        rec = {"task_id": tid, "text": f"Show what happens next in scene {tid}.", "image_path": img,
               "sub_task": sub, "questions": [f"Does the video show step {k + 1} of {tid}?" for k in range(nq)],
               "extra_frame": extra, "ref_path": "", "color_name": ""}
        rec.update(opt)
        records.append(rec)
    _png(os.path.join(root, "images/log_1.png"), maze_frame(START))
    records.append({"task_id": "log_1", "text": "Move the green block through the maze to the red goal.",
                    "image_path": "images/log_1.png", "sub_task": "Logical Capability", "questions": [],
                    "extra_frame": "maze", "ref_path": "", "color_name": ""})
    left = sym_pattern()
    _png(os.path.join(root, "images/log_2.png"), sym_image(left))
    _png(os.path.join(root, "gt/log_2.png"), sym_image(left + mirrored(left)))
    records.append({"task_id": "log_2", "text": "Colour the cells so the pattern is mirror-symmetric.",
                    "image_path": "images/log_2.png", "sub_task": "Logical Capability", "questions": [],
                    "extra_frame": "sym", "ref_path": "gt/log_2.png", "color_name": "blue"})
    board = _scene(7, 96)
    _png(os.path.join(root, "images/log_4.png"), board)
    _png(os.path.join(root, "gt/log_4.png"), _scene(3, 96))
    records.append({"task_id": "log_4", "text": "Play the winning move.", "image_path": "images/log_4.png",
                    "sub_task": "Logical Capability",
                    "questions": ["Is the piece in the top-right cell the same as in the reference?",
                                  "Does the board layout match the reference?"],
                    "extra_frame": "gt", "ref_path": "gt/log_4.png", "color_name": ""})
    os.makedirs(root, exist_ok=True)
    with open(os.path.join(root, "v5.json"), "w", encoding="utf-8") as fh:
        json.dump(records, fh, indent=1)
    return root


CATEGORY_DIR = {"com": "commonsense", "dom": "subject", "per": "perceptual", "soc": "societal",
                "exp": "experiential", "spa": "spatial", "tem": "temporal", "log": "logical"}


def write_videos(root: str, model: str, *, good: bool = True) -> str:
    """Videos for every fixture sample under ``root/{model}/{category}/{task_id}.mp4``."""
    base = os.path.join(root, model)
    for i, (tid, *_rest) in enumerate(GENERIC):
        frames = []
        for t in range(16):
            img = _scene(i)
            if good:
                x = 4 + 2 * t
                img[50:60, x : x + 10] = (250, 250, 250)
            frames.append(img)
        write_video(os.path.join(base, CATEGORY_DIR[tid[:3]], f"{tid}.mp4"), frames, fps=8)
    write_video(os.path.join(base, "logical", "log_1.mp4"), maze_frames("solved" if good else "static", 24), fps=8)
    write_video(os.path.join(base, "logical", "log_2.mp4"), sym_frames("solved" if good else "static"), fps=8)
    write_video(os.path.join(base, "logical", "log_4.mp4"), [_scene(3 if good else 7, 96)] * 8, fps=8)
    return root
