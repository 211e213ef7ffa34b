"""The TiViBench readers on real imagery (issue 24, principle 6), not only on our renderings.

Real media come only from Debian's opencv-doc (fetched by the test set-up, never committed): 5000 real
handwritten digits (``digits.png``, see ``tests/handwriting.py``), a newspaper sudoku photo and a printed
page, upright and turned (``imageTextN.png`` / ``imageTextR.png``). Real content is composed into each
reader's input by principle, every random choice (which sample of a digit, its size, place, slant of the
line, ink colour, the mark's wobble) drawn from ``VREASON_ADV_SEED``:

* handwritten digits written into the blank cells of a suite-rendered sudoku and of the real photo;
* a handwritten number written after "=" of an arithmetic line;
* a hand-drawn loop (ellipse or squarish) in red round one option of a rendered multiple-choice sheet;
* handwritten numbers written into the blank cells of a number sequence;
* real printed text lines through the OCR line reader (detection + recognition) and line by line.

The floors asserted are just below what was measured on many seeds (numbers in each test's docstring and
in docs/suite_validity.md, "Real images"); a wrong handwritten answer must fail in every case. Needs the
``ocr`` extra.
"""

from __future__ import annotations

import difflib
import os

import numpy as np
import pytest

from handwriting import Digits, hand_loop, write, write_number
from vreason.synth.base import RenderConfig
from vreason.synth.suite import make_instance
from vreason.verify import gridread
from vreason.verify import ocr as ocrmod
from vreason.verify.checks import CheckEnv, get_check
from vreason.verify.sudoku import read_grid

CFG = RenderConfig()
SEED = int(os.environ.get("VREASON_ADV_SEED") or 0)


def rng_for(*key: int) -> np.random.Generator:
    return np.random.default_rng([SEED, *key])


def ink_colour(rng: np.random.Generator) -> tuple[int, int, int]:
    """A dark pen: black, blue-black, brown-black…"""
    return tuple(int(v) for v in rng.integers(10, 90, 3))  # type: ignore[return-value]


@pytest.fixture(scope="module")
def env():
    eng = ocrmod.get_ocr()
    assert eng is not None, "the ocr extra (rapidocr) must be installed for these tests"
    return CheckEnv(ocr=eng)


@pytest.fixture(scope="module")
def digits(opencv_samples):
    return Digits(opencv_samples["digits.png"])


def rgb(path: str) -> np.ndarray:
    import cv2

    img = cv2.imread(path, cv2.IMREAD_COLOR)
    assert img is not None, path
    return cv2.cvtColor(img, cv2.COLOR_BGR2RGB)


def tivi(inst):
    from pydantic import TypeAdapter

    from vreason.verify.annotations import MetricParams

    return TypeAdapter(MetricParams).validate_python(inst.state["tivibench"]["metric"])


def run(check, frame, params, env):
    return get_check(check).fn([frame], [0.0], None, params, env)


# ------------------------------------------------------------------ sudoku: handwriting in a rendered grid
def test_handwritten_digits_in_a_rendered_sudoku(env, digits):
    """The solution's digits handwritten (one real sample each, 55–75% of the cell, off-centre by up to 8%)
    into the 30 blank cells of a suite 9×9 grid. Measured: 295/300 on 10 explorer seeds (≥ 28/30 each;
    misses: 7 and 9 read as 1, a 4 as 9, a 5 as 6), and 25/30 with ``VREASON_ADV_SEED=12345`` (a curly 2
    read as d, a 4 as Y, a looped 9 as G, an 8 as r, a 5 as S: OCR gives a letter, the cell is unreadable);
    177/180 on the first 6 before the line-margin regrow. Floor: 24/30, every printed given right, and a
    cell written with a wrong digit is reported as wrong."""
    from vreason.synth.families.sudoku.family import cell_rect

    rng = rng_for(1)
    inst = make_instance("sudoku", "hard", 0, int(rng.integers(10 ** 6)), CFG)
    st, p = inst.state, tivi(inst)
    n, sol, cs = st["n"], st["solution"], st["layout"]["cell"]
    blanks = [(r, c) for r in range(n) for c in range(n) if not st["puzzle"][r][c]]
    wrong_at = blanks[int(rng.integers(len(blanks)))]
    ink = ink_colour(rng)
    img = inst.first_frame.copy()
    for r, c in blanks:
        x0, y0, x1, y1 = cell_rect(st, r, c)
        v = sol[r][c] % n + 1 if (r, c) == wrong_at else sol[r][c]
        centre = ((x0 + x1) / 2 + rng.uniform(-0.08, 0.08) * cs, (y0 + y1) / 2 + rng.uniform(-0.08, 0.08) * cs)
        write(img, digits.glyph(v, rng), centre, int(cs * rng.uniform(0.55, 0.75)), ink)
    res = run("sudoku", img, p, env)
    assert res.passed is False  # the one wrong digit
    read = {(r, c): v for r, c, v, _ in res.details["wrong_cells"]}
    assert wrong_at in read, res.details["wrong_cells"]
    assert all(st["puzzle"][r][c] == 0 for r, c in read), f"a printed given misread: {res.details['read']}"
    written = {(r, c): sol[r][c] % n + 1 if (r, c) == wrong_at else sol[r][c] for r, c in blanks}
    right = sum(read.get(rc, sol[rc[0]][rc[1]]) == v for rc, v in written.items())
    assert right >= 24, (right, res.details["wrong_cells"])


# ------------------------------------------------------------------ sudoku: handwriting in the real photo
def test_handwritten_digits_in_the_real_sudoku_photo(env, digits, opencv_samples):
    """30 of the photo's 55 blank cells, twice, filled with random handwritten digits laid on the paper
    (the ink multiplies the photo, so its dim light and vignetting stay on it), placed through the grid's
    perspective. Measured: 130/150 before the line-margin regrow (a 7's bar written close under a grid line
    was cut off as line margin: read as 1), 448/480 after (16 draws, ≥ 27/30 each); the misses are a 7
    whose bar lies on the line, and shapes OCR reads as letters or other digits (an 8 as P, a 2 as α, a 9
    as 4). Floor: 104/120 (four draws; the same 86.7% as the former 52/60 of two draws, which a run missed at
    51/60 on VREASON_ADV_SEED=10135040 — at 93% per digit, 60 digits fall below it ≈ 1.5% of runs, 120 ≈ 0.2%);
    the 51 printed cells all right."""
    import cv2

    from test_sudoku_real_photo import PHOTO_GRID

    photo = rgb(opencv_samples["sudoku.png"])
    corners, how = gridread.find_grid(photo)
    assert how == "contour"
    side = 9 * 48
    to_photo = cv2.getPerspectiveTransform(np.array([[0, 0], [side, 0], [side, side], [0, side]], np.float32),
                                           corners.astype(np.float32))
    blanks = [(r, c) for r in range(9) for c in range(9) if not PHOTO_GRID[r][c]]
    right = total = 0
    for k in range(4):
        rng = rng_for(2, k)
        img, want = photo.copy(), [row[:] for row in PHOTO_GRID]
        ink = ink_colour(rng)
        pick = [blanks[i] for i in rng.choice(len(blanks), 30, replace=False)]
        for r, c in pick:
            v = int(rng.integers(1, 10))
            want[r][c] = v
            jx, jy = rng.uniform(-0.08, 0.08, 2)
            pts = np.array([[[(c + 0.5 + jx) * 48, (r + 0.5 + jy) * 48], [(c + 0.5) * 48, r * 48],
                             [(c + 0.5) * 48, (r + 1) * 48]]], np.float32)
            q = cv2.perspectiveTransform(pts, to_photo)[0]
            cell_h = float(np.linalg.norm(q[2] - q[1]))
            write(img, digits.glyph(v, rng), (float(q[0][0]), float(q[0][1])), int(cell_h * rng.uniform(0.55, 0.75)),
                  ink)
        grid_corners, _ = gridread.find_grid(img)
        read, _ = read_grid(gridread.warp(img, grid_corners, 9, 48), 9, env.ocr)
        printed = [(r, c) for r in range(9) for c in range(9) if (r, c) not in pick]
        assert all(read[r][c] == want[r][c] for r, c in printed), read
        right += sum(read[r][c] == want[r][c] for r, c in pick)
        total += len(pick)
    assert right >= 104, f"{right}/{total} handwritten digits read"


# ------------------------------------------------------------------ math: a handwritten answer after "="
def test_handwritten_answer_after_equals(env, digits):
    """The answer handwritten after the rendered "lhs =" (digits 80–110% of the font size, each off the line by up
    to 6%, a little apart): read from the annotated line region. Measured: 20/21 lines (seeds 0–20; a 57 read as
    S7); without the region (detection over the frame) 18/21. On 40 fresh seeds only 213/240 (a slanted 1 read as
    "/", a 5 as "S"): 4/6 failed one run in ~50 (``VREASON_ADV_SEED=715234523``: 3/6); with look-alike characters
    read as digits (:func:`vreason.verify.ocr.digit_reading`) 222/240 there and 450/480 on 80 more seeds, every one
    of the 240 wrong answers failing. Floor: 8/12 right answers pass (at 93.75% per line it fails one run in
    ~2,000); a wrong handwritten answer fails on all 3. A wrong answer is the right one plus 11–88, so it differs in
    its last two digits: one misread digit cannot turn it into the right one (``VREASON_ADV_SEED=170087574``: the
    wrong "18" was written with a sample "8" shaped like a 5 and read "15", the right answer; 1 of 96 wrong lines on
    32 seeds with +1–8, 0 of 96 with +11–88)."""
    ok = 0
    for k in range(15):
        rng = rng_for(3, k)
        inst = make_instance("arithmetic", ("easy", "medium", "hard")[k % 3], 0, int(rng.integers(10 ** 6)), CFG)
        st, p = inst.state, tivi(inst)
        answer = st["answer"] if k < 12 else str(int(st["answer"]) + 11 * int(rng.integers(1, 9)))
        img = inst.first_frame.copy()
        write_number(img, digits, answer, rng, st["ans_x"] + rng.uniform(0, 0.3) * st["size"], st["y"],
                     int(st["size"] * rng.uniform(0.8, 1.1)), ink_colour(rng))
        res = run("math", img, p, env)
        if k < 12:
            ok += bool(res.passed)
        else:
            assert res.passed is False, res.details
    assert ok >= 8, ok


# ------------------------------------------------------------------ mcq: a hand-drawn loop round an option
def test_hand_drawn_loop_marks_one_option(env):
    """A red loop drawn by hand (wobbling outline, overlapping ends, stroke 2–4 px ±30%) round the right
    option of a rendered sheet, an ellipse or a squarish loop: identified by the annotated option boxes and,
    without them, by the letter OCR reads inside. Measured: 24/24 sheets both ways (seeds 0–23). Floor: all
    4 by position, 3/4 by OCR; a loop round a wrong option fails."""
    by_ocr = 0
    for k in range(4):
        rng = rng_for(4, k)
        inst = make_instance("choice", ("easy", "medium", "hard")[k % 3], 0, int(rng.integers(10 ** 6)), CFG)
        st, p = inst.state, tivi(inst)
        red = (int(rng.integers(180, 236)), int(rng.integers(0, 50)), int(rng.integers(0, 50)))
        kind = ("ellipse", "box")[k % 2]
        img = inst.first_frame.copy()
        hand_loop(img, st["layout"]["boxes"][st["correct"]], rng, red, rng.uniform(2, 4), kind)
        res = run("mcq", img, p, env)
        assert res.passed is True, res.details
        by_ocr += bool(run("mcq", img, p.model_copy(update={"option_boxes": {}}), env).passed)
        other = inst.first_frame.copy()
        hand_loop(other, st["layout"]["boxes"][(st["correct"] + 1 + k % 3) % 4], rng, red, rng.uniform(2, 4), kind)
        assert run("mcq", other, p, env).passed is False
    assert by_ocr >= 3, by_ocr


def test_hand_drawn_loop_under_the_newspaper_photos_light(env, opencv_samples):
    """The sheet and its red loop lit by the newspaper photo's own light: a random 360-px crop of the photo's paper
    white (``colour.local_white``: 58–225 levels, median 130) stretched over the sheet as a gain, times the photo's
    colour cast, then JPEG at quality 40–70. Read by position: the loop round the right option passes, round a wrong
    one fails. Measured: 30 seeds (120 sheets, 240 loops), every verdict right; mcq reads red by the absolute
    floors, which this light keeps it above (a principle-6 guard, not a fix)."""
    import cv2

    from vreason.verify import colour

    photo = rgb(opencv_samples["sudoku.png"])
    white = colour.local_white(photo.max(axis=2))
    cast = np.median(photo.reshape(-1, 3), axis=0)
    cast = cast / cast.max()
    for k in range(4):
        rng = rng_for(9, k)
        inst = make_instance("choice", ("easy", "medium", "hard")[k % 3], 0, int(rng.integers(10 ** 6)), CFG)
        st, p = inst.state, tivi(inst)
        h, w = inst.first_frame.shape[:2]
        y0, x0 = int(rng.integers(0, photo.shape[0] - 360)), int(rng.integers(0, photo.shape[1] - 360))
        light = cv2.resize(white[y0:y0 + 360, x0:x0 + 360], (w, h))[..., None] / 255.0 * cast
        red = (int(rng.integers(180, 236)), int(rng.integers(0, 50)), int(rng.integers(0, 50)))
        q = int(rng.integers(40, 71))
        for option, want in ((st["correct"], True), ((st["correct"] + 1 + k % 3) % 4, False)):
            img = inst.first_frame.copy()
            hand_loop(img, st["layout"]["boxes"][option], rng, red, rng.uniform(2, 4), ("ellipse", "box")[k % 2])
            img = np.clip(img * light, 0, 255).astype(np.uint8)
            ok, buf = cv2.imencode(".jpg", cv2.cvtColor(img, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_JPEG_QUALITY, q])
            img = cv2.cvtColor(cv2.imdecode(buf, cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB)
            res = run("mcq", img, p, env)
            assert res.passed is want, (k, option, res.details)


def test_a_thin_hand_drawn_loop_crossing_the_outlines_is_one_mark(env):
    """The draw of ``test_hand_drawn_loop_marks_one_option`` that failed at ``VREASON_ADV_SEED=410703813`` (its
    first sheet): a 2.1-px dark-red ellipse round option C crossing B's and D's outlines. The colour search's
    3-px opening broke it into pieces, each overlapping C's box under the IoU floor: no option highlighted. The
    highlight mask is now closed only (``mcq.CLOSE_PX``); measured on 60 fresh seeds (240 sheets): 0 misses by
    position either way, by OCR 2 misses before and 0 after, no loop round a wrong option passing."""
    rng = np.random.default_rng([410703813, 4, 0])
    inst = make_instance("choice", "easy", 0, int(rng.integers(10 ** 6)), CFG)
    st, p = inst.state, tivi(inst)
    red = (int(rng.integers(180, 236)), int(rng.integers(0, 50)), int(rng.integers(0, 50)))
    img = inst.first_frame.copy()
    hand_loop(img, st["layout"]["boxes"][st["correct"]], rng, red, rng.uniform(2, 4), "ellipse")
    res = run("mcq", img, p, env)
    assert res.passed is True and res.details["highlighted"] == [p.answer.upper()], res.details
    assert run("mcq", img, p.model_copy(update={"option_boxes": {}}), env).passed is True


def test_noise_over_an_unmarked_sheet_highlights_no_option(env):
    """Baselines: uniform noise, the sheet half under noise and the sheet under Gaussian noise (σ 40) mark no
    option. Without the speck filter (``mcq.MIN_PIECE``) the closing joined noise's red specks into blobs, and 2
    of 16 half-noise sheets (numpy seed 1) read as a highlighted option; 0 of 300 with it."""
    for k in range(6):
        rng = rng_for(5, k)
        inst = make_instance("choice", ("easy", "medium", "hard")[k % 3], 0, int(rng.integers(10 ** 6)), CFG)
        p = tivi(inst)
        noise = rng.integers(0, 256, inst.first_frame.shape).astype(np.uint8)
        for img in (noise, (0.5 * inst.first_frame + 0.5 * noise).astype(np.uint8),
                    np.clip(inst.first_frame + rng.normal(0, 40, noise.shape), 0, 255).astype(np.uint8)):
            res = run("mcq", img, p, env)
            assert res.passed is False and res.details["highlighted"] != [p.answer.upper()], res.details


# ------------------------------------------------------------------ sequence: handwritten numbers in cells
def test_handwritten_numbers_in_sequence_cells(env, digits):
    """The missing items of a rendered number sequence handwritten into their cells (the "?" wiped; digits
    40–55% of the cell, the number centred and drawn smaller when it would not fit the cell, as a writer
    does). Measured on seeds 0–59: 287 of 300 handwritten items right, at most 2 misses per seed (a 5 read
    as S, 50 as SO, 14 as IH, a curly 2 as ∂). Unfitted, a 3-digit number ran into the neighbouring cells
    and lost digits (273 of 300; 3 misses of 5 with VREASON_ADV_SEED=155269327, a CI failure). Floor: at
    most two of the ~5-7 handwritten items misread."""
    from vreason.synth.families.numseq.family import CELL_BG, cell_rect

    seqs = items = items_ok = 0
    for k in range(3):
        rng = rng_for(5, k)
        inst = make_instance("numseq", ("easy", "medium", "hard")[k % 3], 0, int(rng.integers(10 ** 6)), CFG)
        st, p = inst.state, tivi(inst)
        img, ink = inst.first_frame.copy(), ink_colour(rng)
        for i in st["missing"]:
            x0, y0, x1, y1 = cell_rect(st, i)
            img[y0 + 4:y1 - 4, x0 + 4:x1 - 4] = CELL_BG
            text, h = str(st["values"][i]), int((y1 - y0) * rng.uniform(0.4, 0.55))
            write_number(img, digits, text, rng, (x0 + x1) / 2, (y0 + y1) / 2, h, ink, align="centre",
                         max_width=x1 - x0 - 16)
        res = run("sequence", img, p, env)
        seqs += bool(res.passed)
        items += len(st["missing"])
        items_ok += sum(res.details["read"][i] == p.expected[i] for i in st["missing"])
    assert items_ok >= items - 2, (seqs, items_ok, items)


# ------------------------------------------------------------------ printed text lines
PAGE = """technical details are too complex to cover in the book itself.
In teaching our courses, we have found it useful for the students to attempt a number of
small implementation projects, which often build on one another, in order to get them used to
working with real-world images and the challenges that these present. The students are then
asked to choose an individual topic for each of their small-group, final projects. (Sometimes
these projects even turn into conference papers!) The exercises at the end of each chapter
contain numerous suggestions for smaller mid-term projects, as well as more open-ended
problems whose solutions are still active research topics. Wherever possible, I encourage
students to try their algorithms on their own personal photographs, since this better motivates
them, often leads to creative variants on the problems, and better acquaints them with the
variety and complexity of real-world imagery.
In formulating and solving computer vision problems, I have often found it useful to draw
inspiration from three high-level approaches:""".split("\n")
"""imageTextN.png's 13 lines, typed off the image (the same page as imageTextR.png)."""


def words_in_order(read: list[str], truth: list[str]) -> float:
    """The fraction of the true words read, in order (longest matching blocks of the word sequences)."""
    a, b = " ".join(read).split(), " ".join(truth).split()
    m = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return sum(bl.size for bl in m.get_matching_blocks()) / len(b)


@pytest.mark.parametrize("name", ["imageTextN.png", "imageTextR.png"])
def test_printed_page_through_the_line_reader(env, opencv_samples, name):
    """Detection + recognition (``OcrEngine.lines``, the reader behind the math and sequence checks without
    a region) on a real printed page, upright and turned ~5°. Measured: upright 1.000 of the words in
    order; turned 0.898 before reading order followed the text's slant (lines' upright boxes interleave,
    so line 2 came after line 4), 1.000 after. Floor: 0.97 of the words in order, 13 lines."""
    lines = env.ocr.lines(rgb(opencv_samples[name]))
    assert len(lines) == len(PAGE), [t for _, t, _ in lines]
    assert words_in_order([t for _, t, _ in lines], PAGE) >= 0.97, [t for _, t, _ in lines]


def test_printed_lines_one_by_one(env, opencv_samples):
    """Each line of the upright page cut out by its ink rows and recognised alone (``OcrEngine.read``, the
    reader behind the region path of the math check). Measured: 0.988 of the words (one "still active" read
    as "stllactive"). Floor: 0.95; the 13 lines found."""
    page = rgb(opencv_samples["imageTextN.png"])
    rows = np.flatnonzero(ocrmod.ink_mask(page).sum(axis=1) > 2)
    runs = np.split(rows, np.flatnonzero(np.diff(rows) > 1) + 1)
    texts = []
    for r in runs:
        if len(r) < 6:
            continue
        y0, y1 = int(r[0]), int(r[-1]) + 1
        xs = np.flatnonzero(ocrmod.ink_mask(page[y0:y1]).any(axis=0))
        texts.append(env.ocr.read(page[max(0, y0 - 3):y1 + 3, max(0, xs[0] - 3):xs[-1] + 4])[0])
    assert len(texts) == len(PAGE)
    assert words_in_order(texts, PAGE) >= 0.95, texts
