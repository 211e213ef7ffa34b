import math

import numpy as np
import pytest

from vreason.core.errors import ConfigError
from vreason.frames.policy import PRESETS, FramePolicy, policy


def test_uniform_matches_linspace_floor():
    assert policy("uniform:16").indices(100) == [int(v) for v in np.linspace(0, 99, 16)]
    assert policy("uniform:16+round").indices(100) == [int(v) for v in np.round(np.linspace(0, 99, 16))]


def test_uniform_fewer_frames_than_n():
    assert policy("uniform:16").indices(5) == [0, 1, 2, 3, 4]  # min(N, T), as RISE PR
    assert len(policy("uniform:16+nocap").indices(5)) == 16


def test_one_frame_video_every_policy():
    for spec in ["uniform:16", "fps:2", "fps:2+linspace", "fps:2+qwen", "every:10", "last", "first",
                 "last_fraction:3/0.4", "all", "uniform:6+drop_ends", "indices:0,5,9"]:
        assert policy(spec).indices(1, 24.0) == [0], spec


def test_zero_frames_is_a_clear_error():
    for spec in ["uniform:16", "last", "fps:2"]:
        with pytest.raises(ValueError, match="no frames"):
            policy(spec).indices(0, 24.0)


def test_fps_stride_with_non_integer_fps():
    # every int(29.97 // 2) = 14th frame from 0 (RULER's rule)
    assert policy("fps:2").indices(60, 29.97) == list(range(0, 60, 14))
    # RISE: linspace(0, T-1, ceil(T / interval))
    t, interval = 121, int(24 // 2)
    assert policy("fps:2+linspace").indices(t, 24.0) == [int(v) for v in np.linspace(0, t - 1, math.ceil(t / interval))]
    with pytest.raises(ValueError, match="fps"):
        policy("fps:2").indices(10, None)
    # target fps above the video's: every frame
    assert policy("fps:30").indices(5, 8.0) == [0, 1, 2, 3, 4]


def test_qwen_count_is_even_and_bounded():
    idx = policy("fps:2+qwen").indices(121, 24.0)  # 121/24*2 ≈ 10.08 → 10
    assert len(idx) == 10 and idx[0] == 0 and idx[-1] == 120


def test_rise_tail_and_vq():
    assert policy("last_fraction:3/0.4").indices(100) == [60, 79, 99]
    assert policy("rise.vq").indices(100) == [int(v) for v in np.linspace(0, 99, 6)][1:-1]
    assert policy("last").indices(81) == [80]


def test_every_and_reverse_and_max_frames():
    assert policy("every:10").indices(35) == [0, 10, 20, 30]
    assert policy("uniform:4+reverse").indices(10) == [9, 6, 3, 0]
    assert len(policy("all+max_frames=8").indices(100)) == 8


def test_drop_ends_never_empties():
    assert policy("uniform:6+drop_ends").indices(2) == [0] or policy("uniform:6+drop_ends").indices(2) == [1]
    assert policy("last+drop_first").indices(10) == [9]


def test_names_round_trip_and_presets_parse():
    for spec in ["uniform:16", "fps:2+linspace", "fps:0.5", "last_fraction:3/0.4", "every:10+reverse",
                 "uniform:6+drop_ends+max_side=512", "indices:1,2,3", "all+dedupe+max_frames=4", "fps:2+qwen"]:
        p = FramePolicy.parse(spec)
        assert FramePolicy.parse(p.name) == p
        assert p.name == spec
    for name in PRESETS:
        assert policy(name).name == FramePolicy.parse(PRESETS[name]).name


@pytest.mark.parametrize("bad", ["", "uniform", "uniform:0", "fps:-1", "every:x", "nope:3", "last:3",
                                 "uniform:4+bogus", "last_fraction:3/1.5"])
def test_bad_specs(bad):
    with pytest.raises(ConfigError):
        FramePolicy.parse(bad)


def test_unknown_kind_lists_the_kinds_and_presets():
    from vreason.frames.policy import KINDS

    with pytest.raises(ConfigError) as exc:
        policy("unifrom:8")
    msg = str(exc.value)
    assert "unknown kind 'unifrom'" in msg
    for kind in KINDS:
        assert kind in msg
    assert "rise.tc" in msg  # presets are named too
    assert set(KINDS) == {"uniform", "fps", "every", "last", "first", "last_fraction", "all", "indices"}


@pytest.mark.parametrize("spec,need", [("last", 1), ("first", 1), ("uniform:1", 1), ("indices:4", 1),
                                       ("uniform:16", 2), ("fps:2", 2), ("every:10", 2), ("all", 2),
                                       ("last_fraction:3/0.4", 2), ("indices:0,5", 2), ("rise.vq", 3),
                                       ("uniform:8+drop_first", 2), ("last+drop_ends", 3)])
def test_min_frames(spec, need):
    assert policy(spec).min_frames == need
