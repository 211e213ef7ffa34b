"""RISE frame strategies: indices against the released code's formulas."""

from __future__ import annotations

import math

import numpy as np
import pytest

from vreason.core.records import Sample
from vreason.frames import policy
from vreason.protocols.rise.scorers import TC_POLICY, VQ_POLICY, pr_policy, ra_policy


def _s(extra, reverse=False, cat="commonsense"):
    return Sample(id="x_1", benchmark="rise", category=cat, metadata={"extra_frame": extra, "reverse": reverse})


@pytest.mark.parametrize("t,fps,f", [(120, 24.0, 2), (81, 16.0, 2), (49, 8.0, 2), (150, 30.0, 1), (10, 24.0, 2)])
def test_ra_fps_mode(t, fps, f):
    interval = int(fps // f)  # the official: interval = int(video_fps // fps)
    want = [int(v) for v in np.linspace(0, t - 1, math.ceil(t / max(1, interval)))]
    spec = ra_policy(_s(f))
    assert spec == f"fps:{f}+linspace"
    assert policy(spec).indices(t, fps) == want


@pytest.mark.parametrize("t", [20, 81, 121])
def test_ra_tail_mode(t):
    idx = policy(ra_policy(_s(-1))).indices(t, 16.0)
    assert len(idx) == 3 and idx[-1] == t - 1
    assert all(i >= math.floor(0.6 * t) for i in idx) and idx == sorted(set(idx))


@pytest.mark.parametrize("extra", ["maze", "sym", "gt"])
def test_ra_last_frame(extra):
    assert policy(ra_policy(_s(extra))).indices(57, 16.0) == [56]


@pytest.mark.parametrize("t", [8, 16, 49, 121])
def test_tc_pr_vq(t):
    tc = sorted(set(int(v) for v in np.round(np.linspace(0, t - 1, 16))))
    assert policy(TC_POLICY).indices(t, 16.0) == tc
    pr = [int(v) for v in np.linspace(0, t - 1, min(16, t), dtype=int)]
    assert policy(pr_policy(_s(2))).indices(t, 16.0) == pr
    assert policy(pr_policy(_s(2, reverse=True))).indices(t, 16.0) == pr[::-1]
    vq = [int(v) for v in np.linspace(0, t - 1, 6).astype(int)][1:-1]
    assert policy(VQ_POLICY).indices(t, 16.0) == vq and len(vq) == 4
