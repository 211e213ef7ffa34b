"""TiViBench tracking and elimination checks on rendered videos (graph and match3 instances): the ground
truth passes (also low-bitrate H.264 at half size), and a static clip, the reversed clip, a cut to the end,
a wrong route and a wrong order fail for the named reason."""

import numpy as np
import pytest

from vreason.synth.adversary_honest import cut
from vreason.synth.base import RenderConfig
from vreason.synth.families.graph import family as g
from vreason.synth.families.match3 import family as m
from vreason.synth.suite import make_instance
from vreason.verify.annotations import EliminationParams, GroundingParams, TrackingParams
from vreason.verify.checks import CheckEnv, get_check
from vreason.verify.tracking import uniform_indices

CFG = RenderConfig()


def _run(family, frames, params):
    entry = get_check(family)
    idx = uniform_indices(len(frames), params.n_samples)
    return entry.fn([frames[i] for i in idx], np.zeros(len(idx)), None, params, CheckEnv())


def _small_h264(tmp_path, frames):
    import cv2

    from vreason.frames import read_all, write_video

    path = str(tmp_path / "v.mp4")
    write_video(path, [cv2.resize(f, (320, 180), interpolation=cv2.INTER_AREA) for f in frames], 16.0, crf=35)
    return read_all(path)


def test_uniform_indices_include_both_ends():
    assert uniform_indices(64, 16)[0] == 0 and uniform_indices(64, 16)[-1] == 63
    assert len(uniform_indices(64, 16)) == 16 and uniform_indices(5, 16) == [0, 1, 2, 3, 4]


@pytest.mark.parametrize("difficulty", ["easy", "hard"])
def test_tracking_on_graph_routes(tmp_path, difficulty):
    inst = make_instance("graph", difficulty, 0, 11, CFG)
    p = TrackingParams.model_validate(inst.state["tivibench"]["metric"])
    assert _run("tracking", inst.solution, p).passed is True
    r = _run("tracking", _small_h264(tmp_path, inst.solution), p)
    assert r.passed is True and r.backend == "classical:colour", r.reason
    static = _run("tracking", [inst.first_frame] * 64, p)
    assert static.passed is False and not static.details["checks"]["reached_goal"]
    rev = _run("tracking", inst.solution[::-1], p)
    assert rev.passed is False and not rev.details["checks"]["start"]
    jump = _run("tracking", cut(inst, 64), p)
    assert jump.passed is False and jump.details["checks"] == {**jump.details["checks"], "continuous": False}
    assert jump.details["checks"]["reached_goal"] and jump.details["largest_step"] > 0.9
    st, r0 = inst.state, inst.state["route"]
    straight = _run("tracking", g.render(st, g.walk(st, [r0[0], r0[-1]], 64)), p)
    assert straight.passed is False and not straight.details["checks"]["on_path"]


def test_tracking_walls_and_missing_colour():
    inst = make_instance("graph", "medium", 0, 11, CFG)
    p = TrackingParams.model_validate(inst.state["tivibench"]["metric"])
    wall = p.walls[0]
    parked = (((wall.x0 + wall.x1) / 2) * 640, ((wall.y0 + wall.y1) / 2) * 360)
    frames = g.render(inst.state, [parked] * 64)
    r = _run("tracking", frames, p)
    assert r.passed is False and not r.details["checks"]["no_walls"]
    nocolour = TrackingParams(label="robot", waypoints=p.waypoints)
    assert _run("tracking", inst.solution, nocolour).passed is None


@pytest.mark.parametrize("difficulty", ["medium", "hard"])
def test_elimination_on_match3_boards(tmp_path, difficulty):
    inst = make_instance("match3", difficulty, 0, 3, CFG)
    st = inst.state
    p = EliminationParams.model_validate(st["tivibench"]["metric"])
    assert _run("elimination", inst.solution, p).passed is True
    r = _run("elimination", _small_h264(tmp_path, inst.solution), p)
    assert r.passed is True, r.details
    assert r.details["observed_order"] == st["order"]
    swapped = list(st["order"])
    swapped[0], swapped[1] = swapped[1], swapped[0]
    wrong = _run("elimination", m.render(st, m.clearing(st, swapped, 64)), p)
    assert wrong.passed is False and wrong.details["checks"]["order"] is False
    assert wrong.details["observed_order"] == swapped
    jump = _run("elimination", cut(inst, 64), p)
    assert jump.passed is False and jump.details["checks"]["order"] is False and jump.details["checks"]["eliminated"]
    rev = _run("elimination", inst.solution[::-1], p)
    assert rev.passed is False and not rev.details["checks"]["all_present_at_start"]
    static = _run("elimination", [inst.first_frame] * 64, p)
    assert static.passed is False and not static.details["checks"]["eliminated"]


def test_elimination_keeps_unlisted_objects_and_rejects_bad_order():
    inst = make_instance("match3", "easy", 0, 3, CFG)
    st = inst.state
    p = EliminationParams.model_validate(st["tivibench"]["metric"])
    sizes = np.array(m.clearing(st, st["order"], 64))
    sizes[40:, len(st["lines"]):] = 0.0  # the single tiles vanish too
    r = _run("elimination", m.render(st, sizes.tolist()), p)
    assert r.passed is False and r.details["checks"]["kept"] is False and r.details["checks"]["order"]
    bad = EliminationParams(objects=[GroundingParams(label="x", expected_count=1)], order=[0, 3])
    assert _run("elimination", inst.solution, bad).passed is None
