"""Validity of the part-A families (maze, symmetry, sorting, connect): ground truth passes,
trivial baselines fail, verifiers survive re-encoding/downscaling/colour shift and junk input."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import by_difficulty
from vreason.synth import draw
from vreason.synth.base import DIFFICULTIES, RenderConfig
from vreason.synth.suite import get_family, make_instance

FAMILIES_A = ("maze", "symmetry", "sorting", "connect")
CFG = RenderConfig()


def _fade(inst, n):
    k = n // 2
    out = [inst.first_frame] * k
    for i in range(1, 4):
        t = i / 4
        out.append(np.round(inst.first_frame * (1 - t) + inst.final_frame * t).astype(np.uint8))
    return out + [inst.final_frame] * (n - len(out))


def _noise(n, h, w, seed):
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 256, (h // 8 + 1, w // 8 + 1, 3), dtype=np.uint8).repeat(8, 0).repeat(8, 1)[:h, :w]
            for _ in range(n)]


def degrade(frames, tmp_path, seed=1):
    """Half size, hue shift of 3 (6°), ±8 per channel, H.264 at 300 kbps; decoded back."""
    import cv2

    from vreason.frames import read_all, write_video

    off = np.random.default_rng(seed).integers(-8, 9, 3)
    out = []
    for f in frames:
        f = cv2.resize(f, (f.shape[1] // 2, f.shape[0] // 2), interpolation=cv2.INTER_AREA)
        hsv = cv2.cvtColor(f, cv2.COLOR_RGB2HSV)
        hsv[..., 0] = ((hsv[..., 0].astype(np.int32) + 3) % 180).astype(np.uint8)
        out.append(np.clip(cv2.cvtColor(hsv, cv2.COLOR_HSV2RGB).astype(np.int32) + off, 0, 255).astype(np.uint8))
    path = str(tmp_path / "degraded.mp4")
    write_video(path, out, CFG.fps, bitrate=300_000)
    return read_all(path)


# the second instance of each (family, difficulty) runs in `make test-all`; the first covers the same checks
# `make test`: the first instance at one difficulty per family, drawn by the run's seed; `make test-all`: all
@pytest.mark.parametrize("family,difficulty,index", [
    pytest.param(f, d, i, id=f"{f}-{d}-{i}", marks=by_difficulty(f, d, DIFFICULTIES, salt="gt", slow=bool(i)))
    for f in FAMILIES_A for d in DIFFICULTIES for i in range(2)])
def test_ground_truth_passes_and_baselines_fail(family, difficulty, index):
    fam = get_family(family)
    inst = make_instance(family, difficulty, index, 11, CFG)
    n = len(inst.solution)
    assert n == CFG.n_frames
    assert np.array_equal(inst.solution[0], inst.first_frame)
    assert np.array_equal(inst.solution[-1], inst.final_frame)
    oracle = fam.verify(inst.solution, inst.state, CFG)
    assert oracle.passed and oracle.score >= 0.99, oracle.evidence.get("reasons")
    assert oracle.debug_image is not None and oracle.debug_image.ndim == 3
    static = fam.verify([inst.first_frame] * n, inst.state, CFG)
    assert not static.passed and static.score <= 0.05
    noise = fam.verify(_noise(n, CFG.height, CFG.width, index), inst.state, CFG)
    assert not noise.passed and noise.score <= 0.05
    rnd = fam.verify(fam.random_motion(inst, np.random.default_rng(index), CFG), inst.state, CFG)
    assert not rnd.passed
    assert inst.directional
    rev = fam.verify(inst.solution[::-1], inst.state, CFG)
    assert not rev.passed and rev.score <= 0.05
    cut = fam.verify([inst.first_frame] * (n // 2) + [inst.final_frame] * (n - n // 2), inst.state, CFG)
    fade = fam.verify(_fade(inst, n), inst.state, CFG)
    if inst.process_rule:
        assert not cut.passed and not fade.passed
        assert cut.score <= 0.5 and fade.score <= 0.5  # right end state, wrong process: half at most


def test_process_rule_flags():
    assert get_family("maze").process_rule and get_family("sorting").process_rule
    assert get_family("connect").process_rule
    assert not get_family("symmetry").process_rule  # final-state task (RISE-style); process = no damage


# `make test`: easy or hard per family, drawn by the run's seed; `make test-all`: both
@pytest.mark.parametrize("family,difficulty", [
    pytest.param(f, d, id=f"{f}-{d}", marks=by_difficulty(f, d, ("easy", "hard"), salt="degrade"))
    for f in FAMILIES_A for d in ("easy", "hard")])
def test_oracle_survives_reencode_downscale_colour_shift(family, difficulty, tmp_path):
    fam = get_family(family)
    inst = make_instance(family, difficulty, 0, 23, CFG)
    res = fam.verify(degrade(inst.solution, tmp_path), inst.state, CFG)
    assert res.passed and res.score >= 0.99, res.evidence.get("reasons")
    # and the degraded static video still fails
    res = fam.verify(degrade([inst.first_frame] * 8, tmp_path), inst.state, CFG)
    assert not res.passed


@pytest.mark.parametrize("family", FAMILIES_A)
def test_junk_videos_score_zero_without_crashing(family):
    fam = get_family(family)
    inst = make_instance(family, "medium", 0, 5, CFG)
    h, w = CFG.height, CFG.width
    cases = {
        "black": [np.zeros((h, w, 3), np.uint8)] * 5,
        "white": [np.full((h, w, 3), 255, np.uint8)] * 5,
        "one frame": [inst.first_frame],
        "one final frame": [inst.final_frame],
        "tiny": [np.zeros((3, 5, 3), np.uint8)] * 2,
        "grey 2-D": [np.full((h, w), 128, np.uint8)] * 3,
        "empty": [],
    }
    for name, frames in cases.items():
        res = fam.verify(frames, inst.state, CFG)
        assert res.score == 0.0 and not res.passed, name
        assert res.evidence.get("reasons"), name


@pytest.mark.parametrize("family", FAMILIES_A)
def test_determinism(family):
    a = make_instance(family, "hard", 3, 7, CFG)
    b = make_instance(family, "hard", 3, 7, CFG)
    c = make_instance(family, "hard", 3, 8, CFG)
    d = make_instance(family, "hard", 4, 7, CFG)
    assert a.state == b.state and np.array_equal(a.first_frame, b.first_frame) and a.prompt == b.prompt
    assert a.state != c.state and a.state != d.state
    assert a.sample_id == f"{family}-hard-003"


def test_maze_wall_crossing_and_half_way_are_caught():
    from vreason.synth.families.maze.family import Maze, _positions

    fam = Maze()
    for idx in range(10):
        inst = make_instance("maze", "medium", idx, 3, CFG)
        st = inst.state
        r, c = st["start"]
        closed = [(r + dr, c + dc) for dr, dc, bit in ((-1, 0, 1), (0, 1, 2), (1, 0, 4), (0, -1, 8))
                  if not st["open"][r][c] & bit and 0 <= r + dr < st["rows"] and 0 <= c + dc < st["cols"]]
        if closed:
            break
    frames = fam.render(st, _positions([(r, c), closed[0]], CFG.n_frames))
    res = fam.verify(frames, st, CFG)
    assert not res.passed and res.evidence["checks"]["no_wall_crossing"] is False
    half = [tuple(p) for p in st["solution"][: len(st["solution"]) // 2 + 1]]
    res = fam.verify(fam.render(st, _positions(half, CFG.n_frames)), st, CFG)
    assert not res.passed and 0.2 < res.score < 0.8  # partial progress, checked process


def test_sorting_illegal_move_is_caught():
    fam = get_family("sorting")
    inst = make_instance("sorting", "hard", 0, 3, CFG)
    st = dict(inst.state)
    # a rotation of three bars between two rest states is not one swap
    n = len(st["bars"])
    frames = list(inst.solution[:6])
    rotated = dict(st, initial=st["initial"][1:3] + st["initial"][:1] + st["initial"][3:])
    frames += fam.render(rotated, [], 6)
    res = fam.verify(frames, st, CFG)
    assert not res.passed and n >= 3
    assert not (res.evidence["checks"]["one_move_at_a_time"] and res.evidence["checks"]["no_teleport"])


def test_connect_crossing_line_is_caught():
    fam = get_family("connect")
    inst = make_instance("connect", "hard", 0, 3, CFG)
    st = inst.state
    grid = draw.GridLayout.from_json(st["grid"])
    frames = [f.copy() for f in inst.solution]
    pr = st["pairs"][0]
    a = grid.centre(*pr["a"])
    for f in frames[-12:]:  # a line of pair 0's colour cuts straight across the whole board
        draw.thick_line(f, (grid.x0, a[1]), (grid.x0 + grid.cols * grid.cell, a[1]), grid.cell * 0.28,
                        draw.rgb(pr["colour"]))
        draw.thick_line(f, (a[0], grid.y0), (a[0], grid.y0 + grid.rows * grid.cell), grid.cell * 0.28,
                        draw.rgb(pr["colour"]))
    res = fam.verify(frames, st, CFG)
    assert not res.passed


def test_symmetry_wrong_cells_and_damaged_half_fail():
    fam = get_family("symmetry")
    inst = make_instance("symmetry", "hard", 1, 3, CFG)
    st = inst.state
    grid = draw.GridLayout.from_json(st["grid"])
    frames = [f.copy() for f in inst.solution]
    r, c, _ = st["given"][0]
    for f in frames[-20:]:  # erase a given cell
        draw.fill_cell(f, grid, r, c, draw.WHITE, inset=1)
    res = fam.verify(frames, st, CFG)
    assert not res.passed and not res.evidence["checks"]["given_unchanged"]
    # right cells, wrong colours (hard mixes two colours)
    assert len(st["colours"]) == 2
    swap = {st["colours"][0]: st["colours"][1], st["colours"][1]: st["colours"][0]}
    wrong = fam.render(st, [[r2, c2, swap[col]] for r2, c2, col in st["targets"]], CFG.n_frames)
    res = fam.verify(wrong, st, CFG)
    assert not res.passed and res.evidence["colour_errors"] > 0


def test_mask_for_survives_shift_but_not_half_fade():
    for name, rgb in draw.COLOURS.items():
        img = np.zeros((4, 4, 3), np.uint8)
        img[:] = rgb
        assert draw.mask_for(img, name).all(), name
        shifted = np.clip(img.astype(int) + np.array([8, -8, 8]), 0, 255).astype(np.uint8)
        assert draw.mask_for(shifted, name).all(), name
        faded = np.round(img * 0.35 + 255 * 0.65).astype(np.uint8)
        assert not draw.mask_for(faded, name).any(), name
        others = [o for o in draw.COLOURS if o != name]
        assert not any(draw.mask_for(img, o).any() for o in others), name


OTHER_CONFIGS = {"832x480-16fps-5s": RenderConfig(832, 480, 16, 5.0), "480x270-8fps-4s": RenderConfig(480, 270, 8, 4.0)}


@pytest.mark.parametrize("family,cfg", [
    pytest.param(f, c, id=f"{f}-{k}", marks=by_difficulty(f, k, tuple(OTHER_CONFIGS), salt="render-config"))
    for f in FAMILIES_A for k, c in OTHER_CONFIGS.items()])  # one config per family per run (both in test-all)
def test_other_render_configs(family, cfg):
    fam = get_family(family)
    inst = make_instance(family, "hard", 0, 31, cfg)
    n = len(inst.solution)
    assert n == cfg.n_frames and inst.first_frame.shape == (cfg.height, cfg.width, 3)
    assert fam.verify(inst.solution, inst.state, cfg).passed
    assert not fam.verify([inst.first_frame] * n, inst.state, cfg).passed
    assert not fam.verify(inst.solution[::-1], inst.state, cfg).passed
    if inst.process_rule:
        cut = [inst.first_frame] * (n // 2) + [inst.final_frame] * (n - n // 2)
        assert not fam.verify(cut, inst.state, cfg).passed


def test_maze_short_video_of_the_solution_still_passes_but_a_cut_does_not():
    from vreason.synth.families.maze.family import _positions

    fam = get_family("maze")
    inst = make_instance("maze", "hard", 2, 5, CFG)
    path = [tuple(p) for p in inst.state["solution"]]
    short = fam.render(inst.state, _positions(path, 24))  # a 24-frame model video of the same task
    assert fam.verify(short, inst.state, CFG).passed
    cut = [inst.first_frame] * 12 + [inst.final_frame] * 12
    res = fam.verify(cut, inst.state, CFG)
    assert not res.passed and not (res.evidence["checks"]["no_teleport"] and res.evidence["checks"]["no_wall_crossing"])
