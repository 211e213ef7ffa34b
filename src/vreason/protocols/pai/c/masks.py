"""PAI-Bench-C segmentation records: ``sam2_pkls/{video_id}.pkl`` read safely, masks decoded.

The released pipeline pickles a list of ``SAMV2Detection.to_dict()`` records, one per instance found
by Grounded-SAM-2 on the ground-truth video::

    {"phrase": "a robot arm",
     "segmentation_mask_rle": {"data": {"size": [T*H*W, 1], "counts": b"..."}, "mask_shape": (T, H, W)}}

``data`` is a COCO run-length encoding (``pycocotools.mask.encode``) of the T×H×W boolean mask flattened
in C order into one column, so the runs are the runs of the flat mask, starting with zeros.

**Never unpickle arbitrary objects**: :func:`load_pickle` uses a restricted unpickler whose
``find_class`` allows only the numpy names needed to rebuild plain arrays (``numpy.ndarray``,
``numpy.dtype``, ``numpy.core.multiarray._reconstruct`` and its numpy-2 spelling, ``scalar``) and the
builtin containers. Anything else (``os.system``, a class of the released code…) is refused with
:class:`UnsafePickle` — the file is reported as a per-sample error, never executed.

**Never allocate what the file merely claims**: a few bytes of pickle can ask for gigabytes
(``bytearray(2**31)``, a ``mask_shape`` of (10⁴, 10⁴, 10⁴) with one compressed run covering it). Every size is
bounded before anything is allocated: the file itself by :data:`MAX_PICKLE_BYTES`, ``bytearray(n)`` by the
file's own size, and a mask by :class:`MaskLimits` — the ground-truth video's own frame count and frame size
when the caller knows them (the scorer probes the video), else :data:`MAX_MASK_ELEMENTS` in all. A file
over a bound is refused with :class:`MaskTooLarge` (a per-sample error).
"""

from __future__ import annotations

import io
import os
import pickle
from dataclasses import dataclass

import numpy as np

_ALLOWED = {
    ("numpy", "ndarray"), ("numpy", "dtype"), ("numpy.core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "_reconstruct"), ("numpy.core.multiarray", "scalar"),
    ("numpy._core.multiarray", "scalar"), ("builtins", "set"), ("builtins", "frozenset"),
    ("builtins", "bytearray"), ("builtins", "complex"), ("builtins", "slice"), ("collections", "OrderedDict"),
}


MAX_PICKLE_BYTES = 512 * 1024 * 1024
"""Largest ``sam2_pkls`` file read (the released files hold compressed RLE: a few MB at most)."""
MAX_MASK_ELEMENTS = 64 * 1024 * 1024
"""Largest mask (T×H×W booleans, one byte each) decoded when the video's own size is not known."""

MAX_INSTANCE_VOLUMES = 32
"""The decoded instances of one file hold at most this many full-size masks in all."""


class UnsafePickle(pickle.UnpicklingError):
    """The pickle names a global outside the allowed numpy / builtin set."""


class MaskTooLarge(ValueError):
    """The file asks for more memory than the video it describes can need."""


@dataclass(frozen=True)
class MaskLimits:
    """Bounds on a decoded mask: the ground-truth video's frame count and frame size (None: unknown)."""
    frames: int | None = None
    height: int | None = None
    width: int | None = None
    max_elements: int = MAX_MASK_ELEMENTS

    @classmethod
    def of_video(cls, frames: int, height: int, width: int) -> MaskLimits:
        """The bounds a mask of this video can need (one mask of its full size)."""
        return cls(frames, height, width, max(int(frames) * int(height) * int(width), 1))

    def check(self, shape: tuple[int, ...], what: str = "mask") -> None:
        if any(v < 0 for v in shape):
            raise ValueError(f"{what} shape {tuple(shape)} has a negative size")
        if len(shape) == 3:
            for v, bound, name in zip(shape, (self.frames, self.height, self.width),
                                      ("frames", "height", "width"), strict=True):
                if bound is not None and v > bound:
                    raise MaskTooLarge(f"{what} shape {tuple(shape)}: {v} {name} exceeds the video's {bound}")
        n = 1
        for v in shape:
            n *= int(v)
        if n > self.max_elements:
            raise MaskTooLarge(f"{what} shape {tuple(shape)} holds {n} elements, more than the "
                               f"{self.max_elements} allowed")


class _Restricted(pickle.Unpickler):
    def __init__(self, fh, max_bytes: int):
        super().__init__(fh)
        self._max_bytes = max_bytes

    def find_class(self, module: str, name: str):  # noqa: D401 - pickle's hook
        if (module, name) not in _ALLOWED:
            raise UnsafePickle(f"refused to load {module}.{name} (only plain numpy arrays and builtins are "
                               "allowed)")
        if (module, name) == ("builtins", "bytearray"):
            return self._bytearray
        if name == "_reconstruct":
            return self._reconstruct(super().find_class(module, name))
        return super().find_class(module, name)

    def _reconstruct(self, real):
        # numpy's _reconstruct(cls, shape, dtype) allocates an empty array of shape: numpy itself writes
        # (0,) and sets the real shape with the data that follows; bound it by the file's own size
        def build(cls, shape, dtype):
            dims = (shape,) if isinstance(shape, int) else tuple(shape)
            if _prod(dims) > self._max_bytes:
                raise MaskTooLarge(f"array of shape {dims} is larger than the file itself")
            return real(cls, shape, dtype)
        return build

    def _bytearray(self, *args):
        # bytearray(n) allocates n zero bytes from a number in the file: bound it by the file's own size
        if args and isinstance(args[0], int) and not isinstance(args[0], bool) and args[0] > self._max_bytes:
            raise MaskTooLarge(f"bytearray({args[0]}) is larger than the file itself ({self._max_bytes} bytes)")
        return bytearray(*args)


def load_pickle(data: bytes):
    """Unpickle ``data`` allowing only numpy arrays and builtin containers (``bytearray(n)`` at most as
    large as ``data``)."""
    return _Restricted(io.BytesIO(data), max(len(data), 1024)).load()


def rle_decode_counts(counts: bytes | str | list[int]) -> list[int]:
    """COCO RLE counts: a list as is, or the compressed string form (6-bit chunks offset by 48, the
    high bit of each chunk continuing the number, the last chunk's bit 0x10 the sign; from the third
    run on, a count is stored as its difference to the count two before)."""
    if isinstance(counts, (list, tuple)):
        return [int(c) for c in counts]
    s = counts.encode("ascii") if isinstance(counts, str) else bytes(counts)
    out: list[int] = []
    p = 0
    while p < len(s):
        x = k = 0
        more = True
        while more:
            if p >= len(s):
                raise ValueError("RLE counts end inside a number")
            c = s[p] - 48
            x |= (c & 0x1F) << (5 * k)
            more = bool(c & 0x20)
            p += 1
            k += 1
            if not more and (c & 0x10):
                x |= -1 << (5 * k)
        if len(out) > 2:
            x += out[-2]
        out.append(x)
    return out


def rle_encode_counts(counts: list[int]) -> bytes:
    """The compressed string form of ``counts`` (inverse of :func:`rle_decode_counts`)."""
    s = bytearray()
    for i, cnt in enumerate(counts):
        x = int(cnt) - (int(counts[i - 2]) if i > 2 else 0)
        more = True
        while more:
            c = x & 0x1F
            x >>= 5
            more = (x != -1) if (c & 0x10) else (x != 0)
            if more:
                c |= 0x20
            s.append(c + 48)
    return bytes(s)


def runs_of(flat: np.ndarray) -> list[int]:
    """Run lengths of a flat boolean array, starting with a (possibly empty) run of False."""
    flat = np.asarray(flat, dtype=bool).ravel()
    if flat.size == 0:
        return []
    change = np.flatnonzero(flat[1:] != flat[:-1]) + 1
    bounds = np.concatenate([[0], change, [flat.size]])
    runs = np.diff(bounds).tolist()
    return ([0] + runs) if flat[0] else runs


def decode_mask(rle: dict, shape: tuple[int, ...], limits: MaskLimits | None = None) -> np.ndarray:
    """A boolean mask of ``shape`` from a one-column COCO RLE of its C-order flattening; ``shape`` is
    checked against ``limits`` (default: :data:`MAX_MASK_ELEMENTS`) before anything is allocated."""
    shape = tuple(int(v) for v in shape)
    (limits or MaskLimits()).check(shape)
    runs = rle_decode_counts(rle["counts"])
    if any(r < 0 for r in runs):
        raise ValueError("RLE has a negative run")
    n = 1
    for v in shape:
        n *= v
    size = rle.get("size")
    if size is not None and _prod(size) != n:
        raise ValueError(f"RLE size {list(size)} does not hold a mask of shape {tuple(shape)}")
    if sum(runs) != n:
        raise ValueError(f"RLE runs cover {sum(runs)} pixels, the mask shape {tuple(shape)} has {n}")
    values = np.zeros(len(runs), dtype=bool)
    values[1::2] = True
    return np.repeat(values, runs).reshape(shape)


def _prod(values) -> int:
    n = 1
    for v in values:
        n *= int(v)
    return n


def encode_mask(mask: np.ndarray) -> dict:
    """The released record's ``segmentation_mask_rle`` for a T×H×W boolean mask."""
    mask = np.asarray(mask, dtype=bool)
    return {"data": {"size": [int(mask.size), 1], "counts": rle_encode_counts(runs_of(mask))},
            "mask_shape": tuple(int(v) for v in mask.shape)}


@dataclass
class PhraseMask:
    phrase: str
    mask: np.ndarray
    """Boolean T×H×W."""


def read_instances(path: str, max_frames: int | None = None,
                   limits: MaskLimits | None = None) -> list[PhraseMask]:
    """The instance masks of one ``sam2_pkls`` file (restricted unpickling, every size bounded by
    ``limits``; see the module docstring).

    Raises ``ValueError`` / :class:`UnsafePickle` / :class:`MaskTooLarge` with the reason for a malformed,
    unsafe or oversized file."""
    limits = limits or MaskLimits()
    size = os.path.getsize(path)
    if size > MAX_PICKLE_BYTES:
        raise MaskTooLarge(f"{size} bytes is larger than a segmentation file can be ({MAX_PICKLE_BYTES})")
    with open(path, "rb") as fh:
        obj = load_pickle(fh.read())
    if not isinstance(obj, list):
        raise ValueError(f"expected a list of detections, got {type(obj).__name__}")
    out = []
    total = 0
    for i, rec in enumerate(obj):
        if not isinstance(rec, dict) or "phrase" not in rec or "segmentation_mask_rle" not in rec:
            raise ValueError(f"detection {i} is not a {{phrase, segmentation_mask_rle}} record")
        seg = rec["segmentation_mask_rle"]
        if isinstance(seg, np.ndarray):
            limits.check(seg.shape, f"detection {i} mask")
            mask = seg.astype(bool)
        else:
            shape = tuple(int(v) for v in seg["mask_shape"])
            if len(shape) != 3:
                raise ValueError(f"detection {i}: mask_shape {shape} is not (T, H, W)")
            limits.check(shape, f"detection {i} mask")
            mask = decode_mask(seg["data"], shape, limits)
        total += mask.size
        if total > limits.max_elements * MAX_INSTANCE_VOLUMES:
            raise MaskTooLarge(f"the detections hold {total} mask elements in all, more than "
                               f"{MAX_INSTANCE_VOLUMES} full-size masks")
        if max_frames:
            mask = mask[:max_frames]
        out.append(PhraseMask(str(rec["phrase"]), mask))
    return out


def phrase_masks(instances: list[PhraseMask]) -> dict[str, np.ndarray]:
    """Per phrase, the union of its instances — as the released code does it: instances are painted
    into one label map in order (a later instance wins an overlapping pixel), then each phrase takes
    the pixels labelled with one of its instances."""
    if not instances:
        return {}
    shape = instances[0].mask.shape
    labels = np.zeros(shape, dtype=np.int32)
    for k, inst in enumerate(instances, 1):
        if inst.mask.shape != shape:
            raise ValueError(f"instance {k - 1} ({inst.phrase!r}) has shape {inst.mask.shape}, the first {shape}")
        labels[inst.mask] = k
    out: dict[str, np.ndarray] = {}
    for k, inst in enumerate(instances, 1):
        hit = labels == k
        out[inst.phrase] = out[inst.phrase] | hit if inst.phrase in out else hit
    return out


__all__ = ["MAX_INSTANCE_VOLUMES", "MAX_MASK_ELEMENTS", "MAX_PICKLE_BYTES", "MaskLimits", "MaskTooLarge",
           "PhraseMask", "UnsafePickle", "decode_mask", "encode_mask", "load_pickle", "phrase_masks",
           "read_instances", "rle_decode_counts", "rle_encode_counts", "runs_of"]
