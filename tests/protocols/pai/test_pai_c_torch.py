"""PAI-C blur SSIM's torch path (for ``device=cuda``), checked on CPU tensors against the OpenCV / scikit-image path:
the bilateral filter pixel for pixel (at most 1 grey level apart, almost never), blur SSIM / MSE within 1e-4,
Canny identical. No GPU here: the speed on a GPU is not measured by these tests."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from vreason.protocols.pai.c import fidelity as F
from vreason.protocols.pai.c import gpu as T
from vreason.protocols.pai.c import metrics as M

# torch is imported by the tests, not at collection: every pytest-xdist worker collects every module
pytestmark = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch (extra `deep`) not installed")


@pytest.fixture(scope="module")
def torch():  # noqa: ANN201
    import torch

    return torch


def _frames(h, w, seed):
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:h, 0:w]
    g = np.stack([(xx * 7 + yy) % 256, (yy * 5) % 256, (xx * 3 + yy * 2) % 256], -1).astype(np.uint8)
    g[h // 4:h // 2, w // 3:w // 2] = (220, 40, 40)
    g = np.clip(g.astype(int) + rng.integers(-10, 11, g.shape), 0, 255).astype(np.uint8)
    p = np.clip(np.roll(g, 2, axis=1).astype(int) + rng.integers(-25, 26, g.shape), 0, 255).astype(np.uint8)
    return g, p


@pytest.mark.parametrize("shape", [(40, 56), (21, 37)])
def test_torch_bilateral_matches_opencv(shape, torch):
    for seed in range(1):
        for frame in _frames(*shape, seed):
            ours = T.bilateral(torch.from_numpy(frame)).numpy()
            ref = M.bilateral(frame)
            diff = np.abs(ours.astype(int) - ref.astype(int))
            assert ours.dtype == np.uint8 and ours.shape == ref.shape
            assert diff.max() <= 1 and np.count_nonzero(diff) <= max(1, diff.size // 1000)


def test_torch_ssim_matches_scikit_image_and_is_nan_on_a_uniform_ground_truth(torch):
    g, p = _frames(36, 52, 5)
    gb, pb = M.bilateral(g), M.bilateral(p)
    ref = M.ssim_full_mean(gb, pb)
    assert abs(T.ssim_full_mean(torch.from_numpy(gb), torch.from_numpy(pb)) - ref) < 1e-12
    assert abs(T.ssim_full_mean(torch.from_numpy(gb), torch.from_numpy(gb)) - 1.0) < 1e-12
    flat = np.full_like(gb, 7)
    assert np.isnan(T.ssim_full_mean(torch.from_numpy(flat), torch.from_numpy(pb)))


@pytest.mark.parametrize("gray", [False, True])
def test_torch_path_fidelity_within_1e4_of_the_released_kernels_with_and_without_the_gt_cache(gray):
    pairs = [_frames(32, 44, s) for s in range(2)]
    ref_b, ref_e = F.fidelity(iter(pairs), "medium", gray, 1)
    cache = F.GtCache(64)
    for _ in range(2):  # the second pass takes the ground truth's blur and edges from the cache
        b, e = F.fidelity(iter(pairs), "medium", gray, 1, gt_key=("gt", gray), cache=cache, device="torch-cpu")
        assert abs(b.result()["blur_ssim"] - ref_b.result()["blur_ssim"]) < 1e-4
        assert abs(b.result()["blur_mse"] - ref_b.result()["blur_mse"]) < 1e-4 * max(1.0, ref_b.result()["blur_mse"])
        assert np.allclose(b.ssim, ref_b.ssim, atol=1e-4, rtol=0)
        assert e.result() == ref_e.result() and (e.tp, e.fp, e.fn) == (ref_e.tp, ref_e.fp, ref_e.fn)
    assert cache.hits == len(pairs) and cache.misses == len(pairs)


def test_device_choice_falls_back_to_the_cpu_kernels_without_a_gpu(torch):
    assert F.fidelity_device(None) == F.fidelity_device("cpu") == "cpu"
    expect = "cuda" if torch.cuda.is_available() else "cpu"
    assert F.fidelity_device("auto") == expect
    assert F.fidelity_device("cuda") == expect
    assert F.fidelity_device("mps") == "cpu"
