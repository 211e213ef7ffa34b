from __future__ import annotations

import os
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

if os.environ.get("PYTEST_XDIST_WORKER"):
    # The xdist workers already fill the cores (-n auto): codecs, OpenCV and the OCR engine run on one thread each,
    # as in the run's own worker pools (vreason.runner.executor). Same pixels either way; measured side by side on
    # the suite's family, text, object and explain test files (2 cores, -n 2, two runs each): 66.6 and 68.2 s
    # against 75.2 and 71.2 s of wall, 132 and 136 s of CPU against 149 and 141 (issue 26). Decoding gives the same
    # pixels on any thread count; x264's encoding does not (its frame threads change what it codes): a video a
    # test writes under xdist is not the one a run without it writes, so a failure is replayed with
    # VREASON_CODEC_THREADS=1 too (the summary says so) — a dot on tool QA's tool passed CI's run and failed the
    # replay without it (VREASON_ADV_SEED=800006555).
    os.environ.setdefault("VREASON_CODEC_THREADS", "1")
    import cv2

    cv2.setNumThreads(1)  # the tests that call a verifier directly (the scorer sets it in a run's workers)
PLUGIN = os.path.join(ROOT, "tests", "plugins", "slowproto.py")


@pytest.fixture(scope="session")
def slow_plugin() -> str:
    """Path of the test protocol plugin, imported once into this process too."""
    from vreason.cli.main import load_plugin

    if "slowproto" not in sys.modules:
        load_plugin(PLUGIN)
    return PLUGIN


# The built-in suite rendered small (320×180, 2 s at 16 fps: an eighth of the pixels the default renders, a quarter
# per frame and half the frames) for the tests of what runs around the verifiers (runner, reports, API, viewer,
# generators), not of the verifiers: every family but sudoku at hard (its 16-px cells) passes its oracle and fails
# static at this size (measured over all 16 families and three difficulties). The verifiers' own tests render the
# default size.
SMALL_SYNTH = {"width": 320, "height": 180, "seconds": 2.0}
SMALL_SYNTH_ARGS = [a for k, v in SMALL_SYNTH.items() for a in ("--opt", f"{k}={v}")]


def gradient_frames(n: int, h: int = 48, w: int = 64) -> list[np.ndarray]:
    """Frames that differ strongly from each other: frame i has a bar at a position set by i
    and a brightness set by i, so decoding the wrong frame is detectable after compression."""
    frames = []
    for i in range(n):
        img = np.full((h, w, 3), (i * 37) % 200 + 20, np.uint8)
        x = (i * 5) % (w - 8)
        img[:, x:x + 8] = (255, 40, 40)
        frames.append(img)
    return frames


OPENCV_DOC = os.path.join(ROOT, ".cache", "opencv-doc", "usr", "share", "doc", "opencv-doc")


@pytest.fixture(scope="session")
def opencv_samples() -> dict[str, str]:
    """OpenCV's own sample media (Debian's opencv-doc, fetched by the test set-up, never committed):
    name → path, e.g. ``box.mp4`` (H.264, declares 456 frames, 455 decode), ``cup.mp4``, ``Megamind.avi``
    (MPEG-4), ``tree.avi`` (Cinepak, declares 444, 68 decode), ``vtest.avi`` (MS-MPEG4), ``sudoku.png``,
    ``digits.png`` (5000 handwritten digits), ``imageTextN.png`` / ``imageTextR.png`` (a printed page, upright
    and turned), ``notes.png`` (a line of printed sheet music)."""
    import subprocess

    if not os.path.exists(os.path.join(OPENCV_DOC, "examples", "data", "vtest.avi")):
        subprocess.run([os.path.join(ROOT, "tests", "fetch_opencv_doc.sh")], check=True)
    data = os.path.join(OPENCV_DOC, "examples", "data")
    html = os.path.join(OPENCV_DOC, "opencv4", "html")
    out = {n: os.path.join(data, n) for n in ("Megamind.avi", "tree.avi", "vtest.avi", "sudoku.png", "digits.png",
                                              "imageTextN.png", "imageTextR.png", "notes.png")}
    out.update({n: os.path.join(html, n) for n in ("box.mp4", "cup.mp4")})
    for name, path in out.items():
        assert os.path.exists(path), f"opencv-doc sample {name} missing at {path}"
    return out


# ---------------------------------------------------------------- adversarial matrix: sample or full, replayable
def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--adv-full", action="store_true", default=False,
                     help="run the full adversarial matrix (every variant at every difficulty) instead of the "
                          "default sample (at most 2 variants per family, drawn by the seed, at one difficulty each)")


def pytest_configure(config: pytest.Config) -> None:
    # Decided once in the controlling process and passed through the environment, so every pytest-xdist
    # worker (started after this hook) collects the same cases. Replay a run with VREASON_ADV_SEED=<seed>.
    if not os.environ.get("VREASON_ADV_SEED"):
        os.environ["VREASON_ADV_SEED"] = str(int.from_bytes(os.urandom(4), "little") % 10**9)
    if config.getoption("--adv-full"):
        os.environ["VREASON_ADV_FULL"] = "1"


def run_seed() -> int:
    """The run's seed (``VREASON_ADV_SEED``, drawn in :func:`pytest_configure` when not given): the same in every
    pytest-xdist worker, printed in the summary."""
    return int(os.environ.get("VREASON_ADV_SEED", "20261122"))


def sampled_difficulty(family: str, difficulties: tuple[str, ...] | list[str], salt: str = "") -> str:
    """The one difficulty of ``family`` that ``make test`` runs a per-difficulty test at, drawn by the run's seed
    (every difficulty over runs; ``make test-all`` runs them all): the others are marked slow."""
    import random

    return random.Random(f"{run_seed()}:{salt}:{family}").choice(list(difficulties))


def by_difficulty(family: str, difficulty: str, difficulties: tuple[str, ...] = ("easy", "medium", "hard"), *,
                  salt: str = "", slow: bool = False) -> list:
    """Marks of a (family, difficulty) test case: slow (``make test-all``) unless it is the run's
    :func:`sampled_difficulty` of the family (``slow=True``: slow anyway)."""
    keep = not slow and difficulty == sampled_difficulty(family, difficulties, salt)
    return [] if keep else [pytest.mark.slow]


def one_of(case: str, cases: tuple[str, ...] | list[str], salt: str) -> list:
    """Marks of one case of a test whose cases repeat one check on different inputs: slow (``make test-all``)
    unless it is the one case the run's seed draws (every case over runs)."""
    import random

    keep = case == random.Random(f"{run_seed()}:{salt}").choice(list(cases))
    return [] if keep else [pytest.mark.slow]


def one_case(values, salt: str, ids: list[str] | None = None) -> list:
    """``pytest.param`` of each of ``values`` (a tuple per case when the test takes several arguments), all marked
    slow (``make test-all``) but the one the run's seed draws (:func:`one_of`): a test whose cases repeat one
    check on other inputs — more random draws, other families or rates, seeds that once failed — runs one of
    them in ``make test``, each over runs. ``ids``: the cases' ids (default: the values joined by "-")."""
    cases = [v if isinstance(v, tuple) else (v,) for v in values]
    names = ids or ["-".join(str(x) for x in c) for c in cases]
    return [pytest.param(*c, id=n, marks=one_of(n, names, salt)) for c, n in zip(cases, names, strict=True)]


def pytest_report_header(config: pytest.Config) -> str:
    mode = ("full matrix" if os.environ.get("VREASON_ADV_FULL") == "1"
            else "sampled (≤ 2 variants per family, one difficulty each)")
    seed = os.environ["VREASON_ADV_SEED"]
    threads = " VREASON_CODEC_THREADS=1" if getattr(config.option, "numprocesses", None) else ""
    return f"vreason adversarial seed: {seed} ({mode}); replay with VREASON_ADV_SEED={seed}{threads}"


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    # also under -q (which hides the header): the line needed to replay this run's sampled cases
    terminalreporter.write_line(pytest_report_header(config))
    # which adversarial variants this run drew (the default run samples them; see tests/test_synth_adversarial.py)
    ran = sorted({r.nodeid.split("[", 1)[1].rstrip("]") for reports in terminalreporter.stats.values()
                  for r in reports if getattr(r, "when", None) == "call"
                  and "test_synth_adversarial.py::test_adversarial_variant[" in getattr(r, "nodeid", "")})
    if ran:
        terminalreporter.write_line(f"vreason adversarial variants run ({len(ran)}, family-difficulty-variant): "
                                    + " ".join(ran))


@pytest.fixture(scope="session", autouse=True)
def _private_vreason_cache(tmp_path_factory: pytest.TempPathFactory):
    """Each test session (each pytest-xdist worker) renders suites into its own cache, never into the
    user's ``~/.cache/vreason`` that other sessions rewrite at the same time; CLI subprocesses inherit it."""
    if os.environ.get("VREASON_CACHE"):
        yield
        return
    os.environ["VREASON_CACHE"] = str(tmp_path_factory.mktemp("vreason-cache"))
    try:
        yield
    finally:
        os.environ.pop("VREASON_CACHE", None)
