"""Judge image encoding per protocol and metric (issue 9, item 6): what a loopback OpenAI-compatible
server receives is JPEG at the released quality (RISE RA 95, TC 90, PR/VQ Pillow's 75; RULER frames
95) or the input/reference image's original file bytes; the cache key changes with the encoding;
the local backend decodes original bytes; every score records the encoding in its evidence."""

from __future__ import annotations

import asyncio
import base64
import io
import json

import numpy as np
import pytest
from PIL import Image

from _ruler_mmecof_fixtures import client_for, keyed_script, moving_video, ruler_dataset, user_parts
from vreason.core.records import RubricItem, Sample, Video
from vreason.core.scoring import ScoreContext
from vreason.frames import write_video
from vreason.judge.base import ImagePart, JudgeRequest, TextPart, image_part_from_file
from vreason.judge.cache import request_key
from vreason.judge.hf_backend import pixels_of
from vreason.judge.openai_backend import OpenAIJudge
from vreason.protocols.rise.scorers import (
    RisePhysicalRationality,
    RiseReasoningJudge,
    RiseTemporalConsistency,
    RiseVisualQuality,
)
from vreason.protocols.ruler.data import load_ruler
from vreason.protocols.ruler.protocol import RulerChecklistScorer
from vreason.testing.loopback import LoopbackServer


def _tables_at(quality: int) -> dict:
    """The JPEG quantisation tables Pillow writes at ``quality`` (IJG scaling: one set per quality)."""
    buf = io.BytesIO()
    Image.fromarray(np.full((16, 16, 3), 128, np.uint8)).save(buf, format="JPEG", quality=quality)
    with Image.open(io.BytesIO(buf.getvalue())) as im:
        return {k: list(v) for k, v in im.quantization.items()}


def _received(part: dict) -> tuple[str, bytes]:
    head, b64 = part["image_url"]["url"].split(",", 1)
    return head, base64.b64decode(b64)


def _quality_of(data: bytes) -> int:
    """The quality in 1..100 whose quantisation tables equal the received JPEG's."""
    with Image.open(io.BytesIO(data)) as im:
        assert im.format == "JPEG"
        got = {k: list(v) for k, v in im.quantization.items()}
    matches = [q for q in range(1, 101) if _tables_at(q) == got]
    assert matches, "tables of no IJG quality"
    return matches[0]


def _images(body: dict) -> list[tuple[str, bytes]]:
    return [_received(p) for p in user_parts(body) if p["type"] == "image_url"]


# ----------------------------------------------------------------------------- RISE
@pytest.fixture()
def rise_video(tmp_path):
    rng = np.random.default_rng(0)
    frames = [rng.integers(0, 255, (32, 48, 3), dtype=np.uint8) for _ in range(16)]
    path = str(tmp_path / "v.mp4")
    write_video(path, frames, fps=8)
    return Video(sample_id="com_1", model="mA", path=path)


def _rise_sample(extra=2, **update):
    s = Sample(id="com_1", benchmark="rise", category="commonsense", prompt="Drop the ball.",
               rubric=[RubricItem(id="q0", text="Question 0?", kind="question")],
               metadata={"extra_frame": extra})
    return s.model_copy(update=update)


def _run_rise(scorer, sample, video, replies, tmp_path):
    with LoopbackServer(replies) as srv:
        async def go():
            client = client_for(srv)
            ctx = ScoreContext(run_dir=str(tmp_path / "run"), judges={"default": client, "vq": client})
            try:
                return await scorer.ascore(sample, video, ctx)
            finally:
                await client.judge.aclose()

        scores = asyncio.run(go())
        return scores, list(srv.requests)


RA_REPLY = json.dumps([{"question": "Question 0?", "answer": "Yes", "reason": "r"}])


@pytest.mark.parametrize(("scorer", "reply", "quality"), [
    (RiseReasoningJudge(), RA_REPLY, 95),
    (RiseTemporalConsistency(), '{"Instruction": "i", "Final Score": 4, "Reason": "r"}', 90),
    (RisePhysicalRationality(), '{"score": 4, "justification": "j"}', 75),
    (RiseVisualQuality(), '{"score": 2, "justification": "j"}', 75),
])
def test_rise_frames_reach_the_judge_at_the_released_quality(tmp_path, rise_video, scorer, reply, quality):
    [s], [body] = _run_rise(scorer, _rise_sample(), rise_video, [reply], tmp_path)
    assert s.status.value == "ok"
    images = _images(body)
    assert images and all(head == "data:image/jpeg;base64" for head, _ in images)
    assert {_quality_of(data) for _, data in images} == {quality}
    assert s.evidence.details["image_encoding"] == f"jpeg:q{quality}"


def test_rise_reference_image_goes_as_its_file_bytes(tmp_path, rise_video):
    gt = tmp_path / "gt.png"
    Image.fromarray(np.full((40, 40, 3), 180, np.uint8)).save(gt)
    sample = _rise_sample(extra="gt", root=str(tmp_path), reference_image="gt.png")
    [s], [body] = _run_rise(RiseReasoningJudge(ra_mode="paper"), sample, rise_video,
                            ['{"Question": "q", "Score": 5, "Reason": "r"}'], tmp_path)
    assert s.status.value == "ok"
    (h1, frame), (h2, ref) = _images(body)
    assert h1 == "data:image/jpeg;base64" and _quality_of(frame) == 95
    assert h2 == "data:image/png;base64" and ref == gt.read_bytes()
    assert s.evidence.details["image_encoding"] == {"frames": "jpeg:q95", "reference_image": "original-bytes:image/png"}


# ----------------------------------------------------------------------------- RULER
def test_ruler_images_as_file_bytes_and_frames_at_95(tmp_path):
    root = tmp_path / "data"
    samples = {s.id: s for s in load_ruler(ruler_dataset(str(root))).samples}
    s = samples["maze-3"]  # input image + GT image, no input video
    jpg_gt = root / "gt" / "maze_3.jpg"  # a JPEG reference: its bytes must not be re-encoded either
    Image.open(root / "gt" / "maze_3.png").convert("RGB").save(jpg_gt, quality=60)
    s = s.model_copy(update={"reference_image": "gt/maze_3.jpg"})
    video = moving_video(str(tmp_path / "gen.mp4"), n=16, fps=8)
    reply = "<answer>" + json.dumps(["Good"] * 4) + "</answer>"
    with LoopbackServer(keyed_script([("PROMPT_MAZE", [reply])])) as srv:
        client = client_for(srv)
        ctx = ScoreContext(run_dir=".", judges={"default": client})
        scores = asyncio.run(RulerChecklistScorer().ascore(s, Video(sample_id=s.id, model="m", path=video), ctx))
        body = srv.requests[0]
    assert all(x.status.value == "ok" for x in scores)
    (h_in, b_in), (h_gt, b_gt), *frames = _images(body)
    assert h_in == "data:image/png;base64" and b_in == (root / "images" / "maze_3.png").read_bytes()
    assert h_gt == "data:image/jpeg;base64" and b_gt == jpg_gt.read_bytes()
    assert frames and {_quality_of(b) for _, b in frames} == {95}
    assert scores[0].evidence.details["image_encoding"] == {
        "input_image": "original-bytes:image/png", "gt_image": "original-bytes:image/jpeg", "video": "jpeg:q95"}


# ----------------------------------------------------------------------------- cache key, backends
def _req(part):
    return JudgeRequest(parts=[part, TextPart("q")], system="s")


def test_cache_key_changes_with_the_encoding(tmp_path):
    px = np.full((8, 8, 3), 77, np.uint8)
    path = tmp_path / "a.png"
    Image.fromarray(px).save(path)
    from_file = image_part_from_file(str(path))
    assert np.array_equal(from_file.image, px)
    keys = {name: request_key("j", _req(part), {"jpeg_quality": 90}) for name, part in {
        "default": ImagePart(px), "q95": ImagePart(px, quality=95), "q75": ImagePart(px, quality=75),
        "bytes": from_file}.items()}
    assert len(set(keys.values())) == 4
    assert request_key("j", _req(ImagePart(px, quality=95)), {"jpeg_quality": 90}) == keys["q95"]
    other = tmp_path / "b.png"
    Image.fromarray(px).save(other, compress_level=0)  # same pixels, other bytes: another question
    assert request_key("j", _req(image_part_from_file(str(other))), {"jpeg_quality": 90}) != keys["bytes"]


def test_openai_backend_default_and_overrides():
    judge = OpenAIJudge("m", base_url="http://127.0.0.1:1/v1", jpeg_quality=90, image_format="png")
    px = np.random.default_rng(1).integers(0, 255, (24, 24, 3), dtype=np.uint8)
    head, data = _received({"image_url": {"url": judge._image_url(ImagePart(px))}})
    assert head == "data:image/png;base64"  # the judge's own format when the part asks for nothing
    head, data = _received({"image_url": {"url": judge._image_url(ImagePart(px, quality=75))}})
    assert head == "data:image/jpeg;base64" and _quality_of(data) == 75
    raw = b"\x89PNG not even decoded"
    head, data = _received({"image_url": {"url": judge._image_url(ImagePart(px, data=raw, mime="image/png"))}})
    assert head == "data:image/png;base64" and data == raw


def test_local_backend_decodes_original_bytes_and_round_trips_quality(tmp_path):
    px = np.random.default_rng(2).integers(0, 255, (16, 16, 3), dtype=np.uint8)
    jpg = tmp_path / "x.jpg"
    Image.fromarray(px).save(jpg, quality=50)
    part = image_part_from_file(str(jpg))
    assert part.mime == "image/jpeg" and part.data == jpg.read_bytes()
    decoded = np.asarray(Image.open(jpg).convert("RGB"))
    # the bytes are what the model sees, whatever pixels the part also carries
    assert np.array_equal(np.asarray(pixels_of(ImagePart(px, data=part.data, mime=part.mime))), decoded)
    rt = np.asarray(pixels_of(ImagePart(px, quality=75)))
    assert not np.array_equal(rt, px) and np.abs(rt.astype(int) - px).mean() < 60
    assert np.array_equal(np.asarray(pixels_of(ImagePart(px))), px)


def test_image_part_rejects_bad_settings():
    px = np.zeros((2, 2, 3), np.uint8)
    with pytest.raises(ValueError, match="quality"):
        ImagePart(px, quality=0)
    with pytest.raises(ValueError, match="MIME"):
        ImagePart(px, data=b"x")
    assert ImagePart(px).encoding() == "judge-default"
