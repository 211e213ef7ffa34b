"""The generated adversarial set by principle (issue 24; src/vreason/synth/adversary_principles*.py).

One case per principle × family, drawn from the run's fresh seed (``VREASON_ADV_SEED``, printed in the
header): a random kind of the principle, a random difficulty and random parameters, scored through the
suite's scorer after encoding. Cheats must fail, honest renderings must pass. The full set (every kind,
several draws) runs in ``benchmarks/bench_synth_validity.py --principles K``.

Known gaps (docs/suite_validity.md, "Principles"): a wrong verdict of a listed (family, kind) is an
expected failure. ``ALWAYS`` gaps were wrong on every draw measured: if one gives the right verdict the
test fails (strict), so a fixed gap is noticed and removed from the list. ``SOMETIMES`` gaps depend on the
draw (a mark's colour, a letterbox's colour, …): a right verdict passes.

Marked ``slow`` (``make test-all`` / ``make bench`` run it, not ``make test``): with 115 of 287 generated cheats
passing and 13 of 121 honest renderings failing on the first two seeds measured, and 83/205 + 81/203 and 4/96 +
3/96 on two fresh seeds of 2026-11-27 (all 16 families; docs/suite_validity.md, "Measured again"), new draws
still find gaps outside the lists, so on a fresh seed this is a findings run for issue 24, not yet a regression gate.
"""

import os

import pytest

from vreason.synth.adversary_principles import PRINCIPLES, kinds_for, load_kinds, run_case, sample_cases
from vreason.synth.suite import default_families

pytestmark = pytest.mark.slow

SEED = int(os.environ.get("VREASON_ADV_SEED", "20261122"))
FAMILIES = default_families()
CASES = sample_cases(FAMILIES, SEED)

# --- known gaps: from bench_synth_validity.py --principles 1 on the seeds in docs/suite_validity.md
ALWAYS: dict[tuple[str, str], str] = {
}
"""Strict: a right verdict fails the test. Empty: two draws per pair were too few (match3/jump, wrong on 2/2
benchmark draws, was right in the first test run); a pair joins it once many draws are all wrong."""
SOMETIMES: dict[tuple[str, str], str] = {
    ('arithmetic', 'answer_twice'): ('a copy 2-12 px beside the answer can lie inside the free answer box (0/3 draws,'
                                     ' scene on, seeds 948910964, 1812422572, 276112471)'),
    ('arithmetic', 'drop_object'): ('the object dropped can be an answer digit being written, in the free answer box '
                                    '(1/4 draws, '
                                    'scene on: seed 227615476, [387, 167, 407, 196])'),
    ('arithmetic', 'end_early'): 'wrong on 1/2 draws',
    ('arithmetic', 'mark'): ("a mark under the residual's 24-px blob limit or ~0.3 opacity is below its floor (1/3 "
                             'draws, scene on, seeds 948910964, 1812422572, 276112471: a 13-px dot at 0.33 on the '
                             'ink)'),
    ('choice', 'ghost'): 'wrong on 2/2 draws',
    ('choice', 'mark'): 'wrong on 2/2 draws',
    ('choice', 'recolour'): ('a glyph of the question recoloured grey-blue at 0.69 (123, 138, 162): its chroma under '
                             'the grey rule, its luma inside a thin stroke\'s range (seed 70071, 2026-12-07)'),
    ('connect', 'drop_object'): 'wrong on 2/2 draws',
    ('connect', 'ghost'): 'wrong on 1/2 draws',
    ('connect', 'mark'): 'wrong on 2/2 draws',
    ('gravity', 'mark'): ('a mark fainter than ~0.3 opacity can lie below the residual floor (caught on '
                          'seed 731942 with the scene in the verdict)'),
    ('match3', 'mark'): ('a mark fainter than ~0.3 opacity can lie below the residual floor (caught on '
                   'seeds 48213977, 915530261 with the scene in the verdict)'),
    ('maze', 'mark'): ('a mark fainter than ~0.3 opacity can lie below the residual floor (caught on '
                       'seeds 731942, 5170293 with the scene in the verdict)'),
    ('numseq', 'ghost'): 'wrong on 2/2 draws',
    ('numseq', 'mark'): 'wrong on 2/2 draws',
    ('numseq', 'recolour'): ('a digit recoloured grey-green at 0.72 (149, 182, 134): low chroma, thin strokes '
                             '(seed 70071, 2026-12-07)'),
    ('sequence', 'ghost'): 'wrong on 1/2 draws',
    ('sequence', 'recolour'): 'wrong on 2/2 draws',
    ('sorting', 'mark'): 'wrong on 2/2 draws',
    ('sudoku', 'answer_twice'): ('a copy near an answer digit can lie inside its free blank cell, where only the '
                                 'reader judges it (0/3 draws, scene on, seeds 948910964, 1812422572, 276112471)'),
    ('sudoku', 'drop_object'): ('the object dropped can be an answer digit being written, in a free blank cell '
                                '(1/4 draws, '
                                'scene on: seed 227615476, [350, 52, 364, 84])'),
    ('sudoku', 'mark'): ("a mark under the residual's 24-px blob limit or ~0.3 opacity is below its floor (1/3 draws,"
                         ' scene on, seeds 948910964, 1812422572, 276112471: a 6x4 stroke at 0.31)'),
    ('symmetry', 'mark'): 'wrong in the test run VREASON_ADV_SEED=988799969',
    ('choice', 'answer_twice'): 'wrong on 1/2 draws (seeds 73495109, 377213459)',
    ('counting', 'mark'): ('a mark fainter than ~0.3 opacity can lie below the residual floor (caught on '
                     'seeds 48213977, 915530261 with the scene in the verdict)'),
    ('counting', 'shift_background'): ('a nudge made in the held end is parsed in one frame only (docs; '
                                     'caught on seeds 48213977, 915530261)'),
    ('graph', 'mark'): ('a mark fainter than ~0.3 opacity can lie below the residual floor (caught on '
                     'seeds 48213977, 915530261 with the scene in the verdict)'),
    ('oddoneout', 'mark'): 'wrong on 1/2 draws (seeds 73495109, 377213459)',
    ('sequence', 'mark'): 'wrong on 1/2 draws (seeds 73495109, 377213459)',
    ('sliding', 'drop_object'): 'wrong on 2/2 draws (seeds 73495109, 377213459)',
    ('sliding', 'ghost'): 'wrong on 2/2 draws (seeds 73495109, 377213459)',
    ('sliding', 'mark'): 'wrong on 1/2 draws (seeds 73495109, 377213459)',
    ('sliding', 'recolour'): 'wrong on 2/2 draws (seeds 73495109, 377213459)',
    ('sliding', 'shift_background'): 'wrong on 1/2 draws (seeds 73495109, 377213459)',
    ('sorting', 'ghost'): 'wrong on 1/1 draws (seeds 73495109, 377213459)',
    ('toolqa', 'ghost'): 'wrong on 2/2 draws (seeds 73495109, 377213459)',
    ('toolqa', 'mark'): 'wrong on 2/2 draws (seeds 73495109, 377213459)',
    ('toolqa', 'recolour'): 'wrong on 1/2 draws (seeds 73495109, 377213459)',
    # twenty-first session (2026-12-07), sweeps 70071 and 70074: wrong verdicts outside the lists
    ('sliding', 'clone'): ("the title's 't' cloned onto the board's dark border and a purple tile (hard, case seed "
                           '1226234358): a thin glyph of about the border\'s luma'),
    ('sudoku', 'recolour'): ('a given digit recoloured at 0.67 in a low-chroma purple-grey (145, 131, 159): the thin-'
                             'stroke recolour class (case seed 1364910325)'),
    # twentieth session (2026-12-06), 9 fresh seeds of this test: wrong verdicts outside the lists, each a known class
    ('connect', 'jump'): ('2 frames of the final state at frame 52 of an easy line (VREASON_ADV_SEED=202): the line '
                          'reaches its dot a frame early and its tip then gives back 10 px at the half-size decode '
                          '(the oracle is 0.2 cell short of the end there), under the 0.8-cell shrink tolerance '
                          '(examined 2026-12-07)'),
    ('sorting', 'jump'): 'a jump within the 12 slots/s limit is legal (VREASON_ADV_SEED=303; bench seed 20061)',
    ('sudoku', 'ghost'): 'a ghost at 0.28 opacity lies below the residual floor (VREASON_ADV_SEED=303)',
    ('sequence', 'mirror'): ('an easy row near-symmetric upside down mirrors to a task it answers '
                             '(VREASON_ADV_SEED=404)'),
}
"""Wrong on some measured draws (depends on the drawn parameters)."""
MEASURED: set[tuple[str, str]] = {
    ('arithmetic', 'answer_twice'),
    ('arithmetic', 'blank_frame'),
    ('arithmetic', 'clone'),
    ('arithmetic', 'codec'),
    ('arithmetic', 'cut_other'),
    ('arithmetic', 'drop_object'),
    ('arithmetic', 'end_early'),
    ('arithmetic', 'flicker'),
    ('arithmetic', 'ghost'),
    ('arithmetic', 'letterbox'),
    ('arithmetic', 'mark'),
    ('arithmetic', 'mirror'),
    ('arithmetic', 'mosaic'),
    ('arithmetic', 'recolour'),
    ('arithmetic', 'reversed'),
    ('arithmetic', 'rotate'),
    ('arithmetic', 'shift_background'),
    ('arithmetic', 'start_final'),
    ('arithmetic', 'vfr'),
    ('arithmetic', 'zoom'),
    ('choice', 'answer_twice'),
    ('choice', 'blank_frame'),
    ('choice', 'clone'),
    ('choice', 'codec'),
    ('choice', 'cut_other'),
    ('choice', 'drop_object'),
    ('choice', 'end_early'),
    ('choice', 'flicker'),
    ('choice', 'ghost'),
    ('choice', 'letterbox'),
    ('choice', 'mark'),
    ('choice', 'mirror'),
    ('choice', 'mosaic'),
    ('choice', 'recolour'),
    ('choice', 'reversed'),
    ('choice', 'rotate'),
    ('choice', 'shift_background'),
    ('choice', 'start_final'),
    ('choice', 'vfr'),
    ('choice', 'zoom'),
    ('connect', 'blank_frame'),
    ('connect', 'clone'),
    ('connect', 'codec'),
    ('connect', 'cut_other'),
    ('connect', 'drop_object'),
    ('connect', 'end_early'),
    ('connect', 'flicker'),
    ('connect', 'ghost'),
    ('connect', 'jump'),
    ('connect', 'letterbox'),
    ('connect', 'mark'),
    ('connect', 'mirror'),
    ('connect', 'mosaic'),
    ('connect', 'reversed'),
    ('connect', 'rotate'),
    ('connect', 'start_final'),
    ('connect', 'vfr'),
    ('connect', 'zoom'),
    ('gravity', 'clone'),
    ('gravity', 'ghost'),
    ('gravity', 'jump'),
    ('gravity', 'mark'),
    ('gravity', 'mirror'),
    ('match3', 'blank_frame'),
    ('match3', 'clone'),
    ('match3', 'cut_other'),
    ('match3', 'drop_object'),
    ('match3', 'end_early'),
    ('match3', 'ghost'),
    ('match3', 'jump'),
    ('match3', 'mark'),
    ('match3', 'mirror'),
    ('match3', 'mosaic'),
    ('match3', 'recolour'),
    ('match3', 'reversed'),
    ('match3', 'shift_background'),
    ('match3', 'start_final'),
    ('maze', 'blank_frame'),
    ('maze', 'clone'),
    ('maze', 'codec'),
    ('maze', 'cut_other'),
    ('maze', 'drop_object'),
    ('maze', 'end_early'),
    ('maze', 'flicker'),
    ('maze', 'ghost'),
    ('maze', 'jump'),
    ('maze', 'letterbox'),
    ('maze', 'mark'),
    ('maze', 'mirror'),
    ('maze', 'mosaic'),
    ('maze', 'reversed'),
    ('maze', 'rotate'),
    ('maze', 'start_final'),
    ('maze', 'vfr'),
    ('maze', 'zoom'),
    ('numseq', 'answer_twice'),
    ('numseq', 'blank_frame'),
    ('numseq', 'clone'),
    ('numseq', 'codec'),
    ('numseq', 'cut_other'),
    ('numseq', 'drop_object'),
    ('numseq', 'end_early'),
    ('numseq', 'flicker'),
    ('numseq', 'ghost'),
    ('numseq', 'letterbox'),
    ('numseq', 'mark'),
    ('numseq', 'mirror'),
    ('numseq', 'mosaic'),
    ('numseq', 'recolour'),
    ('numseq', 'reversed'),
    ('numseq', 'rotate'),
    ('numseq', 'shift_background'),
    ('numseq', 'start_final'),
    ('numseq', 'vfr'),
    ('numseq', 'zoom'),
    ('oddoneout', 'blank_frame'),
    ('oddoneout', 'clone'),
    ('oddoneout', 'codec'),
    ('oddoneout', 'cut_other'),
    ('oddoneout', 'drop_object'),
    ('oddoneout', 'end_early'),
    ('oddoneout', 'flicker'),
    ('oddoneout', 'ghost'),
    ('oddoneout', 'letterbox'),
    ('oddoneout', 'mark'),
    ('oddoneout', 'mirror'),
    ('oddoneout', 'mosaic'),
    ('oddoneout', 'recolour'),
    ('oddoneout', 'reversed'),
    ('oddoneout', 'rotate'),
    ('oddoneout', 'shift_background'),
    ('oddoneout', 'start_final'),
    ('oddoneout', 'vfr'),
    ('oddoneout', 'zoom'),
    ('sequence', 'blank_frame'),
    ('sequence', 'clone'),
    ('sequence', 'codec'),
    ('sequence', 'cut_other'),
    ('sequence', 'drop_object'),
    ('sequence', 'end_early'),
    ('sequence', 'flicker'),
    ('sequence', 'ghost'),
    ('sequence', 'letterbox'),
    ('sequence', 'mark'),
    ('sequence', 'mirror'),
    ('sequence', 'mosaic'),
    ('sequence', 'recolour'),
    ('sequence', 'reversed'),
    ('sequence', 'rotate'),
    ('sequence', 'shift_background'),
    ('sequence', 'start_final'),
    ('sequence', 'vfr'),
    ('sequence', 'zoom'),
    ('sorting', 'blank_frame'),
    ('sorting', 'clone'),
    ('sorting', 'codec'),
    ('sorting', 'cut_other'),
    ('sorting', 'drop_object'),
    ('sorting', 'end_early'),
    ('sorting', 'flicker'),
    ('sorting', 'jump'),
    ('sorting', 'letterbox'),
    ('sorting', 'mark'),
    ('sorting', 'mirror'),
    ('sorting', 'mosaic'),
    ('sorting', 'reversed'),
    ('sorting', 'rotate'),
    ('sorting', 'start_final'),
    ('sorting', 'vfr'),
    ('sorting', 'zoom'),
    ('sudoku', 'answer_twice'),
    ('sudoku', 'blank_frame'),
    ('sudoku', 'clone'),
    ('sudoku', 'codec'),
    ('sudoku', 'cut_other'),
    ('sudoku', 'drop_object'),
    ('sudoku', 'end_early'),
    ('sudoku', 'flicker'),
    ('sudoku', 'ghost'),
    ('sudoku', 'letterbox'),
    ('sudoku', 'mark'),
    ('sudoku', 'mirror'),
    ('sudoku', 'mosaic'),
    ('sudoku', 'recolour'),
    ('sudoku', 'reversed'),
    ('sudoku', 'rotate'),
    ('sudoku', 'shift_background'),
    ('sudoku', 'start_final'),
    ('sudoku', 'vfr'),
    ('sudoku', 'zoom'),
    ('symmetry', 'blank_frame'),
    ('symmetry', 'clone'),
    ('symmetry', 'codec'),
    ('symmetry', 'cut_other'),
    ('symmetry', 'end_early'),
    ('symmetry', 'flicker'),
    ('symmetry', 'ghost'),
    ('symmetry', 'letterbox'),
    ('symmetry', 'mark'),
    ('symmetry', 'mirror'),
    ('symmetry', 'mosaic'),
    ('symmetry', 'reversed'),
    ('symmetry', 'rotate'),
    ('symmetry', 'start_final'),
    ('symmetry', 'vfr'),
    ('symmetry', 'zoom'),
}
"""(family, kind) pairs the benchmark measured."""
# --- end of known gaps


def test_sampled_set_covers_every_principle_and_family():
    load_kinds()
    got = {(c.principle, c.family) for c in CASES}
    want = {(p, f) for f in FAMILIES for p in PRINCIPLES if kinds_for(p, f)}
    assert got == want
    assert len(CASES) <= 100
    assert {c.honest for c in CASES if c.principle == "P5"} == {True}
    assert {c.honest for c in CASES if c.principle != "P5"} == {False}
    assert sample_cases(FAMILIES, SEED) == CASES  # the same cases in every xdist worker


@pytest.mark.parametrize("case", CASES, ids=[f"{c.principle}-{c.family}-{c.difficulty}-{c.kind}" for c in CASES])
def test_principle_case(tmp_path, case):
    out = run_case(case, str(tmp_path), fallback=True)
    assert out is not None, f"no kind of {case.principle} applies to {case.family} (VREASON_ADV_SEED={SEED})"
    c = out.case
    role = "honest" if c.honest else "cheat"
    msg = (f"{c.principle} {c.family}/{c.difficulty}/{c.kind} ({role}, case_seed={c.case_seed}) "
           f"{'passed' if out.passed else 'failed'}: {out.reason}; {out.params} (VREASON_ADV_SEED={SEED})")
    assert out.ok or not c.honest, msg
    key = (c.family, c.kind)
    if out.wrong:
        if key in ALWAYS or key in SOMETIMES:
            pytest.xfail(f"known gap: {ALWAYS.get(key) or SOMETIMES.get(key)}; {msg}")
        if key not in MEASURED:
            pytest.xfail(f"gap in a (family, kind) the benchmark has not measured yet (docs/suite_validity.md): {msg}")
        pytest.fail(msg)
    if key in ALWAYS:
        pytest.fail(f"known gap not reproduced (fixed? remove {key} from ALWAYS and the doc): {msg}")
