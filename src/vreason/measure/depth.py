"""Monocular depth over a local transformers checkpoint (Depth Anything V1/V2, DPT) through
``AutoModelForDepthEstimation``.

Frames are processed in batches of ``batch_size`` frames of one size (frames of a video share a size;
a size change starts a new batch). The model's ``predicted_depth`` is resized back to each frame's size
(bicubic), so every map is float32 H×W at the frame's size. The values are what the model predicts:
relative inverse depth (disparity) for Depth Anything's relative checkpoints, metres for metric ones.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from vreason.measure.base import DepthEstimator
from vreason.measure.embedders import to_pil
from vreason.measure.hf import Loaded, import_torch, to_device


class TransformersDepth(DepthEstimator):
    def __init__(self, loaded: Loaded, batch_size: int = 16):
        self.loaded = loaded
        self.batch_size = max(1, int(batch_size))
        self.name = loaded.name

    def _batches(self, frames: Sequence[np.ndarray]):
        batch: list[np.ndarray] = []
        for f in frames:
            if batch and (len(batch) == self.batch_size or f.shape[:2] != batch[0].shape[:2]):
                yield batch
                batch = []
            batch.append(f)
        if batch:
            yield batch

    def depth(self, frames: Sequence[np.ndarray]) -> list[np.ndarray]:
        torch = import_torch()
        import torch.nn.functional as F

        out: list[np.ndarray] = []
        for batch in self._batches(frames):
            pil = [to_pil(f) for f in batch]
            height, width = batch[0].shape[:2]
            inputs = to_device(dict(self.loaded.image_processor(images=pil, return_tensors="pt")), self.loaded)
            with torch.inference_mode():
                pred = self.loaded.model(pixel_values=inputs["pixel_values"]).predicted_depth
                pred = F.interpolate(pred.float().unsqueeze(1), size=(height, width), mode="bicubic",
                                     align_corners=False)[:, 0]
            out += [m.astype(np.float32) for m in pred.cpu().numpy()]
        return out
