"""A small faint mark on a flat, unchanging part of the picture (issue 24, principle 1).

Marks of 12–24 px (a dot, a small box outline, a thin stroke) 22–40 levels off the page stayed under every rule of
the residuals: under the per-pixel tolerances (40), under the 5×5 means (18, and 9 against the first frame) and
under the 24-px blob. Away from edges the temporal residual now allows 16 levels and 8 px
(``flat_rule.TOL_FLAT``, ``MAX_FLAT_BLOB``): measured 2026-12-07 on 20 random draws over ten families, 19
passed before and 3 after (maze's two, decoded at half size where such a mark is 3–4 px; an 8-px stroke).

Where the oracle changes the picture (a tile slid into place, a cell painted, a coin dropped), the temporal residual
judged nothing for the rest of the video, so the same marks on the face of what had come to rest passed 11 of 24
draws (seed 1, eight families); its reference now follows the video until the place has held still
(:mod:`vreason.verify.settle`): 0 of 24.
"""

from __future__ import annotations

import os

import cv2
import numpy as np
import pytest

from conftest import one_case
from vreason.core.records import Video
from vreason.core.scoring import ScoreContext
from vreason.synth.adversary import Clip
from vreason.synth.adversary_principles import Made, write_case
from vreason.synth.adversary_principles_ops import scene
from vreason.synth.base import RenderConfig
from vreason.synth.scorer import SynthVerifierScorer
from vreason.synth.suite import make_instance, make_sample
from vreason.verify.frame_check import CODEC_EDGE_PX, CODEC_RING, FIRST_EDGE_LEVEL, _edge_band
from vreason.verify.residual import FLAT_RING

SEED = int(os.environ.get("VREASON_ADV_SEED", "20261207"))
FULL_SIZE = ("choice", "numseq", "toolqa", "symmetry", "oddoneout", "sudoku", "arithmetic", "sequence", "counting")
"""Families decoded at full size (maze and connect decode at half: there such a mark is below the blob floor)."""
COLOUR_DOT = tuple(f for f in FULL_SIZE if f != "symmetry")


def flat_place(frame: np.ndarray, changed: np.ndarray, r: np.random.Generator,
               reach: int = 10) -> tuple[int, int] | None:
    """A random point whose 21×21 neighbourhood is flat (luma span ≤ 2) in ``frame`` and that lies more than
    ``reach`` px from any pixel that ever changes."""
    y = cv2.cvtColor(frame, cv2.COLOR_RGB2GRAY)
    k = np.ones((21, 21), np.uint8)
    kr = np.ones((2 * reach + 1, 2 * reach + 1), np.uint8)
    ok = (cv2.subtract(cv2.dilate(y, k), cv2.erode(y, k)) <= 2) & ~(cv2.dilate(changed.astype(np.uint8), kr) > 0)
    ok[:24], ok[-24:], ok[:, :24], ok[:, -24:] = False, False, False, False
    ys, xs = np.nonzero(ok)
    if not len(ys):
        return None
    j = int(r.integers(len(ys)))
    return int(xs[j]), int(ys[j])


def on_flat(frame: np.ndarray, mask: np.ndarray) -> bool:
    """Whether every pixel of ``mask`` lies on flat luma (5×5 span ≤ 2) at least ``frame_check.CODEC_EDGE_PX`` + 2
    px from anything else: the flat rule's scope. Beside an edge the rendering residual judges (the edge-band class
    of docs/suite_validity.md): a 14-px stroke 31 levels under symmetry's white page drawn from a flat point reached
    across a grid line, 8 px of it left on the page (VREASON_ADV_SEED=768531256; it passed on 085f6ff too)."""
    y = cv2.cvtColor(frame, cv2.COLOR_RGB2GRAY)
    k = np.ones((5, 5), np.uint8)
    flat = (cv2.subtract(cv2.dilate(y, k), cv2.erode(y, k)) <= 2).astype(np.uint8)
    away = cv2.erode(flat, np.ones((2 * (CODEC_EDGE_PX + 2) + 1,) * 2, np.uint8)) > 0
    return bool(away[mask].all())


def small_mark(shape: tuple[int, int], at: tuple[int, int], r: np.random.Generator) -> np.ndarray:
    """A dot (radius 2), a 1-px box outline (3–6 × 3–5 px inside) or a 1-px stroke (8–15 px long) of ≥ 12 px."""
    while True:
        m = np.zeros(shape, np.uint8)
        x, y = at
        kind = str(r.choice(["dot", "box", "stroke"]))
        if kind == "dot":
            cv2.circle(m, (x, y), 2, 1, -1)
        elif kind == "box":
            cv2.rectangle(m, (x, y), (x + int(r.integers(3, 7)), y + int(r.integers(3, 6))), 1, 1)
        else:
            n, a = int(r.integers(8, 16)), float(r.uniform(0, np.pi))
            cv2.line(m, (x, y), (int(round(x + n * np.cos(a))), int(round(y + n * np.sin(a)))), 1, 1)
        if 12 <= int(m.sum()) <= 24:
            return m > 0


def draw_instance(r: np.random.Generator, families: tuple[str, ...], place):
    """A random family of ``families``, difficulty and instance (0 of a random suite seed) until ``place(inst)``
    finds something; returns (family, difficulty, seed, instance, what ``place`` found)."""
    while True:
        fam = families[int(r.integers(len(families)))]
        diff, seed = str(r.choice(["easy", "medium", "hard"])), int(r.integers(1 << 20))
        inst = make_instance(fam, diff, 0, seed, RenderConfig())
        got = place(inst)
        if got is not None:
            return fam, diff, seed, inst, got


def score_from(tmp_path, inst, seed: int, t0: int, mask: np.ndarray, paint) -> tuple[bool, str, dict]:
    """The oracle of ``inst`` (instance 0 of suite ``seed``) with ``paint(pixels) -> new pixels`` applied under
    ``mask`` from frame ``t0`` to the end, through H.264 and the suite's scorer: (passed, status, details)."""
    cfg = RenderConfig()
    frames = [f.copy() for f in inst.solution]
    for f in frames[t0:]:
        f[mask] = paint(f[mask])
    path = str(tmp_path / "mark.mp4")
    write_case(path, Made(Clip(frames, cfg.fps)))
    sample = make_sample(inst.family, inst.difficulty, 0, seed, cfg)
    (score,) = SynthVerifierScorer().score(sample, Video(sample_id=sample.id, model="mark", seed=0, path=path),
                                           ScoreContext(run_dir=str(tmp_path)))
    return bool(score.passed), score.status.value, (score.evidence.details if score.evidence else {})


def free_pixels(inst, cfg: RenderConfig) -> np.ndarray:
    """Where the family's scene lets anything appear, in its first or last frame (e.g. sudoku's blank cells)."""
    from vreason.synth.suite import get_family

    sc = get_family(inst.family).scene(inst.state, cfg)
    out = np.zeros(inst.first_frame.shape[:2], bool)
    for i, frame in ((0, inst.first_frame), (len(inst.solution) - 1, inst.final_frame)):
        got = sc.expect(i, frame)
        if not isinstance(got, str) and got[1] is not None:
            out |= got[1].astype(bool)
    return out


@pytest.mark.parametrize("draw_", one_case(range(3), "faint-flat"))
def test_a_small_faint_mark_on_a_flat_area_is_unexplained(tmp_path, draw_):
    """Random family (decoded at full size), difficulty, instance, place, shape and level (22–40 off the page),
    shown from a random frame of the second half to the end, through H.264: the video fails on its scene."""
    r = np.random.default_rng([SEED, 81, draw_])
    while True:
        fam, diff, seed, inst, at = draw_instance(
            r, FULL_SIZE, lambda inst: flat_place(inst.solution[0], scene(inst.solution).changed, r))
        sc = scene(inst.solution)
        mask = next((m for m in (small_mark(sc.frames[0].shape[:2], at, r) for _ in range(10))
                     if on_flat(sc.frames[0], m)), None)
        if mask is not None:
            break
    page = float(cv2.cvtColor(sc.frames[0], cv2.COLOR_RGB2GRAY)[at[1], at[0]])
    level = int(np.clip(page + float(r.uniform(22, 40)) * (-1 if page > 128 else 1), 0, 255))
    t0 = int(r.integers(len(inst.solution) // 2, len(inst.solution) - 6))
    passed, status, details = score_from(tmp_path, inst, seed, t0, mask, lambda px: level)
    assert status == "ok" and not passed, (fam, diff, seed, at, int(mask.sum()), level, t0)
    assert details.get("checks", {}).get("scene") is False, (fam, details.get("reason"))


MOVING = ("sliding", "match3", "toolqa", "sorting", "counting", "gravity", "graph", "symmetry")
"""Families whose oracle changes the picture in place (decoded at full size)."""


def settled_place(frames: list[np.ndarray], r: np.random.Generator) -> tuple[tuple[int, int], int] | None:
    """A random point on a flat face (9×9 luma span ≤ 2 in the last frame) of what the oracle changed, whose
    neighbourhood (a dot's radius and twice the codec ring, ``frame_check.CODEC_RING``, each way) last changed 10 or
    more frames before the end; and that last change's frame. Nearer a change the reference still follows the video
    (:mod:`vreason.verify.settle`), and a mark painted there while it does becomes part of the reference: a dot 34
    levels lighter on a coin, 14 px from a coin passing by (counting, medium, suite seed 752035,
    VREASON_ADV_SEED=345967673) — a listed gap (docs/suite_validity.md); 1 of 243 draws came that near."""
    n = len(frames)
    last = np.full(frames[0].shape[:2], -1, np.int32)
    for i in range(1, n):
        last[np.abs(frames[i].astype(np.int16) - frames[i - 1].astype(np.int16)).max(axis=2) > 0] = i
    y = cv2.cvtColor(frames[-1], cv2.COLOR_RGB2GRAY)
    k = np.ones((9, 9), np.uint8)
    ok = (cv2.subtract(cv2.dilate(y, k), cv2.erode(y, k)) <= 2) & (cv2.erode((last > 0).astype(np.uint8), k) > 0)
    reach = 2 * (3 + 2 * CODEC_RING) + 1
    settled = cv2.dilate(last.astype(np.float32), np.ones((reach, reach), np.uint8))
    ok &= settled < n - 10
    ok[:24], ok[-24:], ok[:, :24], ok[:, -24:] = False, False, False, False
    ys, xs = np.nonzero(ok)
    if not len(ys):
        return None
    j = int(r.integers(len(ys)))
    return (int(xs[j]), int(ys[j])), int(settled[ys[j], xs[j]])


@pytest.mark.parametrize("draw_", one_case(range(3), "rest-mark"))
def test_a_small_mark_on_what_came_to_rest_is_unexplained(tmp_path, draw_):
    """Random family whose oracle moves or paints things, instance and place on the face of what it changed; a dot
    (radius 2–3) 26–45 levels off that face from 5–7 frames after the place last changed to the end."""
    r = np.random.default_rng([SEED, 83, draw_])

    def place(inst):  # noqa: ANN001, ANN202
        got = settled_place(inst.solution, r)
        return got if got is not None and got[1] + 8 < len(inst.solution) - 3 else None

    fam, diff, seed, inst, ((x, y), since) = draw_instance(r, MOVING, place)
    m = np.zeros(inst.first_frame.shape[:2], np.uint8)
    cv2.circle(m, (x, y), int(r.integers(2, 4)), 1, -1)
    mask = m > 0
    face = float(np.median(cv2.cvtColor(inst.solution[-1], cv2.COLOR_RGB2GRAY)[mask]))
    # 26 levels or more: a 13-px dot 23 levels lighter (counting, hard, suite seed 903745) kept under 8 px over the
    # flat rule's 16 levels through H.264 — the floor, as for any flat page
    delta = int(round(float(r.uniform(26, 45)) * (-1 if face > 128 else 1)))
    t0 = since + int(r.integers(5, 8))
    passed, status, details = score_from(
        tmp_path, inst, seed, t0, mask, lambda px: np.clip(px.astype(np.int16) + delta, 0, 255).astype(np.uint8))
    assert status == "ok" and not passed, (fam, diff, seed, (x, y), int(mask.sum()), delta, t0)
    assert "scene" in str(details.get("reason")), (fam, details.get("reason"))  # failed for what it shows


@pytest.mark.parametrize("draw_", one_case(range(2), "dot-page"))
def test_a_small_dot_of_another_colour_on_a_flat_page_is_unexplained(tmp_path, draw_):
    """A 13-px dot whose luma stays within 8 levels of the page but whose Cr or Cb moves 28–45 levels (a yellow dot
    at 0.31 on white: luma 14, Cb 36 — tool QA, seed 2210) on a flat, unchanging page: the 4×4-averaged chroma of
    the temporal residual thinned it under 16 levels, and the flat-colour rule of the rendering residual is judged
    by the 24-px blob. The temporal rule for flat areas reads the decoded chroma where the colour is flat
    (``flat_rule.chroma_hot``). Read per pixel over 16 levels (the twenty-second session), 6 of 30 such dots passed
    (a 4:2:0 codec spreads a dot's colour over the 2×2 chroma samples the dot straddles: 26 levels of Cr decoded as
    blocks of 7–21 — oddoneout, suite seed 788422; the run at VREASON_ADV_SEED=165615132 failed on sequence); read
    as a quantity (4×4 means less the local level, a hysteresis at 4 and 8 levels), 0 of 30."""
    r = np.random.default_rng([SEED, 84, draw_])
    cfg = RenderConfig()
    # colour may show near what changes or is free (a codec's chroma ringing): the rule keeps the codec ring and the
    # flat colour's own ring from there (``frame_check.CODEC_RING`` + ``residual.FLAT_RING``, 16 px), so the dot's
    # pixels lie beyond. Within 10 px, 3 of 66 draws passed (a pale yellow dot 10 px from a blank sudoku cell:
    # VREASON_ADV_SEED=855846782): a listed gap
    # Symmetry is left out, a listed gap: a pale yellow dot on its white page (Cb 28-33 off) passed 2 of about 25
    # symmetry draws (VREASON_ADV_SEED=846697972 and 891872976; the chroma band reached 10.8 but its flat colour
    # there is cut short, and what is left never reaches the high level). The first frame's strong edges count as
    # colour too: the temporal rules leave the band beside them (``frame_check.FIRST_EDGE_LEVEL``) to the rendering
    # residual, and the chroma rule's flat colour keeps its rings from that band — a pale yellow dot 17 px from an
    # odd-one-out triangle was judged on 8 of its pixels and passed (VREASON_ADV_SEED=24672630, on 1e06385 too):
    # the edge-band class of docs/suite_validity.md, not this rule's scope
    fam, diff, seed, inst, at = draw_instance(r, COLOUR_DOT, lambda inst: flat_place(
        inst.solution[0], scene(inst.solution).changed | free_pixels(inst, cfg)
        | _edge_band(inst.solution[0], FIRST_EDGE_LEVEL), r, CODEC_RING + FLAT_RING + 2))
    sc = scene(inst.solution)
    m = np.zeros(sc.frames[0].shape[:2], np.uint8)
    cv2.circle(m, at, 2, 1, -1)
    mask = m > 0
    page = cv2.cvtColor(sc.frames[0][at[1]:at[1] + 1, at[0]:at[0] + 1], cv2.COLOR_RGB2YCrCb)[0, 0].astype(int)
    while True:
        ycc = page.copy()
        ycc[0] += int(r.integers(-8, 9))
        ch = 1 + int(r.integers(2))
        ycc[ch] += int(r.integers(28, 46)) * int(r.choice([-1, 1]))
        dot = cv2.cvtColor(np.clip(ycc, 0, 255).astype(np.uint8)[None, None], cv2.COLOR_YCrCb2RGB)[0, 0]
        back = cv2.cvtColor(dot[None, None], cv2.COLOR_RGB2YCrCb)[0, 0].astype(int)
        if abs(back[0] - page[0]) <= 10 and abs(back[ch] - page[ch]) >= 26:  # the colour survives RGB's gamut
            break
    t0 = int(r.integers(len(inst.solution) // 2, len(inst.solution) - 6))
    passed, status, _ = score_from(tmp_path, inst, seed, t0, mask, lambda px: dot)
    assert status == "ok" and not passed, (fam, diff, seed, at, dot.tolist(), page.tolist(), t0)
