"""PAI-Bench-G formulas against hand-computed values, the yes/no rule, and validity on real frame streams."""

from __future__ import annotations

import numpy as np
import pytest

from _pai_gu_fixtures import square_frames
from vreason.protocols.pai.g import quality as q
from vreason.protocols.pai.g.protocol import official_correct, reply_parser


def _unit(v):
    v = np.asarray(v, float)
    return v / np.linalg.norm(v)


def test_consistency_hand_values():
    f0, f1, f2 = _unit([1, 0]), _unit([1, 1]), _unit([0, 1])
    c = 1 / np.sqrt(2)
    # t=1: ½(<f0,f1> + <f0,f1>) = c; t=2: ½(<f0,f2> + <f1,f2>) = ½(0 + c)
    assert q.consistency(np.stack([f0, f1, f2])) == pytest.approx((c + c / 2) / 2)
    assert q.consistency(np.stack([f0, f0, f0, f0])) == pytest.approx(1.0)
    assert q.consistency(np.stack([f0])) is None  # a single frame has no pair


def test_consistency_clamp_released_vs_paper():
    f0, f1 = _unit([1, 0]), _unit([-1, 0])
    feats = np.stack([f0, f1])
    assert q.consistency(feats, "released") == 0.0  # max(0, cos) as VBench
    assert q.consistency(feats, "paper") == pytest.approx(-1.0)


def test_consistency_streamed_in_batches_equals_one_shot():
    rng = np.random.default_rng(0)
    feats = rng.normal(size=(23, 8))
    acc = q.ConsistencyAcc()
    for k in range(0, 23, 5):
        acc.add(feats[k:k + 5])
    assert acc.result() == pytest.approx(q.consistency(feats))


def test_i2v_released_and_paper_formulas():
    img = _unit([1, 0])
    f = np.stack([_unit([1, 0]), _unit([1, 1]), _unit([0, 1])])
    c = 1 / np.sqrt(2)
    # released: 0.4 max(conf) + 0.3 mean(consec) + 0.3 min(consec); conf = [1, c, 0], consec = [c, c]
    assert q.i2v_consistency(img, f, "released") == pytest.approx(0.4 * 1 + 0.3 * c + 0.3 * c)
    # paper (5): mean over t>=1 of ½(<img,f_t> + <f_{t-1},f_t>) = ½[½(c + c) + ½(0 + c)]
    assert q.i2v_consistency(img, f, "paper") == pytest.approx(0.5 * (c + 0.5 * c))


def test_smoothness_linear_ramp_is_one_and_hand_mae():
    ramp = [np.full((4, 4, 3), 10 * i, np.uint8) for i in range(9)]
    assert q.motion_smoothness(ramp) == pytest.approx(1.0)
    jumpy = [np.full((2, 2, 3), v, np.uint8) for v in (0, 30, 0, 0, 0)]
    # odd frames: f1 = 30 vs (0+0)/2 = 0 → MAE 30; f3 = 0 vs 0 → 0; score = 1 - 15/255
    assert q.motion_smoothness(jumpy) == pytest.approx(1 - 15 / 255)
    # a trailing odd frame without a right neighbour is not used
    assert q.motion_smoothness(ramp[:2]) is None and q.motion_smoothness(ramp[:3]) == pytest.approx(1.0)


def test_yes_no_official_rule_and_traps():
    assert official_correct("Yes.", "Yes") and official_correct("NO", "No")
    assert not official_correct("Yes, no doubt", "Yes")  # contains both → wrong for either answer
    assert not official_correct("yes, no", "No")
    assert not official_correct("Yes, it does not fall", "Yes")  # "not" contains "no": the released trap
    assert official_correct("eyes open", "Yes")  # substring, as released
    parse = reply_parser("Yes")
    assert parse("YES") is True and parse("Yes, no") is False
    from vreason.judge.parsers import ParseFailure

    assert parse("I cannot tell") is False  # "cannot" holds "no": parsed, and wrong for a yes, as released
    with pytest.raises(ParseFailure):
        parse("Maybe.")


def test_yes_no_word_rule_is_stricter():
    from vreason.judge.parsers import ParseFailure

    parse = reply_parser("Yes", "word")
    assert parse("Yes, it does not fall") is True  # whole words: "not" is not "no"
    with pytest.raises(ParseFailure):
        parse("yes, no")


def _hog_features(frames):
    from vreason.measure.spec import make_embedder

    return make_embedder("classical:hog-hsv").embed(frames)


def test_validity_shuffled_and_noise_score_lower():
    frames = square_frames(n=16, step=3)
    rng = np.random.default_rng(1)
    shuffled = [frames[i] for i in rng.permutation(len(frames))]
    noise = [rng.integers(0, 256, frames[0].shape, dtype=np.uint8) for _ in frames]
    s_orig, s_shuf, s_noise = (q.motion_smoothness(v) for v in (frames, shuffled, noise))
    assert s_orig > s_shuf > s_noise
    assert s_noise < 0.8 and s_orig > 0.97
    c_orig, c_shuf = q.consistency(_hog_features(frames)), q.consistency(_hog_features(shuffled))
    c_noise = q.consistency(_hog_features(noise))
    assert c_orig > c_shuf and c_orig > c_noise
    static = [frames[0]] * 8  # a still video: perfectly consistent and smooth (the metric's known blind spot)
    assert q.consistency(_hog_features(static)) == pytest.approx(1.0, abs=1e-6)
