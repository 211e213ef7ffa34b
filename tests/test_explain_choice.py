"""Issue 24: choice's scene — the ring along each option's outline is free only to the outline's colours (a box
redrawn in red in any width, fading in), not to anything else landing there."""

from __future__ import annotations

import numpy as np

from vreason.synth.base import RenderConfig, frame_times
from vreason.synth.families.choice.family import outline_colours
from vreason.synth.suite import get_family, make_instance

CFG = RenderConfig()


def test_outline_colours():
    ok = [(255, 255, 255), (150, 150, 150), (230, 30, 30), (200, 150, 150), (190, 90, 90), (124, 124, 124),
          (157, 60, 54)]  # the last: H.264's luma undershoot beside the red line
    bad = [(25, 25, 25), (60, 60, 60), (30, 60, 170), (0, 0, 255), (40, 160, 40)]
    got = outline_colours(np.array(ok + bad, np.uint8))
    assert got[:len(ok)].all() and not got[len(ok):].any(), got


def _explain(inst, frames):
    return get_family("choice").explain(frames, frame_times(len(frames), CFG, None), inst.state, CFG)


def test_a_title_glyph_copied_onto_an_outline_is_not_explained():
    """The clone of VREASON_ADV_SEED=716559779 (suite seed 5, medium): the 9×11 glyph at [358, 22] copied by
    [190, 231] lands on option C's bottom edge, inside the ring (it was explained while the ring was free)."""
    inst = make_instance("choice", "medium", 0, 5, CFG)
    frames = [f.copy() for f in inst.solution]
    x0, y0, x1, y1, dx, dy = 358, 22, 367, 33, 190, 231
    for f in frames[41:]:
        f[y0 + dy:y1 + dy, x0 + dx:x1 + dx] = inst.first_frame[y0:y1, x0:x1]
    assert _explain(inst, inst.solution).ok
    assert not _explain(inst, frames).ok
