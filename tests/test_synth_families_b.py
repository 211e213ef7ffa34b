"""Validity tests of the built-in families odd-one-out, sequence, gravity and sliding.

For every family × difficulty (2 instances each; `make test` runs the first at one difficulty per family, drawn by
the run's seed, `make test-all` all of them): the ground truth
passes (also after H.264 re-encoding at a low bitrate, downscaling to half size and a slight colour
jitter); the trivial baselines fail (static first frame, pixel and blocky noise, the family's random
motion, the reversed solution where the task is directional, a cut or a fade to the final frame where
the rule is about the process); black, white, 1-frame and empty videos score 0 without raising; instances are
deterministic per seed and their state survives a JSON round trip.
"""

from __future__ import annotations

import functools
import importlib
import json

import numpy as np
import pytest

from conftest import by_difficulty
from vreason.synth.base import DIFFICULTIES, FAMILIES, RenderConfig, TaskInstance, instance_seed

NAMES = ("oddoneout", "sequence", "gravity", "sliding")
for _m in NAMES:
    importlib.import_module(f"vreason.synth.families.{_m}.family")

CFG = RenderConfig()
# `make test` runs the first instance of each family at one difficulty drawn by the run's seed (every difficulty
# over runs); `make test-all` runs both instances at every difficulty
CASES = [pytest.param((f, d, i), id=f"{f}-{d}-{i}", marks=by_difficulty(f, d, DIFFICULTIES, salt="gt", slow=bool(i)))
         for f in NAMES for d in DIFFICULTIES for i in range(2)]


@functools.lru_cache(maxsize=4)
def instance(fam: str, diff: str, idx: int) -> TaskInstance:
    seed = instance_seed(20261122, fam, diff, idx)
    return FAMILIES[fam]().make(np.random.default_rng(seed), diff, idx, seed, CFG)


def verify(fam: str, frames: list[np.ndarray], inst: TaskInstance):
    return FAMILIES[fam]().verify(frames, inst.state, CFG)


def _fade(inst: TaskInstance, n: int) -> list[np.ndarray]:
    a = np.clip((np.arange(n) - n // 3) / 6, 0, 1)
    f0, f1 = inst.first_frame.astype(np.float32), inst.final_frame.astype(np.float32)
    return [np.clip(f0 * (1 - x) + f1 * x, 0, 255).astype(np.uint8) for x in a]


def _blocky(rng: np.random.Generator, n: int, block: int = 16) -> list[np.ndarray]:
    h, w = CFG.height, CFG.width
    out = []
    for _ in range(n):
        small = rng.integers(0, 256, (-(-h // block), -(-w // block), 3), dtype=np.uint8)
        out.append(np.ascontiguousarray(small.repeat(block, 0).repeat(block, 1)[:h, :w]))
    return out


@pytest.mark.parametrize("case", CASES)
def test_ground_truth_passes_and_baselines_fail(case):
    fam, diff, idx = case
    inst = instance(*case)
    n = len(inst.solution)
    assert n == CFG.n_frames
    assert np.array_equal(inst.solution[0], inst.first_frame)
    assert np.array_equal(inst.solution[-1], inst.final_frame)

    good = verify(fam, inst.solution, inst)
    assert good.passed, good.evidence
    assert good.score == 1.0

    rng = np.random.default_rng(7)
    bad = {
        "static": [inst.first_frame] * n,
        "noise": [rng.integers(0, 256, inst.first_frame.shape, dtype=np.uint8) for _ in range(n)],
        "blocky noise": _blocky(rng, n),
        "random": FAMILIES[fam]().random_motion(inst, rng, CFG),
    }
    if inst.directional:
        bad["reversed"] = inst.solution[::-1]
    if inst.process_rule:
        bad["cut"] = [inst.first_frame] * (n // 2) + [inst.final_frame] * (n - n // 2)
        bad["fade"] = _fade(inst, n)
    for name, frames in bad.items():
        res = verify(fam, frames, inst)
        assert not res.passed, f"{name} passed: {res.evidence}"
        assert res.score < 1.0
        if name in ("static", "noise", "blocky noise", "reversed"):  # wrong end state: 0 on the scale
            assert res.score == 0.0, (name, res.evidence.get("reason"))
        assert res.evidence.get("reason"), name


@pytest.mark.parametrize("case", CASES)
def test_ground_truth_survives_degradation(case, tmp_path):
    import cv2

    from vreason.frames import read_all, write_video

    fam = case[0]
    inst = instance(*case)
    path = tmp_path / "gt.mp4"
    # both encodings for every (family, difficulty) over the two instances, and both in the default run
    if (DIFFICULTIES.index(case[1]) + case[2]) % 2 == 0:
        write_video(path, inst.solution, CFG.fps, crf=35)
    else:
        write_video(path, inst.solution, CFG.fps, bitrate=300_000)
    frames = read_all(path)
    rng = np.random.default_rng(case[2])
    gain, off = rng.uniform(0.94, 1.06, 3), rng.uniform(-8, 8, 3)
    frames = [cv2.resize(f, (f.shape[1] // 2, f.shape[0] // 2), interpolation=cv2.INTER_AREA) for f in frames]
    frames = [np.clip(f.astype(np.float32) * gain + off, 0, 255).astype(np.uint8) for f in frames]
    res = verify(fam, frames, inst)
    assert res.passed, res.evidence


@pytest.mark.parametrize("fam", NAMES)
def test_degenerate_videos_score_zero(fam):
    inst = instance(fam, "easy", 0)
    h, w = CFG.height, CFG.width
    videos = {
        "black": [np.zeros((h, w, 3), np.uint8)] * 16,
        "white": [np.full((h, w, 3), 255, np.uint8)] * 16,
        "one frame": [inst.solution[-1]],
        "empty": [],
        "tiny black": [np.zeros((5, 7, 3), np.uint8)] * 4,
        "grey single channel": [np.full((h // 3, w // 3), 128, np.uint8)] * 8,
    }
    for name, frames in videos.items():
        res = verify(fam, frames, inst)
        assert res.score == 0.0 and not res.passed, name
        assert res.evidence["reason"], name


@pytest.mark.parametrize("fam", NAMES)
def test_deterministic_per_seed_and_json_state(fam):
    a = instance(fam, "medium", 1)
    seed = instance_seed(20261122, fam, "medium", 1)
    b = FAMILIES[fam]().make(np.random.default_rng(seed), "medium", 1, seed, CFG)
    assert a.prompt == b.prompt and a.state == b.state
    assert all(np.array_equal(x, y) for x, y in zip(a.solution, b.solution, strict=True))
    r1 = FAMILIES[fam]().random_motion(a, np.random.default_rng(3), CFG)
    r2 = FAMILIES[fam]().random_motion(a, np.random.default_rng(3), CFG)
    assert all(np.array_equal(x, y) for x, y in zip(r1, r2, strict=True))
    other = instance_seed(20261122, fam, "medium", 2)
    c = FAMILIES[fam]().make(np.random.default_rng(other), "medium", 2, other, CFG)
    assert c.state != a.state
    state = json.loads(json.dumps(a.state))
    assert FAMILIES[fam]().verify(a.solution, state, CFG).passed
    assert a.directional and FAMILIES[fam].directional
    assert a.process_rule == (fam in ("gravity", "sliding"))


def test_oddoneout_second_box_or_partial_box_fails():
    from vreason.synth.families.oddoneout.family import BOX, _box_rect
    from vreason.synth.shapes import partial_rect

    inst = instance("oddoneout", "medium", 0)
    st = inst.state
    r, c = st["odd"]
    far = inst.final_frame.copy()  # a second box far away: two marks
    partial_rect(far, *_box_rect(st, (r + 2) % st["rows"], (c + 2) % st["cols"]), 1.0, BOX, 4)
    res = verify("oddoneout", [inst.first_frame] * 8 + [far] * 8, inst)
    assert not res.passed and not res.evidence["checks"]["single_box"]
    near = inst.final_frame.copy()  # a second box next to it (may merge into one wide mark)
    partial_rect(near, *_box_rect(st, (r + 1) % st["rows"], c), 1.0, BOX, 4)
    res = verify("oddoneout", [inst.first_frame] * 8 + [near] * 8, inst)
    assert not res.passed
    half = inst.first_frame.copy()
    partial_rect(half, *_box_rect(st, r, c), 0.6, BOX, 4)
    res = verify("oddoneout", [inst.first_frame] * 8 + [half] * 8, inst)
    assert not res.passed and not res.evidence["checks"]["box_shape"]


def test_sequence_half_faded_or_wrong_answer_fails():
    from vreason.synth.families.sequence.family import render_row

    inst = instance("sequence", "hard", 0)
    st = inst.state
    half = render_row(st, CFG, st["answer"], 0.5)
    res = verify("sequence", [inst.first_frame] * 8 + [half] * 8, inst)
    assert not res.passed and not res.evidence["checks"]["right_element"]
    for wrong in st["distractors"]:
        res = verify("sequence", [inst.first_frame] * 8 + [render_row(st, CFG, wrong)] * 8, inst)
        assert not res.passed, wrong


def test_gravity_wrong_physics_fails_named_checks():
    from vreason.synth.families.gravity.family import _render, simulate

    inst = instance("gravity", "medium", 0)
    st = inst.state
    params = {k: st[k] for k in ("start", "v0", "r", "e", "g", "floor_y")}
    low_g, _ = simulate({**params, "g": st["g"] * 0.3}, CFG.n_frames, CFG.fps)
    res = verify("gravity", _render(st, low_g, CFG), inst)
    assert not res.passed and not res.evidence["checks"]["gravity"]
    high_floor, _ = simulate({**params, "floor_y": st["floor_y"] - 60}, CFG.n_frames, CFG.fps)
    res = verify("gravity", _render(st, high_floor, CFG), inst)  # bounces in mid-air: off the trajectory
    assert not res.passed and not (res.evidence["checks"]["gravity"] and res.evidence["checks"]["restitution"])
    cut = [inst.first_frame] * 20 + [inst.final_frame] * 44
    res = verify("gravity", cut, inst)
    assert not res.evidence["checks"]["no_teleport"]
    longer, _ = simulate(params, 81, CFG.fps)  # a 5 s video of the same scene (e.g. an 81-frame model)
    res = verify("gravity", _render(st, longer, CFG), inst)
    assert res.passed, res.evidence
    assert not verify("gravity", _render(st, longer, CFG)[:8] + [inst.final_frame] * 73, inst).passed


def test_sliding_cut_is_a_teleport_and_random_slides_miss_the_target():
    inst = instance("sliding", "easy", 0)
    n = CFG.n_frames
    res = verify("sliding", [inst.first_frame] * (n // 2) + [inst.final_frame] * (n - n // 2), inst)
    assert res.evidence["checks"]["legal_moves"] and res.evidence["checks"]["reaches_target"]
    assert not res.evidence["checks"]["continuous_motion"] and not res.passed
    res = verify("sliding", FAMILIES["sliding"]().random_motion(inst, np.random.default_rng(0), CFG), inst)
    assert not res.evidence["checks"]["reaches_target"]
