"""SAM2 video mask propagation over a local ``Sam2VideoModel`` folder, driven without a processor.

The transformers SAM2 video processor needs torchvision, so frames are prepared here as it would: resized to
the model's square ``image_size`` (PIL bilinear), scaled to [0, 1] and normalised with the folder's
``preprocessor_config.json`` mean / std (ImageNet's when the folder has none). Prompt coordinates are scaled
from frame pixels to ``image_size`` the same way; a box is the two corner points labelled 2 and 3.

:meth:`Sam2VideoSegmenter.propagate` follows the Grounded-SAM-2 flow of PAI-Bench-C's released segmentation:

1. frame 0 is segmented from each box prompt (one mask per box, the SAM2 weights used as an image predictor);
2. ``n_points`` (10, released) points are sampled inside each frame-0 mask — deterministically, the generator
   seeded from the mask's content (the fork's fix for the released code's unseeded sampling); a box whose
   frame-0 mask is empty keeps its box as the prompt;
3. the tracker restarts on frame 0 with those positive points and the masks are propagated frame by frame.

Frames are **streamed**: one frame is prepared and held in the session at a time (older frames are dropped
once their memory features are stored), at most ``max_frames`` are read, and every predicted mask is
upsampled (bilinear) to the frame's size and binarised at logit 0.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Sequence
from itertools import chain, islice
from pathlib import Path

import numpy as np

from vreason.measure.base import ModelSpecError, Segmenter, VideoSegmenter
from vreason.measure.hf import Loaded, backend_name, import_torch, resolve_device, resolve_dtype

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
N_POINTS = 10
"""Points sampled per frame-0 mask to seed the propagation (released Grounded-SAM-2 flow)."""


def load_sam2_video(folder: str, model_type: str, auto_class: str = "Sam2VideoModel", *, device: str, dtype: str,
                    tokenizer: bool = False) -> Loaded:
    """``Sam2VideoModel`` from ``folder`` offline; the ``image_processor`` slot holds the (mean, std) of the
    folder's ``preprocessor_config.json`` (ImageNet's when absent). No processor class is instantiated."""
    import_torch()
    import transformers as T

    dev, dt = resolve_device(device), resolve_dtype(dtype)
    where = Path(folder).expanduser().name
    try:
        model = getattr(T, auto_class).from_pretrained(folder, local_files_only=True)
    except Exception as exc:  # noqa: BLE001 - missing/corrupt weights: one clear error
        msg = str(exc).replace(str(Path(folder).expanduser().resolve()), where).replace(str(folder), where)
        raise ModelSpecError(f"cannot load the {model_type} model in folder {where!r}: "
                             f"{type(exc).__name__}: {msg[:400]}") from exc
    mean, std = IMAGENET_MEAN, IMAGENET_STD
    pre = Path(folder).expanduser() / "preprocessor_config.json"
    if pre.is_file():
        try:
            cfg = json.loads(pre.read_text())
            mean, std = tuple(cfg.get("image_mean", mean)), tuple(cfg.get("image_std", std))
        except (OSError, ValueError) as exc:
            raise ModelSpecError(f"{model_type} folder {where!r}: unreadable preprocessor_config.json ({exc})") from exc
    return Loaded(model=model.to(dev, dt).eval(), image_processor=(mean, std), tokenizer=None, model_type=model_type,
                  name=backend_name(model_type, folder), device=dev, dtype=dt)


def sample_points(mask: np.ndarray, n: int = N_POINTS) -> np.ndarray:
    """``n`` (x, y) pixel points inside ``mask`` (with replacement only when it has fewer than ``n`` pixels),
    drawn by a generator seeded from the mask's content, so a mask always gives the same points. (0, 2) when
    the mask is empty."""
    ys, xs = np.nonzero(mask)
    if xs.size == 0:
        return np.zeros((0, 2), np.float32)
    seed = int.from_bytes(hashlib.sha256(np.packbits(mask.astype(bool)).tobytes()).digest()[:8], "little")
    pick = np.random.default_rng(seed).choice(xs.size, size=n, replace=xs.size < n)
    return np.stack([xs[pick], ys[pick]], axis=1).astype(np.float32)


class Sam2VideoSegmenter(VideoSegmenter, Segmenter):
    """Box-prompted SAM2: single images (:meth:`masks_from_boxes`) and videos (:meth:`propagate`)."""

    def __init__(self, loaded: Loaded, batch_size: int = 16, n_points: int = N_POINTS,
                 max_frames: int | None = None):
        self.loaded = loaded
        self.batch_size = max(1, int(batch_size))
        self.n_points = int(n_points)
        self.max_frames = max_frames
        self.name = loaded.name
        self.size = int(loaded.model.config.image_size)

    # ------------------------------------------------------------------ helpers
    def _pixels(self, frame: np.ndarray):
        torch = import_torch()
        from PIL import Image

        mean, std = (np.asarray(v, np.float32) for v in self.loaded.image_processor)
        img = Image.fromarray(np.ascontiguousarray(frame[..., :3]).astype(np.uint8))
        x = np.asarray(img.resize((self.size, self.size), Image.BILINEAR), np.float32) / 255.0
        x = (x - mean) / std
        return torch.from_numpy(x.transpose(2, 0, 1).copy())

    def _session(self, h: int, w: int):
        from transformers.models.sam2_video.modeling_sam2_video import Sam2VideoInferenceSession

        return Sam2VideoInferenceSession(video_height=h, video_width=w, inference_device=self.loaded.device,
                                         inference_state_device=self.loaded.device,
                                         video_storage_device=self.loaded.device, dtype=self.loaded.dtype)

    def _prompt(self, session, obj_id: int, coords: np.ndarray, labels: Sequence[int], h: int, w: int) -> None:
        torch = import_torch()
        scaled = np.asarray(coords, np.float32).reshape(-1, 2) * np.array([self.size / w, self.size / h], np.float32)
        session.add_point_inputs(session.obj_id_to_idx(obj_id), 0, {
            "point_coords": torch.from_numpy(scaled)[None, None],
            "point_labels": torch.tensor(list(labels), dtype=torch.int32)[None, None]})

    def _masks(self, out, h: int, w: int) -> list[np.ndarray]:
        torch = import_torch()
        logits = out.pred_masks.float()
        if logits.dim() == 3:
            logits = logits[:, None]
        up = torch.nn.functional.interpolate(logits, size=(h, w), mode="bilinear", align_corners=False)
        return [m[0].cpu().numpy() > 0 for m in up]

    def _first_frame(self, session, pixels, boxes: Sequence[tuple[float, float, float, float]], h: int, w: int):
        session.add_new_frame(pixels, 0)
        for k, box in enumerate(boxes):
            self._prompt(session, k, np.asarray(box, np.float32).reshape(2, 2), (2, 3), h, w)
        session.obj_with_new_inputs = list(range(len(boxes)))
        return self._masks(self.loaded.model(inference_session=session, frame_idx=0), h, w)

    # ------------------------------------------------------------------ interfaces
    def masks_from_boxes(self, image: np.ndarray,
                         boxes: Sequence[tuple[float, float, float, float]]) -> list[np.ndarray]:
        torch = import_torch()
        if len(boxes) == 0:
            return []
        h, w = image.shape[:2]
        with torch.inference_mode():
            return self._first_frame(self._session(h, w), self._pixels(image), boxes, h, w)

    def propagate_stream(self, frames: Iterable[np.ndarray],
                         boxes_on_frame0: Sequence[tuple[float, float, float, float]]) -> Iterator[list[np.ndarray]]:
        """Per frame (from frame 0, at most ``max_frames``), one boolean H×W mask per box prompt."""
        torch = import_torch()
        it = islice(frames, self.max_frames)
        first = next(it, None)
        if first is None:
            return
        h, w = first.shape[:2]
        if len(boxes_on_frame0) == 0:
            yield from ([] for _ in chain([first], it))
            return
        with torch.inference_mode():
            session = self._session(h, w)
            masks0 = self._first_frame(session, self._pixels(first), boxes_on_frame0, h, w)
            session.reset_tracking_data()  # keeps frame 0 and its cached features
            for k, (box, m) in enumerate(zip(boxes_on_frame0, masks0, strict=True)):
                pts = sample_points(m, self.n_points)
                if len(pts):
                    self._prompt(session, k, pts, [1] * len(pts), h, w)
                else:
                    self._prompt(session, k, np.asarray(box, np.float32).reshape(2, 2), (2, 3), h, w)
            session.obj_with_new_inputs = list(range(len(boxes_on_frame0)))
            yield self._masks(self.loaded.model(inference_session=session, frame_idx=0), h, w)
            for t, f in enumerate(it, 1):
                if f.shape[:2] != (h, w):
                    raise ValueError(f"frame {t} is {f.shape[1]}x{f.shape[0]}, frame 0 {w}x{h}")
                out = self.loaded.model(inference_session=session, frame=self._pixels(f), frame_idx=t)
                for old in [k for k in session.processed_frames if k < t]:
                    del session.processed_frames[old]
                yield self._masks(out, h, w)

    def propagate(self, frames: Iterable[np.ndarray],
                  boxes_on_frame0: Sequence[tuple[float, float, float, float]]) -> list[list[np.ndarray]]:
        return list(self.propagate_stream(frames, boxes_on_frame0))


__all__ = ["N_POINTS", "Sam2VideoSegmenter", "load_sam2_video", "sample_points"]
