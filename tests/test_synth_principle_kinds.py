"""What the principle generators count as a cheat (issue 24).

The P3 ``mirror`` cheat is a cheat only where the mirror image shows another picture of the task.

A board that is its own mirror image with the same answer (odd-one-out's squares, the odd one in the middle column)
mirrored is a valid solution of the same task, drawn in another order: the generator refuses it, and the verifier
passes it — which is why it is no cheat (VREASON_ADV_SEED=961968408 listed it as a known gap; suite seed 9, easy).
A board that is not its own mirror image is still made into a case, and that case fails.

A P1 mark or copy is drawn only when it changes its pixels by :data:`FAINT_FLOOR` levels of luma or chroma or more:
the largest RGB channel (the older measure) let marks of 8–10 levels of luma through, under every rule's noise."""

import os

import numpy as np
import pytest

from vreason.core.records import Video
from vreason.core.scoring import ScoreContext
from vreason.synth import adversary_principles_ops as ops
from vreason.synth.adversary import Clip
from vreason.synth.adversary_principles import Made, NotApplicable, write_case
from vreason.synth.adversary_principles_kinds import mirror
from vreason.synth.base import RenderConfig
from vreason.synth.scorer import SynthVerifierScorer
from vreason.synth.suite import make_instance, make_sample


class _Flip:
    """An rng whose integer draw picks the flip (1: left-right, 0: upside down)."""

    def __init__(self, axis: int):
        self.axis = axis

    def integers(self, lo, hi=None):
        return self.axis


def _score(tmp_path, family, difficulty, seed, frames) -> bool:
    cfg = RenderConfig()
    path = os.path.join(tmp_path, "mirrored.mp4")
    write_case(path, Made(Clip(frames, float(cfg.fps)), {}))
    sample = make_sample(family, difficulty, 0, seed, cfg)
    (s,) = SynthVerifierScorer().score(sample, Video(sample_id=sample.id, model="mirror", seed=0, path=path),
                                       ScoreContext(run_dir=str(tmp_path)))
    return bool(s.passed)


def test_a_board_that_is_its_own_mirror_image_is_refused_and_the_verifier_passes_it(tmp_path):
    inst = make_instance("oddoneout", "easy", 0, 9, RenderConfig())
    flipped = [np.ascontiguousarray(f[:, ::-1]) for f in inst.solution]
    assert ops.differs(flipped, inst.solution)  # the box is drawn in another order: frames differ in between
    assert ops.same_picture(flipped[0], inst.solution[0]) and ops.same_picture(flipped[-1], inst.solution[-1])
    with pytest.raises(NotApplicable, match="same task"):
        mirror(inst, RenderConfig(), _Flip(1))
    assert _score(tmp_path, "oddoneout", "easy", 9, flipped)


@pytest.mark.parametrize("family, seed, axis", [("oddoneout", 9, 0), ("sequence", 404, 1)])
def test_a_mirror_showing_another_picture_is_made_and_fails(tmp_path, family, seed, axis):
    inst = make_instance(family, "easy", 0, seed, RenderConfig())
    made = mirror(inst, RenderConfig(), _Flip(axis))
    assert not ops.same_picture(made.clip.frames[0], inst.solution[0]) or not ops.same_picture(
        made.clip.frames[-1], inst.solution[-1])
    assert not _score(tmp_path, family, "easy", seed, made.clip.frames)


def test_same_picture_tells_an_added_object_from_codec_noise_and_a_camera_move():
    rng = np.random.default_rng()
    inst = make_instance("sequence", "easy", 0, int(rng.integers(1 << 30)), RenderConfig())
    a = inst.solution[0]
    noisy = np.clip(a.astype(np.int16) + rng.integers(-6, 7, a.shape), 0, 255).astype(np.uint8)
    assert ops.same_picture(noisy, a)
    moved = np.full_like(a, a[2, 2])  # the whole picture shifted by a camera: the same picture
    dx, dy = int(rng.integers(4, 13)), int(rng.integers(-6, 7))
    moved[max(0, dy):a.shape[0] + min(0, dy), dx:] = a[max(0, -dy):a.shape[0] - max(0, dy), :a.shape[1] - dx]
    assert ops.same_picture(moved, a)
    marked = a.copy()
    x, y = int(rng.integers(40, a.shape[1] - 60)), int(rng.integers(20, 50))
    marked[y:y + 8, x:x + 8] = 0  # an 8×8 black square on the page: another picture
    assert not ops.same_picture(marked, a)


def test_visible_ycc_measures_luma_and_chroma_not_the_largest_rgb_channel():
    rng = np.random.default_rng()
    page = np.full((20, 20, 3), int(rng.integers(180, 240)), np.uint8)
    mask = np.zeros((20, 20), bool)
    mask[5:12, 4:15] = True
    d = int(rng.integers(10, 40))
    grey = page.copy()
    grey[mask] = page[mask] - d
    assert abs(ops.visible_ycc(page, grey, mask) - d) <= 1
    red = page.copy()
    red[mask, 0] = page[mask, 0] - 20  # the largest RGB channel moves 20; luma 6, Cr 10
    assert ops.visible(page, red, mask) == 20
    assert 9 <= ops.visible_ycc(page, red, mask) <= 11 < ops.FAINT_FLOOR


def test_marks_and_copies_are_drawn_above_the_faint_floor():
    """Random draws of the P1 mark and ghost kinds: what each adds changes its pixels by the floor or more."""
    from vreason.synth.adversary_principles import Case, make_case
    from vreason.synth.suite import default_families

    rng = np.random.default_rng()
    fams = default_families()
    made_any = 0
    for _ in range(6):
        fam = fams[int(rng.integers(len(fams)))]
        kind = str(rng.choice(["mark", "ghost"]))
        c = Case("P1", fam, kind, False, "easy", 0, int(rng.integers(1 << 20)), int(rng.integers(1 << 30)))
        try:
            made = make_case(c)
        except NotApplicable:
            continue
        inst = make_instance(fam, "easy", 0, c.seed, RenderConfig())
        last, orig = made.clip.frames[-1], inst.solution[-1]
        changed = np.abs(last.astype(np.int16) - orig.astype(np.int16)).max(axis=2) > 0
        assert changed.any()
        made_any += 1
        assert ops.visible_ycc(orig, last, changed) >= ops.FAINT_FLOOR * 0.9, (fam, kind, made.params)
    assert made_any
