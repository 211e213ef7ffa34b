"""PAI-Bench fidelity to the released code, computed independently on small inputs built here."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")


class _Mean(torch.nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return (a + b) / 2.0


def test_motion_smoothness_interpolator_truncates_like_released(tmp_path):
    from vreason.protocols.pai_g_measure import torchscript_interpolator

    path = tmp_path / "interp.pt"
    torch.jit.script(_Mean()).save(str(path))
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
