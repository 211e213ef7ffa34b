"""The built-in suite's text families (sudoku, arithmetic, choice, numseq): deterministic instances with a
valid TiViBench record, ground truth passing and trivial baselines failing through the suite's scorer (H.264),
the PIL font offline and deterministic, and no OCR engine → unscored (never 0). The cheats and honest
renderings are in tests/test_synth_adversarial.py (vreason.synth.families.<family>.adversary)."""

import numpy as np
import pytest

from conftest import one_case
from vreason.synth.adversary import Clip, score_clip
from vreason.synth.base import DIFFICULTIES, RenderConfig
from vreason.synth.suite import get_family, make_instance
from vreason.verify.annotations import TASK_TYPES, TiviAnnotation

CFG = RenderConfig()
SEED = 5
FAMILIES = {"sudoku": ("SL", "sudoku"), "arithmetic": ("SL", "arithmetic"), "choice": ("SL", "symbolic"),
            "numseq": ("SS", "rule")}


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_deterministic_with_a_valid_tivibench_record(family):
    a = make_instance(family, "medium", 3, SEED, CFG)
    b = make_instance(family, "medium", 3, SEED, CFG)
    c = make_instance(family, "medium", 4, SEED, CFG)
    assert a.state == b.state and np.array_equal(a.final_frame, b.final_frame)
    assert a.state != c.state
    rec = a.state["tivibench"]
    dim, task = FAMILIES[family]
    assert (rec["dimension"], rec["task_type"]) == (dim, task) and TASK_TYPES[task][0] == dim
    ann = TiviAnnotation(key=f"medium_{task}_003", difficulty="medium", **rec)
    # sudoku/arithmetic/symbolic use their task type's default family; rule (default: region similarity) is
    # annotated with the numeric-sequence check, as appendix C.1 ④ describes for number sequences
    assert ann.metric.family == {"numseq": "sequence"}.get(family, TASK_TYPES[task][2])
    assert len(a.solution) == CFG.n_frames and np.array_equal(a.solution[0], a.first_frame)
    assert not np.array_equal(a.first_frame, a.final_frame) and a.prompt


def test_font_is_the_scalable_builtin_and_deterministic():
    from PIL import ImageFont

    from vreason.synth import tivi_text as tt

    assert isinstance(tt.font(30), ImageFont.FreeTypeFont)
    imgs = []
    for _ in range(2):
        img = np.full((60, 200, 3), 255, np.uint8)
        tt.put_text(img, "12 + 7 =", (100, 30), 30)
        imgs.append(img)
    assert np.array_equal(imgs[0], imgs[1]) and (imgs[0] < 128).any()


def test_sudoku_puzzles_are_valid_and_unique():
    from vreason.synth.families.sudoku.family import count_solutions

    for d in DIFFICULTIES:
        st = make_instance("sudoku", d, 0, SEED, CFG).state
        n, (br, bc) = st["n"], st["box"]
        sol = st["solution"]
        full = set(range(1, n + 1))
        assert all(set(row) == full for row in sol) and all({sol[r][c] for r in range(n)} == full for c in range(n))
        for r0 in range(0, n, br):
            for c0 in range(0, n, bc):
                assert {sol[r][c] for r in range(r0, r0 + br) for c in range(c0, c0 + bc)} == full
        assert all(v in (0, sol[r][c]) for r, row in enumerate(st["puzzle"]) for c, v in enumerate(row))
        assert count_solutions(st["puzzle"], br, bc) == 1


def test_answers_are_consistent():
    from vreason.verify.math_answer import parse_value

    for d in DIFFICULTIES:
        st = make_instance("arithmetic", d, 1, SEED, CFG).state
        assert parse_value(st["lhs"]) == int(st["answer"]) > 0
        ns = make_instance("numseq", d, 1, SEED, CFG).state
        assert len(set(ns["values"])) == len(ns["values"]) and ns["missing"]
        ch = make_instance("choice", d, 1, SEED, CFG).state
        assert len(set(ch["values"])) == 4 and ch["tivibench"]["metric"]["answer"] == "ABCD"[ch["correct"]]


@pytest.mark.parametrize("family,difficulty", [("sudoku", "medium"), ("arithmetic", "medium"), ("choice", "easy"),
                                               ("numseq", "hard")])
def test_ground_truth_passes_baselines_fail(tmp_path, family, difficulty):
    inst = make_instance(family, difficulty, 0, SEED, CFG)
    fam = get_family(family)

    def score(frames, tag):
        return score_clip(family, difficulty, 0, SEED, Clip(frames, float(CFG.fps)), str(tmp_path), CFG, tag=tag)

    gt = score(inst.solution, "oracle")
    assert gt.status.value == "ok" and gt.passed and gt.value == 1.0, gt.evidence.details
    assert gt.evidence.details["backend"]
    static = score([inst.first_frame] * CFG.n_frames, "static")
    assert static.status.value == "ok" and not static.passed and static.value == 0.0
    rnd = score(fam.random_motion(inst, np.random.default_rng(1), CFG), "random")
    assert rnd.status.value == "ok" and not rnd.passed and rnd.value == 0.0


def test_without_ocr_the_suite_scores_unscored(tmp_path, monkeypatch):
    from vreason.verify import ocr

    monkeypatch.setattr(ocr, "get_ocr", lambda: None)
    inst = make_instance("numseq", "easy", 0, SEED, CFG)
    s = score_clip("numseq", "easy", 0, SEED, Clip(inst.solution, float(CFG.fps)), str(tmp_path), CFG)
    assert s.status.value == "unscored" and s.value is None and "ocr" in s.reason.lower()
    # the choice family identifies the red box by its annotated position: it still scores
    inst = make_instance("choice", "easy", 0, SEED, CFG)
    s = score_clip("choice", "easy", 0, SEED, Clip(inst.solution, float(CFG.fps)), str(tmp_path), CFG)
    assert s.status.value == "ok" and s.passed


def test_a_number_written_with_a_leading_zero_is_not_the_answer():
    """Principle 4, a written answer is one numeral: the "?" card filled with the answer behind a "0" (a copy of the
    answer's "0" pasted left of it read "030", equal in value — TiViBench's rule takes it; VREASON_ADV_SEED=818863493)
    fails ``one_value``, the answer as written passes, and the evidence shows the read."""
    pytest.importorskip("rapidocr")
    fam = get_family("numseq")
    inst = make_instance("numseq", "easy", 0, SEED, CFG)
    st = inst.state
    right = fam.verify(fam.solve(st, CFG, CFG.n_frames), st, CFG)
    assert right.passed and right.evidence["checks"]["one_value"], right.evidence
    padded = {i: "0" + str(st["values"][i]) for i in st["missing"]}
    res = fam.verify(fam.solve(st, CFG, CFG.n_frames, padded), st, CFG)
    assert not res.passed and not res.evidence["checks"]["one_value"], res.evidence
    assert res.evidence["checks"]["answer"], res.evidence  # the released rule's value match alone would pass it
    assert any(r.startswith("0") for r in res.evidence["read"]["read"]), res.evidence["read"]


@pytest.mark.parametrize("difficulty", one_case(["easy", "medium", "hard"], salt="ink-growth"))
def test_an_answer_still_darkening_in_the_held_window_is_not_held(difficulty):
    """Principle 3, the end state is reached and held: numseq's answers fade in slowly (easy: over 2.2 s), and a
    video cut two frames after the last one that differs visibly from the final picture (over 40 levels) reads
    right, changes too little in the last 0.15 s to count as changed and too little per 4×4 block to count as
    fading — but its answer's ink still grows at every step of the last 0.35 s (by 5–12%; bench seed 28301's
    ``end_early`` at easy, cut at frame 29, passed). ``held`` fails it (``frametools.end_ink_growth``); the whole
    oracle holds."""
    pytest.importorskip("rapidocr")
    fam = get_family("numseq")
    inst = make_instance("numseq", difficulty, 0, SEED, CFG)
    sol = list(inst.solution)
    assert fam.verify(sol, inst.state, CFG).passed
    visible = [j for j, f in enumerate(sol) if int((np.abs(f.astype(int) - sol[-1]).max(axis=2) > 40).sum()) >= 40]
    end = visible[-1] + 2
    res = fam.verify(sol[:end + 1], inst.state, CFG)
    assert res.evidence["checks"]["answer"], res.evidence  # read as the answer
    assert not res.passed and not res.evidence["checks"]["held"], res.evidence
    assert res.evidence["hold_growing"]["share"] > 0.03, res.evidence


def test_a_slow_zoom_is_not_an_answer_still_fading(tmp_path):
    """An easy arithmetic oracle under an honest 4.6% zoom (P5 ``zoom``, case seed 3415770, index 2). The held
    window's frames, measured against the last one, moved towards it frame after frame (the zoom), and aligned onto
    it by the frame-to-frame search they still did: on the white page with one line of text that search missed
    the zoom, and 112 px read as "still fading" from frame 58 (``held`` failed). The full similarity search
    against the last frame is now a candidate too (``end_hold._onto_last``): held."""
    from vreason.synth.adversary_principles import Case, run_case

    out = run_case(Case("P5", "arithmetic", "zoom", True, "easy", 2, 5, 3415770), str(tmp_path))
    assert out is not None and out.params["zoom"] == 0.046
    assert out.ok and out.passed, out.reason


JUMPS = [("arithmetic", "easy", 2, 187208523), ("numseq", "easy", 2, 33090419), ("numseq", "medium", 1, 865640924),
         ("numseq", "easy", 0, 761904750)]


@pytest.mark.parametrize("family,difficulty,index,case_seed",
                         one_case(JUMPS, "fade-jump", [f"{j[0]}-{j[3]}" for j in JUMPS]))
def test_a_jump_while_the_answer_fades_in_fails(tmp_path, family, difficulty, index, case_seed):
    """P2 ``jump``: 2–5 frames from elsewhere in the video (or the final picture) while the answer is still fading
    in. Through H.264 each of these passed: the answer shown whole for a few frames, then back to its fade, never
    moved a pixel across :data:`~vreason.verify.written.CHANGED` and back under ``RETURNED``. The written answer's
    ink level is now held at every level (``written.FADED``): the fall back to the fade fails the scene."""
    from vreason.synth.adversary_principles import Case, run_case

    out = run_case(Case("P2", family, "jump", False, difficulty, index, SEED, case_seed), str(tmp_path))
    assert out is not None and out.ok and not out.passed, out
    assert out.reason == "failed checks: scene", out.reason


def test_choice_a_wrong_options_outline_shifted_fails_and_the_red_redraw_passes(tmp_path):
    """Principle 1: the ring along each option's outline is free only where red shows or beside it
    (choice.RED_NEAR_PX). A wrong option's grey outline moved by a random 2-3 px in x and y from a random frame on
    (its label left in place), in the oracle, through H.264: unexplained. Until the nineteenth session the ring took
    any outline colour, and an outline moved by (2, 2) passed (P1 shift_background, hard, case seed 1244707308).
    A 1-px move is inside the residual's 1-px edge range by design."""
    import copy

    from vreason.synth.families.choice.family import render
    from vreason.verify.explain import box_mask

    r = np.random.default_rng(int(np.random.default_rng().integers(1 << 30)))
    difficulty = str(r.choice(["easy", "medium", "hard"]))
    seed = int(r.integers(1 << 20))
    inst = make_instance("choice", difficulty, 0, seed, CFG)
    k = int(r.choice([i for i in range(4) if i != inst.state["correct"]]))
    dx, dy = (int(v) * int(r.choice([-1, 1])) for v in r.integers(2, 4, 2))
    moved_state = copy.deepcopy(inst.state)
    x0, y0, x1, y1 = moved_state["layout"]["boxes"][k]
    moved_state["layout"]["boxes"][k] = [x0 + dx, y0 + dy, x1 + dx, y1 + dy]
    shifted = render(moved_state, CFG)
    hw = (CFG.height, CFG.width)
    ring = box_mask(hw, [(x0, y0, x1, y1)], pad=9) & ~box_mask(hw, [(x0, y0, x1, y1)], pad=-9)
    t0 = int(r.integers(CFG.n_frames // 4, CFG.n_frames - 8))
    frames = [f.copy() for f in inst.solution]
    for f in frames[t0:]:
        f[ring] = shifted[ring]
    gt = score_clip("choice", difficulty, 0, seed, Clip(inst.solution, float(CFG.fps)), str(tmp_path), CFG, "gt")
    assert gt.passed, gt.evidence.details
    moved = score_clip("choice", difficulty, 0, seed, Clip(frames, float(CFG.fps)), str(tmp_path), CFG, "moved")
    assert not moved.passed, (difficulty, seed, k, dx, dy, t0)


def test_choice_a_slow_zoom_closing_in_on_the_last_frame_is_held(tmp_path):
    """An honest 4.4% zoom (P5 `zoom`, hard, case seed 1736827138): the held window's frames aligned onto the last one
    by the nearest similarity leave the red outline's edge blocks a fraction of a pixel off, less in each later
    frame — 112 px "still fading" on the eighteenth session's code. Compared shift-tolerant (quarter-pixel shifts up
    to 1 px, ``end_hold.ALIGNED_SHIFT_PX``), it is held."""
    from vreason.synth.adversary_principles import run_case, sample_cases

    case = next(c for c in sample_cases(["choice"], 19069, per_kind=3, index=0, principles=("P1", "P5"))
                if c.kind == "zoom" and c.case_seed == 1736827138)
    out = run_case(case, str(tmp_path))
    assert out is not None and out.passed, out.reason if out else None
