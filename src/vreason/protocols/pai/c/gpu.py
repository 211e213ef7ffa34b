"""PAI-Bench-C blur SSIM on a torch device (``device=cuda``): the bilateral filter and the full-map SSIM in torch.

The CPU path (:mod:`vreason.protocols.pai.c.fidelity`) calls the released kernels (OpenCV's ``bilateralFilter``,
scikit-image's ``structural_similarity``) and is bit-identical to the released flow. This module re-states the
same two computations in torch so they can run on a GPU; it is **not** bit-identical — the bilateral filter
accumulates in float32 in another order than OpenCV's SIMD loop, so a few blurred pixels can round to the
neighbouring integer — and is checked (tests, on CPU tensors) to give blur SSIM / MSE within 1e-4 of the CPU
path. Canny stays on the CPU (OpenCV; it is ≈ 1 % of the work).

The formulas follow OpenCV's ``bilateralFilter_8u`` as documented for 8-bit 3-channel images (notes §5.3:
d = 30, σColor = 150, σSpace = 100): radius = d // 2; every offset (i, j) with √(i² + j²) ≤ radius, space
weight exp(−r² / 2σSpace²); colour weight exp(−c² / 2σColor²) of c = Σ over channels |Δ| (0…765); border
``BORDER_REFLECT_101``; output round(Σ w·v / Σ w). SSIM as scikit-image's: 7×7 uniform window with ``reflect``
(edge-repeating) borders, sample covariance (N / (N − 1)), K1 = 0.01, K2 = 0.03, ``data_range`` of the blurred
ground truth, the mean of the full 3-channel map.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from vreason.protocols.pai.c import metrics as M

_TABLES: dict[tuple[str, int, float, float], tuple[Any, Any, list[tuple[int, int]]]] = {}


def _tables(device: Any, d: int, sigma_color: float, sigma_space: float):
    import torch

    key = (str(device), d, sigma_color, sigma_space)
    if key not in _TABLES:
        radius = max(d // 2, 1)
        offsets = [(i, j) for i in range(-radius, radius + 1) for j in range(-radius, radius + 1)
                   if math.sqrt(i * i + j * j) <= radius]
        space = torch.tensor([math.exp((i * i + j * j) * (-0.5 / sigma_space ** 2)) for i, j in offsets],
                             dtype=torch.float32)
        colour = torch.tensor([math.exp(c * c * (-0.5 / sigma_color ** 2)) for c in range(256 * 3)],
                              dtype=torch.float32, device=device)
        _TABLES[key] = (space.tolist(), colour, offsets)
    return _TABLES[key]


def bilateral(frame: Any, d: int = M.BILATERAL["d"], sigma_color: float = M.BILATERAL["sigma_color"],
              sigma_space: float = M.BILATERAL["sigma_space"]):
    """Bilateral filter of a uint8 H×W×3 torch tensor (on its device); uint8 H×W×3 out."""
    import torch
    import torch.nn.functional as F

    space, colour, offsets = _tables(frame.device, d, float(sigma_color), float(sigma_space))
    radius = max(d // 2, 1)
    h, w = frame.shape[:2]
    src = frame.permute(2, 0, 1).unsqueeze(0).to(torch.float32)
    pad = F.pad(src, (radius, radius, radius, radius), mode="reflect")[0]  # BORDER_REFLECT_101
    centre = pad[:, radius:radius + h, radius:radius + w]
    acc = torch.zeros_like(centre)
    wsum = torch.zeros((h, w), dtype=torch.float32, device=frame.device)
    for (i, j), sw in zip(offsets, space, strict=True):  # OpenCV's order: row by row of the disc's offsets
        nb = pad[:, radius + i:radius + i + h, radius + j:radius + j + w]
        wt = colour[(nb - centre).abs().sum(0).to(torch.long)] * sw
        acc += nb * wt
        wsum += wt
    out = torch.round(acc / wsum).clamp_(0, 255).to(torch.uint8)
    return out.permute(1, 2, 0).contiguous()


def _uniform7(x: Any, size: int = 7):
    """scipy.ndimage.uniform_filter(size) over the last two axes, mode ``reflect`` (d c b a | a b c d | d c b a)."""
    import torch
    import torch.nn.functional as F

    r = size // 2
    h, w = x.shape[-2:]
    rows = torch.tensor([min(max(k, -1 - k), 2 * h - 1 - k) for k in range(-r, h + r)], device=x.device)
    cols = torch.tensor([min(max(k, -1 - k), 2 * w - 1 - k) for k in range(-r, w + r)], device=x.device)
    p = x.index_select(-2, rows).index_select(-1, cols)
    return F.avg_pool2d(p.unsqueeze(0), size, stride=1)[0]


def ssim_full_mean(gb: Any, pb: Any) -> float:
    """Mean of the full SSIM map of two blurred uint8 H×W×3 tensors (NaN when the ground truth is uniform)."""
    import torch

    rng = float(gb.max()) - float(gb.min())
    if rng <= 0:
        return float("nan")
    x = gb.permute(2, 0, 1).to(torch.float64)
    y = pb.permute(2, 0, 1).to(torch.float64)
    ux, uy = _uniform7(x), _uniform7(y)
    uxx, uyy, uxy = _uniform7(x * x), _uniform7(y * y), _uniform7(x * y)
    cov = 49 / 48
    vx, vy, vxy = cov * (uxx - ux * ux), cov * (uyy - uy * uy), cov * (uxy - ux * uy)
    c1, c2 = (0.01 * rng) ** 2, (0.03 * rng) ** 2
    s = ((2 * ux * uy + c1) * (2 * vxy + c2)) / ((ux ** 2 + uy ** 2 + c1) * (vx + vy + c2))
    return float(s.mean())


def frame_fidelity(gt: np.ndarray, pred: np.ndarray, preset: str = "medium", gray: bool = False,
                   gt_side: tuple[np.ndarray, np.ndarray] | None = None, device: str = "cuda"):
    """:func:`vreason.protocols.pai.c.fidelity.frame_fidelity` with the bilateral filter and SSIM on ``device``."""
    import torch

    from vreason.protocols.pai.c.fidelity import FrameFidelity

    if gt_side is not None:
        gb_np, ge = gt_side
        gb = torch.from_numpy(np.ascontiguousarray(gb_np)).to(device)
    else:
        gb = bilateral(torch.from_numpy(np.ascontiguousarray(gt)).to(device))
        ge = M.canny(gt, preset, gray=gray)
    pb = bilateral(torch.from_numpy(np.ascontiguousarray(pred)).to(device))
    ssim = ssim_full_mean(gb, pb)
    mse = float(((gb.to(torch.float64) - pb.to(torch.float64)) ** 2).mean())
    pe = M.canny(pred, preset, gray=gray)
    return FrameFidelity(ssim=ssim, mse=mse, tp=int(np.count_nonzero(ge & pe)), fp=int(np.count_nonzero(pe & ~ge)),
                         fn=int(np.count_nonzero(ge & ~pe)), pred_on=int(np.count_nonzero(pe)),
                         gt_on=int(np.count_nonzero(ge)), pixels=int(ge.size)), gb.cpu().numpy(), ge


__all__ = ["bilateral", "frame_fidelity", "ssim_full_mean"]
