"""Pluggable video-quality backend for PAI-Bench-C's DOVER technical score.

vreason cannot ship DOVER (its code and weights are not part of this package). A quality backend is named
by a spec string:

* ``torchscript:/path/model.pt`` — a TorchScript module (``torch.jit.load``, CPU or ``device``) called
  once per video with a **uint8 tensor (T, H, W, 3)** of RGB frames (the prediction trimmed to the
  ground truth's frame count and resized to its size, as the released code feeds DOVER) and returning
  the technical score as a scalar tensor (or a tensor whose first element is that score). Everything
  DOVER does to a video (fragment sampling, normalisation, its seeded sampler) belongs inside the
  exported module.

Without a spec the metric is ``unscored`` with :class:`~vreason.measure.base.ModelMissing`'s message —
never 0.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence

import numpy as np

from vreason.measure.base import Backend, ModelMissing

_CACHE: dict[tuple[str, str], object] = {}
_LOCK = threading.Lock()


class QualityBackend(Backend):
    def __init__(self, module, name: str, device: str):
        self.module = module
        self.name = name
        self.device = device

    def score(self, frames: Sequence[np.ndarray]) -> float:
        import torch

        arr = np.ascontiguousarray(np.stack(frames).astype(np.uint8, copy=False))
        with torch.inference_mode():
            out = self.module(torch.from_numpy(arr).to(self.device))
        value = float(torch.as_tensor(out).reshape(-1)[0])
        if not np.isfinite(value):
            raise ValueError(f"quality backend {self.name} returned {value}")
        return value


def make_quality(spec: str | None, *, device: str = "cpu") -> QualityBackend:
    """The quality backend named by ``spec`` (see the module docstring), loaded once per process."""
    if not spec:
        raise ModelMissing("DOVER technical score needs a quality model vreason cannot ship: export DOVER's "
                           "technical branch to TorchScript and pass --opt quality=torchscript:/path/model.pt")
    kind, _, path = str(spec).partition(":")
    if kind != "torchscript" or not path:
        raise ModelMissing(f"quality backend {spec!r}: expected torchscript:/path/model.pt")
    if not os.path.isfile(path):
        raise ModelMissing(f"quality backend: no file {os.path.basename(path)!r} at the path given "
                           "(--opt quality=torchscript:/path/model.pt)")
    key = (os.path.abspath(path), device)
    with _LOCK:
        if key not in _CACHE:
            import torch

            try:
                mod = torch.jit.load(path, map_location=device)
            except Exception as exc:  # noqa: BLE001 - torch raises many kinds for a bad file
                raise ModelMissing(f"quality backend {os.path.basename(path)!r} is not a TorchScript module: "
                                   f"{type(exc).__name__}: {exc}") from None
            mod.eval()
            _CACHE[key] = mod
    return QualityBackend(_CACHE[key], f"torchscript:{os.path.basename(path)}", device)


__all__ = ["QualityBackend", "make_quality"]
