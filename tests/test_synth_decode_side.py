"""The scorer's decode size (issue 24): the picture a frame holds comes out at the family's share of the render,
whatever letterbox surrounds it."""

from __future__ import annotations

import pytest

from vreason.synth.scorer import decode_side

RENDER = (640, 360)


@pytest.mark.parametrize("frame,scale", [((640, 360), 0.5), ((1280, 720), 0.5), ((320, 180), 0.5),
                                         ((640, 360), 1.0), ((1920, 1080), 1.0), ((640, 480), 0.5),
                                         ((640, 640), 0.5), ((640, 1138), 1.0), ((860, 360), 0.5),
                                         ((1720, 720), 0.5), ((840, 360), 1.0)])
def test_a_picture_at_a_modelled_softness_decodes_as_before(frame, scale):
    # the frame's longer side at the family's share of the render's longer side, when the picture it holds comes
    # out at >= MIN_PICTURE of the render (a 9:16 frame at full scale: 0.56; a 2.39:1 frame at 0.5: 0.37)
    assert decode_side(frame, RENDER, scale) == round(640 * scale)


@pytest.mark.parametrize("frame,scale", [((640, 1138), 0.5), ((1280, 2276), 0.5), ((720, 1280), 0.5),
                                         ((640, 1600), 0.75)])
def test_a_picture_decoded_too_soft_comes_out_at_the_familys_share(frame, scale):
    fw, fh = frame
    side = decode_side(frame, RENDER, scale)
    k = side / max(fw, fh)  # the decode keeps the frame's aspect
    picture_w = k * min(fw / RENDER[0], fh / RENDER[1]) * RENDER[0]
    assert picture_w == pytest.approx(RENDER[0] * scale, abs=2)
    assert side <= max(fw, fh)  # never above the frame's own size


def test_a_frame_whose_picture_is_below_the_share_is_decoded_whole():
    # 200×356 holds a 200×112 picture (0.31 of the render): decoded at its own size, never less than the old cap
    assert decode_side((200, 356), RENDER, 0.5) == 356
    assert decode_side((200, 356), RENDER, 0.5) > round(640 * 0.5)
    assert decode_side((0, 0), RENDER, 0.5) == 320  # no size probed: the old cap
