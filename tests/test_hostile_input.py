"""Hostile input: allocation-bomb pickles, deep JSON, huge records, undecodable bytes (issue 22)."""

from __future__ import annotations

import pickle
import tracemalloc

import numpy as np
import pytest

from vreason.data.pai_c_masks import (
    MaskLimits,
    MaskTooLarge,
    UnsafePickle,
    encode_mask,
    read_instances,
    rle_encode_counts,
)

LIMIT = 100 * 1024 * 1024


def _bombs() -> dict[str, bytes]:
    # bytearray(2**31) through the allowed global: 48 bytes that ask for 2 GB
    class _BA:
        def __reduce__(self):
            return (bytearray, (2 ** 31,))

    # a mask_shape of 2 G elements covered by one compressed run (a few bytes of RLE)
    n = 2048 * 1024 * 1024
    rle_bomb = [{"phrase": "x", "segmentation_mask_rle": {"data": {"size": [n, 1], "counts": rle_encode_counts([n])},
                                                          "mask_shape": (2048, 1024, 1024)}}]
    # many small-claiming instances each at the video's full size: the total is bounded too
    full = (10, 64, 64)
    many = [{"phrase": f"p{i}", "segmentation_mask_rle": {"data": {"size": [int(np.prod(full)), 1],
                                                                   "counts": rle_encode_counts([int(np.prod(full))])},
                                                          "mask_shape": full}} for i in range(100)]
    return {"bytearray": pickle.dumps([_BA()], protocol=4), "rle": pickle.dumps(rle_bomb, protocol=4),
            "many": pickle.dumps(many, protocol=4),
            "ndarray_shape": _reconstruct_bomb()}


def _reconstruct_bomb() -> bytes:
    # numpy's _reconstruct(ndarray, shape, dtype) with a huge shape (numpy itself always writes (0,))
    real = pickle.dumps(np.zeros(3, dtype=np.uint8), protocol=4)
    bomb = real.replace(b"K\x00\x85", b"J\x00\x00\x00\x40\x85", 1)  # (0,) -> (2**30,)
    assert bomb != real
    return bomb


@pytest.mark.parametrize("name", ["bytearray", "rle", "many", "ndarray_shape"])
def test_bomb_pickles_refused_within_100mb(tmp_path, name):
    path = tmp_path / f"{name}.pkl"
    path.write_bytes(_bombs()[name])
    limits = MaskLimits.of_video(10, 64, 64) if name == "many" else None
    tracemalloc.start()
    try:
        with pytest.raises((MaskTooLarge, UnsafePickle, ValueError)) as exc:
            read_instances(str(path), limits=limits)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < LIMIT, f"{name}: peak {peak} bytes"
    assert "larger" in str(exc.value) or "more than" in str(exc.value) or "exceeds" in str(exc.value)


def test_mask_bounded_by_the_videos_own_size(tmp_path):
    mask = np.zeros((4, 8, 8), bool)
    mask[:, 2:5, 3:6] = True
    path = tmp_path / "ok.pkl"
    path.write_bytes(pickle.dumps([{"phrase": "a box", "segmentation_mask_rle": encode_mask(mask)}]))
    got = read_instances(str(path), limits=MaskLimits.of_video(4, 8, 8))
    assert np.array_equal(got[0].mask, mask)
    with pytest.raises(MaskTooLarge, match="height"):
        read_instances(str(path), limits=MaskLimits.of_video(4, 6, 8))
    with pytest.raises(MaskTooLarge, match="frames"):
        read_instances(str(path), limits=MaskLimits.of_video(2, 8, 8))


def test_legit_bytearray_and_arrays_still_load(tmp_path):
    from vreason.data.pai_c_masks import load_pickle

    obj = [bytearray(b"abc"), np.arange(12, dtype=np.int32).reshape(3, 4)]
    got = load_pickle(pickle.dumps(obj, protocol=4))
    assert got[0] == bytearray(b"abc") and np.array_equal(got[1], obj[1])


# ---------------------------------------------------------------- data paths confined to the dataset's root


def _hostile_rise(tmp_path):
    """The RISE fixture with records pointing outside its folder: absolute, ``../`` and a symlink."""
    import json
    import os

    from PIL import Image

    from fixtures_rise import write_dataset

    data = write_dataset(str(tmp_path / "RISE"))
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "secret.png"
    rng = np.random.default_rng(7)
    Image.fromarray(rng.integers(0, 255, (40, 40, 3), dtype=np.uint8)).save(secret)
    os.symlink(secret, os.path.join(data, "images", "link.png"))
    path = os.path.join(data, "v5.json")
    with open(path, encoding="utf-8") as fh:
        records = json.load(fh)
    by_id = {r["task_id"]: r for r in records}
    generic = [r for r in records if not r["task_id"].startswith("log_")]
    generic[0]["image_path"] = str(secret)
    generic[1]["image_path"] = "../outside/secret.png"
    generic[2]["image_path"] = "images/link.png"
    by_id["log_4"]["ref_path"] = "../outside/secret.png"  # the reference image goes to the judge
    hostile = {generic[0]["task_id"], generic[1]["task_id"], generic[2]["task_id"], "log_4"}
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(records, fh, indent=1)
    return data, secret, hostile


def test_hostile_dataset_paths_refused_per_record_and_never_sent_to_the_judge(tmp_path):
    import base64
    import json

    from fixtures_rise import write_videos
    from test_rise_e2e import judge_script
    from vreason.runner.run import RunConfig, Runner
    from vreason.store import RunStore
    from vreason.testing.loopback import LoopbackServer

    data, secret, hostile = _hostile_rise(tmp_path)
    videos = str(tmp_path / "videos")
    write_videos(videos, "good", good=True)
    needle = base64.b64encode(secret.read_bytes()).decode()[:200]

    def run(name, allow):
        with LoopbackServer(judge_script(True)) as srv:
            Runner(RunConfig(protocol="rise", run_dir=str(tmp_path / "runs" / name), models=["good"],
                             options={"data": data, "videos": videos, "n_boot": 20}, allow_outside_data=allow,
                             judges={"default": f"vllm:judge@{srv.base_url}"}, workers=1)).run()
            return [json.dumps(b) for b in srv.requests]

    sent = run("confined", False)
    assert sent and not any(needle in body for body in sent)
    with RunStore(str(tmp_path / "runs" / "confined"), create=False) as st:
        errors = st.get_meta("load_errors")
        ids = {s.id for s in st.samples()}
    refused = {e["sample_id"]: e for e in errors if "sample_id" in e}
    assert set(refused) == hostile and not (ids & hostile)
    assert all("outside the dataset's root" in e["reason"] for e in refused.values())
    assert sum("symlink" in e["reason"] for e in refused.values()) == 1  # images/link.png
    assert refused["log_4"]["field"] == "reference_image"
    # the opt-out lets them through: the same dataset then does send the outside image (the check can fail)
    opened = run("opted-out", True)
    assert any(needle in body for body in opened)


def test_confine_path_rules(tmp_path):
    import os

    from vreason.data.confine import OutsideDataRoot, confine_path

    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "a.png").write_bytes(b"x")
    os.symlink("/etc/passwd", root / "pw")
    assert confine_path(str(root), "sub/a.png").endswith("a.png")
    assert confine_path(str(root), str(root / "sub" / "a.png"))  # absolute but inside
    for bad in ("/etc/passwd", "../x.png", "sub/../../x.png", "pw", "sub/\x00.png"):
        with pytest.raises(OutsideDataRoot):
            confine_path(str(root), bad)
    assert confine_path(str(root), "/etc/passwd", allow_outside=True) == "/etc/passwd"
