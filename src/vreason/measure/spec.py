"""Backends from spec strings, one factory per role, loaded once per process.

Spec strings:

* ``transformers:<folder>`` — a local ``save_pretrained`` / Hugging Face snapshot folder; the model type is
  read from its ``config.json`` and must suit the role (table below), else :class:`ModelSpecError` names the
  model type and what the role needs;
* ``classical:<name>`` — a weight-free substitute (``classical:hog-hsv`` for the embedder role); other
  modules may add their own with :func:`register_classical`.

=============  ===================================================  ==============================
role           model types (``config.json`` ``model_type``)         option in the messages
=============  ===================================================  ==============================
embedder       dinov2, dinov2_with_registers, vit (DINO v1), clip,   ``--features``
               siglip — or ``classical:hog-hsv``
text_image     clip, siglip                                          ``--opt clip=…``
detector       grounding-dino, mm-grounding-dino, owlv2, owlvit      ``--detector``
depth          depth_anything (V1 and V2), dpt                       ``--opt depth=…``
segmenter      sam, sam2_video (also a :class:`VideoSegmenter`)      ``--opt segmenter=…``
=============  ===================================================  ==============================

A ``None`` / empty spec uses ``default`` when the caller gives one (e.g. TiViBench's region similarity
defaults to ``classical:hog-hsv``); otherwise it raises :class:`ModelMissing` saying which option to pass.
Loaded models are cached per process, keyed by (folder, model class, device, dtype), so every scorer in a
worker shares one copy; the backend objects themselves are light (they hold the batch size).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from vreason.measure.base import (
    Backend,
    DepthEstimator,
    Detector,
    ImageEmbedder,
    ModelMissing,
    ModelSpecError,
    Segmenter,
    TextImageEmbedder,
)
from vreason.measure.hf import Loaded, folder_model_type, load_folder, resolve_device

# role → (what it is for, default option hint, {model_type: (transformers class, needs tokenizer, backend module)})
_DINO = ("AutoModel", False, "dino")
_CLIP = ("AutoModel", True, "clip")
ROLES: dict[str, tuple[str, str, dict[str, tuple[str, bool, str]]]] = {
    "embedder": ("an image feature backbone (DINO / DINOv2, or CLIP / SigLIP image features)", "--features",
                 {"dinov2": _DINO, "dinov2_with_registers": _DINO, "vit": _DINO, "clip": _CLIP, "siglip": _CLIP}),
    "text_image": ("a text-image model (CLIP / SigLIP)", "--opt clip=",
                   {"clip": _CLIP, "siglip": _CLIP}),
    "detector": ("an open-vocabulary detector (Grounding DINO / OWLv2)", "--detector",
                 {"grounding-dino": ("AutoModelForZeroShotObjectDetection", True, "gdino"),
                  "mm-grounding-dino": ("AutoModelForZeroShotObjectDetection", True, "gdino"),
                  "owlv2": ("AutoModelForZeroShotObjectDetection", True, "owl"),
                  "owlvit": ("AutoModelForZeroShotObjectDetection", True, "owl")}),
    "depth": ("a monocular depth model (Depth Anything V2)", "--opt depth=",
              {"depth_anything": ("AutoModelForDepthEstimation", False, "depth"),
               "dpt": ("AutoModelForDepthEstimation", False, "depth")}),
    "segmenter": ("a box-prompted segmenter (SAM, or SAM2 video for propagation)", "--opt segmenter=",
                  {"sam": ("SamModel", False, "sam"), "sam2_video": ("Sam2VideoModel", False, "sam2_video")}),
}

_CLASSICAL: dict[str, dict[str, Callable[..., Backend]]] = {role: {} for role in ROLES}
_LOADED: dict[tuple, Loaded] = {}
_LOCK = threading.Lock()


def register_classical(role: str, name: str, factory: Callable[..., Backend]) -> None:
    """Make ``classical:<name>`` available for ``role``; ``factory(batch_size=…)`` builds the backend."""
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}; expected one of {', '.join(ROLES)}")
    _CLASSICAL[role][name] = factory


def _hog_hsv(batch_size: int = 16) -> Backend:
    from vreason.measure.classical import HogHsvEmbedder

    return HogHsvEmbedder(batch_size=batch_size)


register_classical("embedder", "hog-hsv", _hog_hsv)


def _missing(role: str, option: str) -> ModelMissing:
    what, _, _ = ROLES[role]
    classical = ", ".join(f"classical:{n}" for n in sorted(_CLASSICAL[role]))
    alt = f" (or a weight-free substitute: {classical})" if classical else ""
    sep = "" if option.endswith("=") else " "
    return ModelMissing(f"this metric needs {what} and none was given: pass {option}{sep}"
                        f"transformers:/path/to/local/folder{alt}")


def clear_cache() -> None:
    """Forget the models loaded in this process."""
    with _LOCK:
        _LOADED.clear()


def _load(role: str, spec: str | None, *, device: str, dtype: str, option: str | None,
          default: str | None) -> tuple[str, object]:
    """``("classical", backend_factory)`` or ``(backend module key, Loaded)``."""
    what, hint, types = ROLES[role]
    option = option or hint
    spec = (spec or "").strip() or (default or "").strip()
    if not spec:
        raise _missing(role, option)
    scheme, sep, rest = spec.partition(":")
    if not sep or not rest.strip():
        raise ModelSpecError(f"{option} {spec!r}: expected transformers:<local folder> or classical:<name>")
    rest = rest.strip()
    if scheme == "classical":
        factory = _CLASSICAL[role].get(rest)
        if factory is None:
            known = ", ".join(f"classical:{n}" for n in sorted(_CLASSICAL[role])) or "none"
            raise ModelSpecError(f"{option} {spec!r}: no classical {role} named {rest!r} (known: {known})")
        return "classical", factory
    if scheme != "transformers":
        raise ModelSpecError(f"{option} {spec!r}: unknown backend {scheme!r}; expected transformers:<local folder> "
                             "or classical:<name>")
    model_type = folder_model_type(rest, role, option)
    if model_type not in types:
        raise ModelSpecError(f"{option}: the folder {Path(rest).name!r} holds a {model_type!r} model, but {role} needs "
                             f"{what} — one of: {', '.join(sorted(types))}")
    auto_class, tokenizer, kind = types[model_type]
    key = (str(Path(rest).expanduser().resolve()), auto_class, tokenizer, resolve_device(device), dtype or "float32")
    with _LOCK:
        if key not in _LOADED:
            loader = load_folder
            if kind == "sam2_video":  # no processor class: its video processor needs torchvision
                from vreason.measure.sam2_video import load_sam2_video as loader
            _LOADED[key] = loader(rest, model_type, auto_class, device=device, dtype=dtype, tokenizer=tokenizer)
        return kind, _LOADED[key]


def _build(role: str, spec: str | None, device: str, dtype: str, batch_size: int, option: str | None,
           default: str | None) -> Backend:
    kind, got = _load(role, spec, device=device, dtype=dtype, option=option, default=default)
    if kind == "classical":
        return got(batch_size=batch_size)
    if kind == "dino":
        from vreason.measure.embedders import DinoEmbedder

        return DinoEmbedder(got, batch_size=batch_size)
    if kind == "clip":
        from vreason.measure.embedders import ClipEmbedder

        return ClipEmbedder(got, batch_size=batch_size)
    if kind in ("gdino", "owl"):
        from vreason.measure.detectors import GroundingDinoDetector, OwlDetector

        return (GroundingDinoDetector if kind == "gdino" else OwlDetector)(got, batch_size=batch_size)
    if kind == "depth":
        from vreason.measure.depth import TransformersDepth

        return TransformersDepth(got, batch_size=batch_size)
    if kind == "sam2_video":
        from vreason.measure.sam2_video import Sam2VideoSegmenter

        return Sam2VideoSegmenter(got, batch_size=batch_size)
    from vreason.measure.segment import SamSegmenter

    return SamSegmenter(got, batch_size=batch_size)


def make_embedder(spec: str | None, *, device: str = "cpu", dtype: str = "float32", batch_size: int = 16,
                  option: str | None = None, default: str | None = None) -> ImageEmbedder:
    """An :class:`ImageEmbedder` (DINO / DINOv2 CLS features, CLIP / SigLIP image features, or
    ``classical:hog-hsv``)."""
    return _build("embedder", spec, device, dtype, batch_size, option, default)  # type: ignore[return-value]


def make_text_image(spec: str | None, *, device: str = "cpu", dtype: str = "float32", batch_size: int = 16,
                    option: str | None = None, default: str | None = None) -> TextImageEmbedder:
    """A :class:`TextImageEmbedder` (CLIP / SigLIP)."""
    return _build("text_image", spec, device, dtype, batch_size, option, default)  # type: ignore[return-value]


def make_detector(spec: str | None, *, device: str = "cpu", dtype: str = "float32", batch_size: int = 16,
                  option: str | None = None, default: str | None = None) -> Detector:
    """A :class:`Detector` (Grounding DINO / OWLv2 / OWL-ViT), labels as text queries."""
    return _build("detector", spec, device, dtype, batch_size, option, default)  # type: ignore[return-value]


def make_depth(spec: str | None, *, device: str = "cpu", dtype: str = "float32", batch_size: int = 16,
               option: str | None = None, default: str | None = None) -> DepthEstimator:
    """A :class:`DepthEstimator` (Depth Anything V1/V2, DPT) through ``AutoModelForDepthEstimation``."""
    return _build("depth", spec, device, dtype, batch_size, option, default)  # type: ignore[return-value]


def make_segmenter(spec: str | None, *, device: str = "cpu", dtype: str = "float32", batch_size: int = 16,
                   option: str | None = None, default: str | None = None) -> Segmenter:
    """A box-prompted :class:`Segmenter` (SAM); a SAM2 video folder gives one that is also a
    :class:`~vreason.measure.base.VideoSegmenter` (frame-0 boxes propagated through a video)."""
    return _build("segmenter", spec, device, dtype, batch_size, option, default)  # type: ignore[return-value]
