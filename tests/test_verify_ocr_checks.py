"""TiViBench's OCR/OpenCV checks (sudoku, math, mcq, sequence, bars, match3) on images the tests render:
ground truth passes (also H.264 at a low bitrate and resized), the first frame, noise and wrong answers fail,
and a missing OCR engine gives ``passed=None`` with the reason, never 0. Needs the ``ocr`` extra."""

import os
import sys

import numpy as np
import pytest

from vreason.synth.base import RenderConfig
from vreason.synth.suite import make_instance
from vreason.verify import ocr as ocrmod
from vreason.verify.annotations import BarsParams, Box, Match3Params, McqParams, SequenceParams
from vreason.verify.checks import CheckEnv, get_check
from vreason.verify.math_answer import answers_equal, parse_value

CFG = RenderConfig()
SEED = 11


@pytest.fixture(scope="module")
def env():
    eng = ocrmod.get_ocr()
    assert eng is not None, "the ocr extra (rapidocr) must be installed for these tests"
    return CheckEnv(ocr=eng)


def run(family, frame, params, env, gt=None):
    entry = get_check(family)
    return entry.fn([frame], [0.0], gt, params, env)


def tivi(inst):
    from pydantic import TypeAdapter

    from vreason.verify.annotations import MetricParams

    return TypeAdapter(MetricParams).validate_python(inst.state["tivibench"]["metric"])


def reencode(frame, tmp_path, size=None, bitrate=150_000):
    """``frame`` through H.264 at a low bitrate (and resized to ``size``), as a model's MP4 arrives."""
    import cv2

    from vreason.frames import read_all, write_video

    if size is not None:
        frame = cv2.resize(frame, size, interpolation=cv2.INTER_AREA if size[0] < frame.shape[1] else cv2.INTER_LINEAR)
    path = str(tmp_path / f"v{frame.shape[1]}.mp4")
    write_video(path, [frame] * 4, 16, bitrate=bitrate)
    return read_all(path)[-1]


def noise(seed=0):
    return np.random.default_rng(seed).integers(0, 256, (CFG.height, CFG.width, 3), dtype=np.uint8)


# ------------------------------------------------------------------ safe expression parser
@pytest.mark.parametrize("text,value", [("12 + 7", 19), ("(18 - 6) × 3 + 15 ÷ 3", 41), ("2^3 − 1", 7),
                                        ("[(18-6)*3+15/3]^2-25*2", 1631), ("3/4", 0.75), ("-5", -5),
                                        ("１２", 12), ("7 x 8", 56), ("2**10", 1024), ("0.5 + 1/4", 0.75)])
def test_parser_values(text, value):
    assert float(parse_value(text)) == pytest.approx(value)


@pytest.mark.parametrize("text", ["__import__('os')", "abs(3)", "a + 1", "2 ** 1000", "1/0", "", "3 +", "2(3)",
                                  "(1)(2)", "1 if 1 else 2", "[1, 2]", "'7'", "9" * 300])
def test_parser_rejects(text):
    with pytest.raises(ValueError):
        parse_value(text)


def test_answers_equal_by_text_or_value():
    assert answers_equal("1631", "1631") == (True, "text")
    assert answers_equal("6/8", "3/4") == (True, "value")
    assert answers_equal("0.75", "3/4") == (True, "value")
    assert answers_equal("1632", "1631") == (False, "value")
    assert answers_equal("x+1", "x+1")[0] and not answers_equal("abc", "42")[0]


def test_a_handwritten_number_read_with_look_alike_characters():
    """A slanted 1 the recogniser gives as "/" and a 5 as "S" are read as those digits only when nothing else is
    left, at least one true digit was read, and the expected answer is a whole number in digits: an expression
    that parses keeps its meaning ("5/2" is a division), and a look-alike never turns one number into another."""
    assert answers_equal("2/", "21") == (True, "digits")
    assert answers_equal("/11", "111") == (True, "digits")
    assert answers_equal("2S", "25") == (True, "digits") and answers_equal("S0", "50") == (True, "digits")
    assert answers_equal("2S", "26") == (False, "unparsed")  # read as 25: not the expected 26
    assert answers_equal("5/2", "51") == (False, "value")  # a division (2.5), not a handwritten 51
    for text in ("S", "lOl", "Is", "2S.", "2S+1", "-2S", "9.7", "2)", "2 S 1 5x"):
        assert ocrmod.digit_reading(text) is None, text
    assert ocrmod.digit_reading("2 S") == "25" and ocrmod.digit_reading("2 S 1 5x") is None
    assert answers_equal("2/", "2.1") == (False, "unparsed")  # only against a whole number in digits
    assert answers_equal("S" + "1" * 5000, "5" + "1" * 5000) == (True, "digits")  # no int() limit on a long reply
    assert answers_equal("0S", "05") == (True, "digits") and answers_equal("1S", "15") == (True, "digits")
    # random draws: a whole number's digits, some replaced by a look-alike, read back; a wrong number never equal
    rng = np.random.default_rng()
    back = {d: [c for c, v in ocrmod.DIGIT_LOOKALIKES.items() if v == d] for d in "0123456789"}
    for _ in range(200):
        n = str(int(rng.integers(1, 10 ** int(rng.integers(1, 6)))))
        keep = int(rng.integers(len(n)))  # at least one true digit stays
        text = "".join(c if i == keep or not back[c] or rng.random() < 0.5 else str(rng.choice(back[c]))
                       for i, c in enumerate(n))
        wrong = str(int(n) + int(rng.integers(1, 99)))
        try:  # a "/" between digits makes a division ("2/3" for 213): an expression keeps its meaning
            value = parse_value(text)
        except ValueError:
            value = None
        if value is None:
            assert answers_equal(text, n)[0] and not answers_equal(text, wrong)[0], (text, n)
        else:
            assert answers_equal(text, n)[0] == (value == int(n)), (text, n)
            assert answers_equal(text, wrong)[0] == (value == int(wrong)), (text, wrong)


def test_normalise_fullwidth_and_minus():
    assert ocrmod.normalise(" １２−３ ") == "12-3"


# ------------------------------------------------------------------ no OCR engine → unscored, never 0
def test_without_the_extra_checks_are_unscored(monkeypatch):
    ocrmod.get_ocr.cache_clear()
    monkeypatch.setitem(sys.modules, "rapidocr", None)
    try:
        assert ocrmod.get_ocr() is None
    finally:
        ocrmod.get_ocr.cache_clear()
    none = CheckEnv(ocr=None)
    for fam in ("sudoku", "arithmetic", "numseq"):
        inst = make_instance(fam, "easy", 0, SEED, CFG)
        p = tivi(inst)
        res = get_check(p.family).fn([inst.final_frame], [0.0], None, p, none)
        assert res.passed is None and res.score is None and "ocr" in res.reason.lower(), fam
    res = run("mcq", make_instance("choice", "easy", 0, SEED, CFG).final_frame, McqParams(answer="A"), none)
    assert res.passed is None and res.score is None


def test_mcq_without_ocr_still_scores_by_option_position():
    inst = make_instance("choice", "easy", 0, SEED, CFG)
    res = run("mcq", inst.final_frame, tivi(inst), CheckEnv(ocr=None))
    assert res.passed is True and res.details["identified_by"] == "annotated option box"


# ------------------------------------------------------------------ sudoku
@pytest.mark.parametrize("difficulty", ["easy", "hard"])
def test_sudoku_ground_truth_passes_and_wrong_fails(env, difficulty, tmp_path):
    from vreason.synth.families.sudoku.family import cell_rect, render

    inst = make_instance("sudoku", difficulty, 0, SEED, CFG)
    p = tivi(inst)
    n = len(p.solution)
    ok = run("sudoku", inst.final_frame, p, env)
    assert ok.passed is True and ok.score == 1.0 and ok.backend.startswith("rapidocr")
    assert ok.overlay is not None and len(ok.details["read"]) == n
    if difficulty == "easy":
        assert run("sudoku", reencode(inst.final_frame, tmp_path, (320, 180)), p, env).passed is True
    first = run("sudoku", inst.first_frame, p, env)
    blanks = sum(v == 0 for row in inst.state["puzzle"] for v in row)
    assert first.passed is False and first.score == pytest.approx(1 - blanks / n ** 2)
    st = inst.state
    vals = [row[:] for row in st["solution"]]
    r, c = next((r, c) for r in range(n) for c in range(n) if not st["puzzle"][r][c])
    vals[r][c] = vals[r][c] % n + 1
    one = run("sudoku", render(st, CFG, vals), p, env)
    assert one.passed is False and one.details["wrong_cells"] == [[r, c, vals[r][c], st["solution"][r][c]]]
    assert one.score == pytest.approx(1 - 1 / n ** 2)
    assert run("sudoku", noise(), p, env).passed is False
    assert cell_rect(st, r, c)[0] > 0


def test_sudoku_finds_the_grid_without_a_region(env):
    inst = make_instance("sudoku", "medium", 0, SEED, CFG)
    p = tivi(inst).model_copy(update={"region": None})
    res = run("sudoku", inst.final_frame, p, env)
    assert res.passed is True and res.details["grid_found_by"] == "contour"
    assert run("sudoku", np.full_like(inst.final_frame, 255), p, env).passed is False


# ------------------------------------------------------------------ math
def test_math_answer_after_equals(env, tmp_path):
    from vreason.synth.families.arithmetic.family import render

    inst = make_instance("arithmetic", "hard", 0, SEED, CFG)
    p = tivi(inst)
    ok = run("math", inst.final_frame, p, env)
    assert ok.passed is True and ok.details["answer"] == inst.state["answer"]
    assert run("math", reencode(inst.final_frame, tmp_path, (320, 180)), p, env).passed is True
    wrong = run("math", render(inst.state, CFG, str(int(inst.state["answer"]) + 1)), p, env)
    assert wrong.passed is False and wrong.score == 0.0 and "≠" in wrong.reason
    empty = run("math", inst.first_frame, p, env)
    assert empty.passed is False and "nothing written" in empty.reason
    assert run("math", noise(), p, env).passed is False
    # no region: detection finds the line holding "="
    assert run("math", inst.final_frame, p.model_copy(update={"region": None}), env).passed is True


# ------------------------------------------------------------------ multiple choice
def test_mcq_exactly_the_right_box(env, tmp_path):
    fam_inst = make_instance("choice", "medium", 0, SEED, CFG)
    from vreason.synth.families.choice.family import render

    st, p = fam_inst.state, tivi(fam_inst)
    c = st["correct"]
    ok = run("mcq", fam_inst.final_frame, p, env)
    assert ok.passed is True and ok.details["boxes"][0]["by_ocr"] == p.answer
    assert run("mcq", reencode(fam_inst.final_frame, tmp_path, (1280, 720)), p, env).passed is True
    wrong = run("mcq", render(st, CFG, ((c + 1) % 4,)), p, env)
    assert wrong.passed is False and "highlighted" in wrong.reason
    two = run("mcq", render(st, CFG, (c, (c + 2) % 4)), p, env)
    assert two.passed is False and len(two.details["highlighted"]) == 2
    assert run("mcq", fam_inst.first_frame, p, env).passed is False
    assert run("mcq", noise(), p, env).passed is False
    # without annotated boxes the letter inside the red box is read by OCR
    by_ocr = p.model_copy(update={"option_boxes": {}})
    assert run("mcq", fam_inst.final_frame, by_ocr, env).passed is True
    assert run("mcq", render(st, CFG, ((c + 1) % 4,)), by_ocr, env).passed is False


# ------------------------------------------------------------------ numeric sequence
def test_sequence_cells_and_region(env, tmp_path):
    from vreason.synth.families.numseq.family import render

    inst = make_instance("numseq", "hard", 0, SEED, CFG)
    st, p = inst.state, tivi(inst)
    ok = run("sequence", inst.final_frame, p, env)
    assert ok.passed is True and ok.details["read"] == p.expected
    assert run("sequence", reencode(inst.final_frame, tmp_path, (320, 180)), p, env).passed is True
    i = st["missing"][0]
    wrong = run("sequence", render(st, CFG, {j: str(st["values"][j] + (j == i)) for j in st["missing"]}), p, env)
    assert wrong.passed is False and wrong.details["wrong_items"] == [i]
    assert run("sequence", inst.first_frame, p, env).passed is False
    assert run("sequence", noise(), p, env).passed is False
    row = Box(x0=0.02, y0=0.3, x1=0.98, y1=0.7)
    region = SequenceParams(expected=p.expected, region=row)
    assert run("sequence", inst.final_frame, region, env).passed is True
    assert run("sequence", inst.first_frame, region, env).passed is False


# ------------------------------------------------------------------ bars
def _bars(heights, w=640, h=360, colour=(40, 90, 220)):
    img = np.full((h, w, 3), 255, np.uint8)
    for k, bh in enumerate(heights):
        x = int(80 + k * 100)
        img[int(h * 0.9 - bh * h):int(h * 0.9), x:x + 40] = colour
    return img


def test_bars_count_order_and_heights(tmp_path):
    env = CheckEnv()
    hs = [0.15, 0.25, 0.35, 0.45, 0.6]
    p = BarsParams(n_bars=5, expected_heights=hs)
    ok = run("bars", _bars(hs), p, env)
    assert ok.passed is True and ok.score == 1.0 and ok.backend == "classical:colour"
    assert ok.details["heights"] == pytest.approx(hs, abs=0.01)
    assert run("bars", reencode(_bars(hs), tmp_path, (320, 180)), p, env).passed is True
    swapped = run("bars", _bars([0.15, 0.35, 0.25, 0.45, 0.6]), p, env)
    assert swapped.passed is False and swapped.details["checks"]["order"] is False and swapped.score == 0.75
    assert run("bars", _bars(hs[:4]), p, env).passed is False
    stretched = run("bars", _bars([0.15, 0.25, 0.35, 0.5, 0.6]), p, env)
    assert stretched.passed is False and stretched.details["checks"] == {"count": True, "order": True,
                                                                         "heights": False}
    assert run("bars", _bars(hs[::-1]), p, env).passed is False
    assert run("bars", _bars(hs[::-1]), BarsParams(n_bars=5, order="descending"), env).passed is True
    assert run("bars", noise(), p, env).passed is False


def test_bars_in_falling_light_over_print_and_dark_grounds():
    """The reader judges a bar's value against the paper's local light and bridges print under the ink
    (``colour.colour_mask(local_light=True)``, ``colour.through_print``): bars under a light falling to 20% across
    the chart (the far bar's blue at value 44, under the absolute floor of 60), and bars crossed by ruled lines
    (4 px, dark: one runs down a bar), read right — the absolute reader found 3 bars and 23 pieces; a white 3-px gap
    between two touching bars still parts them (paper is brighter than the ink), and a dark navy ground with noise
    (a background of the bars' own hue, no lit paper) or black with noise holds no bar."""
    env = CheckEnv()
    hs = [0.2, 0.3, 0.45, 0.6]
    p = BarsParams(n_bars=4, expected_heights=hs)
    light = np.clip(1.0 - 0.8 * np.arange(CFG.width) / 380, 0.2, 1.0)[None, :, None]
    dim = (_bars(hs).astype(np.float32) * light).astype(np.uint8)
    res = run("bars", dim, p, env)
    assert res.passed is True, res.details
    ruled = _bars(hs)
    for y in range(40, CFG.height, 37):
        ruled[y:y + 4] = (ruled[y:y + 4] * 0.2).astype(np.uint8)
    ruled[:, 299:303] = (ruled[:, 299:303] * 0.2).astype(np.uint8)
    res = run("bars", ruled, p, env)
    assert res.passed is True and res.details["n_found"] == 4, res.details
    touching = np.full((CFG.height, CFG.width, 3), 255, np.uint8)
    touching[int(CFG.height * 0.9 - 0.3 * CFG.height):int(CFG.height * 0.9), 100:200] = (40, 90, 220)
    touching[:, 149:152] = 255
    assert run("bars", touching, BarsParams(n_bars=2), env).details["n_found"] == 2
    rng = np.random.default_rng(0)
    for ground in ((20, 20, 30), (0, 0, 0)):
        img = np.clip(np.full((CFG.height, CFG.width, 3), ground, np.float32) + rng.normal(0, 4, dim.shape), 0, 255)
        assert run("bars", img.astype(np.uint8), p, env).details["n_found"] == 0


@pytest.mark.parametrize("draw", range(3))
def test_bars_on_a_dark_ground_keep_the_rows_above_them(draw):
    """Bars on a black or navy ground (noise, H.264-like blur) under empty dark rows: a dark band on one side was
    cut off as a letterbox, and the heights were read against the cropped picture (the tallest 0.70 of the frame
    read 0.85: ``expected_heights`` failed, a listed gap of the twenty-fifth session). Knowing the picture's aspect
    (the reference image's; the suite passes its render's as the ``aspect`` option), a frame of that aspect keeps
    its dark rows, and the same chart inside a real black letterbox (a 4:3 or 9:16 frame) is still cut out of it.
    Without the aspect the reader cannot tell the two apart (the old reading: a crop)."""
    import cv2

    r = np.random.default_rng([int(os.environ.get("VREASON_ADV_SEED", SEED)), 29, draw])
    env = CheckEnv()
    hs = sorted(float(v) for v in r.uniform(0.15, 0.72, 4))
    ground = [(0, 0, 0), (20, 22, 40)][int(r.integers(2))]
    img = _bars(hs)
    img[(img == 255).all(axis=2)] = ground
    img = np.clip(img.astype(np.float32) + r.normal(0, 3, img.shape), 0, 255).astype(np.uint8)
    img = cv2.GaussianBlur(img, (3, 3), 0)
    p = BarsParams(n_bars=4, expected_heights=hs, height_tol=0.04)
    gt = np.zeros_like(img)
    ok = run("bars", img, p, env, gt=gt)
    assert ok.passed is True, (hs, ground, ok.details)
    opt = run("bars", img, p, CheckEnv(options={"aspect": 16 / 9}))
    assert opt.passed is True, opt.details
    short = BarsParams(n_bars=4, expected_heights=[*hs[:3], hs[3] - 0.1], height_tol=0.04)
    assert run("bars", img, short, env, gt=gt).passed is False
    h, w = img.shape[:2]
    for fh, fw in ((w * 3 // 4, w), (int(w * 16 / 9), w)):  # a real letterbox: the picture centred in bars
        framed = np.zeros((fh, fw, 3), np.uint8)
        top = (fh - h) // 2
        framed[top:top + h] = img
        got = run("bars", framed, p, env, gt=gt)
        assert got.passed is True, ((fh, fw), got.details)


# ------------------------------------------------------------------ match-3
def _board(seed, w=640, h=360, blanks=()):
    """A match-3 board: 6×6 coloured tiles (cells in ``blanks`` cleared) in the middle of a grey frame."""
    cols = np.array([(220, 40, 40), (40, 90, 220), (30, 150, 60), (240, 200, 40), (130, 60, 190)], np.uint8)
    pick = np.random.default_rng(seed).integers(0, len(cols), (6, 6))
    img = np.full((h, w, 3), 200, np.uint8)
    s = 50
    x0, y0 = (w - 6 * s) // 2, (h - 6 * s) // 2
    for r in range(6):
        for c in range(6):
            if (r, c) not in blanks:
                img[y0 + r * s + 3:y0 + (r + 1) * s - 3, x0 + c * s + 3:x0 + (c + 1) * s - 3] = cols[pick[r, c]]
    return img, Box(x0=(x0 - 4) / w, y0=(y0 - 4) / h, x1=(x0 + 6 * s + 4) / w, y1=(y0 + 6 * s + 4) / h)


def test_match3_edges_and_ssim(tmp_path):
    env = CheckEnv()
    gt, box = _board(1, blanks=((5, 0), (5, 1), (5, 2)))
    # task-specific thresholds (appendix C gives none): honest re-encodings measured SSIM ≥ 0.969 and edge F1
    # 1.0 at the 160-px working size; one tile left over gives 0.981 / 0.983, three give 0.951 / 0.951
    p = Match3Params(region=box)  # the defaults
    ok = run("match3", gt, p, env, gt=gt)
    assert ok.passed is True and ok.details["ssim"] == 1.0 and ok.details["edge_f1"] == 1.0
    honest = run("match3", reencode(gt, tmp_path, (1280, 720)), p, env, gt=gt)
    assert honest.passed is True, honest.details
    unsolved = run("match3", _board(1)[0], p, env, gt=gt)  # the three tiles never removed
    assert unsolved.passed is False
    one_left = run("match3", _board(1, blanks=((5, 0), (5, 1)))[0], p, env, gt=gt)
    assert one_left.passed is False and one_left.details["edge_f1"] < p.edge_threshold
    assert run("match3", reencode(gt, tmp_path, (320, 180)), p, env, gt=gt).passed is True
    other = run("match3", _board(2, blanks=((5, 0), (5, 1), (5, 2)))[0], p, env, gt=gt)
    assert other.passed is False and other.details["ssim"] < p.ssim_threshold
    assert run("match3", noise(), p, env, gt=gt).passed is False
    unscored = run("match3", gt, p, env, gt=None)
    assert unscored.passed is None and unscored.score is None and "ground-truth" in unscored.reason


@pytest.mark.parametrize("family", ["sudoku", "math", "mcq", "sequence", "bars", "match3"])
def test_bad_frames_fail_with_a_reason(env, family):
    params = {"sudoku": lambda: tivi(make_instance("sudoku", "easy", 0, SEED, CFG)),
              "math": lambda: tivi(make_instance("arithmetic", "easy", 0, SEED, CFG)),
              "mcq": lambda: McqParams(answer="A"), "sequence": lambda: SequenceParams(expected=["1"]),
              "bars": lambda: BarsParams(n_bars=2), "match3": Match3Params}[family]()
    fn = get_check(family).fn
    gt = np.zeros((360, 640, 3), np.uint8)
    for frames, why in (([], "no frame"), ([np.zeros((2, 2, 3), np.uint8)], "too small"),
                        ([np.zeros((5, 5, 5, 5), np.uint8)], "shape")):
        res = fn(frames, [], gt, params, env)
        assert res.passed is False and res.score == 0.0 and why in res.reason, (family, res.reason)


def test_registry_declares_needs():
    for fam in ("sudoku", "math", "mcq", "sequence"):
        assert get_check(fam).needs == ("ocr",) and get_check(fam).frames == "last"
    assert get_check("bars").needs == () and get_check("match3").needs == ()
