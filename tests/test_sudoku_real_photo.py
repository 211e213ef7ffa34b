"""The sudoku reader on a real photo (issue 24, principle 6): OpenCV's newspaper sudoku (``sudoku.png`` from
Debian's opencv-doc, fetched by the test set-up, never committed) — a hand-held shot of a bent page, dim and
vignetted, with show-through from the back of the paper. Every one of the 81 cells must read right (26
printed digits, 55 blanks), also letterboxed and after a camera change (2° rotation, 0.9 zoom, ±10%
exposure, JPEG q=40). Needs the ``ocr`` extra."""

import numpy as np
import pytest

from vreason.verify import gridread
from vreason.verify import ocr as ocrmod
from vreason.verify.annotations import SudokuParams
from vreason.verify.checks import CheckEnv, get_check

# Read off the photo by eye (checked twice, at 2× zoom, row by row and column by column); 0 = blank.
PHOTO_GRID = [
    [0, 0, 0, 6, 0, 4, 7, 0, 0],
    [7, 0, 6, 0, 0, 0, 0, 0, 9],
    [0, 0, 0, 0, 0, 5, 0, 8, 0],
    [0, 7, 0, 0, 2, 0, 0, 9, 3],
    [8, 0, 0, 0, 0, 0, 0, 0, 5],
    [4, 3, 0, 0, 1, 0, 0, 7, 0],
    [0, 5, 0, 2, 0, 0, 0, 0, 0],
    [3, 0, 0, 0, 0, 0, 2, 0, 8],
    [0, 0, 2, 3, 0, 1, 0, 0, 0],
]


@pytest.fixture(scope="module")
def photo(opencv_samples):
    import cv2

    img = cv2.imread(opencv_samples["sudoku.png"], cv2.IMREAD_COLOR)
    assert img is not None
    return cv2.cvtColor(img, cv2.COLOR_BGR2RGB)


@pytest.fixture(scope="module")
def env():
    eng = ocrmod.get_ocr()
    assert eng is not None, "the ocr extra (rapidocr) must be installed for these tests"
    return CheckEnv(ocr=eng)


def check(frame, grid, env):
    return get_check("sudoku").fn([frame], [0.0], None, SudokuParams(solution=grid), env)


def test_ground_truth_is_a_plausible_puzzle():
    digits = [v for row in PHOTO_GRID for v in row if v]
    assert len(digits) == 26 and all(1 <= v <= 9 for v in digits)
    for i in range(9):  # no digit twice in a row, a column or a box
        row = [v for v in PHOTO_GRID[i] if v]
        col = [PHOTO_GRID[r][i] for r in range(9) if PHOTO_GRID[r][i]]
        box = [PHOTO_GRID[3 * (i // 3) + r][3 * (i % 3) + c] for r in range(3) for c in range(3)]
        box = [v for v in box if v]
        assert len(set(row)) == len(row) and len(set(col)) == len(col) and len(set(box)) == len(box)


def test_blank_cells_are_blank_after_line_removal(photo):
    """Without OCR: the cleaned cells are glyphs exactly where the photo has printed digits, and the
    blank / glyph ink fractions are far apart."""
    corners, how = gridread.find_grid(photo)
    assert how == "contour"
    cells = gridread.GridCells(gridread.warp(photo, corners, 9, 48), 9, 48)
    read = [[cells.read(r, c) for c in range(9)] for r in range(9)]
    states = [["glyph" if v else "blank" for v in row] for row in PHOTO_GRID]
    assert [[x.state for x in row] for row in read] == states
    blank = max(x.ink for row in read for x in row if x.state == "blank")
    glyph = min(x.ink for row in read for x in row if x.state == "glyph")
    assert blank < gridread.BLANK_INK / 2 and glyph > 3 * gridread.BLANK_INK


def test_photo_reads_81_of_81(photo, env):
    res = check(photo, PHOTO_GRID, env)
    assert res.details["matching"] == 81, res.details["wrong_cells"]
    assert res.passed is True and res.score == 1.0 and res.details["grid_found_by"] == "contour"


def test_a_wrong_expectation_fails_on_that_cell_only(photo, env):
    wrong = [row[:] for row in PHOTO_GRID]
    wrong[4][4] = 5  # a blank expected to hold a 5
    wrong[0][3] = 8  # the printed 6 expected to be an 8
    res = check(photo, wrong, env)
    assert res.passed is False and res.details["matching"] == 79
    assert sorted(res.details["wrong_cells"]) == [[0, 3, 6, 8], [4, 4, 0, 5]]


@pytest.mark.parametrize("aspect,bar", [(16 / 9, (0, 0, 0)), (16 / 9, (40, 90, 160)), (9 / 16, (255, 255, 255))])
def test_letterboxed_photo(photo, env, aspect, bar):
    """The photo inside a landscape or portrait frame with bars of any colour."""
    h, w = photo.shape[:2]
    H, W = (h, int(h * aspect)) if aspect > w / h else (int(w / aspect), w)
    frame = np.empty((H, W, 3), np.uint8)
    frame[:] = bar
    y0, x0 = (H - h) // 2, (W - w) // 2
    frame[y0:y0 + h, x0:x0 + w] = photo
    res = check(frame, PHOTO_GRID, env)
    assert res.details["matching"] == 81, res.details["wrong_cells"]


def test_photo_at_half_size(photo, env):
    """A small frame: 24 px per cell before the warp."""
    import cv2

    small = cv2.resize(photo, None, fx=0.5, fy=0.5, interpolation=cv2.INTER_AREA)
    res = check(small, PHOTO_GRID, env)
    assert res.details["matching"] == 81, res.details["wrong_cells"]


def camera(img: np.ndarray, angle: float, scale: float, gain: float, quality: int) -> np.ndarray:
    """``img`` rotated by ``angle`` degrees and scaled about its centre (edges replicated), its exposure
    multiplied by ``gain``, then JPEG-compressed at ``quality``."""
    import cv2

    h, w = img.shape[:2]
    m = cv2.getRotationMatrix2D((w / 2, h / 2), angle, scale)
    out = cv2.warpAffine(img, m, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    out = np.clip(out.astype(np.float32) * gain, 0, 255).astype(np.uint8)
    ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, quality])
    assert ok
    return cv2.imdecode(buf, cv2.IMREAD_UNCHANGED)


@pytest.mark.parametrize("angle,scale,gain,quality", [(2.0, 0.9, 0.9, 40), (-2.0, 0.9, 1.1, 40),
                                                       (-3.0, 0.8, 0.85, 25)])
def test_photo_under_a_camera_change(photo, env, angle, scale, gain, quality):
    """The target (2°, 0.9, ±10%, q=40) and one harsher case (3°, 0.8, -15%, q=25)."""
    frame = camera(photo, angle, scale, gain, quality)
    assert float(np.abs(frame.astype(int) - photo.astype(int)).mean()) > 5  # the change is real
    res = check(frame, PHOTO_GRID, env)
    assert res.details["matching"] == 81, res.details["wrong_cells"]
    assert res.passed is True
