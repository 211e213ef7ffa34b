"""The suite's adversarial set (src/vreason/synth/adversary*.py), scored through the same scorer as
``vreason run synth``: every cheat must fail and every honest variant must pass, for every family and
difficulty. Each run draws a fresh seed (printed in the summary; replay with ``VREASON_ADV_SEED=<seed>``).

Default run (``make test``): a sample of at most ``PER_FAMILY`` variants per family (both kinds in every family,
honest and cheat, the cheats first), each at one difficulty, all drawn by the run's seed, so every variant is
drawn over runs (each has a probability of at least 1/15 per run); the summary line lists the variants that ran.
``--adv-full`` (``make test-all``, ``make bench``): every variant at every difficulty."""

import os
import random

import pytest

from conftest import one_case
from vreason.synth.adversary import load_variants, run_variant
from vreason.synth.base import DIFFICULTIES
from vreason.synth.suite import FAMILY_MODULES

SEED = int(os.environ.get("VREASON_ADV_SEED", "20261122"))
FULL = os.environ.get("VREASON_ADV_FULL") == "1"
VARIANTS = load_variants()
PER_FAMILY = {"cheat": 1, "honest": 1}
"""Default sample per family: 1 cheat and 1 honest variant (16 families: 32 cases of the 317 variants; the full
matrix in ``make test-all`` / ``make bench``). Two cheats a family until the twenty-eighth session: the second
cost 21 s of CPU a run (``make test`` was over its 10 minutes) and the principles' generators draw fresh cheats of
every family each run besides. The principles' generators (tests/test_explain_families.py,
tests/test_synth_principles.py) draw fresh honest cameras and codecs every run besides."""


def _sample(variants: list, rng: random.Random) -> list:
    """Up to PER_FAMILY[kind] variants of each kind (cheat / honest), drawn without replacement by ``rng``."""
    out = []
    for kind, k in PER_FAMILY.items():
        pool = [v for v in variants if v.honest == (kind == "honest")]
        out += rng.sample(pool, min(k, len(pool)))
    return out


def _cases() -> list:
    """Full matrix under ``--adv-full``; otherwise the seeded per-family sample, each at a difficulty drawn from
    its own difficulties by the run's seed."""
    rng = random.Random(SEED)
    out = []
    for fam in sorted(VARIANTS):
        if FULL:
            out += [(v, d) for v in VARIANTS[fam] for d in v.difficulties]
        else:
            out += [(v, rng.choice(v.difficulties)) for v in _sample(VARIANTS[fam], rng)]
    # drawn in registry order (the same cases for a seed), run grouped by (family, difficulty): consecutive cases
    # share one task instance, which the scorer re-creates through a small cache
    return sorted(out, key=lambda c: (c[0].family, DIFFICULTIES.index(c[1]), c[0].name))


CASES = _cases()


@pytest.mark.parametrize("family", FAMILY_MODULES)
def test_every_family_has_five_cheats_and_five_honest_variants(family):
    got = VARIANTS.get(family, [])
    cheats = [v.name for v in got if not v.honest]
    honest = [v.name for v in got if v.honest]
    assert len(cheats) >= 5 and len(honest) >= 5, (family, cheats, honest)


def test_the_default_sample_covers_every_family_with_both_kinds_and_every_variant_over_seeds():
    """The sample is a fixed budget, holds a cheat and an honest variant of every family, and reaches every
    variant: over 200 seeds each (family, variant) is drawn at least once."""
    seen: set[tuple[str, str]] = set()
    for seed in range(200):
        rng = random.Random(seed)
        for fam in sorted(VARIANTS):
            got = _sample(VARIANTS[fam], rng)
            assert len(got) <= sum(PER_FAMILY.values())
            assert any(v.honest for v in got) and any(not v.honest for v in got), fam
            seen |= {(v.family, v.name) for v in got}
    assert seen == {(v.family, v.name) for vs in VARIANTS.values() for v in vs}
    assert len(CASES) <= 16 * sum(PER_FAMILY.values()) or FULL


KNOWN_GAPS: dict[tuple[str, str], str] = {
    # sequence's and sliding's brighter15_hue_plus6 were here until the nineteenth session: sequence measured 0 of 46
    # wrong (seeds 468594633, 282467383, 1-6, 31-40); sliding 0 of 60 after the exposure fit's clip refit and the
    # temporal residual's CLIP_DRIFT (2 of 60 before: VREASON_ADV_SEED 261988366 and 24, medium)
}
"""Honest variants a verifier is known to fail on some draws (non-strict: a pass is fine), each with its issue."""


@pytest.mark.parametrize("v,difficulty", CASES, ids=[f"{v.family}-{d}-{v.name}" for v, d in CASES])
def test_adversarial_variant(tmp_path, request, v, difficulty):
    if (v.family, v.name) in KNOWN_GAPS:
        request.applymarker(pytest.mark.xfail(reason=KNOWN_GAPS[(v.family, v.name)], strict=False))
    score = run_variant(v, difficulty, 0, SEED, str(tmp_path))
    reason = score.evidence.details.get("reason") if score.evidence else score.reason
    assert score.status.value == "ok", (score.reason, f"VREASON_ADV_SEED={SEED}")
    if v.honest:
        assert score.passed, f"honest {v.family}/{difficulty}/{v.name} failed: {reason} (VREASON_ADV_SEED={SEED})"
    else:
        assert not score.passed, f"cheat {v.family}/{difficulty}/{v.name} passed (VREASON_ADV_SEED={SEED})"


def test_a_half_size_video_s_codec_blocks_are_twice_as_large(tmp_path):
    """The temporal residual leaves a ring around what changed to the rendering residual (a codec's blocks and
    their ringing): 8 px of the video's own grid, so twice that in a half-size video enlarged to the render.
    Sliding's honest half-size video at hard (its KNOWN_GAPS entry until the twelfth session): H.264 at 320×180 put
    34 px of a gliding tile's colour 11 px beside it in frame 11 — unexplained with an 8-px ring on the render's
    grid. A family decoding at half size keeps 8 px for a full-size video (its softness is the decode's)."""
    from vreason.verify.frame_check import CODEC_RING, codec_ring

    assert codec_ring(1.0) == codec_ring(0.5 / 0.5) == CODEC_RING and codec_ring(0.5) == 2 * CODEC_RING
    (v,) = [x for x in VARIANTS["sliding"] if x.name == "half_size_darker15_hue_minus6"]
    score = run_variant(v, "hard", 0, 853426842, str(tmp_path))
    assert score.passed, score.evidence.details if score.evidence else score.reason


@pytest.mark.parametrize("difficulty,seed", [("hard", 163505683),
                                             pytest.param("medium", 846447971, marks=pytest.mark.slow)])
def test_a_shaken_connect_video_keeps_its_lines(tmp_path, difficulty, seed):
    """Connect's "a line never vanishes" rule remembers the samples a line covered and fails a frame that misses more
    than 0.35 cell of them. Each frame shaken by its own 2-px move (honest), the samples at the edge of a line's width
    — a perpendicular segment's first ones — are covered in some frames and not in others: the union held up to 0.7
    cell of them, and 7 of 18 shaken videos failed (these two among them). Samples now count as drawn 3 px inside
    the line and as lost with no line pixel within 3 px (``connect.scene.HELD_PX``)."""
    (v,) = [x for x in VARIANTS["connect"] if x.name == "shake2px"]
    score = run_variant(v, difficulty, 0, seed, str(tmp_path))
    assert score.passed, score.evidence.details if score.evidence else score.reason


def test_a_shaken_connect_video_keeps_its_lines_on_the_grid_paths(tmp_path):
    """Connect's tracker read the board with the camera undone by interpolating the first and last frames'
    alignment, which leaves each middle frame off by its own shake: an honest 2-px shake (hard, suite seed 25004,
    instance 1000, as the benchmark draws it) put 0.16 cell of the yellow line off the grid paths (limit 0.15).
    Each frame's shake is now measured against the start picture (``connect.family.TURN_PX``): 0 cell off."""
    (v,) = [x for x in VARIANTS["connect"] if x.name == "shake2px"]
    score = run_variant(v, "hard", 1000, 25004, str(tmp_path))
    assert score.passed, score.evidence.details if score.evidence else score.reason
    assert max(p["off_path_cells"] for p in score.evidence.details["pairs"]) <= 0.05


def test_a_gravity_ball_resting_on_the_floor_is_not_a_zoom(tmp_path):
    """Gravity reads the end camera's zoom from the ball's area against frame 0's. Its honest half-size, darker,
    hue-turned video at hard (``VREASON_ADV_SEED=26301``, failing on the session's starting code too) ended with the
    ball touching the floor in 4 of its last 5 frames, where the codec blends the two: 441–446 px of mask against
    411 in the sky, a 3.6% zoom read where there was none and 9 px of error (`restitution`, `final_position`). The
    area is now read in the last frames where the ball is clear of the floor (up to 9 of the last 16), carried to
    the end along the interpolated zoom (``gravity.camera.CLEAR_PX``): zoom 1.0015."""
    (v,) = [x for x in VARIANTS["gravity"] if x.name == "half_size_darker15_hue_minus6"]
    score = run_variant(v, "hard", 0, 26301, str(tmp_path))
    assert score.passed, score.evidence.details if score.evidence else score.reason
    assert abs(score.evidence.details["camera"]["last"]["zoom"] - 1.0) < 0.01


def test_a_connect_jump_to_the_final_picture_and_back_fails(tmp_path):
    """Three frames of the final picture in the middle of the drawing (P2 jump, easy, bench seed 26001, case
    2036461608): the yellow line was shown 1.4 cells ahead, then 0.6 cell shorter than shown. The tracker allowed a
    line to lose max(0.8 cell, 15% of it); with each frame's shake undone, honest videos lose at most 0.1 cell and
    the limit is 0.4 (``connect.family.SHRINK_CELLS``). (The scene's own "a line never vanishes" memory counts a
    sample lost only with no line within 3 px of it, for the shake: it measured 0.33 cell here, under its 0.35.)"""
    from vreason.synth.adversary_principles import Case, run_case

    out = run_case(Case("P2", "connect", "jump", False, "easy", 2000, 26001, 2036461608), str(tmp_path))
    assert out is not None and out.params == {"window": [50, 3], "from": "final"}
    assert out.ok and not out.passed and "shrinks" in (out.reason or ""), out.reason


@pytest.mark.parametrize("seed", one_case([411315681, 578348630], "bright-connect"))
def test_a_brightened_connect_video_is_explained(tmp_path, seed):
    """Connect's honest +15% exposure (hard): 14 of 18 such videos failed. Its white board clips, and H.264 puts the
    clipped white at 252–253, which the exposure fit took for a level (255 → 253) and fitted a gain of 0.94–0.96:
    the dots, brightened by 1.14, were unexplained in the first frame (seed 411315681; ``exposure.CLIP_MARGIN``).
    Connect decodes at half size, and the first frame was taken as unsoftened (no excess against the sharp
    rendering either): a line's edge blurred by the decode was 60 levels off it once the exposure was undone
    (frame 13 of seed 578348630; ``explain.SOFT_EDGE``)."""
    (v,) = [x for x in VARIANTS["connect"] if x.name == "bright15"]
    score = run_variant(v, "hard", 0, seed, str(tmp_path))
    assert score.passed, score.evidence.details if score.evidence else score.reason


def test_a_match3_tile_smaller_than_a_chroma_block_is_still_a_tile(tmp_path):
    """Match3's honest hue-turned video at hard (2 of 32 draws failed, this among them): in frame 54 the last line's
    tiles had shrunk to 4×2 px, and 4:2:0 left them their luma but not their colour, (112, 78, 90) — no mix of red
    and the fill — so the parse read the line as gone and the dots were a 26-px blob. A line still shrinking is read
    again without the colour test when it parses as gone (``match3.scene.CHROMA_PX``)."""
    (v,) = [x for x in VARIANTS["match3"] if x.name == "hue_minus6"]
    score = run_variant(v, "hard", 0, 531969374, str(tmp_path))
    assert score.passed, score.evidence.details if score.evidence else score.reason


def test_a_match3_cell_moved_two_px_is_not_a_camera_shake(tmp_path):
    """A static cell of a match3 board (a single tile in its grey fill) moved by (−2, −2) from frame 58 on (P1
    shift_background, case seed 563374762) passed: the phase correlation's sub-pixel peak lay between the cell's move
    and none, and the camera shifted there put the cell and the rest of the board each within the residual's 1-px
    edge range. A shift is kept only when it brings the still pixels nearer the first frame
    (``video_camera.shifted``); the cell is 1,233 px unexplained in frame 58."""
    from vreason.synth.adversary_principles import Case, run_case

    out = run_case(Case("P1", "match3", "shift_background", False, "easy", 2, 5, 563374762), str(tmp_path))
    assert out is not None and out.params["offset"] == [-2, -2]
    assert out.ok and not out.passed and "frame 58 " in (out.reason or ""), out.reason


def test_the_honest_mjpeg_codec_keeps_the_quality_it_records(tmp_path):
    """The principles' honest ``codec`` kind records MJPEG at a quality q of 2–10 and writes it with that fixed
    quantiser (ffmpeg's -q:v: qmin = qmax = q). Written with an option named "q:v" the encoder ignored it and its
    rate control lowered the quality over the first 8 frames of one picture (116 → 47 kB a frame): another codec
    than the one recorded (match3's oracle, case seed 701226081, failed as 'changed since the first frame' on that
    ramp). The same picture repeated decodes the same in every frame, and a higher q writes fewer bytes."""
    import av
    import numpy as np

    from vreason.synth.adversary import Clip
    from vreason.synth.adversary_principles import Made, write_case

    r = np.random.default_rng([SEED, 701])
    img = np.clip(r.normal(128, 60, (360, 640, 3)), 0, 255).astype(np.uint8)
    sizes, frames = {}, {}
    for q in (int(r.integers(2, 5)), int(r.integers(7, 11))):
        path = str(tmp_path / f"q{q}.mkv")
        write_case(path, Made(Clip([img] * 10, 16.0), {"codec": "mjpeg", "q": q}, codec="mjpeg"))
        with av.open(path) as c:
            sizes[q] = [p.size for p in c.demux(video=0) if p.size]
        with av.open(path) as c:
            frames[q] = [f.to_ndarray(format="rgb24") for f in c.decode(video=0)]
        assert len(frames[q]) == 10 and len(set(sizes[q])) == 1, sizes[q]
        assert all(np.array_equal(f, frames[q][0]) for f in frames[q])
    lo, hi = sorted(sizes)
    assert sizes[lo][0] > 1.2 * sizes[hi][0], sizes


@pytest.mark.parametrize("difficulty,index,seed", [("easy", 0, 920925700), ("hard", 0, 978642795)])
def test_a_tool_nudged_at_home_is_not_explained(tmp_path, difficulty, index, seed):
    """Tool QA, P1 shift_background: a tool nobody carries moved by (±2, ±2) px from a frame of the second half. It
    stayed under the 4-px "left its place" limit, and the scene re-rendered it where it was parsed: explained (5 of
    6 draws). A tool other than the right one is drawn at home while it has not left it (``toolqa.scene``)."""
    from vreason.synth.adversary_principles import Case, run_case

    out = run_case(Case("P1", "toolqa", "shift_background", False, difficulty, index, 5, seed), str(tmp_path))
    assert out is not None and max(abs(v) for v in out.params["offset"]) == 2
    assert out.ok and not out.passed and "is not explained by the task's scene" in (out.reason or ""), out.reason


def test_a_pile_coin_nudged_in_one_jump_and_held_is_not_explained(tmp_path):
    """Counting, P1 shift_background (case seed 403341574): a pile coin moved 5 px at frame 53 of 64 and left
    there. The scene parsed it once, while it moved (a moving coin may be anywhere); every later frame showed the
    same picture and reused that verdict, so the "nudged and left" rule never saw it at rest: explained. The last
    frame is always parsed (``explain_video``)."""
    from vreason.synth.adversary_principles import Case, run_case

    out = run_case(Case("P1", "counting", "shift_background", False, "easy", 3, 5, 403341574), str(tmp_path))
    assert out is not None and out.params["offset"] == [0, 5] and out.params["from_frame"] == 53
    assert out.ok and not out.passed and "pile coin rests 5.0 px off its place" in (out.reason or ""), out.reason


@pytest.mark.parametrize("seed", one_case([52493083, 52493089], "blue-ball"))
def test_a_brightened_hue_turned_blue_ball_clipped_in_blue_is_the_start(tmp_path, seed):
    """Gravity's honest "brighter 15%, hue +6°" with a blue ball (30, 80, 225) at hard: the page clips in every
    channel and the ball's blue clips at 255, so the per-channel exposure fit has the dark floor alone in blue and
    reads its gain 1.03 against 1.14 in red; 225 mapped to 240, under the clip, and the ball's first frame failed
    (99 px, 4 of 5 blue-ball draws). A clipped observation is bounded with the exposure's largest channel gain
    (``clip.declip``). Both seeds failed on the starting code."""
    (v,) = [x for x in VARIANTS["gravity"] if x.name == "brighter15_hue_plus6"]
    score = run_variant(v, "hard", 0, seed, str(tmp_path))
    assert score.passed, score.evidence.details if score.evidence else score.reason


@pytest.mark.parametrize("seed", [109332120, random.Random(SEED).randrange(1 << 30)])
def test_a_darkened_sorting_video_keeps_a_lifted_bar_off_the_shelf(tmp_path, seed):
    """The honest 15%-darker sorting video (hard): the parse matched each bar's profiles level for level, so a blue
    bar lifted 2 px was read back on the shelf — the light gap under it, darkened, lay nearer the bar's colour than
    the page's — and 36 px along the shelf were unexplained (VREASON_ADV_SEED=109332120, frame 42). The profiles are
    now matched under the exposure that brings each candidate nearest; plus a draw from the run's seed."""
    v = next(v for v in VARIANTS["sorting"] if v.name == "dark15")
    score = run_variant(v, "hard", 0, seed, str(tmp_path))
    assert score.passed, (score.evidence.details.get("reason") if score.evidence else score.reason, seed)


@pytest.mark.parametrize("seed", one_case([5018, 5028, 637579840], "toolqa-lag"))
def test_a_half_size_toolqa_video_keeps_a_moving_tool_s_codec_lag(tmp_path, seed):
    """Tool QA's honest half-size video (easy): a P-frame left the carried tool's leading edge 2-3 px behind the
    parsed place for one frame, 32-77 px unexplained (suite seeds 5018, 5028 and 637579840, frames 35-36; 2 of 30
    seeds failed). Pixels a tool passed over within 2 frames are judged per pixel, as sliding's are
    (``toolqa.scene.TRAIL``), and where the picture changed since the previous frame the frame may show anything
    between the two (``residual(lagged=…)``): 0 of 60 seeds fail."""
    v = next(v for v in VARIANTS["toolqa"] if v.name == "half_size")
    score = run_variant(v, "easy", 0, seed, str(tmp_path))
    assert score.passed, (score.evidence.details.get("scene") if score.evidence else score.reason, seed)
