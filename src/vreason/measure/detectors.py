"""Open-vocabulary detectors over local transformers checkpoints: Grounding DINO and OWLv2 / OWL-ViT.

Labels are the text queries. Boxes come back as (x0, y0, x1, y1) in pixels of the input image, clipped
to it, best score first.

* **Grounding DINO** (``grounding-dino``, ``mm-grounding-dino``): the labels are lower-cased and joined as
  ``"label one. label two."`` (the model's prompt format). A query's box score is its highest token
  probability over the prompt (as in the released post-processing); its label is the label whose tokens
  have the highest probability. A box is kept when the box score > ``box_threshold`` and its label's
  score > ``text_threshold``.
* **OWLv2 / OWL-ViT**: one class logit per label; a box is kept when its best label's sigmoid score >
  ``box_threshold`` (``text_threshold`` does not apply). OWLv2 pads the image to a square at the bottom /
  right before resizing, so its normalised boxes are scaled by the longer side.

Duplicates of one object are removed per label with greedy non-maximum suppression at IoU ``nms_iou`` (default
0.5; ``None`` keeps the raw boxes) so counts are counts of objects.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from vreason.measure.base import Detection, Detector
from vreason.measure.embedders import to_pil
from vreason.measure.hf import Loaded, import_torch, to_device


def _clip_box(cx: float, cy: float, w: float, h: float, sx: float, sy: float, width: int,
              height: int) -> tuple[float, float, float, float]:
    x0, x1 = (cx - w / 2) * sx, (cx + w / 2) * sx
    y0, y1 = (cy - h / 2) * sy, (cy + h / 2) * sy
    return (float(np.clip(x0, 0, width)), float(np.clip(y0, 0, height)),
            float(np.clip(x1, 0, width)), float(np.clip(y1, 0, height)))


def _iou(box: tuple[float, float, float, float], others: np.ndarray) -> np.ndarray:
    x0, y0 = np.maximum(box[0], others[:, 0]), np.maximum(box[1], others[:, 1])
    x1, y1 = np.minimum(box[2], others[:, 2]), np.minimum(box[3], others[:, 3])
    inter = np.clip(x1 - x0, 0, None) * np.clip(y1 - y0, 0, None)
    area = (box[2] - box[0]) * (box[3] - box[1])
    areas = (others[:, 2] - others[:, 0]) * (others[:, 3] - others[:, 1])
    return inter / np.maximum(area + areas - inter, 1e-9)


def nms(dets: list[Detection], iou: float | None) -> list[Detection]:
    """Per-label greedy non-maximum suppression: a box overlapping a better box of the same label by
    IoU > ``iou`` is dropped. Best score first."""
    dets = sorted(dets, key=lambda d: -d.score)
    if iou is None or len(dets) < 2:
        return dets
    kept: list[Detection] = []
    for d in dets:
        same = [k.box for k in kept if k.label == d.label]
        if not same or float(_iou(d.box, np.asarray(same, np.float64)).max()) <= iou:
            kept.append(d)
    return kept


class _HFDetector(Detector):
    def __init__(self, loaded: Loaded, batch_size: int = 16, nms_iou: float | None = 0.5):
        self.loaded = loaded
        self.batch_size = batch_size
        self.nms_iou = nms_iou
        self.name = loaded.name

    @staticmethod
    def _labels(labels: Sequence[str]) -> list[str]:
        out = [str(lb).strip() for lb in labels if str(lb).strip()]
        if not out:
            raise ValueError("detect() needs at least one non-empty label")
        return out


def _find(seq: list[int], sub: list[int], start: int) -> int:
    for i in range(start, len(seq) - len(sub) + 1):
        if seq[i:i + len(sub)] == sub:
            return i
    return -1


class GroundingDinoDetector(_HFDetector):
    """Grounding DINO (see the module docstring)."""

    def _prompt(self, labels: list[str]) -> tuple[dict, list[list[int]]]:
        tok = self.loaded.tokenizer
        text = " ".join(f"{lb.lower().rstrip('.')}." for lb in labels)
        n = int(getattr(self.loaded.model.config, "max_text_len", 256))
        enc = tok([text], return_tensors="pt", truncation=True, max_length=n)
        ids = enc["input_ids"][0].tolist()
        spans: list[list[int]] = []
        cursor = 1
        for lb in labels:
            sub = tok(lb.lower().rstrip("."), add_special_tokens=False)["input_ids"]
            at = _find(ids, sub, cursor) if sub else -1
            spans.append(list(range(at, at + len(sub))) if at >= 0 else [])
            if at >= 0:
                cursor = at + len(sub)
        return dict(enc), spans

    def detect(self, image: np.ndarray, labels: Sequence[str], *, box_threshold: float = 0.3,
               text_threshold: float = 0.25) -> list[Detection]:
        torch = import_torch()
        labels = self._labels(labels)
        pil = to_pil(image)
        width, height = pil.size
        text, spans = self._prompt(labels)
        inputs = to_device({**self.loaded.image_processor(images=pil, return_tensors="pt"), **text}, self.loaded)
        with torch.inference_mode():
            out = self.loaded.model(**inputs)
        n_tok = int(text["input_ids"].shape[1])
        probs = out.logits[0, :, :n_tok].float().sigmoid().cpu().numpy()  # (Q, tokens)
        boxes = out.pred_boxes[0].float().cpu().numpy()  # (Q, 4) cx cy w h, relative
        dets = []
        for q in range(probs.shape[0]):
            box_score = float(probs[q].max())
            per_label = [float(probs[q, s].max()) if s else -1.0 for s in spans]
            best = int(np.argmax(per_label))
            if box_score > box_threshold and per_label[best] > text_threshold:
                cx, cy, w, h = boxes[q]
                dets.append(Detection(labels[best], box_score, _clip_box(cx, cy, w, h, width, height, width, height)))
        return nms(dets, self.nms_iou)


class OwlDetector(_HFDetector):
    """OWLv2 / OWL-ViT (see the module docstring)."""

    def detect(self, image: np.ndarray, labels: Sequence[str], *, box_threshold: float = 0.3,
               text_threshold: float = 0.25) -> list[Detection]:
        torch = import_torch()
        labels = self._labels(labels)
        pil = to_pil(image)
        width, height = pil.size
        n = int(self.loaded.model.config.text_config.max_position_embeddings)
        text = self.loaded.tokenizer(labels, padding="max_length", max_length=n, truncation=True,
                                     return_tensors="pt")
        inputs = {"pixel_values": self.loaded.image_processor(images=pil, return_tensors="pt")["pixel_values"],
                  "input_ids": text["input_ids"], "attention_mask": text["attention_mask"]}
        with torch.inference_mode():
            out = self.loaded.model(**to_device(inputs, self.loaded))
        scores = out.logits[0].float().sigmoid().cpu().numpy()  # (Q, labels)
        boxes = out.pred_boxes[0].float().cpu().numpy()
        if self.loaded.model_type == "owlv2":
            sx = sy = float(max(width, height))
        else:
            sx, sy = float(width), float(height)
        dets = []
        for q in range(scores.shape[0]):
            best = int(np.argmax(scores[q]))
            if scores[q, best] > box_threshold:
                cx, cy, w, h = boxes[q]
                dets.append(Detection(labels[best], float(scores[q, best]),
                                      _clip_box(cx, cy, w, h, sx, sy, width, height)))
        return nms(dets, self.nms_iou)
