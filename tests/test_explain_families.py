"""Issue 24: every frame of a family's video is explained by the family's scene — the oracle's are, generated
cheats' are not (in memory, no codec: the case generators of :mod:`vreason.synth.adversary_principles`, their
seed drawn fresh each run from ``VREASON_ADV_SEED``, which tests/conftest.py sets when unset).

One table (:data:`FAMILIES`) says per family which difficulties' oracles are explained, which cheat kinds (by
principle) are the scene's job, and which are not with the reason; one scaffold runs them. The default run
checks one listed kind per principle per family (drawn from the seed); the ``slow`` sweep checks every listed
kind. Instances and the oracle's explanation are made once per module.
"""

from __future__ import annotations

import os
import random
import zlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

from conftest import by_difficulty
from vreason.synth.adversary_principles import Case, NotApplicable, make_case
from vreason.synth.base import RenderConfig, frame_times
from vreason.synth.suite import get_family, make_instance

CFG = RenderConfig()
SUITE_SEED = 5
SEED = int(os.environ.get("VREASON_ADV_SEED", str(int.from_bytes(os.urandom(4), "little")))) % 10**6


@dataclass(frozen=True)
class Fam:
    """What the tests expect of one family's scene."""

    oracle: tuple[str, ...]
    """Difficulties whose oracle video must be explained frame by frame."""
    case: str
    """Difficulty of the instance the cheats are made from."""
    cheats: dict[str, tuple[str, ...]]
    """Principle → the generated cheat kinds the scene must leave unexplained."""
    not_scene: dict[str, str] = field(default_factory=dict)
    """Kind → why it is not checked here (another check's job, or a known limit of the scene)."""
    min_mark_opacity: float = 0.3
    """A ``mark`` fainter than this is skipped: it can lie below the shared residual's floor (a known limit,
    docs/suite_validity.md: e.g. a 10×9 light-blue dot at 0.24 in odd-one-out, a 13×8 dot at 0.14 in a maze)."""
    slow_only: dict[str, str] = field(default_factory=dict)
    """Listed kinds left to the ``slow`` sweep (never drawn for the default run), with the reason."""


_FAINT = "a mark at opacity 0.1–0.3 can lie below the shared residual's floor (a known limit)"
NOT_SCENE = {"end_early": "the goal check's job (the verifier's final state), not the scene's",
             "answer_twice": "reading the answer's meaning is the verifier's job"}

FAMILIES: dict[str, Fam] = {
    "connect": Fam(("easy", "hard"), "easy",
                   {"P1": ("mark", "ghost"), "P2": ("drop_object", "blank_frame")}),
    "counting": Fam(("easy", "hard"), "medium",
                    {"P1": ("mark", "clone", "ghost"), "P2": ("drop_object", "blank_frame"),
                     "P3": ("start_final", "mirror", "reversed", "mosaic", "cut_other")},
                    {"jump": "the task has no process rule (a cut to the right tray is a right answer)"}),
    "graph": Fam(("medium",), "easy",
                 {"P1": ("mark", "ghost", "clone"), "P2": ("drop_object", "blank_frame", "jump")}),
    "gravity": Fam(("easy",), "easy", {"P1": ("mark", "clone", "ghost")}, min_mark_opacity=0.5),
    "match3": Fam(("medium",), "easy",
                  {"P1": ("mark", "ghost", "clone"), "P2": ("drop_object", "blank_frame", "jump")},
                  slow_only={"clone": "43 s CPU alone (seed 7): a third of all the old tests together"}),
    "maze": Fam(("easy", "hard"), "easy",
                {"P1": ("mark", "ghost"), "P2": ("drop_object", "blank_frame")}),
    "oddoneout": Fam(("medium",), "medium",
                     {"P1": ("mark", "clone"), "P2": ("blank_frame",), "P3": ("start_final",)}),
    "sequence": Fam(("medium",), "medium",
                    {"P1": ("clone",), "P2": ("drop_object", "blank_frame"), "P3": ("start_final",)},
                    {"mark": _FAINT}),
    "sliding": Fam(("easy",), "easy", {"P1": ("mark", "clone"), "P2": ("blank_frame",)}, min_mark_opacity=0.5),
    "sorting": Fam(("easy",), "easy", {"P1": ("mark", "clone"), "P2": ("blank_frame",)}, min_mark_opacity=0.5),
    "symmetry": Fam(("medium",), "medium",
                    {"P1": ("mark", "clone"), "P2": ("blank_frame",), "P3": ("start_final",)}),
    "arithmetic": Fam(("easy", "hard"), "medium",
                      {"P1": ("mark", "clone", "ghost"), "P2": ("drop_object", "blank_frame"),
                       "P3": ("start_final",)}),
    "sudoku": Fam(("easy", "hard"), "medium",
                  {"P1": ("mark", "clone", "ghost"), "P2": ("drop_object", "blank_frame"), "P3": ("start_final",)}),
    "choice": Fam(("easy", "hard"), "medium",
                  {"P1": ("mark", "clone", "ghost"), "P2": ("drop_object", "blank_frame"), "P3": ("start_final",)}),
    "numseq": Fam(("easy", "hard"), "medium",
                  {"P1": ("mark", "clone", "ghost"), "P2": ("drop_object", "blank_frame"), "P3": ("start_final",)}),
    "toolqa": Fam(("medium",), "medium",
                  {"P1": ("mark", "clone"), "P2": ("blank_frame",), "P3": ("start_final",)}),
}

KNOWN_GAPS: dict[tuple[str, str], str] = {
    ("sequence", "clone"): "issue 24: a 12×3-px clone was explained (seed 58419)",
    ("sliding", "clone"): "issue 24: a copy of a 7×12 glyph of the small \"target\" title (offset [-84, 65], from "
                          "frame 34) was explained, its largest unexplained blob 16 px under the 24-px limit "
                          "(VREASON_ADV_SEED=382486496; the same at 83fd973): the title-glyph class",
    ("connect", "mark"): "issue 24: an 18×15 box at 0.42 opacity was explained (seed 121707)",
    ("sudoku", "mark"): "issue 24: a mark under the residual's 24-px blob limit was explained (a 6×4 stroke at 0.31, "
                        "bench seed 1812422572)",
    ("sudoku", "ghost"): "issue 24: a 0.31 ghost of a given digit laid over another given digit (a '5' across a '5', "
                         "offset [101, -99], from frame 54) lies within 3 px of the digit's strokes — the band the "
                         "temporal residual leaves to the rendering residual — and its part beyond is a 19-px blob "
                         "under the 24-px limit: explained (VREASON_ADV_SEED=102; the same at 06e5a62)",
    ("arithmetic", "clone"): "issue 24: a copy of the '-' bar (17×3) landed on the top bar of a '5' (offset "
                             "[-32, -16]): it adds one row of ink, a change under the residual's 24-px blob limit "
                             "(largest blob 4 px, VREASON_ADV_SEED=973815897)",
    ("arithmetic", "ghost"): "issue 24: a 0.38 ghost of a 17×3 bar (offset [-37, 4]) onto the ink was explained "
                             "(VREASON_ADV_SEED=190479827; the same at 7697915, before the seventh session): like the "
                             "bar's clone, it adds under the residual's 24-px blob limit",
    ("arithmetic", "mark"): "issue 24: a mark under the residual's 24-px blob limit was explained (a 13-px dot at 0.33 "
                            "on the ink, bench seed 948910964)",
    ("numseq", "ghost"): "issue 24: a ghost can land inside a free \"?\" card, where any mark is allowed (a 0.37 "
                         "copy of an 11×24 given digit, offset [65, -11], from frame 52: explained, and the whole "
                         "verdict passed, OCR reading the answer beside it; VREASON_ADV_SEED=625431). The card's free "
                         "pixels need a colour model (start pixel, page, answer ink, their blends) like choice's ring",
    ("choice", "drop_object"): "issue 24: a thin title character dropped for 3 frames lies within the residual's 1-px "
                               "edge range (explained, seed 90417)",
    ("choice", "ghost"): "issue 24: a ghost landing on an option's outline is in the free ring (explained, seed 90417)",
    ("symmetry", "clone"): "issue 24: a copy of a painted cell landing on another cell (offset [-2, -253], "
                           "VREASON_ADV_SEED=2) is that cell painted to the parse, a legal state: the scene explains "
                           "it and the verdict fails it (no_spurious, final_exact: 1 extra cell)",
    ("match3", "mark"): "issue 24: an 8×4 dot at opacity 0.42 was explained (seed 652494): a blob that small is "
                        "under the residual's 24-px size limit",
    ("numseq", "mark"): "issue 24: a 16×6 light-blue stroke at opacity 0.3 (the residual's floor) beside the '?' card "
                        "was explained (seed 991030)",
    ("symmetry", "mark"): "issue 24: an 11×6 dot of (177, 170, 148) at opacity 0.84 on the white page changes 12 "
                          "pixels by more than 20 levels (a 15-px blob against the residual's 24-px size limit): "
                          "explained (VREASON_ADV_SEED=729269856, make test of 2026-11-28; the same at 07fb3ee)",
    ("maze", "mark"): "issue 24: a 7×4 dot (28 px) at opacity 0.8 was explained (VREASON_ADV_SEED=461080297, "
                      "fresh-clone make test): a blob that small is at the residual's 24-px size limit",
    ("oddoneout", "mark"): "issue 24: a 7×4 dot (28 px) at opacity 0.75 left a 24-px blob after the codec, the "
                           "residual's size limit: explained (VREASON_ADV_SEED=274925007, make test of 2026-11-28; "
                           "the same at bb3dc1f, before the ninth session)",
    ("sliding", "mark"): "issue 24: a 16×12 green dot at opacity 0.92 on a green tile — 29 levels from the tile on its "
                         "largest channel, under the residual's 40-level floor — was explained (seed 490620556)",
}
"""Listed cheats the scene missed on some fresh draws (found by make test runs of 2026-11-27): an explained draw is
an expected failure (non-strict), every other draw still asserts."""

ORACLES = [pytest.param(f, d, id=f"{f}-{d}", marks=by_difficulty(f, d, spec.oracle, salt="oracle"))
           for f, spec in FAMILIES.items() for d in spec.oracle]
"""One listed difficulty per family per run (drawn by the run's seed; all of them in ``make test-all``)."""
PRINCIPLES = [(f, p) for f, spec in FAMILIES.items() for p in spec.cheats]
ALL_CHEATS = [(f, p, k) for f, spec in FAMILIES.items() for p, ks in spec.cheats.items() for k in ks]


def _explain(family: str, inst: Any, frames: list[np.ndarray], times: Any = None, fam: Any = None) -> Any:
    t = frame_times(len(frames), CFG, times)
    return (fam or get_family(family)).explain([np.ascontiguousarray(f) for f in frames], t, inst.state, CFG)


@pytest.fixture(scope="module")
def instance():
    """The instance (family, difficulty) of suite seed :data:`SUITE_SEED`, made once per module."""
    cache: dict[tuple[str, str], Any] = {}

    def get(family: str, difficulty: str) -> Any:
        key = (family, difficulty)
        if key not in cache:
            cache[key] = make_instance(family, difficulty, 0, SUITE_SEED, CFG)
        return cache[key]

    return get


@pytest.fixture(scope="module")
def oracle(instance):
    """The oracle video's explanation per (family, difficulty) and the frames' parses where the family records
    them (sequence), made once per module."""
    cache: dict[tuple[str, str], tuple[Any, dict]] = {}

    def get(family: str, difficulty: str) -> tuple[Any, dict]:
        key = (family, difficulty)
        if key not in cache:
            inst = instance(family, difficulty)
            if family == "sequence":
                from vreason.synth.families.sequence.family import _Recording

                rec = _Recording(get_family(family))
                cache[key] = (_explain(family, inst, list(inst.solution), fam=rec), rec.records)
            else:
                cache[key] = (_explain(family, inst, list(inst.solution)), {})
        return cache[key]

    return get


@pytest.mark.parametrize("family,difficulty", ORACLES)
def test_oracle_every_frame_explained(family, difficulty, instance, oracle):
    ex, _ = oracle(family, difficulty)
    assert ex.ok, ex.reason
    assert len(ex.frames) == len(instance(family, difficulty).solution) and not ex.unexplained


def _below_floor(marked: np.ndarray, clean: np.ndarray) -> bool:
    """Whether a mark is under the shared residual's detection floor as the residual itself measures it — the
    marked final frame against the oracle's, with no codec, at the tightest (temporal) tolerances — so no scene
    can see it: a colour close to what it covers in luma and chroma (choice, seed 944787: a 0.32 stroke of
    (56, 200, 145) on a (40, 190, 60) circle moves the blue channel 27 levels but luma/chroma 7–8, 5×5 means
    ≤ 6 against the codec floor of 9; the part on the page is an 18-px blob). The residual's word alone is not
    taken: the mark must also change at most :data:`MAX_BLOB` pixels by more than the per-pixel tolerance in luma
    or chroma (counted here with OpenCV's YCrCb, not by the residual), so a residual gone blind cannot skip a strong
    mark. Beside the scene's strong edges the temporal tolerances do not hold (a P-frame smears an edge there:
    ``frame_check.FIRST_EDGE_LEVEL``), so the mark is measured as the scene does, by the rendering residual there:
    tool QA, VREASON_ADV_SEED=426966159, an 8×6 outline at 0.81 across the purple frame's edge, 12 px on the band
    and 8 px 2 px beyond it, the rest inside the edge's own range (the edge-band class of docs/suite_validity.md)."""
    import cv2

    from vreason.verify.frame_check import FIRST_EDGE_LEVEL, TOL_PATCH_TEMPORAL, TOL_TEMPORAL, _edge_band
    from vreason.verify.residual import MAX_BLOB, residual

    if marked.shape != clean.shape:
        return False
    ycc = [cv2.cvtColor(np.ascontiguousarray(a[..., :3]), cv2.COLOR_RGB2YCrCb).astype(np.int16)
           for a in (marked, clean)]
    if int((np.abs(ycc[0] - ycc[1]).max(axis=2) > TOL_TEMPORAL).sum()) > MAX_BLOB:
        return False
    band = _edge_band(clean, FIRST_EDGE_LEVEL)
    return (residual(marked, clean, band, tol=TOL_TEMPORAL, tol_patch=TOL_PATCH_TEMPORAL).explained()
            and residual(marked, clean, flat_colour=True).explained())


def _check_cheat(family: str, principle: str, kind: str, instance) -> None:
    spec = FAMILIES[family]
    case = Case(principle, family, kind, False, spec.case, 0, SUITE_SEED, SEED)
    try:
        made = make_case(case, CFG)
    except NotApplicable:
        pytest.skip(f"{kind} cannot apply to this instance with case seed {SEED}")
    if kind == "mark" and float(made.params.get("opacity", 1.0)) < spec.min_mark_opacity:
        pytest.skip(f"a mark at opacity {made.params['opacity']} can lie below the residual's floor (a known limit)")
    if kind == "mark" and _below_floor(made.clip.frames[-1], instance(family, spec.case).solution[-1]):
        pytest.skip(f"the mark lies below the residual's floor even without a codec (a known limit): {made.params}")
    ex = _explain(family, instance(family, spec.case), made.clip.frames, made.times)
    if ex.ok and (family, kind) in KNOWN_GAPS:
        pytest.xfail(f"{KNOWN_GAPS[family, kind]} (seed {SEED}, {made.params})")
    assert not ex.ok, (family, kind, SEED, made.params)


@pytest.mark.parametrize("family,principle", PRINCIPLES)
def test_cheat_not_explained(family, principle, instance):
    """One of the family's listed kinds of this principle (drawn from the seed) is not explained."""
    spec = FAMILIES[family]
    kinds = [k for k in spec.cheats[principle] if k not in spec.slow_only]
    kind = random.Random(zlib.crc32(f"{SEED}:{family}:{principle}".encode())).choice(kinds)
    _check_cheat(family, principle, kind, instance)


@pytest.mark.slow
@pytest.mark.parametrize("family,principle,kind", ALL_CHEATS)
def test_every_listed_cheat_not_explained(family, principle, kind, instance):
    _check_cheat(family, principle, kind, instance)


def test_the_table_lists_only_what_the_scene_checks(instance):
    """No kind is both the scene's job and excused; every family of the table declares a scene."""
    for family, spec in FAMILIES.items():
        listed = {k for ks in spec.cheats.values() for k in ks}
        assert not listed & (set(spec.not_scene) | set(NOT_SCENE)), family
        assert get_family(family).scene(instance(family, spec.case).state, CFG) is not None


# -- sequence: the fade-in's in-between opacities are parsed and re-rendered -----------------------------------

def test_sequence_the_fade_parsed(oracle):
    ex, records = oracle("sequence", "medium")
    assert ex.ok, ex.reason
    alphas = [records[i].alpha for i in sorted(records)]
    assert alphas[0] == 0 and alphas[-1] >= 0.99 and 0.2 < float(np.median(alphas[1:-1])) < 0.8, alphas
    assert all(p.fill in ("empty", "answer") for p in records.values())


def test_sequence_another_card_changing_state_is_not_a_legal_state(instance):
    from vreason.synth.families.sequence.family import render_row

    inst = instance("sequence", "medium")
    st = inst.state
    j = (st["missing"] + 1) % st["n"]
    spec = dict(st["cells"][j], shape="cross" if st["cells"][j]["shape"] != "cross" else "star")
    changed = {**st, "cells": [spec if k == j else c for k, c in enumerate(st["cells"])]}
    ex = _explain("sequence", inst, [inst.first_frame] * 4 + [render_row(changed, CFG, st["answer"])] * 4)
    assert not ex.ok and "not a legal state" in ex.reason, ex.reason


@pytest.mark.parametrize("what", ["blink_after_the_fade", "blink_mid_fade", "distractor_swapped_in"])
def test_sequence_the_blank_cards_element_fades_in_and_stays(what, instance):
    """An element shown on the blank card stays: its opacity never falls back by more than FADE_BACK, nor does
    another element take its place (the answer dropped for one frame was a legal state of each frame alone: seed
    58419's drop_object, window [52, 1])."""
    from vreason.synth.families.sequence.family import render_row

    inst = instance("sequence", "medium")
    st = inst.state
    frames = [np.array(f) for f in inst.solution]
    n = len(frames)
    if what == "blink_after_the_fade":
        k = n - 10
        frames[k] = np.array(inst.first_frame)
    elif what == "blink_mid_fade":
        k = next(i for i in range(n) if np.abs(frames[i].astype(int) - frames[0]).max() > 0)
        k = min(n - 1, k + (n - k) // 3)
        frames[k] = np.array(inst.first_frame)
    else:
        k = n - 6
        frames[k:] = [render_row(st, CFG, st["distractors"][0])] * (n - k)
    ex = _explain("sequence", inst, frames)
    assert not ex.ok and ex.unexplained[0].index == k, (what, ex.reason)
    assert ("went back to distractor" if what == "distractor_swapped_in" else "faded back") in ex.reason, ex.reason


WHEN = ("as_it_appears", "long_after")


@pytest.mark.parametrize(("family", "when"), [
    pytest.param(f, w, id=f"{w}-{f}", marks=by_difficulty(f, w, WHEN, salt="written"))
    for w in WHEN for f in ("arithmetic", "sudoku", "numseq")])
def test_a_written_answer_stays(family, when, instance):
    """What was written in a free region does not come and go (verify.written): the answer's first written frame
    followed by the start picture for one frame — or the same long after — is unexplained at that frame; the
    same oracle under a random 1–3 px shake of every frame is explained (issue 24: digits dropped in free cells
    were explained, seeds 7311, 13, 787589456). The default run checks one of the two moments per family (drawn
    by the run's seed), ``make test-all`` both."""
    import cv2

    inst = instance(family, FAMILIES[family].case)
    frames = [np.array(f) for f in inst.solution]
    n = len(frames)
    first = next(i for i in range(n) if np.abs(frames[i].astype(int) - frames[0]).max() > 80)
    k = first + 1 if when == "as_it_appears" else min(n - 2, first + (n - first) // 2)
    dropped = frames[:k] + [np.array(inst.first_frame)] + frames[k + 1:]
    ex = _explain(family, inst, dropped)
    assert not ex.ok and ex.unexplained[0].index == k and "written answer stays" in ex.reason, ex.reason
    rng = np.random.default_rng([SEED, len(family), len(when)])
    shaken = []
    for f in frames:
        dx, dy = (int(v) for v in rng.integers(-3, 4, size=2))
        m = np.float32([[1, 0, dx], [0, 1, dy]])
        shaken.append(cv2.warpAffine(f, m, (f.shape[1], f.shape[0]), borderMode=cv2.BORDER_REPLICATE))
    shaken[0] = frames[0]
    ex = _explain(family, inst, shaken)
    assert ex.ok, (ex.reason, SEED)


@pytest.mark.parametrize("family", ["arithmetic", "sudoku", "numseq"])
def test_an_answer_dropped_as_it_fades_in_is_unexplained_and_a_later_fade_is_not(family, instance):
    """A first fade step shown faintly (over ``written.SHOWN`` levels, under ``FADED``: 43–44 levels here) and then
    gone for 1–2 frames before the fade goes on is unexplained at the frame it went (issue 24: sudoku's and
    arithmetic's drops there were explained, suite seed 5); the same fade started a frame later — its first
    step left out — is a legal video (the drop generator's case of ``VREASON_ADV_SEED=818863493``), and explained."""
    from vreason.verify.written import FADED, SHOWN

    inst = instance(family, FAMILIES[family].case)
    frames = [np.array(f) for f in inst.solution]
    start = frames[0]
    level = [int(np.abs(f.astype(int) - start).max()) for f in frames]
    first = next(i for i, v in enumerate(level) if v > 0)
    k = next(i for i, v in enumerate(level) if SHOWN < v <= FADED)  # the first frame showing the answer faintly
    assert level[k + 3] > level[k]  # the fade goes on after it
    length = 1 + SEED % 2
    dropped = frames[:k + 1] + [start] * length + frames[k + 1 + length:]
    ex = _explain(family, inst, dropped)
    assert not ex.ok and ex.unexplained[0].index == k + 1, (ex.reason, k, length)
    assert "written answer stays" in ex.reason, ex.reason
    later = frames[:first] + [start] + frames[first + 1:]
    ex = _explain(family, inst, later)
    assert ex.ok, (ex.reason, first)


def test_a_printed_mark_in_a_free_region_wiped_and_shown_again_is_unexplained(instance):
    """The number sequence's printed "?" card is a free region (any answer may be written over it), but what it
    shows does not come and go (verify.written, FLICKER_FRAMES): the card wiped for 1–5 frames (drawn from the
    run's seed) before the answer shows and then back is unexplained at the frame it comes back; the card wiped
    for good is a legal state (issue 24: a 1-frame drop of the "?" with the answer fading in was explained,
    VREASON_ADV_SEED=246666651)."""
    from vreason.verify.written import FLICKER_FRAMES

    inst = instance("numseq", FAMILIES["numseq"].case)
    frames = [np.array(f) for f in inst.solution]
    start = frames[0]
    _, free = get_family("numseq").scene(inst.state, CFG).expect(0, start)
    ink = free & (start.max(axis=2) < 150)
    assert ink.sum() > 100  # the "?" is printed inside the free cards
    first = next(i for i in range(len(frames)) if np.abs(frames[i].astype(int) - start).max() > 80)
    rng = np.random.default_rng([SEED, 24])
    length = int(rng.integers(1, FLICKER_FRAMES + 1))
    k = int(rng.integers(1, first - length))

    def wiped(f: np.ndarray) -> np.ndarray:
        g = f.copy()
        g[free] = 255
        return g

    flicker = frames[:k] + [wiped(f) for f in frames[k:k + length]] + frames[k + length:]
    ex = _explain("numseq", inst, flicker)
    assert not ex.ok and ex.unexplained[0].index == k + length, (ex.reason, SEED, k, length)
    assert "does not come and go" in ex.reason, ex.reason
    ex = _explain("numseq", inst, frames[:k] + [wiped(f) for f in frames[k:]])
    assert ex.ok, (ex.reason, SEED, k)

# -- counting: coins parsed (one blob of overlapping coins split), conserved, re-rendered -------------------------

def test_counting_overlapping_coins_are_two(instance):
    from vreason.synth.families.counting.family import COIN_R, render
    from vreason.synth.families.counting.scene import parse

    st = instance("counting", "medium").state
    x, y = st["pool"][0]
    for dx in (4.0, 9.0, 17.0):
        img = render(st, [[(x, y), (x + dx, y + 1.0)]])[0]
        got = sorted(parse(img, st, COIN_R))
        assert len(got) == 2, (dx, got)
        assert np.allclose(got, [(x, y), (x + dx, y + 1.0)], atol=1.0), (dx, got)


@pytest.mark.parametrize("what", ["coins_drawn_in_tray", "a_coin_vanishes"])
def test_counting_coins_not_conserved(what, instance):
    from vreason.synth.families.counting.family import render

    inst = instance("counting", "medium")
    st = inst.state
    pile = [list(p) for p in st["pool"]]
    if what == "coins_drawn_in_tray":
        later = pile + [list(p) for p in st["tray_slots"][:1]]
    else:
        later = pile[1:]
    frames = render(st, [pile] * 6 + [later] * 6)
    ex = _explain("counting", inst, frames)
    assert not ex.ok and "coin" in ex.reason, ex.reason


def test_counting_a_pile_coin_nudged_while_another_moves(instance):
    from vreason.synth.families.counting.family import render

    inst = instance("counting", "medium")
    st = inst.state
    pile = [list(p) for p in st["pool"]]
    a, b = np.array(pile[1]), np.array(st["tray_slots"][0])
    nudged = [[pile[0][0] + 4.0, pile[0][1]]]
    frames = [pile] * 4 + [nudged + [list(a + (b - a) * u)] + pile[2:] for u in np.linspace(0.1, 1.0, 8)]
    ex = _explain("counting", inst, render(st, frames))
    assert not ex.ok and "off its place" in ex.reason, ex.reason


def test_counting_a_resting_coin_dropped_beside_an_overlapping_neighbour_is_missing(instance):
    """One coin cannot stand for two: a coin resting 1.23 radii from another (most of it showing) and gone for one
    frame vanished — the neighbour that overlaps it is itself, not a coin hiding it (seed 416650125's cheat)."""
    from vreason.synth.families.counting.family import COIN_R, render

    inst = instance("counting", "medium")
    st = inst.state
    pile = [list(p) for p in st["pool"]]
    beside = [pile[0][0] + 1.23 * COIN_R, pile[0][1]]
    a = np.array(pile[1])
    path = [list(a + (np.array(beside) - a) * u) for u in np.linspace(0.25, 1.0, 4)]
    held = [pile[0], beside] + pile[2:]
    frames = [pile] * 4 + [[pile[0], p] + pile[2:] for p in path] + [held] * 4 + [[pile[0]] + pile[2:]] + [held] * 4
    ex = _explain("counting", inst, render(st, frames))
    assert not ex.ok and "vanished" in ex.reason, ex.reason
    assert [f.index for f in ex.unexplained] == [12], ex.unexplained  # that frame alone


@pytest.mark.parametrize("hidden", [True, False], ids=["under_a_coin", "nothing_on_its_way"])
def test_counting_a_moving_coin_hides_only_under_a_coin_on_its_way(hidden, instance):
    """A coin that speeds up along its row over a resting coin, covered by it for a frame, is occluded, not
    missing (an honest 'other coins' video of seed 11 that the old rule failed: its way extended one step fell
    short); a coin gone for a frame on a way that passes no coin is missing, told at the frame it shows again."""
    from vreason.synth.families.counting.family import render

    inst = instance("counting", "medium")
    st = inst.state
    pile = [list(p) for p in st["pool"]]
    (x1, y1), (x2, y2) = pile[1], pile[2]
    assert abs(y1 - y2) < 1 and x2 > x1  # two neighbours of a row
    d = x2 - x1
    way = ([[x1 + 0.2 * d, y1], [x2, y2], [x2 + 1.2 * d, y1], [x2 + 2.5 * d, y1]] if hidden  # over pile[2]
           else [[x1, y1 - f * d] for f in (0.2, 1.0, 2.2, 3.0)])  # up, away from every coin
    frames = [pile] * 4 + [[pile[0], p] + pile[2:] for p in way]
    k = 5  # the frame the moving coin lies on pile[2] (hidden) or is gone (not hidden)
    if not hidden:
        frames[k] = [pile[0]] + pile[2:]
    frames += [frames[-1]] * 4
    ex = _explain("counting", inst, render(st, frames))
    if hidden:
        assert ex.ok, ex.reason
    else:
        assert not ex.ok and f"hidden in frame {k}" in ex.reason, ex.reason


@pytest.mark.parametrize("index,failed", [(0, "held"), (1, "scene")])
def test_numseq_a_slow_zoom_through_h264_is_held_and_explained(tmp_path, index, failed):
    """A 2.5% zoom of an easy numseq oracle (case seed 933002595), scored as the suite scores; 3 of its 4 indexes
    failed. Index 0, 'held': a patch of the last frame's white cards at 248–251 (H.264) showed 254 in the frame
    before, and the exposure fit lifted that "clipped" level 13 levels above the cards to the clip — a gain of
    1.27, the text 40 levels off (``exposure.GAIN_SPAN``). Index 1, 'scene': the last frame's camera against the
    first failed, every frame was re-aligned alone (33 s of CPU), and ECC diverged on the last frame; when that
    estimate fails, the last frame is now searched against the final picture (as ``Scene.end_search`` does always)."""
    from vreason.synth.adversary_principles import run_case

    out = run_case(Case("P5", "numseq", "zoom", True, "easy", index, SUITE_SEED, 933002595), str(tmp_path))
    assert out is not None and out.params["zoom"] == 0.025
    assert out.ok and out.passed, (failed, out.reason)


def test_sorting_reads_its_bars_with_a_zoom_undone(tmp_path):
    """A 4.9% zoom out of a hard sorting oracle (case seed 448550547, index 3): the scene explained every frame, but
    the bars were read on the frames as they came, and the end bars stood 4 px (at the quarter size) off their
    slots — 'sorted' failed. They are read with the camera undone now when it turns or zooms (sorting's
    ``TURN_PX``), as maze, connect, odd-one-out and sliding read theirs."""
    from vreason.synth.adversary_principles import run_case

    out = run_case(Case("P5", "sorting", "zoom", True, "hard", 3, SUITE_SEED, 448550547), str(tmp_path))
    assert out is not None and out.params["zoom"] == -0.049
    assert out.ok and out.passed, out.reason


def test_counting_a_slow_zoom_through_h264_is_one_camera(tmp_path):
    """A 4.5% zoom of a hard counting oracle, written with H.264 and scored as the suite scores (case seed
    585283613): the last frame's camera is found by the full search against the final picture (Scene.end_search),
    so the interpolated camera explains the frames; before, every frame from 4 on was re-aligned alone and frames
    50 and 54–63 could not be (an honest video failed)."""
    from vreason.synth.adversary_principles import run_case

    out = run_case(Case("P5", "counting", "zoom", True, "hard", 3, SUITE_SEED, 585283613), str(tmp_path))
    assert out is not None and out.params["zoom"] == 0.045
    assert out.ok and out.passed, out.reason


def test_arithmetic_a_slow_zoom_through_h264_is_one_camera(tmp_path):
    """A 1.5% zoom of a hard arithmetic oracle through H.264 (case seed 819791483, index 3). The page is white with
    one line of text, and the last frame's camera against the first came out a 0.87-px shift: every frame from 38
    on was re-aligned alone, and frames 43, 44 and 60 could not be (98–221 px unexplained at the text's left end).
    The written scenes (arithmetic, sudoku, numseq) search the last frame against the final picture
    (``Scene.end_search``, as sorting and counting): the zoom found (0.986), no frame re-aligned."""
    from vreason.synth.adversary_principles import run_case

    out = run_case(Case("P5", "arithmetic", "zoom", True, "hard", 3, SUITE_SEED, 819791483), str(tmp_path))
    assert out is not None and out.params["zoom"] == 0.015
    assert out.ok and out.passed, out.reason
