"""Hostile input: allocation-bomb pickles, deep JSON, huge records, undecodable bytes (issue 22)."""

from __future__ import annotations

import pickle
import tracemalloc

import numpy as np
import pytest

from vreason.protocols.pai.c.masks import (
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
    from vreason.protocols.pai.c.masks import load_pickle

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


# ---------------------------------------------------------------- hostile files: per-record errors, never a crash

DEEP = "[" * 100_000 + "]" * 100_000


def _append_to_json_list(path: str, item_text: str) -> int:
    """Append ``item_text`` as the last item of the JSON list in ``path``; returns the line it starts on."""
    with open(path, encoding="utf-8") as fh:
        text = fh.read().rstrip()
    assert text.endswith("]")
    head = text[:-1].rstrip() + ",\n"
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(head + item_text + "\n]\n")
    return head.count("\n") + 1


def _one_error(errors, path: str, line: int) -> dict:
    hits = [e for e in errors if f"{path}:{line}" in e["where"]]
    assert len(hits) == 1, errors
    return hits[0]


def test_rise_deep_item_is_a_record_error_with_file_and_line(tmp_path):
    from fixtures_rise import write_dataset
    from vreason.protocols.rise.data import load_rise

    data = write_dataset(str(tmp_path / "RISE"))
    before = len(load_rise(data).samples)
    path = str(tmp_path / "RISE" / "v5.json")
    line = _append_to_json_list(path, DEEP)
    res = load_rise(data)
    assert len(res.samples) == before
    assert "deeper" in _one_error(res.errors, path, line)["reason"]


def test_ruler_deep_and_overlong_lines(tmp_path, monkeypatch):
    from _ruler_mmecof_fixtures import ruler_dataset
    from vreason.data import loaderrors
    from vreason.protocols.ruler.data import load_ruler

    path = ruler_dataset(str(tmp_path / "R"), extra_lines=[DEEP, '{"id": "' + "x" * 300_000 + '"}'])
    monkeypatch.setattr(loaderrors, "MAX_RECORD_BYTES", 250_000)
    res = load_ruler(path)
    n = len(res.samples)
    assert n > 0
    with open(path, encoding="utf-8") as fh:
        total = sum(1 for _ in fh)
    assert "deeper" in _one_error(res.errors, path, total - 1)["reason"]
    assert "longer than the 250000" in _one_error(res.errors, path, total)["reason"]


def test_tivibench_deep_annotation_line(tmp_path):
    from _tivibench_fixtures import DEFAULT_ANNOTATIONS, release
    from vreason.protocols.tivibench.data import load_tivibench

    root = str(tmp_path / "T")
    release(root)
    before = len(load_tivibench(root).samples)
    release(root, annotations=[*DEFAULT_ANNOTATIONS, DEEP])
    res = load_tivibench(root)
    assert len(res.samples) == before
    deep = [e for e in res.errors if "deeper" in e["reason"]]
    assert len(deep) == 1 and "vreason_annotations.jsonl:" in deep[0]["where"]


def test_pai_g_deep_item_and_deep_question_file(tmp_path):
    import os

    from _pai_gu_fixtures import write_g_dataset
    from vreason.protocols.pai.g.data import load_pai_g

    root = write_g_dataset(str(tmp_path / "G"))
    before = len(load_pai_g(root).samples)
    path = os.path.join(root, "cosmos_predict2_bench_full_info.json")
    line = _append_to_json_list(path, DEEP)
    res = load_pai_g(root)
    assert "deeper" in _one_error(res.errors, path, line)["reason"]
    qfile = sorted(os.listdir(os.path.join(root, "vqa")))[0]
    with open(os.path.join(root, "vqa", qfile), "w", encoding="utf-8") as fh:
        fh.write(DEEP)
    res = load_pai_g(root)
    assert len(res.samples) == before - 1 and any("deeper" in e["reason"] for e in res.errors)


def test_pai_u_deep_line_and_undecodable_bytes_never_reach_the_store(tmp_path):
    import os

    from _pai_gu_fixtures import write_u_dataset
    from vreason.protocols.pai.u.data import load_pai_u
    from vreason.store import RunStore

    root = write_u_dataset(str(tmp_path / "U"), corrupt=None)
    before = len(load_pai_u(root).samples)
    path = os.path.join(root, "test.jsonl")
    with open(path, "ab") as fh:
        fh.write(DEEP.encode() + b"\n")
        fh.write(b'{"id": "bad", "question": "caf\xff?", "video_path": "videos/u1.mp4", "answer": "A",'
                 b' "index2ans": {"A": "yes", "B": "no"}}\n')
    with open(path, "rb") as fh:
        total = fh.read().count(b"\n")
    res = load_pai_u(root)
    assert len(res.samples) == before
    assert "deeper" in _one_error(res.errors, path, total - 1)["reason"]
    bad = _one_error(res.errors, path, total)
    assert bad["field"] == "question" and "UTF-8" in bad["reason"]
    with RunStore(str(tmp_path / "run")) as st:
        st.put_samples(res.samples)  # every sample that loaded can be stored


def test_pai_c_huge_csv_field_and_deep_caption(tmp_path):
    import csv
    import os

    from _pai_c_fixtures import write_dataset
    from vreason.protocols.pai.c.data import load_pai_c

    root = write_dataset(str(tmp_path / "C"))
    before = len(load_pai_c(root).samples)
    meta = os.path.join(root, "metadata.csv")
    with open(meta, "a", newline="") as fh:
        csv.writer(fh).writerow(["huge", "x" * (csv.field_size_limit() + 10), 3])
    with open(meta) as fh:
        total = fh.read().count("\n")
    res = load_pai_c(root)
    samples, errors = res.samples, res.errors
    assert len(samples) == before
    hit = _one_error(errors, meta, total)
    assert "field larger than field limit" in hit["reason"]
    cap = sorted(os.listdir(os.path.join(root, "captions")))[0]
    with open(os.path.join(root, "captions", cap), "w") as fh:
        fh.write(DEEP)
    res = load_pai_c(root)
    samples, errors = res.samples, res.errors
    assert any("deeper" in e["reason"] for e in errors)
