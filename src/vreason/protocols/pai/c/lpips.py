"""The LPIPS distance PAI-Bench-C's diversity uses, from :mod:`vreason.measure.lpips` (plain torch, local
weights). Kept in one place so the diversity scorer depends on one small function."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from vreason.measure.base import ModelMissing

Distance = Callable[[Sequence[np.ndarray], Sequence[np.ndarray]], Sequence[float]]


def lpips_distance(opts: dict[str, Any]) -> tuple[Distance, str]:
    """``(distance(frames_a, frames_b) -> per-frame distances, backend name)``; ModelMissing without weights."""
    try:
        from vreason.measure import lpips as L
    except ImportError as exc:
        raise ModelMissing(f"LPIPS is not available in this installation ({exc})") from None
    net = opts.get("lpips_net", "vgg")
    model = L.make_lpips(net=net, backbone=opts.get("lpips_backbone"), heads=opts.get("lpips_heads"),
                         device=opts.get("device") or "cpu")
    return model.distance, getattr(model, "name", f"lpips:{net}")


__all__ = ["lpips_distance"]
