"""The temporal residual's reference follows what came to rest (``vreason.verify.settle``, issue 24).

Its followed pixels are corrected with an exposure fitted on their own frame, as the first frame's are: the check
may keep the last frame's exposure while it explains a frame, and under a 2.7% flicker that left a sorting bar 10
levels brighter in the reference than in every later frame — 403 px "changed" once it had come to rest (principle 5
flicker, case seed 392374465, failing on 5baae21). Honest flicker on the families whose oracle moves things, drawn
from the run's seed, passes."""

import os
import random
import tempfile

import numpy as np
import pytest

from conftest import one_case
from vreason.synth.adversary_principles import Case, run_case, sample_cases
from vreason.synth.suite import default_families

SEED = int(os.environ.get("VREASON_ADV_SEED", "20261207"))


def test_a_flickering_sorting_video_keeps_its_bars_after_they_settle(tmp_path):
    (case,) = [c for c in sample_cases(default_families(), 2220, per_kind=2, index=0, principles=("P5",))
               if c.case_seed == 392374465]
    out = run_case(case, str(tmp_path))
    assert out is not None and out.passed, (out.reason if out else None, out.params if out else None)


@pytest.mark.parametrize("family", one_case(["sorting", "sliding", "match3"], "flicker"))
def test_honest_flicker_passes_where_things_move(tmp_path, family):
    rng = random.Random(SEED * 31 + len(family))
    case = Case("P5", family, "flicker", True, rng.choice(["easy", "medium", "hard"]), 0, rng.randrange(1 << 20),
                rng.randrange(1 << 30))
    out = run_case(case, str(tmp_path))
    assert out is not None and out.passed, (case, out.reason if out else None, out.params if out else None)


def _square_video(r, dot_level: int | None, jitter: bool):  # noqa: ANN001, ANN202
    """A red square slides across a page and comes to rest; ``k`` frames after it stopped (5–10), a dot
    (radius 2, ``dot_level`` levels darker; None: none) appears on its face 6–7 px inside its left edge and stays.
    The parser places the square a quarter pixel further right from that frame on (``jitter``: in every frame from
    then; else only where it sees the dot — as tool QA's centroid moved when the dot left its colour mask). Through
    H.264, as a model's video arrives. Returns (frames, times, start, expect)."""
    import cv2

    from vreason.frames import write_video
    from vreason.frames.video import iter_frames

    h, w, n = 360, 640, 48
    page = np.full((h, w, 3), [int(v) for v in r.integers(228, 250, 3)], np.uint8)
    side, y = int(r.integers(40, 64)), int(r.integers(80, 200))
    x0, x1, stop = int(r.integers(40, 120)), int(r.integers(300, 500)), 20
    red = (int(r.integers(190, 230)), int(r.integers(20, 50)), int(r.integers(20, 50)))

    def at(x: float) -> np.ndarray:
        img = page.copy()
        pts = np.round(np.array([[x, y], [x + side, y], [x + side, y + side], [x, y + side]]) * 4).astype(np.int32)
        cv2.fillPoly(img, [pts], red, cv2.LINE_AA, shift=2)
        return img

    k = stop + int(r.integers(5, 11))
    dot = (x1 + int(r.integers(6, 8)), y + int(r.integers(12, side - 12)))
    frames = []
    for i in range(n):
        f = at(x0 + (x1 - x0) * min(1.0, i / stop))
        if dot_level is not None and i >= k:
            m = np.zeros((h, w), np.uint8)
            cv2.circle(m, dot, 2, 1, -1)
            f[m > 0] = np.clip(f[m > 0].astype(int) - dot_level, 0, 255).astype(np.uint8)
        frames.append(f)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "clip.mp4")
        write_video(path, frames, fps=16)
        decoded = [np.asarray(f) for f in iter_frames(path)]

    def expect(i: int, frame: np.ndarray):  # noqa: ANN202
        xs = np.nonzero(((frame[..., 0] > 150) & (frame[..., 1] < 110)).any(axis=0))[0]
        if not len(xs):
            return "no square"
        x = float(xs.min())
        sees_dot = bool((frame[y + 10:y + side - 10, x1 + 3:x1 + 11, 0] < red[0] - 20).any())
        return at(x + (0.25 if (jitter and i >= k) or (not jitter and sees_dot) else 0.0)), None

    return decoded, np.arange(n) / 16, at(x0), expect, k


@pytest.mark.parametrize("draw", range(3))
def test_a_mark_that_moves_the_parse_of_what_came_to_rest_is_unexplained(draw):
    """A parse that changes only where the picture has held still (a quarter pixel, codec noise or the mark itself
    moving a centroid) is first judged as no change (``settle.held_change``). It re-opened the settled reference
    along the object's edges grown by the codec ring, and the reference took the mark in: a dot 39 levels darker on
    tool QA's tool, 6 frames after it came to rest, passed (hard, suite seed 47920, ``VREASON_ADV_SEED=800006555``
    with one encoder thread — CI's; the same test drawn with two threads failed it). A dot 28–40 levels darker
    fails at its frame; the same parse change with no dot, or in every frame, is explained."""
    from vreason.verify.explain import explain_video

    r = np.random.default_rng([SEED, 91, draw])
    level = int(r.integers(28, 41))
    state = r.bit_generator.state
    frames, times, start, expect, k = _square_video(r, level, jitter=False)
    ex = explain_video(frames, times, start, expect)
    assert not ex.ok and ex.unexplained[0].index in (k, k + 1), (level, k, ex.reason)
    for jitter in (False, True):
        r.bit_generator.state = state
        frames, times, start, expect, k = _square_video(r, None, jitter=jitter)
        ex = explain_video(frames, times, start, expect)
        assert ex.ok, (jitter, k, ex.reason)


def test_the_exposure_is_fitted_on_the_whole_frame_not_on_the_changed_region(tmp_path):
    """Sequence, hard, an honest constant rotation of −1.97° (principle 5, case seed 772017910, bench seed 30013):
    as the blank card's element faded in, the frame was first judged by the last picture (it had changed only
    where the picture held still), and the exposure was fitted on the changed region alone — the page, unchanged,
    and the card's light face, mostly covered by the element and 9 levels darker. With two levels that near, the fit
    is an offset (their weighted median shift): −9, then −12, and the page stood 11 levels off the first frame,
    1,305 px "changed since the first frame" in frame 21. Fitted on the whole frame, the page's level holds it."""
    out = run_case(Case("P5", "sequence", "rotate", True, "hard", 2000, 30013, 772017910), str(tmp_path))
    assert out is not None and out.params["degrees"] == -1.97
    assert out.ok and out.passed, out.reason


def test_a_new_picture_keeps_the_region_s_own_exposure_fit_under_a_clipping_brightness(tmp_path):
    """Choice, easy, brightened by 15% (its honest ``bright15`` variant, bench seed 30003): the page clips, and the
    whole frame's few unclipped levels left a 1-px option outline 125 px off in frame 21; the region's own levels
    place it (the region's fit stays the last try for a new picture)."""
    from vreason.synth.adversary import load_variants, run_variant

    (v,) = [v for v in load_variants()["choice"] if v.name == "bright15"]
    sc = run_variant(v, "easy", 1000, 30003, str(tmp_path))
    assert sc.status.value == "ok" and sc.passed, sc.evidence.details.get("reason") if sc.evidence else sc.reason
