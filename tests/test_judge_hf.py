"""The transformers backend end to end on a tiny, randomly initialised Qwen2-VL saved to a folder.

Checks the plumbing (local folder loading, frames as images with the right number of vision tokens,
generation, decoding, usage, client integration), not the content of the replies.
"""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from vreason.judge import parsers
from vreason.judge.base import Decoding, ImagePart, JudgeRequest, TextPart
from vreason.judge.retry import TokenCaps
from vreason.judge.spec import make_judge

NO_GROWTH = TokenCaps(ceiling=5)  # the request's own cap is the ceiling: a cut-off reply is not re-asked

SPECIAL = [
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|image_pad|>",
    "<|video_pad|>",
]


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    """A character-level tokenizer, a Qwen2-VL image processor and a 300k-parameter model, saved. torch and
    transformers are imported here, not at collection (every pytest-xdist worker collects every module)."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import (
        PreTrainedTokenizerFast,
        Qwen2VLConfig,
        Qwen2VLForConditionalGeneration,
        Qwen2VLImageProcessor,
    )

    out = tmp_path_factory.mktemp("tiny-qwen2-vl")
    vocab = {w: i for i, w in enumerate(SPECIAL + [chr(c) for c in range(32, 127)] + ["\n"])}
    tk = Tokenizer(models.WordLevel(vocab=vocab, unk_token="?"))
    tk.pre_tokenizer = pre_tokenizers.Split("", "isolated")
    tk.add_special_tokens(SPECIAL)
    tk.decoder = decoders.Fuse()
    tok = PreTrainedTokenizerFast(
        tokenizer_object=tk, eos_token="<|im_end|>", pad_token="<|endoftext|>", unk_token="?"
    )
    ids = {s: tok.convert_tokens_to_ids(s) for s in SPECIAL}
    cfg = Qwen2VLConfig(
        text_config=dict(
            hidden_size=64,
            intermediate_size=128,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            vocab_size=len(vocab),
            max_position_embeddings=2048,
            rope_scaling={"type": "mrope", "mrope_section": [2, 2, 4]},
            eos_token_id=ids["<|im_end|>"],
            pad_token_id=ids["<|endoftext|>"],
        ),
        vision_config=dict(
            depth=2,
            embed_dim=32,
            hidden_size=64,
            num_heads=2,
            mlp_ratio=2,
            patch_size=14,
            spatial_merge_size=2,
            temporal_patch_size=2,
        ),
        image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"],
    )
    torch.manual_seed(0)
    Qwen2VLForConditionalGeneration(cfg).save_pretrained(out)
    tok.save_pretrained(out)  # no chat template: the backend's Qwen ChatML markup is used
    Qwen2VLImageProcessor(min_pixels=28 * 28, max_pixels=56 * 56).save_pretrained(out)
    return out


def request(n_frames=2):
    frames = [np.full((40, 50, 3), 60 * i, np.uint8) for i in range(n_frames)]
    parts = [TextPart("Does the ball move?")] + [
        ImagePart(f, label=f"Frame {i}") for i, f in enumerate(frames)
    ]
    return JudgeRequest(
        parts=parts,
        system="Answer Yes or No.",
        decoding=Decoding(max_tokens=5),
        template="generic_yes_no",
        template_version="1",
    )


def test_end_to_end_from_folder(checkpoint, tmp_path):
    client = make_judge(
        f"transformers:{checkpoint}", cache_path=str(tmp_path / "c.sqlite"), reasks=0, token_caps=NO_GROWTH
    )
    assert client.identity == f"transformers:{checkpoint.name}" and client.limiter.max_concurrency == 1
    judge = client.judge
    _, tok, improc = judge._load()
    inputs = judge._inputs(request(2), tok, improc)
    # every image placeholder expanded to grid/merge² vision tokens, and flagged for the model
    n_pad = int((inputs["input_ids"] == tok.convert_tokens_to_ids("<|image_pad|>")).sum())
    grid = inputs["image_grid_thw"]
    assert n_pad == int(grid.prod(dim=1).sum()) // 4 and n_pad > 0
    assert int(inputs["mm_token_type_ids"].sum()) == n_pad
    text = tok.decode(inputs["input_ids"][0])
    assert text.startswith("<|im_start|>system\nAnswer Yes or No.<|im_end|>")
    assert text.index("Frame 0") < text.index("Frame 1") and text.endswith("<|im_start|>assistant\n")

    outcome = asyncio.run(client.ask(request(2), lambda t: t))  # any text would be an answer here...
    # ...but random weights never emit the end token: cut off at the cap (the ceiling here), so the
    # question ends unscored with the reason and the raw reply — never a value
    assert not outcome.ok and outcome.value is None and outcome.raw and outcome.requests == 1
    assert "finish_reason=length" in outcome.reason
    reply_tokens = outcome.usage.completion_tokens
    assert 1 <= reply_tokens <= 5 and outcome.usage.prompt_tokens == inputs["input_ids"].shape[1]
    ev = outcome.evidence(request(2))
    assert ev.judge.startswith("transformers:") and ev.decoding == {"do_sample": False, "max_new_tokens": 5}
    # a cut-off reply is not cached: asked again, greedy decoding gives the same text; so does a fresh judge
    again = asyncio.run(client.ask(request(2), parsers.json_object()))
    assert not again.cached and again.requests == 1 and again.raw == outcome.raw
    assert client.cache is not None and len(client.cache) == 0
    fresh = make_judge(f"transformers:{checkpoint}", reasks=0, token_caps=NO_GROWTH)
    assert asyncio.run(fresh.ask(request(2), lambda t: t)).raw == outcome.raw


def test_cut_off_generation_is_reasked_with_a_larger_cap(checkpoint):
    """``max_new_tokens`` reached without the end token is the local ``finish_reason=length``: the
    client asks again with twice the cap (up to the ceiling), then gives up with the reason."""
    judge = make_judge(f"transformers:{checkpoint}").judge
    first = judge._generate(request(2))  # random weights never emit the end token this early
    assert first.finish_reason == "length" and first.usage.completion_tokens == 5
    client = make_judge(f"transformers:{checkpoint}", reasks=0, token_caps=TokenCaps(ceiling=10))
    o = asyncio.run(client.ask(request(2), lambda t: t))
    assert o.requests == 2 and o.length_retries == 1 and not o.ok and o.value is None
    assert "finish_reason=length" in o.reason and "at 10 tokens" in o.reason and o.raw
    assert o.evidence(request(2)).decoding == {"do_sample": False, "max_new_tokens": 10}
    assert o.usage.completion_tokens == 5 + 10


def test_text_only_and_missing_folder(checkpoint, tmp_path):
    from vreason.core.errors import ConfigError

    client = make_judge(f"transformers:{checkpoint}", reasks=0, token_caps=TokenCaps(ceiling=3))
    o = asyncio.run(client.ask(JudgeRequest([TextPart("hi")], decoding=Decoding(max_tokens=3)), lambda t: t))
    # text only generates too; random weights run into the 3-token cap (= the ceiling): unscored, raw kept
    assert isinstance(o.raw, str) and o.raw and o.usage.completion_tokens == 3 and o.requests == 1
    assert not o.ok and "finish_reason=length" in o.reason
    with pytest.raises(ConfigError, match="does not exist"):
        make_judge(f"transformers:{tmp_path / 'nope'}")
