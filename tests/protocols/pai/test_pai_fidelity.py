"""PAI-Bench fidelity to the released code, computed independently on small inputs built here."""
from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture
def torch():
    """torch, imported when a test runs, not at collection (every pytest-xdist worker collects every module)."""
    return pytest.importorskip("torch")


def _mean(torch):
    class _Mean(torch.nn.Module):
        def forward(self, a, b):  # TorchScript: unannotated arguments are Tensors
            return (a + b) / 2.0

    return _Mean()


def test_motion_smoothness_interpolator_truncates_like_released(tmp_path, torch):
    from vreason.protocols.pai.g.measure import torchscript_interpolator

    path = tmp_path / "interp.pt"
    torch.jit.script(_mean(torch)).save(str(path))
    rng = np.random.default_rng(0)
    a = rng.integers(0, 256, (8, 9, 3), dtype=np.uint8)
    b = rng.integers(0, 256, (8, 9, 3), dtype=np.uint8)
    got = torchscript_interpolator(str(path))(a, b)
    # Released formula (VBench vbench/motion_smoothness.py, MotionSmoothness.motion_score): the model output in
    # [0, 1] times 255, cast with numpy astype(np.uint8) — truncation, not rounding.
    ta = a.astype(np.float32) / 255.0
    tb = b.astype(np.float32) / 255.0
    want = (np.clip((ta + tb) / 2.0, 0, 1) * 255.0).astype(np.uint8)
    assert np.array_equal(got, want)
    # the odd sums land on .5 after /2: rounding would differ there, so the test can fail
    assert not np.array_equal(got, np.rint(np.clip((ta + tb) / 2.0, 0, 1) * 255.0).astype(np.uint8))


def test_imaging_quality_resize_is_float_bilinear_without_antialias(tmp_path, torch):
    from vreason.protocols.pai.g.measure import _longer_512_tensor

    rng = np.random.default_rng(1)
    frame = rng.integers(0, 256, (300, 1024, 3), dtype=np.uint8)
    got = _longer_512_tensor(frame).numpy()[0]
    # Released (VBench vbench/imaging_quality.py, transform(..., 'longer')): scale = 512 / max(h, w), then a
    # bilinear resize to (int(scale*h), int(scale*w)) with antialias=False. Written here as plain half-pixel
    # bilinear sampling (align_corners=False) on the float image, in numpy.
    h, w = frame.shape[:2]
    s = 512.0 / max(h, w)
    oh, ow = int(s * h), int(s * w)
    img = frame.astype(np.float64).transpose(2, 0, 1) / 255.0

    def coords(n_out, n_in):
        x = np.maximum((np.arange(n_out) + 0.5) * (n_in / n_out) - 0.5, 0.0)
        i0 = np.minimum(np.floor(x).astype(int), n_in - 1)
        i1 = np.minimum(i0 + 1, n_in - 1)
        return i0, i1, x - i0

    y0, y1, fy = coords(oh, h)
    x0, x1, fx = coords(ow, w)
    top = img[:, y0][:, :, x0] * (1 - fx) + img[:, y0][:, :, x1] * fx
    bot = img[:, y1][:, :, x0] * (1 - fx) + img[:, y1][:, :, x1] * fx
    want = top * (1 - fy)[:, None] + bot * fy[:, None]
    assert got.shape == (3, oh, ow)
    assert np.allclose(got, want, atol=1e-5)
    small = rng.integers(0, 256, (64, 80, 3), dtype=np.uint8)
    assert np.allclose(_longer_512_tensor(small).numpy()[0], small.transpose(2, 0, 1) / 255.0, atol=1e-6)
