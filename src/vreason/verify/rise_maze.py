"""RISE-Video maze verifier: track the green agent, check walls and the goal.

Same rules and constants as the released verifier (official-code.md §1.4):

* agent: in each frame, HSV ``[35,80,80]``–``[85,255,255]``, a 3×3 morphological open, the
  largest external contour, its bounding-box centre;
* the trajectory is drawn on a copy of frame 0 as a blue (BGR ``(255,0,0)``) polyline of
  thickness 5, its end as a filled yellow disc with radius = half the last box's diagonal;
* wall crossing: blue canvas pixels (HSV ``(100,100,100)``–``(130,255,255)``) that lie on black
  walls of frame 0 (HSV ``(0,0,0)``–``(180,255,50)``);
* goal: the minimum enclosing circle of frame 0's largest red region (HSV ``(0,100,100)``–
  ``(10,255,255)`` or ``(170,100,100)``–``(180,255,255)``); reached when the yellow disc (HSV
  ``(20,100,100)``–``(40,255,255)``) overlaps it (IoU > 0);
* score 1 when both hold, 0.5 when one holds, else 0.

``mode="official"`` is exactly that. ``mode="strict"`` (the default) closes two loopholes of
the official rule: the trajectory starts at the agent's position in frame 0 (so a cut that
teleports the agent to the goal draws a line through the walls), and "no wall crossing" is
credited only when the agent actually moved by at least its own size (a static video
otherwise gets 0.5 for standing still).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from vreason.errors import VideoNoFramesError, VideoUnreadableError

AGENT_HSV = ((35, 80, 80), (85, 255, 255))
WALL_HSV = ((0, 0, 0), (180, 255, 50))
TRAJ_HSV = ((100, 100, 100), (130, 255, 255))
YELLOW_HSV = ((20, 100, 100), (40, 255, 255))
RED_HSV = (((0, 100, 100), (10, 255, 255)), ((170, 100, 100), (180, 255, 255)))
TRAJ_BGR = (255, 0, 0)
END_BGR = (0, 255, 255)
TRAJ_THICKNESS = 5

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
    mode: str = "strict"
    debug: np.ndarray | None = field(default=None, repr=False)
    """BGR canvas: frame 0 with the trajectory, end disc and goal circle."""

    def details(self) -> dict[str, Any]:
        return {
            "verifier": "rise_maze",
            "mode": self.mode,
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
    return int(round(cx)), int(round(cy)), int(round(r))


def verify_maze_frames(frames: Iterable[np.ndarray], *, mode: MazeMode = "strict") -> MazeResult:
    """Score a maze video given its RGB frames (any iterable; consumed once)."""
    import cv2

    if mode not in ("strict", "official"):
        raise ValueError(f"maze mode must be 'strict' or 'official', got {mode!r}")
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

    canvas = cv2.cvtColor(frame0, cv2.COLOR_RGB2BGR).copy()
    walls = _mask(cv2.cvtColor(frame0, cv2.COLOR_RGB2HSV), *WALL_HSV)
    circle = goal_circle(frame0)
    agent_found = bool(points)
    if agent_found:
        pts = np.array(points, dtype=np.int32).reshape(-1, 1, 2)
        cv2.polylines(canvas, [pts], False, TRAJ_BGR, TRAJ_THICKNESS)
        _, _, w, h = boxes[-1]
        radius = max(1, int(round(np.hypot(w, h) / 2)))
        cv2.circle(canvas, points[-1], radius, END_BGR, -1)
    canvas_hsv = cv2.cvtColor(canvas, cv2.COLOR_BGR2HSV)
    traj = _mask(canvas_hsv, *TRAJ_HSV)
    wall_pixels = int(np.count_nonzero((traj > 0) & (walls > 0))) if agent_found else 0
    wall_crossed = wall_pixels > 0
    goal_reached = False
    if agent_found and circle is not None:
        goal = np.zeros(walls.shape, np.uint8)
        cv2.circle(goal, circle[:2], max(1, circle[2]), 255, -1)
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
    score = (float(walls_ok) + float(goal_reached)) / 2.0
    if circle is not None:
        cv2.circle(canvas, circle[:2], max(1, circle[2]), (0, 0, 255), 2)
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
        debug=canvas,
    )


def iter_video_frames(path: str) -> Iterator[np.ndarray]:
    """Decode a video's frames one by one (RGB), without holding them all in memory."""
    from vreason.frames.video import _open  # the frames layer's checked opener (typed errors)

    container = _open(path)
    n = 0
    try:
        for frame in container.decode(container.streams.video[0]):
            n += 1
            yield frame.to_ndarray(format="rgb24")
    except Exception as exc:
        if n == 0:
            raise VideoUnreadableError(path, f"decode failed: {type(exc).__name__}: {exc}") from exc
    finally:
        container.close()
    if n == 0:
        raise VideoNoFramesError(path, "decoded 0 frames")


def verify_maze_video(path: str | os.PathLike, *, mode: MazeMode = "strict") -> MazeResult:
    """Score the maze video at ``path``; raises a VideoError subclass for a bad file."""
    return verify_maze_frames(iter_video_frames(str(path)), mode=mode)
