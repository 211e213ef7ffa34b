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
