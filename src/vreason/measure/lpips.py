"""LPIPS (Zhang et al., 2018, "The Unreasonable Effectiveness of Deep Features as a Perceptual Metric",
version 0.1) in plain torch, without torchvision or the ``lpips`` package.

The network, as the paper and its released code define it:

1. images in [-1, 1] (uint8 frames: ``x / 127.5 - 1``) pass a fixed scaling layer
   ``(x - shift) / scale`` with shift ``(-.030, -.088, -.188)`` and scale ``(.458, .448, .450)``;
2. an ImageNet backbone's convolutional stack, tapped after five ReLUs — AlexNet ``features[0:2]``,
   ``[2:5]``, ``[5:8]``, ``[8:10]``, ``[10:12]`` (64, 192, 384, 256, 256 channels) or VGG16
   ``features[0:4]``, ``[4:9]``, ``[9:16]``, ``[16:23]``, ``[23:30]`` (64, 128, 256, 512, 512);
3. each tap is unit-normalised over channels (``x / (‖x‖ + 1e-10)``), the squared difference of the two
   images' taps goes through that layer's linear head (a 1×1 convolution, no bias, after a dropout that
   is inactive at evaluation), is averaged over space, and the five layers are summed.

Weights are local files (vreason downloads nothing):

* ``backbone`` — a torchvision-format state dict ``.pth`` (``alexnet-owt-7be5be79.pth`` or
  ``vgg16-397923af.pth``, i.e. ``AlexNet_Weights.IMAGENET1K_V1`` / ``VGG16_Weights.IMAGENET1K_V1``, what the
  ``lpips`` package loads); the whole model or only its ``features.*`` part. Keys and shapes are checked
  strictly against torchvision's module tree; the classifier is not needed and is dropped after the check;
* ``heads`` — the linear heads, the ``lpips`` wheel's ``lpips/weights/v0.1/alex.pth`` / ``vgg.pth``
  (keys ``lin{k}.model.1.weight``), loaded strictly.

The backbone kind (alex / vgg) is read from the backbone file's keys unless ``net`` names it.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from vreason.measure.base import ModelMissing, ModelSpecError
from vreason.measure.hf import import_torch, resolve_device, resolve_dtype

NETS = {
    # conv layer indices in `features`, (in, out, kernel) of each, tap ends, tap channels, classifier shapes
    "alex": dict(convs={0: (3, 64, 11), 3: (64, 192, 5), 6: (192, 384, 3), 8: (384, 256, 3), 10: (256, 256, 3)},
                 taps=(2, 5, 8, 10, 12), channels=(64, 192, 384, 256, 256),
                 classifier={1: (4096, 9216), 4: (4096, 4096), 6: (1000, 4096)}, min_side=31),
    "vgg": dict(convs={i: (c_in, c_out, 3) for i, (c_in, c_out) in zip(
                    (0, 2, 5, 7, 10, 12, 14, 17, 19, 21, 24, 26, 28),
                    ((3, 64), (64, 64), (64, 128), (128, 128), (128, 256), (256, 256), (256, 256), (256, 512),
                     (512, 512), (512, 512), (512, 512), (512, 512), (512, 512)), strict=True)},
                taps=(4, 9, 16, 23, 30), channels=(64, 128, 256, 512, 512),
                classifier={0: (4096, 25088), 3: (4096, 4096), 6: (1000, 4096)}, min_side=16),
}
SHIFT = (-0.030, -0.088, -0.188)
SCALE = (0.458, 0.448, 0.450)
OPTIONS_HINT = "--opt lpips_backbone=/path/alexnet-owt-7be5be79.pth --opt lpips_heads=/path/lpips/weights/v0.1/alex.pth"


def torchvision_shapes(net: str) -> dict[str, tuple[int, ...]]:
    """Every key of torchvision's ``alexnet()`` / ``vgg16()`` state dict with its shape."""
    spec = NETS[net]
    out: dict[str, tuple[int, ...]] = {}
    for i, (c_in, c_out, k) in spec["convs"].items():
        out[f"features.{i}.weight"] = (c_out, c_in, k, k)
        out[f"features.{i}.bias"] = (c_out,)
    for i, (n_out, n_in) in spec["classifier"].items():
        out[f"classifier.{i}.weight"] = (n_out, n_in)
        out[f"classifier.{i}.bias"] = (n_out,)
    return out


def features_stack(net: str):
    """torchvision's ``features`` Sequential for AlexNet or VGG16 (same indices, so keys match)."""
    torch = import_torch()
    nn = torch.nn
    if net == "alex":
        layers = [nn.Conv2d(3, 64, 11, 4, 2), nn.ReLU(), nn.MaxPool2d(3, 2),
                  nn.Conv2d(64, 192, 5, padding=2), nn.ReLU(), nn.MaxPool2d(3, 2),
                  nn.Conv2d(192, 384, 3, padding=1), nn.ReLU(),
                  nn.Conv2d(384, 256, 3, padding=1), nn.ReLU(),
                  nn.Conv2d(256, 256, 3, padding=1), nn.ReLU(), nn.MaxPool2d(3, 2)]
    else:
        layers, c = [], 3
        for v in (64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"):
            if v == "M":
                layers.append(nn.MaxPool2d(2, 2))
            else:
                layers += [nn.Conv2d(c, v, 3, padding=1), nn.ReLU()]
                c = v
    return nn.Sequential(*layers)


def build_network(net: str):
    """The LPIPS module (random weights) for ``net``: ``features`` + ``lin0`` … ``lin4``."""
    torch = import_torch()
    nn = torch.nn
    spec = NETS[net]

    class LPIPSNetwork(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = features_stack(net)
            self.taps = spec["taps"]
            for k, c in enumerate(spec["channels"]):
                head = nn.Module()
                head.model = nn.Sequential(nn.Dropout(), nn.Conv2d(c, 1, 1, bias=False))
                setattr(self, f"lin{k}", head)
            self.register_buffer("shift", torch.tensor(SHIFT)[None, :, None, None], persistent=False)
            self.register_buffer("scale", torch.tensor(SCALE)[None, :, None, None], persistent=False)

        def taps_of(self, x):
            out, start = [], 0
            x = (x - self.shift) / self.scale
            for end in self.taps:
                for i in range(start, end):
                    x = self.features[i](x)
                out.append(x / (torch.linalg.vector_norm(x, dim=1, keepdim=True) + 1e-10))
                start = end
            return out

        def forward(self, a, b):
            total = 0
            for k, (fa, fb) in enumerate(zip(self.taps_of(a), self.taps_of(b), strict=True)):
                total = total + getattr(self, f"lin{k}").model((fa - fb) ** 2).mean(dim=(2, 3))
            return total[:, 0]

    return LPIPSNetwork().eval().requires_grad_(False)


def _read_state(path: str, what: str) -> dict:
    torch = import_torch()
    p = Path(path).expanduser()
    if not p.is_file():
        raise ModelSpecError(f"LPIPS {what} file {p.name!r} does not exist ({OPTIONS_HINT})")
    try:
        state = torch.load(p, map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001 - any unreadable file is reported the same way
        raise ModelSpecError(f"LPIPS {what} file {p.name!r} is not a torch state dict: {exc}") from exc
    if isinstance(state, dict) and isinstance(state.get("state_dict"), dict):
        state = state["state_dict"]
    if not isinstance(state, dict):
        raise ModelSpecError(f"LPIPS {what} file {p.name!r} holds a {type(state).__name__}, not a state dict")
    return state


def guess_net(state: dict) -> str:
    return "vgg" if "features.28.weight" in state else "alex"


def check_backbone(state: dict, net: str, where: str = "backbone") -> dict:
    """Strict key/shape check against torchvision's tree; returns the ``features.*`` part (un-prefixed)."""
    expected = torchvision_shapes(net)
    extra = sorted(k for k in state if k not in expected)
    missing = sorted(k for k in expected if k.startswith("features.") and k not in state)
    wrong = sorted(k for k in state if k in expected and tuple(state[k].shape) != expected[k])
    has_classifier = [k for k in expected if k.startswith("classifier.") and k in state]
    partial = has_classifier and len(has_classifier) != sum(k.startswith("classifier.") for k in expected)
    if extra or missing or wrong or partial:
        parts = [f"unexpected keys {extra[:4]}" if extra else "", f"missing keys {missing[:4]}" if missing else "",
                 f"wrong shapes {wrong[:4]}" if wrong else "", "an incomplete classifier" if partial else ""]
        raise ModelSpecError(f"LPIPS {where} is not a torchvision {net} state dict: "
                             + "; ".join(p for p in parts if p))
    return {k[len("features."):]: v for k, v in state.items() if k.startswith("features.")}


class LPIPS:
    """Per-frame LPIPS distances between two frame sequences, ``batch_size`` pairs at a time."""

    def __init__(self, network, net: str, *, device: str, dtype, batch_size: int, name: str):
        self.network, self.net, self.device, self.dtype = network, net, device, dtype
        self.batch_size = max(1, int(batch_size))
        self.name = name

    def _tensor(self, frames: Sequence[np.ndarray]):
        torch = import_torch()
        arr = np.stack([np.asarray(f)[:, :, :3] for f in frames]).astype(np.float32) / 127.5 - 1.0
        return torch.from_numpy(arr).permute(0, 3, 1, 2).to(self.device, self.dtype)

    def distance(self, frames_a: Sequence[np.ndarray], frames_b: Sequence[np.ndarray]) -> np.ndarray:
        """float32 distance per frame pair (frames RGB uint8 H×W×3; the two of a pair of one size)."""
        torch = import_torch()
        if len(frames_a) != len(frames_b):
            raise ValueError(f"LPIPS: {len(frames_a)} frames against {len(frames_b)}")
        for i, (a, b) in enumerate(zip(frames_a, frames_b, strict=True)):
            if np.shape(a) != np.shape(b) or np.ndim(a) != 3:
                raise ValueError(f"LPIPS: frame {i} pair has shapes {np.shape(a)} and {np.shape(b)}")
            if min(np.shape(a)[:2]) < NETS[self.net]["min_side"]:
                raise ValueError(f"LPIPS ({self.net}): frame {i} is {np.shape(a)[1]}×{np.shape(a)[0]}, smaller than "
                                 f"the network's {NETS[self.net]['min_side']} px minimum side")
        out: list[np.ndarray] = []
        i = 0
        while i < len(frames_a):
            j = i + 1  # a batch holds pairs of one size
            while j < len(frames_a) and j - i < self.batch_size and np.shape(frames_a[j]) == np.shape(frames_a[i]):
                j += 1
            with torch.inference_mode():
                d = self.network(self._tensor(frames_a[i:j]), self._tensor(frames_b[i:j]))
            out.append(d.float().cpu().numpy())
            i = j
        return np.concatenate(out).astype(np.float32) if out else np.zeros(0, np.float32)


_CACHE: dict[tuple, LPIPS] = {}
_LOCK = threading.Lock()


def make_lpips(backbone: str | None, heads: str | None, *, net: str = "auto", device: str = "cpu",
               dtype: str = "float32", batch_size: int = 16) -> LPIPS:
    """LPIPS from local weight files (see the module docstring); loaded once per process.

    Without the files: :class:`ModelMissing` naming ``--opt lpips_backbone=… --opt lpips_heads=…``."""
    if not (backbone or "").strip() or not (heads or "").strip():
        absent = [n for n, v in (("lpips_backbone", backbone), ("lpips_heads", heads)) if not (v or "").strip()]
        raise ModelMissing(f"LPIPS needs local weight files ({', '.join(absent)} not given): pass {OPTIONS_HINT} "
                           "(the torchvision ImageNet backbone and the lpips wheel's v0.1 linear heads)")
    if net not in ("auto", *NETS):
        raise ModelSpecError(f"LPIPS net {net!r}: expected auto, alex or vgg")
    dev, dt = resolve_device(device), resolve_dtype(dtype)
    key = (str(Path(backbone).expanduser().resolve()), str(Path(heads).expanduser().resolve()), net, dev, str(dt))
    with _LOCK:
        if key in _CACHE:
            cached = _CACHE[key]
            return LPIPS(cached.network, cached.net, device=dev, dtype=dt, batch_size=batch_size, name=cached.name)
        state = _read_state(backbone, "backbone")
        kind = guess_net(state) if net == "auto" else net
        features = check_backbone(state, kind)
        lin = _read_state(heads, "heads")
        network = build_network(kind)
        network.features.load_state_dict(features, strict=True)
        head_keys = {k for k in network.state_dict() if k.startswith("lin")}
        if set(lin) != head_keys or any(tuple(lin[k].shape) != tuple(network.state_dict()[k].shape) for k in lin):
            raise ModelSpecError(f"LPIPS heads file {Path(heads).name!r} does not fit the {kind} backbone: keys "
                                 f"{sorted(lin)[:5]}, expected {sorted(head_keys)} (lpips/weights/v0.1/{kind}.pth)")
        network.load_state_dict({**{f"features.{k}": v for k, v in features.items()}, **lin}, strict=True)
        network = network.to(dev, dt)
        name = f"lpips:{kind}@{Path(heads).expanduser().name}"
        _CACHE[key] = LPIPS(network, kind, device=dev, dtype=dt, batch_size=batch_size, name=name)
        return _CACHE[key]
