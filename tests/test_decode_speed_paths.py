"""Speed paths that must not change a pixel or a reading (issue 26 item 1): the reused conversion context
of :func:`vreason.frames.video.frame_rgb` and the OCR engine's recognition cache."""

from __future__ import annotations

import numpy as np
import pytest

from vreason.verify.ocr import OcrEngine


def test_frame_rgb_reused_context_matches_a_fresh_conversion(tmp_path):
    av = pytest.importorskip("av")
    from av.video.reformatter import Interpolation

    from vreason.frames.video import frame_rgb
    from vreason.frames.write import write_video

    rng = np.random.default_rng(0)
    frames = [rng.integers(0, 256, (90, 160, 3), dtype=np.uint8) for _ in range(6)]
    path = str(tmp_path / "v.mp4")
    write_video(path, frames, fps=8)
    checked = 0
    for max_side in (None, 160, 80, 40):
        with av.open(path) as c:
            for f in c.decode(video=0):
                got = frame_rgb(f, max_side)
                if max_side in (None, 160):
                    want = f.to_ndarray(format="rgb24")
                else:
                    want = f.reformat(width=got.shape[1], height=got.shape[0], format="rgb24",
                                      interpolation=Interpolation.AREA).to_ndarray()
                assert got.shape[1] == (max_side or 160)
                assert np.array_equal(got, want)
                checked += 1
    assert checked == 24


class _Out:
    def __init__(self, text: str) -> None:
        self.txts, self.scores = (text,), (0.9,)


def test_ocr_cache_reads_an_identical_crop_once_and_a_different_one_again():
    calls: list[tuple[int, ...]] = []

    def engine(img, **_):
        calls.append(img.shape)
        return _Out(f"{int(img.mean())}")

    eng = OcrEngine(engine=engine, version="test")
    crop = np.full((30, 20, 3), 255, np.uint8)
    crop[8:22, 8:12] = 0
    first = eng.read(crop)
    again = eng.read(crop.copy())
    other = crop.copy()
    other[8:22, 14:16] = 0
    third = eng.read(other)
    assert first == again
    assert len(calls) == 2  # the copy was served from the cache, the changed crop was recognised
    assert third != first
    strip = eng.read_strip([crop, other])
    assert len(calls) == 3
    assert eng.read_strip([crop, other]) == strip  # the same strip: from the cache
    assert len(calls) == 3
