"""LPIPS in plain torch: torchvision-compatible keys, strict loading, d(a, a) = 0, symmetry, batching,
monotone in the amount of noise (checked with seeded random weights), clear errors without weights."""

from __future__ import annotations

import math

import numpy as np
import pytest

from vreason.core.errors import ConfigError
from vreason.measure.base import ModelMissing, ModelSpecError
from vreason.measure.lpips import NETS, build_network, check_backbone, features_stack, make_lpips, torchvision_shapes

# torch is imported inside the tests (not at collection: each pytest-xdist worker collects every module)
# parameter counts torchvision documents for alexnet() and vgg16()
TORCHVISION_PARAMS = {"alex": 61_100_840, "vgg": 138_357_544}


def _weights(tmp_path, seed: int = 0, net: str = "alex") -> tuple[str, str]:
    import torch

    torch.manual_seed(seed)
    feats = features_stack(net)
    torch.save({f"features.{k}": v for k, v in feats.state_dict().items()}, tmp_path / "backbone.pth")
    heads = {f"lin{k}.model.1.weight": torch.rand(1, c, 1, 1) for k, c in enumerate(NETS[net]["channels"])}
    torch.save(heads, tmp_path / "heads.pth")
    return str(tmp_path / "backbone.pth"), str(tmp_path / "heads.pth")


def _scene(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.kron(rng.integers(0, 256, (8, 8, 3)), np.ones((8, 8, 1))).astype(np.uint8)  # 64×64 blocks


def _noisy(img: np.ndarray, sigma: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.clip(img + rng.normal(0, sigma, img.shape), 0, 255).astype(np.uint8)


@pytest.mark.parametrize("net", ["alex", "vgg"])
def test_module_tree_matches_torchvision(net):
    import torch

    shapes = torchvision_shapes(net)
    assert sum(math.prod(s) for s in shapes.values()) == TORCHVISION_PARAMS[net]
    with torch.device("meta"):
        feats = features_stack(net)
        lp = build_network(net)
    assert {f"features.{k}": tuple(v.shape) for k, v in feats.state_dict().items()} == {
        k: v for k, v in shapes.items() if k.startswith("features.")}
    assert sorted(k for k in lp.state_dict() if k.startswith("lin")) == [f"lin{k}.model.1.weight" for k in range(5)]
    # a full torchvision checkpoint (classifier included) passes the strict check; the classifier is dropped
    full = {k: torch.empty(s, device="meta") for k, s in shapes.items()}
    assert set(check_backbone(full, net)) == {k[len("features."):] for k in shapes if k.startswith("features.")}


def test_strict_loading(tmp_path):
    import torch

    backbone, heads = _weights(tmp_path)
    state = torch.load(backbone, weights_only=True)
    broken = dict(state)
    broken.pop("features.3.bias")
    torch.save(broken, tmp_path / "missing.pth")
    with pytest.raises(ModelSpecError, match=r"missing keys \['features.3.bias'\]"):
        make_lpips(str(tmp_path / "missing.pth"), heads)
    torch.save({**state, "features.99.weight": torch.zeros(1)}, tmp_path / "extra.pth")
    with pytest.raises(ModelSpecError, match="unexpected keys"):
        make_lpips(str(tmp_path / "extra.pth"), heads)
    torch.save({**state, "features.0.weight": torch.zeros(64, 3, 3, 3)}, tmp_path / "shape.pth")
    with pytest.raises(ModelSpecError, match="wrong shapes"):
        make_lpips(str(tmp_path / "shape.pth"), heads)
    torch.save({"lin0.model.1.weight": torch.rand(1, 64, 1, 1)}, tmp_path / "fewheads.pth")
    with pytest.raises(ModelSpecError, match="does not fit the alex backbone"):
        make_lpips(backbone, str(tmp_path / "fewheads.pth"))
    (tmp_path / "junk.pth").write_text("not a checkpoint")
    with pytest.raises(ModelSpecError, match="not a torch state dict"):
        make_lpips(str(tmp_path / "junk.pth"), heads)
    with pytest.raises(ModelSpecError, match="'nowhere.pth' does not exist") as err:
        make_lpips(str(tmp_path / "nowhere.pth"), heads)
    assert isinstance(err.value, ConfigError)
    # the loaded weights are exactly the file's
    lp = make_lpips(backbone, heads)
    for k, v in state.items():
        assert torch.equal(lp.network.state_dict()[k], v)


@pytest.mark.parametrize("backbone,heads", [(None, None), ("", "h.pth"), ("b.pth", None)])
def test_missing_weights_name_the_options(backbone, heads):
    with pytest.raises(ModelMissing, match="--opt lpips_backbone=.* --opt lpips_heads=") as err:
        make_lpips(backbone, heads)
    assert not isinstance(err.value, ConfigError)


def test_distance_properties(tmp_path):
    lp = make_lpips(*_weights(tmp_path), batch_size=3)
    assert lp.name == "lpips:alex@heads.pth"
    a, b = _scene(1), _scene(2)
    d = lp.distance([a, a, b], [a, b, a])
    assert d.dtype == np.float32 and d.shape == (3,)
    assert d[0] == 0.0
    assert d[1] > 0 and d[1] == pytest.approx(d[2], rel=1e-5)  # symmetric
    frames_a = [_scene(s) for s in range(4)]
    frames_b = [_noisy(f, 20, s) for s, f in enumerate(frames_a)]
    batched = lp.distance(frames_a, frames_b)
    single = np.concatenate([lp.distance([x], [y]) for x, y in zip(frames_a, frames_b, strict=True)])
    np.testing.assert_allclose(batched, single, rtol=1e-5, atol=1e-7)
    small = [np.zeros((31, 40, 3), np.uint8)]
    assert lp.distance(frames_a[:1] + small, frames_a[:1] + small).tolist() == [0.0, 0.0]  # mixed sizes
    with pytest.raises(ValueError, match="frame 0 pair has shapes"):
        lp.distance([a], [small[0]])
    with pytest.raises(ValueError, match="frame 1 is 40×30, smaller than the network's 31 px"):
        lp.distance([a, small[0][:30]], [a, small[0][:30]])
    with pytest.raises(ValueError, match="1 frames against 2"):
        lp.distance([a], [a, a])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_more_noise_is_farther(tmp_path, seed):
    """With seeded random weights (checked for seeds 0–4 of alex and vgg before asserting, ratio ≈ 25×)."""
    lp = make_lpips(*_weights(tmp_path, seed=seed))
    for s in range(5):
        a = _scene(100 + s)
        d = lp.distance([a, a, a], [_noisy(a, 4, s), _noisy(a, 16, s), _noisy(a, 64, s)])
        assert 0 < d[0] < d[1] < d[2]
