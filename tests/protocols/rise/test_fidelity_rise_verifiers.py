"""Issue 9, items 1–3: RISE defaults reproduce the released verifiers and frame extraction.

Expected values are worked out by hand from the released rules (official-code.md §1.2, §1.4).
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from fixtures_rise import maze_frames
from vreason.core.errors import VideoError
from vreason.core.records import Sample
from vreason.frames import policy, write_video
from vreason.protocols.rise.maze import verify_maze_frames, verify_maze_video
from vreason.protocols.rise.protocol import RiseProtocol
from vreason.protocols.rise.scorers import RisePuzzleVerifier, ra_policy
from vreason.protocols.rise.symmetry import verify_symmetry


# ---------------------------------------------------------------- item 1: maze rule
def test_maze_default_is_the_released_rule():
    # released: 1 if no wall crossed and goal reached, 0.5 if exactly one, else 0
    assert RiseProtocol().maze_mode == "official"
    assert RisePuzzleVerifier().maze_mode == "official"
    static = verify_maze_frames(maze_frames("static"))
    assert static.mode == "official" and static.score == 0.5
    assert not static.wall_crossed and not static.goal_reached
    jump = verify_maze_frames(maze_frames("teleport"))  # frame 0 at the start, then at the goal
    assert jump.score == 1.0 and jump.goal_reached and not jump.wall_crossed
    # vreason's variant stays available by name
    assert verify_maze_frames(maze_frames("static"), mode="strict").score == 0.0
    assert verify_maze_frames(maze_frames("teleport"), mode="strict").score == 0.5


def test_maze_draws_a_filled_start_dot():
    # released: cv2.circle(canvas, traj[0], 5, (255, 0, 0), -1) at the first tracked point
    # (frame 1 onwards); the "partial" agent walks away, so the end disc is elsewhere
    m = verify_maze_frames(maze_frames("partial", 10), jpeg=False)
    x0, y0 = m.trajectory[0]
    assert tuple(m.debug[y0, x0]) == (255, 0, 0)  # BGR blue at the centre
    assert tuple(m.debug[y0 + 4, x0 - 3]) == (255, 0, 0)  # inside radius 5, off the 5-px line
    assert tuple(m.debug[y0 + 7, x0 - 7]) != (255, 0, 0)  # outside it


def test_maze_start_dot_can_cross_a_wall():
    # an agent tracked right next to a wall: the radius-5 start dot reaches into it (thickness
    # 5 lines alone reach only 2 px), so the released rule reports a crossing
    frame = np.full((100, 100, 3), 255, np.uint8)
    frame[:, 50:60] = 0  # a black wall at x = 50..59
    cv2.circle(frame, (20, 80), 8, (220, 30, 30), -1)  # the red goal, far away
    agent = frame.copy()
    agent[40:46, 42:48] = (0, 200, 0)  # a 6×6 green agent, centre (45, 43): 5 px from the wall
    r = verify_maze_frames([frame, agent, agent], jpeg=False)
    assert r.trajectory[0] == (45, 43)
    assert r.wall_crossed and r.wall_pixels > 0 and r.score == 0.0


def test_maze_jpeg_round_trip_is_default_in_official_mode():
    r = verify_maze_frames(maze_frames("solved", 20))
    assert r.jpeg and r.details()["jpeg_round_trip"] is True and r.score == 1.0
    assert not verify_maze_frames(maze_frames("solved", 20), mode="strict").jpeg


def test_maze_video_goes_through_the_shared_reader(tmp_path):
    path = str(tmp_path / "maze.mp4")
    write_video(path, maze_frames("static", 24), fps=8)
    assert verify_maze_video(path).score == 0.5
    assert verify_maze_video(path, mode="strict").score == 0.0
    # a cut-off file is an error (damage detection of the frames layer), never a score
    data = open(path, "rb").read()
    cut = tmp_path / "cut.mp4"
    cut.write_bytes(data[: len(data) // 3])
    with pytest.raises(VideoError, match="cut.mp4"):
        verify_maze_video(str(cut))


# ---------------------------------------------------------------- item 2: extra_frame = -1
@pytest.mark.parametrize("t,expected", [
    (120, [72, 96, 119]),  # linspace(72, 119, 3) = 72, 95.5, 119 → np.round → 72, 96, 119
    (121, [72, 96, 120]),  # int(0.6·121) = 72; 96.0 exactly
    (81, [48, 64, 80]),  # int(48.6) = 48; 64.0
    (16, [9, 12, 15]),  # int(9.6) = 9; 12.0
    (10, [6, 8, 9]),  # linspace(6, 9, 3) = 6, 7.5, 9 → 6, 8, 9 (np.round: 7.5 → 8)
    (3, [1, 2]),  # linspace(1, 2, 3) = 1, 1.5, 2 → 1, 2, 2 → unique → 1, 2
])
def test_tail_indices_are_rounded_like_the_release(t, expected):
    spec = ra_policy(Sample(id="x_1", benchmark="rise", metadata={"extra_frame": -1}))
    assert policy(spec).indices(t, 24.0) == expected


def test_tail_indices_floor_variant_differs():
    # the floor rule gives 95 for T = 120: the test above can tell the two apart
    assert policy("last_fraction:3/0.4").indices(120, 24.0) == [72, 95, 119]


# ---------------------------------------------------------------- item 3: symmetry JPEG round trip
def _one_cell_frame(rgb: tuple[int, int, int]) -> np.ndarray:
    img = np.full((500, 800, 3), 255, np.uint8)  # already 800×500: no resize, no border to crop
    img[:50, :50] = rgb  # cell (0, 0) of the 10×16 grid
    return img


def test_symmetry_threshold_cell_moves_with_the_jpeg_round_trip():
    # (199, 200, 200): V = max = 200, which is not > 200, so the cell is "not white" (coloured)
    # on the raw pixels. Written as JPEG q95 and read back, its central 40×40 mean reads V ≥ 201
    # (S stays < 30): white. The released pipeline saves the last frame as JPEG first.
    frame = _one_cell_frame((199, 200, 200))
    h, s, v = cv2.cvtColor(np.uint8([[[199, 200, 200]]]), cv2.COLOR_RGB2HSV)[0, 0]
    assert (int(s), int(v)) == (1, 200)
    ok, buf = cv2.imencode(".jpg", cv2.cvtColor(frame, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_JPEG_QUALITY, 95])
    back = cv2.cvtColor(cv2.imdecode(buf, cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB)
    mean = np.uint8([[back[5:45, 5:45].reshape(-1, 3).mean(axis=0)]])
    assert cv2.cvtColor(mean, cv2.COLOR_RGB2HSV)[0, 0, 2] > 200

    gt = np.full((500, 800, 3), 255, np.uint8)  # a GT with no coloured cell
    raw = verify_symmetry(frame, gt, "blue", jpeg=False)
    assert raw.pred_cells[0, 0] and raw.fp == 1 and raw.score == 0.5  # 159/160 correct
    released = verify_symmetry(frame, gt, "blue")  # default: the JPEG round trip
    assert released.jpeg and not released.pred_cells[0, 0] and released.fp == 0 and released.score == 1.0


def test_symmetry_jpeg_option_reaches_the_scorer():
    assert RiseProtocol().sym_jpeg is True
    assert RiseProtocol(sym_jpeg="false").sym_jpeg is False
    scorer = [s for s in RiseProtocol(sym_jpeg="false").scorers() if isinstance(s, RisePuzzleVerifier)][0]
    assert scorer.sym_jpeg is False
