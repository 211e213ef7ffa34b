"""RISE-Video maze verifier: track the green agent, check walls and the goal.

``mode="official"`` (the protocol's default) follows the released ``reasoning_eval/maze.py``
(official-code.md §1.4):

* agent: in each frame **after frame 0**, HSV ``[35,80,80]``–``[85,255,255]``, a 3×3
  morphological open, the largest external contour, its bounding-box centre;
* on a copy of frame 0: the trajectory as blue (BGR ``(255,0,0)``) line segments of thickness 5,
  a filled blue start dot of radius 5 at the first tracked point, and the end as a filled yellow
  disc of radius ``int(half the last box's diagonal)``;
* frame 0 and that canvas go through a JPEG file (OpenCV's default quality 95) before the
  checks, as the released verifier writes and re-reads both (``jpeg=False`` skips this);
* wall crossing: blue canvas pixels (HSV ``(100,100,100)``–``(130,255,255)``) that lie on black
  walls of frame 0 (HSV ``(0,0,0)``–``(180,255,50)``);
* goal: the minimum enclosing circle (centre and radius truncated to int) of frame 0's largest red
  region (HSV ``(0,100,100)``–``(10,255,255)`` or ``(170,100,100)``–``(180,255,255)``); reached
  when the yellow disc (HSV ``(20,100,100)``–``(40,255,255)``) overlaps it (IoU > 0);
* score 1 when no wall is crossed and the goal is reached, 0.5 when exactly one holds, else 0.
  So a static video scores 0.5 (no wall crossed) and a cut straight to the goal scores 1.

``mode="strict"`` (vreason's variant, ``maze_mode=strict``) closes those two loopholes: the
trajectory starts at the agent's position in frame 0 (so a cut that teleports the agent to the
goal draws a line through the walls), and "no wall crossing" is credited only when the agent
was found and moved by at least its own size. Strict mode checks the pixels as drawn (no JPEG).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

AGENT_HSV = ((35, 80, 80), (85, 255, 255))
WALL_HSV = ((0, 0, 0), (180, 255, 50))
TRAJ_HSV = ((100, 100, 100), (130, 255, 255))
YELLOW_HSV = ((20, 100, 100), (40, 255, 255))
RED_HSV = (((0, 100, 100), (10, 255, 255)), ((170, 100, 100), (180, 255, 255)))
TRAJ_BGR = (255, 0, 0)
END_BGR = (0, 255, 255)
TRAJ_THICKNESS = 5
START_DOT_RADIUS = 5
JPEG_QUALITY = 95
"""OpenCV's default ``IMWRITE_JPEG_QUALITY``: what the released verifier's ``cv2.imwrite`` uses."""

MazeMode = Literal["strict", "official"]


@dataclass
class MazeResult:
    score: float
    wall_crossed: bool
    goal_reached: bool
    agent_found: bool
    moved: bool
    trajectory: list[tuple[int, int]] = field(default_factory=list)
    frame_indices: list[int] = field(default_factory=list)
    """Frames where the agent was found (the trajectory's points, in order)."""
    n_frames: int = 0
    wall_pixels: int = 0
    goal_circle: tuple[int, int, int] | None = None
    mode: str = "official"
    jpeg: bool = True
    """Frame 0 and the canvas went through a JPEG round trip (quality 95) before the checks."""
    debug: np.ndarray | None = field(default=None, repr=False)
    """BGR canvas: frame 0 with the trajectory, end disc and goal circle."""

    def details(self) -> dict[str, Any]:
        return {
            "verifier": "rise_maze",
            "mode": self.mode,
            "jpeg_round_trip": self.jpeg,
            "wall_crossed": self.wall_crossed,
            "goal_reached": self.goal_reached,
            "agent_found": self.agent_found,
            "moved": self.moved,
            "wall_pixels": self.wall_pixels,
            "goal_circle": list(self.goal_circle) if self.goal_circle else None,
            "trajectory": [list(p) for p in self.trajectory],
            "n_frames": self.n_frames,
        }


def _mask(hsv: np.ndarray, lo: tuple[int, int, int], hi: tuple[int, int, int]) -> np.ndarray:
    import cv2

    return cv2.inRange(hsv, np.array(lo, dtype=np.uint8), np.array(hi, dtype=np.uint8))


def locate_agent(frame_rgb: np.ndarray) -> tuple[tuple[int, int], tuple[int, int, int, int]] | None:
    """Centre and box (x, y, w, h) of the largest green blob, or ``None``."""
    import cv2

    hsv = cv2.cvtColor(frame_rgb, cv2.COLOR_RGB2HSV)
    mask = _mask(hsv, *AGENT_HSV)
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    if not contours:
        return None
    x, y, w, h = cv2.boundingRect(max(contours, key=cv2.contourArea))
    return (x + w // 2, y + h // 2), (x, y, w, h)


def goal_circle(frame0_rgb: np.ndarray) -> tuple[int, int, int] | None:
    """(cx, cy, r) of the minimum enclosing circle of frame 0's largest red region."""
    import cv2

    hsv = cv2.cvtColor(frame0_rgb, cv2.COLOR_RGB2HSV)
    red = _mask(hsv, *RED_HSV[0]) | _mask(hsv, *RED_HSV[1])
    contours, _ = cv2.findContours(red, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    if not contours:
        return None
    (cx, cy), r = cv2.minEnclosingCircle(max(contours, key=cv2.contourArea))
    return int(cx), int(cy), int(r)  # truncated, as the released code does


def jpeg_round_trip(image_bgr: np.ndarray, quality: int = JPEG_QUALITY) -> np.ndarray:
    """The image as it reads back from a JPEG file written by OpenCV at ``quality`` (BGR in/out)."""
    import cv2

    ok, buf = cv2.imencode(".jpg", image_bgr, [int(cv2.IMWRITE_JPEG_QUALITY), int(quality)])
    if not ok:
        raise ValueError("JPEG encoding failed")
    return cv2.imdecode(buf, cv2.IMREAD_COLOR)


def _draw(canvas: np.ndarray, points: list[tuple[int, int]], last_box: tuple[int, int, int, int]) -> None:
    """Trajectory segments, the filled start dot and the yellow end disc (in place, BGR)."""
    import cv2

    for p0, p1 in zip(points, points[1:], strict=False):
        cv2.line(canvas, p0, p1, TRAJ_BGR, TRAJ_THICKNESS)
    cv2.circle(canvas, points[0], START_DOT_RADIUS, TRAJ_BGR, -1)
    _, _, w, h = last_box
    cv2.circle(canvas, points[-1], int(np.hypot(w / 2.0, h / 2.0)), END_BGR, -1)


def verify_maze_frames(
    frames: Iterable[np.ndarray], *, mode: MazeMode = "official", jpeg: bool | None = None
) -> MazeResult:
    """Score a maze video given its RGB frames (any iterable; consumed once).

    ``jpeg`` (default: on in official mode, off in strict mode) passes frame 0 and the drawn
    canvas through a JPEG round trip at quality 95 before the checks, as the released code does.
    """
    import cv2

    if mode not in ("strict", "official"):
        raise ValueError(f"maze mode must be 'strict' or 'official', got {mode!r}")
    use_jpeg = mode == "official" if jpeg is None else bool(jpeg)
    it = iter(frames)
    try:
        frame0 = np.asarray(next(it))
    except StopIteration:
        raise ValueError("maze video has no frames") from None
    points: list[tuple[int, int]] = []
    idx: list[int] = []
    boxes: list[tuple[int, int, int, int]] = []
    if mode == "strict":
        found0 = locate_agent(frame0)
        if found0:
            points.append(found0[0])
            boxes.append(found0[1])
            idx.append(0)
    n = 1
    for i, frame in enumerate(it, start=1):
        n += 1
        found = locate_agent(np.asarray(frame))
        if found:
            points.append(found[0])
            boxes.append(found[1])
            idx.append(i)

    frame0_bgr = cv2.cvtColor(frame0, cv2.COLOR_RGB2BGR)
    canvas = frame0_bgr.copy()
    agent_found = bool(points)
    if agent_found:
        _draw(canvas, points, boxes[-1])
    if use_jpeg:
        frame0_bgr, canvas = jpeg_round_trip(frame0_bgr), jpeg_round_trip(canvas)
    frame0_checked = cv2.cvtColor(frame0_bgr, cv2.COLOR_BGR2RGB)
    walls = _mask(cv2.cvtColor(frame0_bgr, cv2.COLOR_BGR2HSV), *WALL_HSV)
    circle = goal_circle(frame0_checked)
    canvas_hsv = cv2.cvtColor(canvas, cv2.COLOR_BGR2HSV)
    traj = _mask(canvas_hsv, *TRAJ_HSV)
    wall_pixels = int(np.count_nonzero((traj > 0) & (walls > 0)))
    wall_crossed = wall_pixels > 0
    goal_reached = False
    if circle is not None:
        goal = np.zeros(walls.shape, np.uint8)
        cv2.circle(goal, circle[:2], circle[2], 255, -1)
        yellow = _mask(canvas_hsv, *YELLOW_HSV)
        goal_reached = bool(np.count_nonzero((yellow > 0) & (goal > 0)) > 0)

    moved = False
    if agent_found:
        start = np.array(points[0], float)
        size = max(2.0, float(np.hypot(boxes[0][2], boxes[0][3])))
        moved = bool(max(np.hypot(*(np.array(p, float) - start)) for p in points) >= size)
    if mode == "official":
        walls_ok = not wall_crossed
    else:
        walls_ok = agent_found and moved and not wall_crossed
        goal_reached = goal_reached and agent_found
    score = (float(walls_ok) + float(goal_reached)) / 2.0
    debug = canvas.copy()
    if circle is not None:
        cv2.circle(debug, circle[:2], max(1, circle[2]), (0, 0, 255), 2)
    return MazeResult(
        score=score,
        wall_crossed=wall_crossed,
        goal_reached=goal_reached,
        agent_found=agent_found,
        moved=moved,
        trajectory=points,
        frame_indices=idx,
        n_frames=n,
        wall_pixels=wall_pixels,
        goal_circle=circle,
        mode=mode,
        jpeg=use_jpeg,
        debug=debug,
    )


def read_maze_frames(path: str) -> list[np.ndarray]:
    """Every frame of the video (RGB), read through the shared frames layer: the file is probed
    and checked for damage (a cut-off file raises) before it is decoded."""
    from vreason.frames import check_complete, probe, read_all

    info = probe(path, exact=True)
    check_complete(info)
    frames = read_all(path)
    if len(frames) < info.n_frames:
        from vreason.core.errors import VideoUnreadableError

        raise VideoUnreadableError(path, f"decoded {len(frames)} of {info.n_frames} frames")
    return frames


def verify_maze_video(
    path: str | os.PathLike, *, mode: MazeMode = "official", jpeg: bool | None = None
) -> MazeResult:
    """Score the maze video at ``path``; raises a VideoError subclass for a bad file."""
    return verify_maze_frames(read_maze_frames(str(path)), mode=mode, jpeg=jpeg)
