"""The measurement layer's interfaces: learned (or classical) features, detectors, depth, segmentation.

Every model is loaded **from a local folder** (a ``save_pretrained`` / Hugging Face snapshot folder);
vreason never downloads weights. A spec string names the backend:

* ``transformers:/path/to/folder`` — the model type is read from the folder's ``config.json``
  (DINO/DINOv2, CLIP, SigLIP → :class:`ImageEmbedder`; Grounding DINO, OWLv2 → :class:`Detector`;
  Depth Anything → :class:`DepthEstimator`; SAM → :class:`Segmenter`; SAM2 video → :class:`Segmenter` and
  :class:`VideoSegmenter`);
* ``classical:<name>`` — a documented classical substitute (e.g. ``classical:hog-hsv`` descriptor,
  ``classical:colour`` detector) that needs no weights. Its name is carried into every score's evidence
  so no number claims to be DINO when it is not.

A metric whose reference model is not given raises :class:`ModelMissing`; scorers turn it into an
``unscored`` score with the message — never 0, never a silent substitute.

Options common to the loaders: ``device`` (``cpu``, ``cuda``, ``cuda:1``, ``auto``), ``dtype``
(``float32``, ``float16``, ``bfloat16``), ``batch_size``. Frames go in as RGB uint8 arrays (H×W×3) and are
processed in batches, so memory is bounded by the batch, not by the video.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from vreason.core.errors import ConfigError


class ModelMissing(RuntimeError):
    """The metric's reference model was not given (or its folder is unusable); the message says which
    model, which option points vreason at it, and what it would be used for."""


class ModelSpecError(ModelMissing, ConfigError):
    """A model spec that cannot be used: unknown scheme, a folder that does not exist or has no
    ``config.json``, or a model type that is the wrong kind for the role. It is both a
    :class:`ModelMissing` (a scorer records the sample ``unscored`` with this message) and a
    :class:`~vreason.core.errors.ConfigError` (a preflight check stops the run with exit code 2)."""


@dataclass
class Detection:
    label: str
    score: float
    box: tuple[float, float, float, float]
    """(x0, y0, x1, y1) in pixels of the input image."""

    @property
    def centre(self) -> tuple[float, float]:
        return ((self.box[0] + self.box[2]) / 2.0, (self.box[1] + self.box[3]) / 2.0)


class Backend(ABC):  # noqa: B024 - a shared base holding the identity
    name: str = ""
    """Identity for evidence and reports: ``transformers:dinov2@<folder name>``, ``classical:hog-hsv``…
    (a folder's name, never a full local path)."""


class ImageEmbedder(Backend):
    @abstractmethod
    def embed(self, images: Sequence[np.ndarray]) -> np.ndarray:
        """(N, D) float32 features, L2-normalised, for N RGB uint8 images of any sizes."""

    def embed_stream(self, frames: Iterable[np.ndarray], batch_size: int = 16) -> Iterator[np.ndarray]:
        """Features of a frame stream, one (B, D) array per batch (memory bounded by the batch)."""
        batch: list[np.ndarray] = []
        for f in frames:
            batch.append(f)
            if len(batch) == batch_size:
                yield self.embed(batch)
                batch = []
        if batch:
            yield self.embed(batch)


class TextImageEmbedder(ImageEmbedder):
    """CLIP / SigLIP: images and texts in one space."""

    @abstractmethod
    def embed_text(self, texts: Sequence[str]) -> np.ndarray:
        """(N, D) float32, L2-normalised."""


class Detector(Backend):
    @abstractmethod
    def detect(self, image: np.ndarray, labels: Sequence[str], *, box_threshold: float = 0.3,
               text_threshold: float = 0.25) -> list[Detection]:
        """Objects matching any of ``labels`` in one RGB image."""


class DepthEstimator(Backend):
    @abstractmethod
    def depth(self, frames: Sequence[np.ndarray]) -> list[np.ndarray]:
        """One float32 H×W depth (or disparity, as the model predicts) map per frame, at the frame's size."""


class Segmenter(Backend):
    @abstractmethod
    def masks_from_boxes(self, image: np.ndarray,
                         boxes: Sequence[tuple[float, float, float, float]]) -> list[np.ndarray]:
        """One boolean H×W mask per box prompt."""


class VideoSegmenter(Backend):
    """Mask propagation through a video (SAM2 video): prompts on frame 0, masks on every frame."""

    @abstractmethod
    def propagate(self, frames: Iterable[np.ndarray],
                  boxes_on_frame0: Sequence[tuple[float, float, float, float]]) -> list[list[np.ndarray]]:
        """Per frame (frame 0 first), one boolean H×W mask per box prompt given in frame 0's pixels."""
