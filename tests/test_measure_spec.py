"""measure.spec: spec strings, role checks, clear errors, per-process cache, the classical descriptor."""

from __future__ import annotations

import json

import numpy as np
import pytest

from _tiny_models import tiny_model
from vreason.core.errors import ConfigError
from vreason.measure.base import ModelMissing, ModelSpecError
from vreason.measure.classical import HogHsvEmbedder
from vreason.measure.spec import (
    clear_cache,
    make_depth,
    make_detector,
    make_embedder,
    make_segmenter,
    make_text_image,
)


def _scene(seed: int, h: int = 60, w: int = 80) -> np.ndarray:
    """A few coloured rectangles on a grey background (structured, not noise)."""
    rng = np.random.default_rng(seed)
    img = np.full((h, w, 3), 128, np.uint8)
    for _ in range(4):
        x0, y0 = rng.integers(0, w - 10), rng.integers(0, h - 10)
        img[y0:y0 + rng.integers(5, 20), x0:x0 + rng.integers(5, 25)] = rng.integers(0, 255, 3)
    return img


@pytest.mark.parametrize("factory,option", [(make_detector, "--detector"), (make_depth, "--opt depth="),
                                            (make_segmenter, "--opt segmenter="), (make_text_image, "--opt clip="),
                                            (make_embedder, "--features")])
@pytest.mark.parametrize("spec", [None, "", "   "])
def test_missing_spec_names_the_option(factory, option, spec):
    with pytest.raises(ModelMissing) as err:
        factory(spec)
    assert option in str(err.value) and "transformers:/path/to/local/folder" in str(err.value)
    assert "= " not in str(err.value) and "<folder>" not in str(err.value)
    assert not isinstance(err.value, ConfigError)  # nothing given is "unscored", not a config mistake


def test_missing_embedder_mentions_the_classical_substitute_and_default_is_opt_in():
    with pytest.raises(ModelMissing, match="classical:hog-hsv"):
        make_embedder(None)
    assert make_embedder(None, default="classical:hog-hsv").name == "classical:hog-hsv"
    with pytest.raises(ModelMissing, match="--opt dino="):
        make_embedder("", option="--opt dino=")


def test_no_classical_detector_by_default():
    with pytest.raises(ModelSpecError, match="no classical detector named 'hog-hsv'"):
        make_detector("classical:hog-hsv")


@pytest.mark.parametrize("spec,msg", [("dinov2", "expected transformers:<local folder>"),
                                      ("hf:facebook/dinov2-small", "unknown backend 'hf'"),
                                      ("transformers:", "expected transformers:"),
                                      ("classical:sift", "no classical embedder named 'sift'")])
def test_bad_spec_strings(spec, msg):
    with pytest.raises(ModelSpecError, match=msg) as err:
        make_embedder(spec)
    assert isinstance(err.value, ConfigError) and isinstance(err.value, ModelMissing)


def test_missing_folder_and_folder_without_config(tmp_path):
    with pytest.raises(ModelSpecError, match="'nowhere' does not exist"):
        make_depth(f"transformers:{tmp_path / 'nowhere'}")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelSpecError, match="'empty' has no config.json"):
        make_depth(f"transformers:{tmp_path / 'empty'}")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "config.json").write_text(json.dumps({"hidden_size": 3}))
    with pytest.raises(ModelSpecError, match="names no model_type"):
        make_depth(f"transformers:{bad}")


@pytest.mark.parametrize("kind,factory,needs", [
    ("sam", make_embedder, "dinov2"),
    ("dinov2", make_detector, "grounding-dino"),
    ("clip", make_depth, "depth_anything"),
    ("depth_anything", make_segmenter, "sam"),
    ("dinov2", make_text_image, "siglip"),
])
def test_wrong_kind_for_the_role(kind, factory, needs, tmp_path_factory):
    folder = tiny_model(kind, tmp_path_factory)
    with pytest.raises(ModelSpecError) as err:
        factory(f"transformers:{folder}")
    msg = str(err.value)
    mt = json.loads(open(f"{folder}/config.json").read())["model_type"]
    assert repr(mt) in msg and needs in msg
    assert str(folder) not in msg  # the folder's name only


def test_models_are_loaded_once_per_process(tmp_path_factory):
    folder = tiny_model("dinov2", tmp_path_factory)
    clear_cache()
    a = make_embedder(f"transformers:{folder}", batch_size=2)
    b = make_embedder(f"transformers:{folder}", batch_size=8)
    assert a.loaded.model is b.loaded.model and (a.batch_size, b.batch_size) == (2, 8)
    c = make_embedder(f"transformers:{folder}", dtype="bfloat16")
    assert c.loaded.model is not a.loaded.model
    assert str(next(c.loaded.model.parameters()).dtype) == "torch.bfloat16"
    feats = c.embed([_scene(1)])
    assert feats.dtype == np.float32 and abs(float(np.linalg.norm(feats[0])) - 1) < 1e-3
    clear_cache()
    assert make_embedder(f"transformers:{folder}").loaded.model is not a.loaded.model


def test_device_and_dtype_are_checked(tmp_path_factory):
    folder = tiny_model("dinov2", tmp_path_factory)
    with pytest.raises(ModelSpecError, match="dtype 'float8'"):
        make_embedder(f"transformers:{folder}", dtype="float8")
    with pytest.raises(ModelSpecError, match="device 'tpu'"):
        make_embedder(f"transformers:{folder}", device="tpu")
    assert make_embedder(f"transformers:{folder}", device="auto").loaded.device in ("cpu", "cuda", "mps")


def test_backend_name_has_no_local_path(tmp_path_factory):
    folder = tiny_model("dinov2", tmp_path_factory)
    name = make_embedder(f"transformers:{folder}").name
    assert name.startswith("transformers:dinov2@tiny_dinov2") and "/" not in name


def test_hog_hsv_descriptor():
    emb = make_embedder("classical:hog-hsv")
    assert isinstance(emb, HogHsvEmbedder) and emb.name == "classical:hog-hsv"
    a, b = _scene(1), _scene(2)
    f = emb.embed([a, a.copy(), b, a[:, :, ::-1], np.full((30, 30, 3), 200, np.uint8), a[:7, :9]])
    assert f.shape == (6, emb.dim) and f.dtype == np.float32
    assert np.allclose(np.linalg.norm(f, axis=1), 1, atol=1e-5)
    assert f[0] @ f[1] == pytest.approx(1.0, abs=1e-6)
    assert f[0] @ f[2] < 0.9 and f[0] @ f[3] < 0.99  # another scene; the same shapes in other colours
    np.testing.assert_array_equal(emb.embed([a]), emb.embed([a]))  # deterministic
    # the same scene at another size stays close (what a re-encoded, resized video gives)
    import cv2

    big = cv2.resize(a, (160, 120), interpolation=cv2.INTER_NEAREST)
    assert emb.embed([big])[0] @ f[0] > f[0] @ f[2]
    with pytest.raises(ValueError, match="H×W×3"):
        emb.embed([np.zeros((0, 5, 3), np.uint8)])


def test_folder_with_missing_or_corrupt_weights(tmp_path):
    from _tiny_models import tiny_dinov2

    folder = tiny_dinov2(tmp_path / "dino-broken")
    (folder_path := tmp_path / "dino-broken" / "model.safetensors").unlink()
    with pytest.raises(ModelSpecError, match="cannot load the dinov2 model in folder 'dino-broken'") as err:
        make_embedder(f"transformers:{folder}")
    assert str(tmp_path) not in str(err.value)
    folder_path.write_bytes(b"not safetensors" * 4)
    with pytest.raises(ModelSpecError, match="cannot load the dinov2 model"):
        make_embedder(f"transformers:{folder}")
