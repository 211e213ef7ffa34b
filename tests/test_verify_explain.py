"""Every frame explained (``vreason.verify.explain``, issue 24): a random scene (shapes and text on paper) whose
"answer" appears inside a free box, encoded with H.264 as a model's video arrives. Honest cameras (letterbox of
a random colour; constant rotation ≤ 2°, slow zoom ≤ 5%, exposure flicker ≤ 3% in the slow test: a known gap
on some draws) are explained; a mark of a
random colour, opacity and size outside the free box from a random frame on, one inserted blank frame, a copy
of an object shown for one frame, a start from the final picture and a mirrored video are not, at the frame
where they happen. Parameters are drawn from ``VREASON_ADV_SEED`` when set (printed by the test session)."""

from __future__ import annotations

import os
import tempfile

import numpy as np
import pytest

from conftest import one_case
from vreason.synth import frametools as ft
from vreason.synth.base import RenderConfig
from vreason.verify.explain import box_mask, changed_box, explain_video, unchanged

SEED = int(os.environ.get("VREASON_ADV_SEED", "20261127"))
CFG = RenderConfig()
N = 40


def rng(salt: int) -> np.random.Generator:
    return np.random.default_rng([SEED, salt])


def scene(r: np.random.Generator) -> tuple[np.ndarray, np.ndarray, tuple[int, int, int, int]]:
    """(start, final, free box): shapes and text on a light page; the final adds an answer in the free box."""
    import cv2

    h, w = CFG.height, CFG.width
    paper = tuple(int(v) for v in r.integers(225, 252, 3))
    img = np.zeros((h, w, 3), np.uint8)
    img[:] = paper
    for _ in range(int(r.integers(5, 10))):
        colour = tuple(int(v) for v in r.integers(0, 200, 3))
        x, y = int(r.integers(40, 380)), int(r.integers(40, 320))
        if r.random() < 0.5:
            cv2.rectangle(img, (x, y), (x + int(r.integers(15, 60)), y + int(r.integers(15, 60))), colour, -1)
        else:
            cv2.circle(img, (x, y), int(r.integers(8, 28)), colour, -1, cv2.LINE_AA)
    cv2.putText(img, f"Q{int(r.integers(10, 99))} = ?", (40, 30), cv2.FONT_HERSHEY_SIMPLEX, 0.8, (20, 20, 30), 2,
                cv2.LINE_AA)
    box = (450, 120, 600, 240)
    final = img.copy()
    cv2.putText(final, str(int(r.integers(10, 99))), (470, 200), cv2.FONT_HERSHEY_SIMPLEX, 2.0, (30, 40, 150), 4,
                cv2.LINE_AA)
    return img, final, box


def oracle(start: np.ndarray, final: np.ndarray, box) -> list[np.ndarray]:
    """The answer wiped in from left to right over the middle of the video, then held."""
    x0, y0, x1, y1 = box
    out = []
    for i in range(N):
        u = np.clip((i / (N - 1) - 0.25) / 0.5, 0, 1)
        f = start.copy()
        xe = int(x0 + u * (x1 - x0))
        f[y0:y1, x0:xe] = final[y0:y1, x0:xe]
        out.append(f)
    return out


def h264(frames: list[np.ndarray], max_side: int | None = None) -> list[np.ndarray]:
    """The frames through H.264, decoded whole or (``max_side``) as the scorer decodes: longer side at most that."""
    from vreason.frames import decode_pass, write_video
    from vreason.frames.video import iter_frames

    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "clip.mp4")
        write_video(path, [np.ascontiguousarray(f) for f in frames], fps=16)
        if max_side:
            return [np.asarray(f) for f in decode_pass(path, None, max_side=max_side, mode="strict", fps=16).frames]
        return list(iter_frames(path))


def run(frames: list[np.ndarray], start: np.ndarray, box, max_side: int | None = None,
        final: np.ndarray | None = None):
    """``final``: the expected final picture, as every family's scene gives it (the camera is then estimated
    over the pixels the task never changes); None: over the whole picture, the answer box included."""
    frames, err = ft.prepare(h264(frames, max_side), CFG)
    assert err is None
    free = box_mask(start.shape[:2], [box], pad=6)
    return explain_video(frames, np.arange(len(frames)) / 16, start, lambda i, f: (start, free), final=final)


def camera(frames: list[np.ndarray], rot: float, zoom: float, flicker: float, r: np.random.Generator):
    import cv2

    h, w = frames[0].shape[:2]
    out = []
    for i, f in enumerate(frames):
        z = 1 + zoom * i / (len(frames) - 1)
        m = cv2.getRotationMatrix2D((w / 2, h / 2), rot, z)
        g = cv2.warpAffine(f, m, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        k = 1 + flicker * float(r.uniform(-1, 1))
        out.append(np.clip(g.astype(np.float32) * k, 0, 255).astype(np.uint8))
    return out


def letterbox(frames: list[np.ndarray], colour, pad: int) -> list[np.ndarray]:
    out = []
    for f in frames:
        g = np.zeros((f.shape[0] + 2 * pad, f.shape[1], 3), np.uint8)
        g[:] = colour
        g[pad:pad + f.shape[0]] = f
        out.append(g)
    return out


def ruled(img: np.ndarray, r: np.random.Generator) -> None:
    """A ruled 8×8 table of 1-px lines, every fourth 3 px (a Sudoku-like grid), drawn on ``img`` left of the box."""
    import cv2

    x0, y0, cell = int(r.integers(30, 60)), int(r.integers(60, 90)), int(r.integers(24, 34))
    ink, end = (20, 20, 30), 8 * cell
    for i in range(9):
        t, at = (3 if i % 4 == 0 else 1), i * cell
        cv2.rectangle(img, (x0 + at - t // 2, y0), (x0 + at + (t - 1) // 2, y0 + end), ink, -1)
        cv2.rectangle(img, (x0, y0 + at - t // 2), (x0 + end, y0 + at + (t - 1) // 2), ink, -1)


def portrait(frames: list[np.ndarray], colour) -> list[np.ndarray]:
    """The picture in a 9:16 portrait frame (bars above and below), as a phone shows a landscape video."""
    h, w = frames[0].shape[:2]
    big = int(round(w * 16 / 9)) // 2 * 2
    top = (big - h) // 2
    out = []
    for f in frames:
        g = np.empty((big, w, 3), np.uint8)
        g[:] = colour
        g[top:top + h] = f
        out.append(g)
    return out


@pytest.mark.parametrize("draw", one_case(range(2), "portrait"))
def test_a_portrait_frame_decoded_small_is_explained_and_a_mark_in_it_is_not(draw):
    """A 9:16 frame decoded at 360×640 holds the picture in 202.5 rows; the letterbox crop keeps whole rows (204),
    so the picture enlarged back is scaled 0.7% more in y than in x, and it is softer than the rendering (gain
    0.81 against the sharp 3-px lines). The first frame's camera may stretch its axes (``align(stretch=True)``)
    and its exposure is fitted against the softened rendering; a ruled table's 1-px lines were 298–415 px
    unexplained before (1 draw in 4). A mark of 20×14 px still is, from its frame."""
    import cv2

    r = rng(40 + draw)
    start, _, box = scene(r)
    ruled(start, r)
    final = start.copy()
    cv2.putText(final, str(int(r.integers(10, 99))), (470, 200), cv2.FONT_HERSHEY_SIMPLEX, 2.0, (30, 40, 150), 4,
                cv2.LINE_AA)
    frames = oracle(start, final, box)
    colour = [int(v) for v in r.integers(0, 256, 3)]
    ex = run(portrait(frames, colour), start, box, max_side=640)
    assert ex.ok, (colour, ex.as_json())
    at = int(r.integers(N // 2, N - 4))
    ink = tuple(int(v) for v in r.integers(0, 120, 3))  # dark, on the empty page below the free box
    marked = [f.copy() for f in frames]
    for f in marked[at:]:
        cv2.rectangle(f, (480, 290), (499, 303), ink, -1)
    ex = run(portrait(marked, colour), start, box, max_side=640)
    assert not ex.ok and ex.unexplained[0].index == at, (at, ink, ex.as_json())


@pytest.mark.parametrize("draw", range(3))
def test_the_oracle_and_honest_cameras_are_explained(draw):
    r = rng(10 + draw)
    start, final, box = scene(r)
    frames = oracle(start, final, box)
    ex = run(frames, start, box)
    assert ex.ok, ex.as_json()
    assert ex.full_checks < len(frames), "frames that did not change since an explained frame are not re-checked"
    colour = [int(v) for v in r.integers(0, 256, 3)]
    ex = run(letterbox(frames, colour, int(r.integers(20, 80))), start, box)
    assert ex.ok, (colour, ex.as_json())


@pytest.mark.slow
@pytest.mark.parametrize("draw", range(3))
def test_a_moving_camera_is_explained(draw):
    """A rotation + slow zoom + flicker of the whole video. Once a known gap (seed 2457327549, draws 0 and 2:
    a 34–55-px blob against the first frame at the thin title text); passed on 10 seeds × 3 draws with and
    without the final picture in the fifteenth session (the later sessions' relative camera and re-alignment).
    Runs in ``make test-all``: in ``make test`` the principle matrix's honest rotate, zoom and flicker kinds
    cover every family (``tests/test_synth_principles.py``)."""
    r = rng(10 + draw)
    start, final, box = scene(r)
    frames = oracle(start, final, box)
    rot, zoom, flick = float(r.uniform(-2, 2)), float(r.uniform(-0.05, 0.05)), float(r.uniform(0.01, 0.03))
    ex = run(camera(frames, rot, zoom, flick, r), start, box)
    assert ex.ok, (rot, zoom, flick, ex.as_json())


@pytest.mark.parametrize("draw", range(4))
def test_a_mark_outside_the_free_box_is_unexplained_from_its_frame(draw):
    import cv2

    r = rng(20 + draw)
    start, final, box = scene(r)
    frames = oracle(start, final, box)
    free = box_mask(start.shape[:2], [box], pad=20)
    while True:  # a place outside the free box
        x, y, s = int(r.integers(10, 600)), int(r.integers(10, 330)), int(r.integers(8, 30))
        if not free[y:y + s, x:x + s].any():
            break
    colour = tuple(int(v) for v in r.integers(0, 256, 3))
    opacity = float(r.uniform(0.4, 1.0))
    k = int(r.integers(N // 4, N - 2))
    for i in range(k, N):
        layer = frames[i].copy()
        cv2.rectangle(layer, (x, y), (x + s, y + s), colour, int(r.integers(1, 4)) if r.random() < 0.5 else -1)
        frames[i] = cv2.addWeighted(layer, opacity, frames[i], 1 - opacity, 0)
    before = frames[k - 1]
    if unchanged(frames[k], before)[0]:
        pytest.skip("the drawn mark is below the residual's detection floor (a faint colour on a like background)")
    ex = run(frames, start, box)
    assert not ex.ok
    assert ex.unexplained[0].index >= k - 1  # never blamed before it appears (one frame of codec smear)


def test_one_blank_frame_a_one_frame_copy_a_start_from_the_end_and_a_mirror_are_unexplained():
    r = rng(30)
    start, final, box = scene(r)
    frames = oracle(start, final, box)
    k = int(r.integers(5, N - 5))
    blank = list(frames)
    blank[k] = np.full_like(frames[k], int(r.integers(0, 256)))
    ex = run(blank, start, box)
    assert not ex.ok and ex.unexplained[0].index == k
    copy = list(frames)
    x0, y0, x1, y1 = changed_box(start, np.full_like(start, start[0, 0]), level=30)
    patch = start[y0:y0 + 40, x0:x0 + 40]
    g = copy[k].copy()
    g[y0 + 60:y0 + 100, x0 + 60:x0 + 100] = patch
    copy[k] = g
    ex = run(copy, start, box)
    assert not ex.ok and ex.unexplained[0].index == k
    ex = run([final] * 4 + frames[4:], start, box)
    assert not ex.ok and "first frame" in ex.reason
    ex = run([f[:, ::-1] for f in frames], start, box)
    assert not ex.ok and "first frame" in ex.reason


def test_unchanged_absorbs_exposure_and_sees_a_change():
    r = rng(40)
    start, final, box = scene(r)
    brighter = np.clip(start.astype(np.float32) * 1.03, 0, 255).astype(np.uint8)
    assert unchanged(brighter, start)[0]
    assert not unchanged(final, start)[0]


@pytest.mark.parametrize("draw", range(3))
def test_unchanged_takes_a_clipped_page_as_the_page(draw):
    """A flickering exposure clips the page to 255 in one frame and not in the next (numseq's honest flicker of
    ±2.4%: 255 against 245). A clipped observation only says "at least": the frame is unchanged, and a mark on the
    page is not. Random page level (243-247), exposure step (5-6%), mark place and size; H.264. On the code before
    the twelfth session 255 undone stayed 255, 8-12 levels off the page over the temporal patch tolerance (9): 7 of
    15 draws failed; 0 of 30 now."""
    r = rng(70 + draw)
    start, final, box = scene(r)
    page = float(r.uniform(243, 247)) / float(final[2, 2].min())  # the paper's lowest channel at 243-247
    ref = np.clip(final.astype(np.float32) * page, 0, 255).astype(np.uint8)
    bright = np.clip(final.astype(np.float32) * page * float(r.uniform(1.05, 1.06)), 0, 255).astype(np.uint8)
    assert (bright == 255).all(axis=2).mean() > 0.3  # the page clips in the brighter frame
    h, w = ref.shape[:2]
    x, y, s = int(r.integers(40, w - 80)), int(r.integers(40, h - 80)), int(r.integers(8, 16))
    marked = bright.copy()
    marked[y:y + s, x:x + s] = bright[y:y + s, x:x + s] // 2
    a, b, m = h264([ref, bright, marked])
    assert unchanged(b, a)[0], unchanged(b, a)
    assert not unchanged(m, a)[0]


def shaken(frames: list[np.ndarray], r: np.random.Generator, px: int = 2) -> list[np.ndarray]:
    """Every frame but the first moved by its own whole-pixel offset of up to ``px`` (edges replicated)."""
    import cv2

    h, w = frames[0].shape[:2]
    out = [frames[0]]
    for f in frames[1:]:
        dx, dy = (int(v) for v in r.integers(-px, px + 1, 2))
        out.append(cv2.warpAffine(f, np.float32([[1, 0, dx], [0, 1, dy]]), (w, h), borderMode=cv2.BORDER_REPLICATE))
    return out


@pytest.mark.parametrize("draw", one_case(range(2), "shaken-camera"))
def test_a_shaken_camera_is_explained(draw):
    """A 2-px hand-held shake on every frame: each frame is aligned on its own to the first (the quarter-size ECC
    level diverges on a few shaken frames of text; :func:`vreason.verify.relative.relative` restarts from the
    phase-correlation shift)."""
    r = rng(50 + draw)
    start, final, box = scene(r)
    ex = run(shaken(oracle(start, final, box), r), start, box)
    assert ex.ok, ex.as_json()


def test_unchanged_with_the_camera_absorbs_a_shake_and_still_sees_a_change():
    import cv2

    r = rng(60)
    start, final, box = scene(r)
    h, w = start.shape[:2]
    moved = [cv2.warpAffine(a, np.float32([[1, 0, -2], [0, 1, 1]]), (w, h), borderMode=cv2.BORDER_REPLICATE)
             for a in (start, final)]
    assert not unchanged(moved[0], start)[0], "a 2-px move is a change without the camera"
    assert unchanged(moved[0], start, camera=True)[0]
    assert not unchanged(moved[1], start, camera=True)[0]



def test_a_copy_that_changes_the_parse_elsewhere_is_judged_where_the_parse_changed():
    """A parser that places the one red square at the leftmost red blob: the square slides right, then a copy
    appears where it started. Only the copy's blocks change in that frame, but the parse now puts the square
    back at the start, so the expected picture changes at the slid square too — that must be checked (the square
    seen there is unexplained), not skipped as unchanged since the last explained frame (tool QA, seed 604855)."""
    import cv2

    r = rng(11)
    h, w = CFG.height, CFG.width
    page = np.full((h, w, 3), 245, np.uint8)
    side = int(r.integers(24, 48))
    y = int(r.integers(60, h - 60 - side))
    x_start, x_end = int(r.integers(40, 120)), int(r.integers(360, 520))

    def at(*xs: int) -> np.ndarray:
        img = page.copy()
        for x in xs:
            cv2.rectangle(img, (x, y), (x + side - 1, y + side - 1), (220, 30, 30), -1)
        return img

    def expect(i: int, frame: np.ndarray):
        red = (frame[..., 0] > 150) & (frame[..., 1] < 100)
        xs = np.nonzero(red.any(axis=0))[0]
        return (at(int(xs.min())), None) if len(xs) else "no square"

    slide = [at(int(round(x_start + (x_end - x_start) * min(1.0, i / 20)))) for i in range(N)]
    times = np.arange(N) / CFG.fps
    assert explain_video(slide, times, slide[0], expect).ok
    k = int(r.integers(25, N - 3))
    copied = slide[:k] + [at(x_start, x_end)] * (N - k)
    ex = explain_video(copied, times, slide[0], expect)
    assert not ex.ok and ex.unexplained[0].index == k, ex.reason
    box = ex.unexplained[0].blob_box
    assert box is not None and box[0] >= x_end - 2 and box[2] <= x_end + side + 2, box


def test_changed_box_is_the_box_of_the_pixels_that_differ_beyond_the_level():
    """The OpenCV bounding rectangle over channel bytes gives numpy's box (random patches in random channels,
    random levels, RGB and single-channel, the empty box when nothing differs)."""
    r = rng(12)
    for _ in range(200):
        ch = int(r.choice([1, 3]))
        a = r.integers(0, 256, (int(r.integers(8, 90)), int(r.integers(8, 90)), ch)).astype(np.uint8)
        a = a[..., 0] if ch == 1 and r.random() < 0.5 else a
        b = a.copy()
        for _ in range(int(r.integers(0, 4))):
            y, x = int(r.integers(0, a.shape[0])), int(r.integers(0, a.shape[1]))
            patch = b[y:y + int(r.integers(1, 20)), x:x + int(r.integers(1, 20))]
            patch[...] = r.integers(0, 256, patch.shape)
        level = int(r.integers(0, 60))
        d = np.abs(a.astype(int) - b.astype(int))
        ys, xs = np.nonzero((d.max(axis=2) if d.ndim == 3 else d) > level)
        want = (int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1) if len(xs) else (0, 0, 0, 0)
        assert changed_box(a, b, level) == want


@pytest.mark.parametrize("draw", range(2))
def test_fading_px_sees_an_answer_still_fading_in_and_not_a_held_or_flickering_one(draw):
    """A held end (H.264, exposure flicker ≤ 3%) has no fading blocks; a video cut while its answer (digits, and a
    thin outline turning from grey to a random colour) still fades in has a large group of them over a window of
    its last 6 frames, though each frame differs from the next by a few levels only."""
    import cv2

    from vreason.verify.scene import fading_px

    r = rng(70 + draw)
    start, final, box = scene(r)
    x0, y0, x1, y1 = (int(v) for v in r.integers(60, 200, 4))
    x0, x1, y0, y1 = min(x0, x1), max(x0, x1) + 40, min(y0, y1), max(y0, y1) + 30
    cv2.rectangle(start, (x0, y0), (x1, y1), (150, 150, 150), 2)
    colour = [int(v) for v in r.integers(0, 256, 3)]
    colour[int(r.integers(3))] = int(r.choice([0, 255]))  # at least one channel 105 levels off the grey
    cv2.rectangle(final, (x0, y0), (x1, y1), tuple(colour), 4)
    held = h264([final] * 8)
    flicker = [np.clip(f.astype(np.float32) * (1 + 0.03 * float(r.uniform(-1, 1))), 0, 255).astype(np.uint8)
               for f in held]
    for frames in (held, flicker):
        assert fading_px([frames[2], frames[4], frames[5]], frames[-1]) <= 32
    end = float(r.uniform(0.5, 0.85))  # the answer's opacity in the last frame
    step = float(r.uniform(0.03, 0.06))  # per frame (16 fps: a fade over 1-2 s)
    cut = h264([np.round(start * (1 - a) + final * a).astype(np.uint8)
                for a in np.clip(end - step * np.arange(7)[::-1], 0, 1)])
    assert fading_px([cut[1], cut[3], cut[4]], cut[-1]) > 32, (end, step)
    assert fading_px([cut[1], cut[3], cut[4]], cut[-1], shift_px=1) > 32, (end, step)  # a shift explains no fade


@pytest.mark.parametrize("draw", range(2))
def test_fading_px_takes_an_alignment_closing_in_on_the_last_frame_as_no_fade_with_a_shift(draw):
    """Frames aligned onto the last by a camera estimate a fraction of a pixel off, less in each later frame (a slow
    zoom undone by the nearest similarity): a thin outline's blocks approach the last frame's step by step, which
    reads as a fade; compared shift-tolerant (``shift_px=1``) it does not (choice, an honest 4.4% zoom, case seed
    1736827138: 112 px "still fading")."""
    import cv2

    from vreason.verify.scene import fading_px

    r = rng(80 + draw)
    _, final, _ = scene(r)
    x0, y0 = (int(v) for v in r.integers(60, 200, 2))
    colour = tuple(int(v) for v in r.integers(0, 256, 3))
    cv2.rectangle(final, (x0, y0), (x0 + int(r.integers(60, 200)), y0 + int(r.integers(40, 120))), colour, 4)
    off = float(r.uniform(0.6, 1.0))
    frames = h264([cv2.warpAffine(final, np.float32([[1, 0, off * k], [0, 1, off * k * float(r.uniform(-1, 1))]]),
                                  (final.shape[1], final.shape[0]), flags=cv2.INTER_LINEAR,
                                  borderMode=cv2.BORDER_REPLICATE) for k in (1.0, 0.66, 0.33, 0.0)])
    assert fading_px(frames[:3], frames[-1]) > 32, off  # without the shift it reads as a fade
    assert fading_px(frames[:3], frames[-1], shift_px=1) <= 32


@pytest.mark.parametrize("difficulty,seed",
                         one_case([("easy", 143667987), ("medium", 261988366), ("medium", 24)], "clipped-page"))
def test_a_page_clipped_in_a_channel_by_the_exposure_is_held_frame_to_frame(difficulty, seed):
    """The suite's sliding puzzle brightened by 15% with a 6° hue turn, through H.264: the page's green clips at
    253–255 frame to frame, and its correction maps 253 and 254 25 levels apart (the green gain is fitted short under
    the hue turn). Two clipped observations are no change: every frame is explained (seed 143667987 was not, 44 px
    "changed since the first frame"). Medium 261988366: the green fit pulled short by a tile's green near the clip
    left the page 30 levels off (exposure.NEAR_CLIP); medium 24 and easy 143667987 with the fit right: a cyan
    tile's clipped green read 245 in one frame, 254 in another (clip.CLIP_DRIFT)."""
    import tempfile as tf

    from vreason.synth.adversary import load_variants, run_variant

    v = next(v for v in load_variants()["sliding"] if v.name == "brighter15_hue_plus6")
    with tf.TemporaryDirectory() as d:
        score = run_variant(v, difficulty, 0, seed, d)
    assert score.passed, score.evidence.details.get("scene")


@pytest.mark.parametrize("family,difficulty", one_case([("sorting", "easy"), ("connect", "medium")], "hand-held"))
def test_a_hand_held_shake_is_explained_where_the_still_part_has_no_texture_across_or_is_decoded_small(
        family, difficulty):
    """The suite's honest 2-px shake (H.264), suite seed 19065, both failing on the eighteenth session's code.
    Sorting: the shelf is a horizontal line, and a bar lifted and moving sideways pulled the phase correlation and
    the ECC search to an 11-px sideways shake (4,011 px along the shelf) — the whole-pixel grid search
    (``video_camera.grid_shift``) brings the most still pixels home. Connect, decoded at half size: a 1-px grid line
    is half a pixel there, a 1-px shake moves it a whole pixel or none (``frame_check.FIRST_EDGE_LEVEL``)."""
    from vreason.synth.adversary import load_variants, run_variant

    v = next(v for v in load_variants()[family] if v.name == "shake2px")
    with tempfile.TemporaryDirectory() as d:
        score = run_variant(v, difficulty, 1000, 19065, d)
    assert score.passed, score.evidence.details.get("scene") or score.evidence.details


def test_grid_shift_finds_a_shake_that_moving_content_does_not_pull():
    """Random scenes of horizontal lines and a few still bars, shaken by a whole-pixel (dx, dy) within 2 px, with
    a large bar drawn where the first frame had none (content that moved): the grid search returns the shake."""
    import cv2

    from vreason.verify.video_camera import IDENT, grid_shift

    r = np.random.default_rng(SEED + 19)
    for _ in range(6):
        first = np.full((360, 640), 250, np.float32)
        for y in r.integers(40, 320, 3):
            first[y:y + 3, 20:620] = 60
        for x in r.integers(30, 560, 3):
            first[200:330, x:x + 40] = float(r.integers(40, 200))
        dx, dy = (int(v) for v in r.integers(-2, 3, 2))
        frame = cv2.warpAffine(first, np.float32([[1, 0, dx], [0, 1, dy]]), (640, 360), borderMode=cv2.BORDER_REPLICATE)
        x0 = int(r.integers(60, 480))
        frame[60:150, x0:x0 + 90] = float(r.integers(0, 120))  # a bar lifted across the background
        got = grid_shift(frame, first, IDENT.copy())
        if (dx, dy) == (0, 0):
            assert got is None or np.allclose(got, IDENT), got
        else:
            assert got is not None and np.allclose(got[:, 2], (-dx, -dy)), (got, dx, dy)
