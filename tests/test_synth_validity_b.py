"""Unit tests of the part-B verifiers' robustness tools and of the issue's named classes, verified directly
(no encoding, fast): letterbox cropping, shake registration, one colour correction for answer and
"unchanged" checks, gravity in seconds (release time detected, g and restitution checked, the end state
held to the end, a too-short video named), sliding read after a +12° hue shift."""

from __future__ import annotations

import os

import numpy as np
import pytest

from conftest import by_difficulty, one_case
from vreason.synth import frametools as ft
from vreason.synth.adversary_replay import exposure, hue_shift, letterbox, shake
from vreason.synth.base import RenderConfig
from vreason.synth.suite import get_family, make_instance

CFG = RenderConfig()
SEED = 4242


def inst(family: str, difficulty: str):
    return make_instance(family, difficulty, 0, SEED, CFG)


def test_letterbox_bars_are_cropped_and_a_black_video_is_not():
    fr = inst("sequence", "easy").first_frame
    boxed = letterbox([fr] * 4)
    y0, y1, x0, x1 = ft.letterbox_crop(boxed)
    assert (y1 - y0, x1 - x0) == fr.shape[:2]
    assert ft.letterbox_crop([fr] * 4) == (0, fr.shape[0], 0, fr.shape[1])
    black = [np.zeros_like(fr)] * 4
    assert ft.letterbox_crop(black) == (0, fr.shape[0], 0, fr.shape[1])


@pytest.mark.parametrize("box", [None, (420, 60, 620, 300)])
def test_stabilise_recovers_a_two_pixel_shift(box):
    import cv2

    ref = inst("sliding", "hard").first_frame
    moved = cv2.warpAffine(ref, np.float32([[1, 0, 2], [0, 1, -2]]), (ref.shape[1], ref.shape[0]),
                           borderMode=cv2.BORDER_REPLICATE)
    fixed, shifts = ft.stabilise([moved], ref, box=box)
    assert shifts[0] == pytest.approx([2.0, -2.0], abs=0.35)
    inner = (slice(10, -10), slice(10, -10))
    assert np.abs(fixed[0][inner].astype(int) - ref[inner]).mean() < 2.0


def test_colour_correction_undoes_exposure_and_hue():
    i = inst("sliding", "hard")
    ref = i.first_frame
    small = ft.small(ref, (CFG.width // 4, CFG.height // 4))
    mask = np.ones(small.shape[:2], bool)
    bent = hue_shift(exposure([ref], 0.85), 6)[0]
    assert np.abs(bent.astype(int) - ref).mean() > 10
    assert np.abs(ft.correct(bent, small, mask, affine=True).astype(int) - ref).mean() < 4


def test_darker_video_keeps_unchanged_checks_of_final_state_families():
    for fam in ("oddoneout", "sequence"):
        i = inst(fam, "hard")
        res = get_family(fam).verify(exposure(i.solution, 0.85), i.state, CFG)
        assert res.passed, (fam, res.evidence.get("reason"))


def test_oddoneout_second_box_of_another_colour_and_thin_box_fail():
    import cv2

    from vreason.synth.families.oddoneout.family import _box_rect

    i = inst("oddoneout", "medium")
    st = i.state
    r, c = st["odd"]
    other = ((r + 1) % st["rows"], c)
    for colour, thick in (((30, 60, 220), 4), ((225, 20, 25), 2)):
        fr = i.final_frame.copy()
        x0, y0, x1, y1 = _box_rect(st, *other)
        cv2.rectangle(fr, (x0, y0), (x1, y1), colour, thick)
        res = get_family("oddoneout").verify([i.first_frame] * 4 + [fr] * 8, st, CFG)
        assert not res.passed and not res.evidence["checks"]["nothing_else_changed"], (colour, thick)


def test_sequence_other_card_changing_colour_fails():
    from vreason.synth.families.sequence.family import render_row
    from vreason.synth.shapes import PALETTE

    i = inst("sequence", "medium")
    st = i.state
    j = (st["missing"] + 1) % st["n"]
    spec = dict(st["cells"][j])
    spec["color"] = next(list(v) for v in PALETTE.values() if list(v) != list(spec["color"]))
    changed = {**st, "cells": [spec if k == j else cell for k, cell in enumerate(st["cells"])]}
    fr = render_row(changed, CFG, st["answer"])
    res = get_family("sequence").verify([i.first_frame] * 4 + [fr] * 8, st, CFG)
    assert res.evidence["checks"]["right_element"] and not res.evidence["checks"]["others_unchanged"]
    assert not res.passed and res.score == 0.5


@pytest.mark.parametrize("seed", one_case([204866161, int(os.environ.get("VREASON_ADV_SEED", "1"))],  # and the run's
                                          "card-recolour"))  # printed seed
def test_sequence_any_card_recoloured_to_any_palette_colour_fails_under_an_exposure_and_hue_camera(seed):
    """Every palette colour on another card fails, even when the scene's few saturated objects make a global hue
    correction absorb part of it (seed 204866161: green → teal beside one other green card passed before);
    the same scene under an honest exposure/hue camera passes."""
    from vreason.synth.families.sequence.family import render_row
    from vreason.synth.shapes import PALETTE

    i = make_instance("sequence", "medium", 0, seed, CFG)
    st = i.state
    fam = get_family("sequence")
    honest = exposure(hue_shift([i.first_frame] * 4 + [i.final_frame] * 8, 6), 1.1)
    assert fam.verify(honest, st, CFG).passed, f"seed {seed}"
    j = next(k for k in range(st["n"]) if k != st["missing"])
    for colour in (list(v) for v in PALETTE.values() if list(v) != list(st["cells"][j]["color"])):
        changed = {**st, "cells": [dict(c, color=colour) if k == j else c for k, c in enumerate(st["cells"])]}
        fr = render_row(changed, CFG, st["answer"])
        res = fam.verify([i.first_frame] * 4 + [fr] * 8, st, CFG)
        assert not res.passed, (seed, st["cells"][j]["color"], colour)
        assert res.evidence["recoloured_cards"] or res.evidence["changed_px"] > 0, (seed, colour)


@pytest.mark.parametrize("seed", one_case([9, 19, int(os.environ.get("VREASON_ADV_SEED", "1"))],  # 9, 19: passed
                                          "card-shape"))  # before
def test_sequence_any_card_given_another_shape_or_count_fails_and_is_parsed_as_that_state(seed):
    """Another card shows any other shape (same count) or one more/fewer item: its content parses as that state
    (seeds 9 and 19: three/four small shapes changed passed the 2-px excess check before); the same scene
    under an honest exposure/hue camera parses every card as its own state."""
    from vreason.synth.families.sequence.family import render_row

    i = make_instance("sequence", "hard", 0, seed, CFG)
    st = i.state
    fam = get_family("sequence")
    honest = exposure(hue_shift([i.first_frame] * 4 + [i.final_frame] * 8, 6), 1.1)
    res = fam.verify(honest, st, CFG)
    assert res.passed and res.evidence["card_state_worst"]["ratio"] < 1, (seed, res.evidence["card_state_worst"])
    j = max((k for k in range(st["n"]) if k != st["missing"]), key=lambda k: st["cells"][k]["count"])
    spec = st["cells"][j]
    changes = [{"shape": s} for s in ("star", "cross", "triangle", "square") if s != spec["shape"]]
    changes += [{"count": k} for k in (spec["count"] - 1, spec["count"] + 1) if 1 <= k <= 6]
    for change in changes:
        changed = {**st, "cells": [dict(c, **change) if k == j else c for k, c in enumerate(st["cells"])]}
        res = fam.verify([i.first_frame] * 4 + [render_row(changed, CFG, st["answer"])] * 8, st, CFG)
        assert not res.passed and not res.evidence["checks"]["others_unchanged"], (seed, change)
        want = f"{change.get('count', spec['count'])} {change.get('shape', spec['shape'])}"
        assert res.evidence["changed_cards"][0]["read"] == want, (seed, change, res.evidence["changed_cards"])


def _ball(i, fps: float, seconds: float, release: float = 0.0, **change):
    from vreason.synth.families.gravity.family import _render, simulate_at

    st = i.state
    p = {**{k: st[k] for k in ("start", "v0", "r", "e", "g", "floor_y")}, **change}
    t = np.arange(int(round(seconds * fps))) / fps
    pos, _ = simulate_at(p, t, release)
    return _render(st, pos, CFG), list(t)


def test_sequence_reads_the_held_answer_through_the_scene_s_camera(tmp_path):
    """A hard sequence oracle under a constant −1.02° camera turn (P5 ``rotate``, case seed 345114942, index 2).
    The last frames were unchanged since an earlier parse whose frame was no longer kept, so the end check fell
    back to stabilising them by a shift only: the turn stayed in the card and the answer read at 0.889 opacity,
    under ``ALPHA_MIN`` (0.9): ``right_element`` failed. The end check now reads the parses that kept their frame
    (the last frame's always, the camera undone): 0.97."""
    from vreason.synth.adversary_principles import Case, run_case

    out = run_case(Case("P5", "sequence", "rotate", True, "hard", 2, 5, 345114942), str(tmp_path))
    assert out is not None and out.params["degrees"] == -1.02
    assert out.ok and out.passed, out.reason



def test_sequence_a_fade_shown_ahead_then_resumed_fails(tmp_path):
    """P2 ``jump`` (easy, index 3, case seed 284501574): frames 32–33 come from later in the video (the answer at
    opacity 1.00 while the fade is at 0.56), then the fade resumes at 0.71. A fall of 0.29 was under the 0.3 that
    served both as the opacity that locks the element and as the fall allowed; the fall allowed is now
    ``FADE_BACK`` (0.15, twice the codec's spread): the scene fails at frame 34 through H.264."""
    from vreason.synth.adversary_principles import Case, run_case

    out = run_case(Case("P2", "sequence", "jump", False, "easy", 3, 5, 284501574), str(tmp_path))
    assert out is not None and out.params == {"window": [32, 2], "from": "elsewhere"}, out
    assert out.ok and not out.passed and out.reason == "failed checks: scene", out

@pytest.mark.parametrize("difficulty", [
    pytest.param(d, marks=by_difficulty("gravity", d, ("easy", "hard"), salt="seconds")) for d in ("easy", "hard")])
def test_gravity_in_seconds_release_detected_physics_checked(difficulty):
    i = inst("gravity", difficulty)
    fam = get_family("gravity")
    for fps in (8, 24):
        frames, t = _ball(i, fps, CFG.seconds)
        res = fam.verify(frames, i.state, CFG, times=t)
        assert res.passed, (fps, res.evidence.get("reason"))
    frames, t = _ball(i, CFG.fps, CFG.seconds + 0.6, release=0.6)
    res = fam.verify(frames, i.state, CFG, times=t)
    assert res.passed and res.evidence["release_s"] == pytest.approx(0.6, abs=1.5 / CFG.fps)
    for change, check in (({"g": i.state["g"] * 1.5}, "gravity"), ({"g": i.state["g"] * 0.65}, "gravity"),
                          ({"e": min(0.95, i.state["e"] + 0.15)}, "restitution")):
        frames, t = _ball(i, CFG.fps, CFG.seconds, **change)
        res = fam.verify(frames, i.state, CFG, times=t)
        assert not res.passed and not res.evidence["checks"][check], change


def test_gravity_end_state_must_last_and_short_video_is_named():
    from vreason.synth.families.gravity.family import _background

    i = inst("gravity", "medium")
    fam = get_family("gravity")
    k = 4  # the ball gone for the last quarter second: the last *tracked* position would still be right
    res = fam.verify(list(i.solution[:-k]) + [_background(i.state, CFG)] * k, i.state, CFG)
    assert not res.passed and not res.evidence["checks"]["end_state_holds"] and res.score == 0.0
    frames, t = _ball(i, CFG.fps, 1.2)
    res = fam.verify(frames, i.state, CFG, times=t)
    assert not res.passed and not res.evidence["checks"]["shows_the_motion"]
    assert "needs" in res.evidence["reason"]


def test_sliding_4x4_reads_the_board_after_hue_shift_and_shake():
    i = inst("sliding", "hard")
    fam = get_family("sliding")
    for name, frames in (("hue+12", hue_shift(i.solution, 12)),
                         ("shake", shake(i.solution, np.random.default_rng(1)))):
        res = fam.verify(frames, i.state, CFG)
        assert res.passed, (name, res.evidence.get("reason"))


@pytest.mark.parametrize("difficulty", ["easy", "medium", "hard"])
def test_gravity_shortest_oracle_bounds_the_cuts_that_fail(difficulty):
    """The oracle's prefixes shorter than ``shortest_oracle`` fail (too little motion shown); two frames past it the
    prefix is an honest shorter video and passes (the adversarial end_early cuts only below it)."""
    i = inst("gravity", difficulty)
    fam = get_family("gravity")
    k = fam.shortest_oracle(i, CFG)
    assert 2 < k < len(i.solution)
    short = fam.verify(list(i.solution[:k - 1]), i.state, CFG)
    assert not short.passed and not short.evidence["checks"]["shows_the_motion"]
    assert fam.verify(list(i.solution[:k + 2]), i.state, CFG).passed
    assert get_family("maze").shortest_oracle(inst("maze", difficulty), CFG) == CFG.n_frames


def test_gravity_zoom_is_read_from_the_ball_over_several_frames():
    """The honest 2-px shake through H.264 (hard, suite seed 19066): one frame's ball area moves by ±4% through the
    codec (388–419 px), and the first and last frames' ratio read a 2.8% zoom out where there was none — 11 px off
    at the picture's edge, `restitution` failed. The zoom is now the median area over 5 frames at each end
    (``gravity.camera.AREA_FRAMES``): within 1% of none, and the video passes."""
    import tempfile

    from vreason.synth.adversary import load_variants, run_variant

    v = next(v for v in load_variants()["gravity"] if v.name == "shake2px")
    with tempfile.TemporaryDirectory() as d:
        score = run_variant(v, "hard", 1000, 19066, d)
    cam = score.evidence.details["camera"]["last"]
    assert abs(cam["zoom"] - 1) < 0.01 and score.passed, score.evidence.details


def _sliding_glide(i, cut: int | None = None, jump_at: float | None = None):
    """The oracle's frames with the last glide (its last run of changing frames) replaced by the target board from
    the frame ``jump_at`` of the way through it, or the video cut ``cut`` frames into that glide."""
    fr = list(i.solution)
    moving = [j for j in range(1, len(fr)) if int(np.abs(fr[j].astype(int) - fr[j - 1]).max()) > 40]
    first = moving[-1]
    while first - 1 in moving:
        first -= 1
    if cut is not None:
        return fr[:first + cut]
    k = first + max(1, int(round(jump_at * (moving[-1] - first + 1))))
    return fr[:k] + [fr[-1]] * (len(fr) - k)


@pytest.mark.parametrize("difficulty", one_case(["easy", "medium"], "glide-cut"))
def test_sliding_a_glide_cut_short_or_a_video_ending_mid_glide_fails(difficulty):
    """Principle 2: a tile that jumps from part-way to its cell in one frame does not glide; principle 3: a video
    ending while the last tile still glides has not reached (and held) the target, though its board reads so."""
    i = inst("sliding", difficulty)
    fam = get_family("sliding")
    assert fam.verify(list(i.solution), i.state, CFG).passed
    res = fam.verify(_sliding_glide(i, jump_at=0.35), i.state, CFG)
    assert not res.passed and not res.evidence["checks"]["continuous_motion"], res.evidence.get("moves")
    assert max(m.get("largest_step", 0) for m in res.evidence["moves"]) > 0.55
    for cut in (4, 5):
        res = fam.verify(_sliding_glide(i, cut=cut), i.state, CFG)
        assert not res.passed and not res.evidence["checks"]["reaches_target"], (cut, res.evidence.get("final_reading"))


@pytest.mark.parametrize("family,difficulty",
                         one_case([("choice", "easy"), ("choice", "hard"), ("numseq", "medium")], "fade-cut"))
def test_a_text_answer_cut_while_it_fades_in_is_not_held(family, difficulty):
    """Principle 3: the oracle cut in its answer's fade (from the last frame that differs visibly from the final one
    back to the fade's middle) reads as the answer — TiViBench's rule finds the outline red, OCR the digit — but it
    is still fading towards its last frame (or, late in the fade, still changing over the last 0.15 s): the ``held``
    check fails; the whole oracle holds its answer."""
    i = inst(family, difficulty)
    fam = get_family(family)
    sol = list(i.solution)
    assert fam.verify(sol, i.state, CFG).passed
    visible = [j for j, f in enumerate(sol) if int((np.abs(f.astype(int) - sol[-1]).max(axis=2) > 40).sum()) >= 40]
    j = visible[-1]
    read = 0
    for end in (j, j - 2, j - 4):
        res = fam.verify(sol[:end + 1], i.state, CFG)
        assert not res.passed, end
        if res.evidence["checks"]["answer"]:  # read as the answer: the hold must fail it
            read += 1
            assert not res.evidence["checks"]["held"], end
            assert "hold_fading" in res.evidence or "hold_changed" in res.evidence
    assert read, "no cut read as the answer: the case tests nothing here"


def test_gravity_a_start_moved_sideways_is_not_a_camera_pan(tmp_path):
    """Frame 0 of gravity is aligned to the start picture, whose sky and floor are the same in every column: only
    the ball fixes the horizontal place, so the alignment took a left-right mirror (the ball moved 58 px) for a
    camera pan and the mirrored fall passed (P3 mirror, easy, VREASON_ADV_SEED=101). The start picture's centre may
    move sideways by a shake's :data:`MAX_SHAKE_PX` at most. Random easy instances (a drop straight down: mirrored,
    the same fall moved sideways) whose ball hangs 12-30 px off the middle, mirrored: each fails (6 of 6 such draws
    passed on the starting code; farther off, the alignment did not take the move). The oracle's own frame 0 has no
    pan (its verdicts: the ground-truth tests)."""
    from vreason.synth.adversary import Clip, score_clip
    from vreason.synth.families.gravity.camera import MAX_SHAKE_PX

    rng = np.random.default_rng()
    cfg = RenderConfig()
    done = 0
    while done < 2:
        seed, diff = int(rng.integers(10 ** 9)), "easy"
        inst = make_instance("gravity", diff, 0, seed, cfg)
        assert inst.state["v0"][0] == 0  # easy: dropped straight down
        if not 12 <= abs(inst.state["start"][0] - cfg.width / 2) <= 30:
            continue
        assert 2 * 12 - MAX_SHAKE_PX > 9.5  # past the start tolerance (≈ 9.5 px) after the pan allowed
        mirrored = [np.ascontiguousarray(f[:, ::-1]) for f in inst.solution]
        got = score_clip("gravity", diff, 0, seed, Clip(mirrored, float(cfg.fps)), str(tmp_path), cfg, tag="mirror")
        assert not got.passed, (seed, diff, inst.state["start"])
        done += 1
