"""Loading transformers checkpoints from local folders: device and dtype resolution, the folder's model
type, and the model + image processor (+ tokenizer) bundle the backends share.

torch and transformers are imported inside the functions (extra ``deep``), so importing vreason stays light.
Image processors are always loaded with the PIL backend (no torchvision needed)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vreason.measure.base import ModelMissing, ModelSpecError

DTYPES = ("float32", "float16", "bfloat16")


def import_torch():
    try:
        import torch
        import transformers
    except ImportError as exc:  # pragma: no cover - the deep extra is installed in the test venv
        raise ModelMissing("local transformers models need the deep extra: pip install 'vreason[deep]' "
                           f"({exc})") from exc
    transformers.logging.set_verbosity_error()
    return torch


def resolve_device(device: str | None) -> str:
    """``cpu``, ``cuda``, ``cuda:N``, ``mps`` or ``auto`` (CUDA if present, else MPS, else CPU)."""
    torch = import_torch()
    dev = (device or "cpu").strip().lower()
    if dev == "auto":
        if torch.cuda.is_available():
            return "cuda"
        mps = getattr(torch.backends, "mps", None)
        return "mps" if mps is not None and mps.is_available() else "cpu"
    if dev == "cpu":
        return dev
    if dev == "cuda" or dev.startswith("cuda:"):
        if not torch.cuda.is_available():
            raise ModelSpecError(f"device {device!r}: CUDA is not available on this machine (use cpu or auto)")
        return dev
    if dev == "mps":
        return dev
    raise ModelSpecError(f"device {device!r}: expected cpu, cuda, cuda:N, mps or auto")


def resolve_dtype(dtype: str | None):
    torch = import_torch()
    name = (dtype or "float32").strip().lower()
    if name not in DTYPES:
        raise ModelSpecError(f"dtype {dtype!r}: expected one of {', '.join(DTYPES)}")
    return getattr(torch, name)


def folder_model_type(folder: str, role: str, option: str) -> str:
    """The ``model_type`` in ``folder/config.json``; a clear :class:`ModelSpecError` when the folder is
    not a saved model."""
    path = Path(folder).expanduser()
    if not path.is_dir():
        raise ModelSpecError(f"{role} model folder {path.name or folder!r} does not exist (given through {option}); "
                             "pass a local save_pretrained / Hugging Face snapshot folder")
    cfg = path / "config.json"
    if not cfg.is_file():
        raise ModelSpecError(f"{role} model folder {path.name!r} has no config.json (given through {option}); "
                             "pass a local save_pretrained / Hugging Face snapshot folder")
    try:
        model_type = json.loads(cfg.read_text()).get("model_type")
    except (OSError, ValueError) as exc:
        raise ModelSpecError(f"{role} model folder {path.name!r}: unreadable config.json ({exc})") from exc
    if not model_type:
        raise ModelSpecError(f"{role} model folder {path.name!r}: config.json names no model_type")
    return str(model_type)


def backend_name(model_type: str, folder: str) -> str:
    """Identity for evidence: the model type and the folder's name, never the full path."""
    return f"transformers:{model_type}@{Path(folder).expanduser().resolve().name}"


@dataclass
class Loaded:
    """A model loaded once per process (see :mod:`vreason.measure.spec`), shared by light backends."""

    model: Any
    image_processor: Any
    tokenizer: Any
    model_type: str
    name: str
    device: str
    dtype: Any


def _image_processor(T, folder: str):
    """The folder's image processor with the PIL backend (transformers 5: ``backend="pil"``; 4.x: the slow
    processor, which is the PIL one)."""
    try:
        return T.AutoImageProcessor.from_pretrained(folder, local_files_only=True, backend="pil")
    except TypeError:
        return T.AutoImageProcessor.from_pretrained(folder, local_files_only=True, use_fast=False)


def load_folder(folder: str, model_type: str, auto_class: str, *, device: str, dtype: str,
                tokenizer: bool = False) -> Loaded:
    """Load ``auto_class`` (a transformers class name such as ``AutoModel``) from ``folder`` offline, with
    its image processor (PIL backend) and, when asked, its tokenizer."""
    import_torch()
    import transformers as T

    dev, dt = resolve_device(device), resolve_dtype(dtype)
    where = Path(folder).expanduser().name
    try:
        model = getattr(T, auto_class).from_pretrained(folder, local_files_only=True)
        processor = _image_processor(T, folder)
        tok = T.AutoTokenizer.from_pretrained(folder, local_files_only=True) if tokenizer else None
    except Exception as exc:  # noqa: BLE001 - missing/corrupt weights, bad processor files: one clear error
        msg = str(exc)
        for full in {str(Path(folder).expanduser().resolve()), str(Path(folder).expanduser()), str(folder)}:
            msg = msg.replace(full, where)  # the folder's name only, never the full local path
        raise ModelSpecError(f"cannot load the {model_type} model in folder {where!r}: "
                             f"{type(exc).__name__}: {msg[:400]}") from exc
    model = model.to(dev, dt).eval()
    return Loaded(model=model, image_processor=processor, tokenizer=tok, model_type=model_type,
                  name=backend_name(model_type, folder), device=dev, dtype=dt)


def to_device(batch: dict, loaded: Loaded) -> dict:
    """Move a processor's output to the model's device; floating tensors take the model's dtype."""
    torch = import_torch()
    out = {}
    for k, v in batch.items():
        if isinstance(v, torch.Tensor):
            v = v.to(loaded.device)
            if v.is_floating_point():
                v = v.to(loaded.dtype)
        out[k] = v
    return out
