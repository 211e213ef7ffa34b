"""Box-prompted segmentation over a local SAM checkpoint (``SamModel`` with its PIL image processor).

The image is embedded once per call; the box prompts go through the mask decoder ``batch_size`` at a
time with ``multimask_output=False`` (one mask per box), and the masks are upsampled to the image's size
and binarised by the processor's ``post_process_masks`` (logit > 0).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from vreason.measure.base import Segmenter
from vreason.measure.embedders import to_pil
from vreason.measure.hf import Loaded, import_torch, to_device


class SamSegmenter(Segmenter):
    def __init__(self, loaded: Loaded, batch_size: int = 16):
        self.loaded = loaded
        self.batch_size = max(1, int(batch_size))
        self.name = loaded.name

    def masks_from_boxes(self, image: np.ndarray,
                         boxes: Sequence[tuple[float, float, float, float]]) -> list[np.ndarray]:
        torch = import_torch()
        if len(boxes) == 0:
            return []
        proc, model = self.loaded.image_processor, self.loaded.model
        enc = proc(images=to_pil(image), return_tensors="pt")
        original, reshaped = enc["original_sizes"], enc["reshaped_input_sizes"]
        (h, w), (rh, rw) = original[0].tolist(), reshaped[0].tolist()
        scale = np.array([rw / w, rh / h, rw / w, rh / h], np.float32)
        with torch.inference_mode():
            emb = model.get_image_embeddings(to_device({"p": enc["pixel_values"]}, self.loaded)["p"])
            out: list[np.ndarray] = []
            for i in range(0, len(boxes), self.batch_size):
                chunk = np.asarray(boxes[i:i + self.batch_size], np.float32).reshape(-1, 4)
                prompts = torch.from_numpy(chunk * scale)[None].to(self.loaded.device, self.loaded.dtype)
                pred = model(image_embeddings=emb, input_boxes=prompts, multimask_output=False).pred_masks
                masks = proc.post_process_masks(pred.float().cpu(), original, reshaped)[0]  # (n, 1, H, W)
                out += [m[0].numpy().astype(bool) for m in masks]
        return out
