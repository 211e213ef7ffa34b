"""Validity of the RISE maze and symmetry verifiers on videos the tests render."""

from __future__ import annotations

import os

import cv2
import numpy as np
import pytest

from fixtures_rise import maze_frames, mirrored, sym_frames, sym_image, sym_pattern
from vreason.core.errors import VideoMissingError
from vreason.core.records import Sample, Video
from vreason.core.scoring import ScoreContext
from vreason.frames import write_video
from vreason.protocols.rise.maze import verify_maze_frames, verify_maze_video
from vreason.protocols.rise.scorers import RisePuzzleVerifier
from vreason.protocols.rise.symmetry import crop_black_border, score_from_accuracy, verify_symmetry

MAZE_EXPECT = {  # kind: (strict, official)
    "solved": (1.0, 1.0),
    "static": (0.0, 0.5),
    "wallcross": (0.5, 0.5),
    "teleport": (0.5, 1.0),
    "partial": (0.5, 0.5),
}


@pytest.mark.parametrize("kind", sorted(MAZE_EXPECT))
def test_maze_frames(kind):
    strict, official = MAZE_EXPECT[kind]
    r = verify_maze_frames(maze_frames(kind), mode="strict")
    assert r.score == strict
    assert verify_maze_frames(maze_frames(kind), mode="official").score == official
    if kind == "wallcross":
        assert r.wall_crossed and r.goal_reached and r.wall_pixels > 0
    if kind == "solved":
        assert not r.wall_crossed and r.goal_reached and r.moved
        assert r.debug is not None and r.debug.shape == (320, 320, 3)
        assert len(r.trajectory) == len(r.frame_indices) == 40


def _shrink(frames, f):
    return [cv2.resize(x, None, fx=f, fy=f, interpolation=cv2.INTER_AREA) for x in frames]


@pytest.mark.parametrize("kind", ["solved", "static", "wallcross"])
@pytest.mark.parametrize("scale,crf", [(1.0, 23), (0.5, 35)])
def test_maze_after_reencode_and_downscale(tmp_path, kind, scale, crf):
    frames = maze_frames(kind, 24)
    if scale != 1.0:
        frames = _shrink(frames, scale)
    path = str(tmp_path / f"{kind}.mp4")
    write_video(path, frames, fps=8, crf=crf)
    assert verify_maze_video(path, mode="strict").score == MAZE_EXPECT[kind][0]
    assert verify_maze_video(path).score == MAZE_EXPECT[kind][1]  # default: the released rule


def test_maze_missing_file(tmp_path):
    with pytest.raises(VideoMissingError):
        verify_maze_video(str(tmp_path / "nope.mp4"))


def test_maze_without_agent():
    blank = [np.full((64, 64, 3), 255, np.uint8)] * 5
    r = verify_maze_frames(blank, mode="strict")
    assert r.score == 0.0 and not r.agent_found
    # the released rule credits "no wall crossed" even when nothing was tracked
    assert verify_maze_frames(blank).score == 0.5




def _gt():
    left = sym_pattern()
    return sym_image(left + mirrored(left))


@pytest.mark.parametrize("kind,score", [("solved", 1.0), ("static", 0.0), ("almost", 0.5), ("noise", 0.0),
                                        ("blank", 0.0)])
def test_symmetry_frames(kind, score):
    r = verify_symmetry(sym_frames(kind)[-1], _gt(), "blue")
    assert r.score == score
    if kind == "almost":
        assert (r.fn, r.fp) == (3, 0) and r.accuracy == pytest.approx(1 - 3 / 160)
    if kind == "static":
        assert r.fn == 30 and r.accuracy < 0.85


def test_symmetry_ignores_colour_but_not_position():
    left = sym_pattern()
    other_colour = sym_image(left + mirrored(left), color=(200, 30, 30))
    assert verify_symmetry(other_colour, _gt(), "blue").score == 1.0
    shifted = sym_image(left + [(r, max(8, c - 1)) for r, c in mirrored(left)])
    assert verify_symmetry(shifted, _gt(), "blue").score < 1.0


def test_symmetry_crops_black_borders():
    img = sym_frames("solved")[-1]
    boxed = np.zeros((img.shape[0] + 40, img.shape[1] + 60, 3), np.uint8)
    boxed[20:-20, 30:-30] = img
    assert crop_black_border(boxed).shape == img.shape
    assert verify_symmetry(boxed, _gt(), "blue").score == 1.0


def test_symmetry_thresholds():
    assert score_from_accuracy(0.8499) == 0.0
    assert score_from_accuracy(0.85) == 0.5
    assert score_from_accuracy(159 / 160) == 0.5
    assert score_from_accuracy(1.0) == 1.0
    with pytest.raises(ValueError):
        verify_symmetry(_gt(), _gt(), "magenta")


@pytest.mark.parametrize("kind,score", [("solved", 1.0), ("static", 0.0), ("almost", 0.5)])
@pytest.mark.parametrize("size,crf", [((480, 300), 23), ((240, 150), 35)])
def test_symmetry_after_reencode_and_downscale(tmp_path, kind, score, size, crf):
    path = str(tmp_path / f"{kind}.mp4")
    write_video(path, sym_frames(kind, n=6, size=size), fps=8, crf=crf)
    gt_path = str(tmp_path / "gt.png")
    cv2.imwrite(gt_path, cv2.cvtColor(_gt(), cv2.COLOR_RGB2BGR))
    sample = Sample(id="log_2", benchmark="rise", category="logical", reference_image="gt.png",
                    root=str(tmp_path), metadata={"extra_frame": "sym", "color_name": "blue"})
    video = Video(sample_id="log_2", model="m", path=path)
    ctx = ScoreContext(run_dir=str(tmp_path / "run"))
    [s] = RisePuzzleVerifier().score(sample, video, ctx)
    assert s.status.value == "ok" and s.value == score and s.metric == "ra"
    assert s.evidence.frame_policy == "last" and len(s.evidence.frame_indices) == 1
    assert s.evidence.details["verifier"] == "rise_symmetry"
    overlay = os.path.join(ctx.run_dir, s.evidence.debug_images[0])  # relative to the run folder
    assert not os.path.isabs(s.evidence.debug_images[0]) and os.path.isfile(overlay)
    assert cv2.imread(overlay).shape[1] >= 480  # the verdict banner and legend at a readable size
    assert s.evidence.details["checks"]["every_cell_correct"] == (score == 1.0)


def test_puzzle_scorer_maze_and_errors(tmp_path):
    path = str(tmp_path / "maze.mp4")
    write_video(path, maze_frames("solved", 24), fps=8)
    sample = Sample(id="log_1", benchmark="rise", category="logical", metadata={"extra_frame": "maze"})
    ctx = ScoreContext(run_dir=str(tmp_path / "run"))
    [s] = RisePuzzleVerifier().score(sample, Video(sample_id="log_1", model="m", path=path), ctx)
    assert s.value == 1.0 and s.passed and s.evidence.details["goal_reached"]
    assert s.evidence.frame_policy == "all" and s.evidence.debug_images
    assert s.evidence.details["checks"] == {"no_wall_crossed": True, "goal_reached": True}
    # a missing video and a missing GT image are errors naming the file, never 0
    [e] = RisePuzzleVerifier().score(sample, Video(sample_id="log_1", model="m", path=str(tmp_path / "x.mp4")), ctx)
    assert e.status.value == "error" and e.value is None and "x.mp4" in e.reason
    sym = Sample(id="log_2", benchmark="rise", category="logical", reference_image="missing.png",
                 root=str(tmp_path), metadata={"extra_frame": "sym", "color_name": "blue"})
    [e2] = RisePuzzleVerifier().score(sym, Video(sample_id="log_2", model="m", path=path), ctx)
    assert e2.status.value == "error" and "missing.png" in e2.reason
    assert RisePuzzleVerifier().applies(sym) and not RisePuzzleVerifier().applies(
        Sample(id="log_4", benchmark="rise", metadata={"extra_frame": "gt"}))
