"""Image (and text) embedders over local transformers checkpoints.

* :class:`DinoEmbedder` — DINO (``vit``) and DINOv2 (``dinov2``, ``dinov2_with_registers``): the **CLS
  token of the last layer after the final layer norm** (``last_hidden_state[:, 0]``, the feature the DINO
  papers use for k-NN retrieval and that DINOv2's ``pooler_output`` returns), L2-normalised.
* :class:`ClipEmbedder` — CLIP / SigLIP: the projected image embedding (``get_image_features``) and text
  embedding (``get_text_features``), L2-normalised, in one space.

Images go through the checkpoint's own image processor (PIL backend) in batches of ``batch_size``, so
memory is bounded by the batch; outputs are float32 NumPy arrays.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence

import numpy as np
from PIL import Image

from vreason.measure.base import ImageEmbedder, TextImageEmbedder
from vreason.measure.hf import Loaded, import_torch, to_device


def to_pil(image: np.ndarray) -> Image.Image:
    """An RGB uint8 H×W×3 (or H×W grey, or RGBA) array as a PIL image (no channel-order guessing)."""
    a = np.asarray(image)
    if a.ndim == 2:
        a = np.repeat(a[:, :, None], 3, axis=2)
    if a.ndim != 3 or a.shape[2] not in (3, 4) or a.shape[0] == 0 or a.shape[1] == 0:
        raise ValueError(f"expected an H×W×3 RGB image, got shape {a.shape}")
    if a.dtype != np.uint8:
        a = np.clip(a, 0, 255).astype(np.uint8)
    return Image.fromarray(np.ascontiguousarray(a[:, :, :3]), "RGB")


def _tensor(out):
    """transformers 5 returns an output object from ``get_*_features``; 4.x returned the tensor."""
    return out if hasattr(out, "shape") else out.pooler_output


def _normalised(t) -> np.ndarray:
    torch = import_torch()
    t = t.float()
    t = t / torch.linalg.vector_norm(t, dim=-1, keepdim=True).clamp_min(1e-12)
    return t.cpu().numpy().astype(np.float32)


class _HFImage(ImageEmbedder):
    def __init__(self, loaded: Loaded, batch_size: int = 16):
        self.loaded = loaded
        self.batch_size = max(1, int(batch_size))
        self.name = loaded.name

    @abstractmethod
    def _image_features(self, pixel_values):
        """The model's image features for a batch of pixel values (a tensor)."""

    def embed(self, images: Sequence[np.ndarray]) -> np.ndarray:
        torch = import_torch()
        out: list[np.ndarray] = []
        for i in range(0, len(images), self.batch_size):
            pil = [to_pil(im) for im in images[i:i + self.batch_size]]
            batch = to_device(dict(self.loaded.image_processor(images=pil, return_tensors="pt")), self.loaded)
            with torch.inference_mode():
                out.append(_normalised(self._image_features(batch["pixel_values"])))
        if not out:
            return np.zeros((0, 0), np.float32)
        return np.concatenate(out)


class DinoEmbedder(_HFImage):
    """DINO / DINOv2 CLS-token features (see the module docstring)."""

    def _image_features(self, pixel_values):
        return self.loaded.model(pixel_values=pixel_values).last_hidden_state[:, 0]


class ClipEmbedder(_HFImage, TextImageEmbedder):
    """CLIP / SigLIP projected image and text embeddings."""

    def _image_features(self, pixel_values):
        return _tensor(self.loaded.model.get_image_features(pixel_values=pixel_values))

    def embed_text(self, texts: Sequence[str]) -> np.ndarray:
        torch = import_torch()
        model, tok = self.loaded.model, self.loaded.tokenizer
        out: list[np.ndarray] = []
        for i in range(0, len(texts), self.batch_size):
            chunk = list(texts[i:i + self.batch_size])
            if self.loaded.model_type == "siglip":
                # SigLIP was trained on max-length padded text without an attention mask
                n = model.config.text_config.max_position_embeddings
                enc = tok(chunk, padding="max_length", max_length=n, truncation=True, return_tensors="pt")
                args = {"input_ids": enc["input_ids"].to(self.loaded.device)}
            else:
                n = model.config.text_config.max_position_embeddings
                enc = tok(chunk, padding=True, max_length=n, truncation=True, return_tensors="pt")
                args = {k: enc[k].to(self.loaded.device) for k in ("input_ids", "attention_mask") if k in enc}
            with torch.inference_mode():
                out.append(_normalised(_tensor(model.get_text_features(**args))))
        if not out:
            return np.zeros((0, 0), np.float32)
        return np.concatenate(out)
