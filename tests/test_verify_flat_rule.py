"""The temporal residual's chroma rule on flat colour (``verify.flat_rule.chroma_hot``, issue 24, principle 1).

A small dot of another colour, decoded through a 4:2:0 codec at whatever phase the chroma grid cuts it, is found;
what an honest camera leaves on a flat page (a white-balance drift, an exposure residual, codec noise) is not; and
the quick exits (no chroma difference near any flat pixel can raise the band over its high level) never change the
answer. Places, colours and drifts are drawn from ``VREASON_ADV_SEED``."""

from __future__ import annotations

import os

import cv2
import numpy as np
import pytest

from test_verify_scene import h264, mjpeg
from vreason.synth.base import RenderConfig
from vreason.synth.suite import make_instance
from vreason.verify import flat_rule as fr
from vreason.verify.residual import flat_colour_mask, largest_component

SEED = int(os.environ.get("VREASON_ADV_SEED", "20261207"))
FAMILIES = ("choice", "numseq", "toolqa", "symmetry", "oddoneout", "sudoku", "arithmetic", "sequence", "counting")


def page_and_spot(r: np.random.Generator) -> tuple[np.ndarray, tuple[int, int]]:
    """A random family's start picture and a point whose 31×31 neighbourhood is flat colour and flat luma (the
    rule's scope: a chroma-flat spot may hold grey text, and a dot half over a black glyph passed, decoded as
    luma 133 off — VREASON_ADV_SEED=635206662)."""
    while True:
        fam = FAMILIES[int(r.integers(len(FAMILIES)))]
        img = make_instance(fam, str(r.choice(["easy", "medium", "hard"])), 0, int(r.integers(1 << 20)),
                            RenderConfig()).first_frame
        flat = flat_colour_mask(cv2.cvtColor(img, cv2.COLOR_RGB2YCrCb))
        grey = cv2.cvtColor(img, cv2.COLOR_RGB2GRAY)
        k = np.ones((31, 31), np.uint8)
        flat &= cv2.subtract(cv2.dilate(grey, k), cv2.erode(grey, k)) <= 2
        ok = cv2.erode(flat.astype(np.uint8), k) > 0
        ys, xs = np.nonzero(ok)
        if len(ys):
            j = int(r.integers(len(ys)))
            return img, (int(xs[j]), int(ys[j]))


def chroma_dot(page_rgb: np.ndarray, r: np.random.Generator, lo: int, hi: int) -> np.ndarray:
    """An RGB colour within 8 levels of ``page_rgb``'s luma whose Cr or Cb is ``lo``..``hi`` levels off."""
    page = cv2.cvtColor(page_rgb[None, None].astype(np.uint8), cv2.COLOR_RGB2YCrCb)[0, 0].astype(int)
    while True:
        y = page.copy()
        y[0] += int(r.integers(-8, 9))
        ch = 1 + int(r.integers(2))
        y[ch] += int(r.integers(lo, hi + 1)) * int(r.choice([-1, 1]))
        rgb = cv2.cvtColor(np.clip(y, 0, 255).astype(np.uint8)[None, None], cv2.COLOR_YCrCb2RGB)[0, 0]
        back = cv2.cvtColor(rgb[None, None], cv2.COLOR_RGB2YCrCb)[0, 0].astype(int)
        if abs(back[0] - page[0]) <= 10 and abs(back[ch] - page[ch]) >= lo - 2:
            return rgb


def hot_px(frame: np.ndarray, ref: np.ndarray) -> int:
    """Largest component of :func:`chroma_hot` of ``frame`` against ``ref`` (nothing ignored; ``ref`` expected)."""
    return largest_component(fr.chroma_hot(frame, ref, np.zeros(ref.shape[:2], bool), ref))[0]


@pytest.mark.parametrize("draw_", range(4))
def test_a_small_dot_of_another_colour_is_found_at_any_chroma_phase(draw_):
    """A 13-px dot 26–45 levels off in Cr or Cb, at a random place (so a random phase of the 2×2 chroma grid),
    shown for 8 frames through H.264 (the suite's writer) or MJPEG at quality 95 (both 4:2:0): the rule covers
    more than :data:`MAX_FLAT_BLOB` px of it in some frame (the scorer judges every frame). OpenCV's MJPEG
    quantises colour harder: a pale yellow dot on white 25 levels off in Cb kept a band of 7.0–7.7 levels at
    qualities 80–90 (under :data:`CHROMA_HIGH`; honest videos peak at 5) and 11–12.5 at 95–100."""
    r = np.random.default_rng([SEED, 95, draw_])
    img, (x, y) = page_and_spot(r)
    dot = chroma_dot(img[y, x], r, 26, 45)
    marked = img.copy()
    cv2.circle(marked, (x, y), 2, tuple(int(v) for v in dot), -1)
    codec = h264 if draw_ % 2 == 0 else (lambda f: mjpeg(f, 95))
    decoded = codec([img] * 4 + [marked] * 8)
    found = max(hot_px(got, decoded[0]) for got in decoded[4:])
    assert found > fr.MAX_FLAT_BLOB, (draw_, (x, y), dot.tolist(), img[y, x].tolist(), found)


@pytest.mark.parametrize("draw_", range(3))
def test_a_smooth_colour_drift_and_codec_noise_are_not_marks(draw_):
    """The page re-shown with a smooth chroma drift (a white balance wandering by up to ±6 levels across the
    frame, as an exposure fit leaves it), through H.264 both times: nothing is found."""
    r = np.random.default_rng([SEED, 96, draw_])
    img, _ = page_and_spot(r)
    h, w = img.shape[:2]
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    a, b = r.uniform(-6, 6, 2)
    ramp = (a * xx / w + b * yy / h)
    ycc = cv2.cvtColor(img, cv2.COLOR_RGB2YCrCb).astype(np.float32)
    ycc[..., 1 + int(r.integers(2))] += ramp
    drifted = cv2.cvtColor(np.clip(ycc, 0, 255).astype(np.uint8), cv2.COLOR_YCrCb2RGB)
    ref, got = h264([img, drifted])
    assert hot_px(got, ref) == 0, (draw_, a, b)


def test_the_quick_exits_never_change_the_answer():
    """On random pages with random faint changes (dots, drifts, noise near edges), :func:`chroma_hot` equals the
    band computed in full without its two quick exits."""
    r = np.random.default_rng([SEED, 97])
    for _ in range(12):
        img, (x, y) = page_and_spot(r)
        other = img.astype(np.int16)
        kind = int(r.integers(3))
        if kind == 0:
            other[y - 2:y + 3, x - 2:x + 3] += r.integers(-12, 13, 3).astype(np.int16)
        elif kind == 1:
            other += r.integers(-3, 4, other.shape).astype(np.int16)
        else:
            edges = cv2.Canny(img, 50, 150) > 0
            other[edges] += r.integers(-20, 21, (int(edges.sum()), 3)).astype(np.int16)
        other = np.clip(other, 0, 255).astype(np.uint8)
        ignore = np.zeros(img.shape[:2], bool)
        flat = flat_colour_mask(cv2.cvtColor(img, cv2.COLOR_RGB2YCrCb), ignore)
        band = fr.chroma_band(other, img, flat)
        low = (band > fr.CHROMA_LOW) & flat
        _, labels = cv2.connectedComponents(low.astype(np.uint8), connectivity=8)
        full = np.isin(labels, np.unique(labels[low & (band > fr.CHROMA_HIGH)])) & low
        assert np.array_equal(fr.chroma_hot(other, img, ignore, img), full), kind


def test_a_half_size_video_s_chroma_ring_is_not_a_mark(tmp_path):
    """Odd-one-out decoded at half size (the adversarial set's honest ``half_size_darker15_hue_minus6``, easy,
    instance 1000 of bench seed 24001): the red answer ring's colour reached past the 8-px ring into the page, Cr
    9–12 levels off 8–10 px from it, a 13-px chroma 'mark'. The chroma band keeps the video's codec ring (16 px at
    half size) from other colours."""
    from vreason.synth.adversary import load_variants, run_variant

    v = next(v for v in load_variants()["oddoneout"] if v.name == "half_size_darker15_hue_minus6")
    score = run_variant(v, "easy", 1000, 24001, str(tmp_path))
    assert score.passed, score.evidence.details.get("scene") if score.evidence else score.reason
