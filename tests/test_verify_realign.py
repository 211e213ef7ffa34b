"""Re-aligning a frame the interpolated camera does not explain (``vreason.verify.explain``, issue 24/26): the
interpolated camera plus the phase-correlation shift is tried first (one warp and one FFT), the ECC search of
``verify.relative.relative`` only when that does not explain the frame. The scene, the oracle and the cameras are
``test_verify_explain``'s; parameters are drawn from ``VREASON_ADV_SEED`` when set."""

from __future__ import annotations

import os

import numpy as np
import pytest

from conftest import one_case
from test_verify_explain import N, camera, oracle, rng, run, scene, shaken
from vreason.verify.explain import box_mask


@pytest.mark.parametrize("draw", one_case(range(2), "turning-shake"))
def test_a_shaken_turning_camera_is_explained_and_a_mark_under_the_shake_is_not(draw):
    """A random shake on top of a constant rotation and a slow zoom (each frame re-aligned from the interpolated
    camera plus the phase-correlation shift, ECC only when that fails); the same video with a mark from a random
    frame on is unexplained from that frame, never before: the shake absorbs the camera, not the mark. The final
    picture is given, as every family's scene gives it: without it the last frame's camera is estimated over the
    answer box too, and a 1.4% zoom came out a plain shift (seed 841771853: the wiped-in answer pulled ECC, and
    the re-alignment then missed frame 23's shake: 286 px unexplained)."""
    import cv2

    r = rng(70 + draw)
    start, final, box = scene(r)
    rot, zoom = float(r.uniform(-1.5, 1.5)), float(r.uniform(0.0, 0.04))
    frames = oracle(start, final, box)
    ex = run(shaken(camera(frames, rot, zoom, 0.0, r), r), start, box, final=final)
    assert ex.ok, ex.as_json()
    free = box_mask(start.shape[:2], [box], pad=40)
    while True:
        x, y, s = int(r.integers(60, 560)), int(r.integers(60, 280)), int(r.integers(10, 24))
        if not free[y:y + s, x:x + s].any():
            break
    k = int(r.integers(N // 4, N - 4))
    colour = tuple(int(v) for v in r.integers(0, 120, 3))  # dark on the light page: always above the floor
    for i in range(k, N):
        frames[i] = frames[i].copy()
        cv2.rectangle(frames[i], (x, y), (x + s, y + s), colour, -1)
    ex = run(shaken(camera(frames, rot, zoom, 0.0, r), r), start, box, final=final)
    assert not ex.ok
    assert ex.unexplained[0].index >= k - 1


def test_the_shift_on_top_of_the_interpolated_camera_is_measured():
    """``video_camera.shifted``: a frame moved by a sub-pixel shift on top of a turned camera gives that camera plus
    the shift (within 0.25 px at every corner: phase correlation's sub-pixel peak, 0.12 px measured). Whether a
    shift explains a frame is the residual's call, not the shift's: a frame of another picture can correlate
    anywhere (seed 461080297: 0.98 px from this one), and the test above keeps a mark unexplained under it."""
    import cv2

    from vreason.verify.video_camera import moved_px, shifted

    r = rng(80)
    start, _, _ = scene(r)
    grey = cv2.cvtColor(start, cv2.COLOR_RGB2GRAY).astype(np.float32)
    h, w = grey.shape
    init = cv2.getRotationMatrix2D((w / 2, h / 2), float(r.uniform(-2, 2)), float(r.uniform(0.97, 1.03)))
    dx, dy = (float(v) for v in r.uniform(-2.5, 2.5, 2))
    want = init.copy()
    want[:, 2] += (dx, dy)  # frame → first frame: the camera, then the shake
    frame = cv2.warpAffine(grey, want, (w, h), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                           borderMode=cv2.BORDER_REPLICATE)
    got = shifted(frame, grey, init)
    assert got is not None and moved_px(got, want, (w, h)) < 0.25, (got, want)


def test_the_last_frame_found_against_the_final_picture_when_no_camera_follows_the_first(monkeypatch):
    """``explain_video``'s fallback: when the frame-to-frame search finds no camera for the last frame against
    the first (None: no candidate plausible), the last frame is searched against the final picture and that
    camera, scored over the still pixels, is the end of the interpolation. Forced here (the search patched to
    find nothing once, for the last frame alone), on a slow zoom: the video is explained, the fallback ran, and
    no frame needed re-aligning on its own."""
    import vreason.verify.explain as ex_mod

    r = rng(90)
    start, final, box = scene(r)
    zoom = float(r.choice([-1, 1]) * r.uniform(0.02, 0.04))
    frames = camera(oracle(start, final, box), 0.0, zoom, 0.0, r)
    real = ex_mod.against_first
    calls: list[bool] = []

    def first_finds_nothing(frame, first_grey, init=None, mask=None, extra=()):  # noqa: ANN001, ANN202
        calls.append(bool(extra))
        if len(calls) == 1:  # the last frame against the first, before any fallback
            assert init is None and not extra
            return None
        return real(frame, first_grey, init, mask, extra)

    monkeypatch.setattr(ex_mod, "against_first", first_finds_nothing)
    ex = run(frames, start, box, final=final)
    assert ex.ok, ex.as_json()
    assert len(calls) >= 2 and calls[1], "the fallback searched the last frame against the final picture"
    assert not any(f.realigned for f in ex.frames), [f.index for f in ex.frames if f.realigned]


def test_no_move_stays_a_candidate_when_a_copy_appears_on_a_blank_page():
    """A red square on a blank page, then a copy of it beside it: no camera moved. ECC, pulled by the copy, could
    converge to a 0.7% zoom that costs more over the page than no move at all (4 of 200 such scenes before; the
    CI's VREASON_ADV_SEED=21863604 drew one: the camera interpolated towards that zoom left a 40-px row of the
    sliding square unexplained 19 frames before the copy). The camera found is no move (or none)."""
    import cv2

    from vreason.verify.relative import relative
    from vreason.verify.video_camera import IDENT, grey, moved_px

    r = rng(31)
    n = 200 if os.environ.get("VREASON_ADV_FULL") else 20  # fresh scenes each run; `make test-all` 200
    cases = [(40, 162, 62, 452)] + [(int(r.integers(24, 48)), int(r.integers(60, 250)), int(r.integers(40, 120)),
                                     int(r.integers(360, 520))) for _ in range(n)]
    for side, y, x0, x1 in cases:
        page = np.full((360, 640, 3), 245, np.uint8)
        cv2.rectangle(page, (x0, y), (x0 + side - 1, y + side - 1), (220, 30, 30), -1)
        copied = page.copy()
        cv2.rectangle(copied, (x1, y), (x1 + side - 1, y + side - 1), (220, 30, 30), -1)
        got = relative(grey(copied), grey(page))
        assert got is None or moved_px(got, IDENT, (640, 360)) <= 0.5, (side, y, x0, x1, got)
