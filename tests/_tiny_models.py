"""Tiny random-init transformers checkpoints for offline tests.

Each ``tiny_<kind>(folder)`` builds a model from a small config (seeded, so the weights are the same on
every build), saves it with its image processor and tokenizer into ``folder`` (``save_pretrained``), and
returns the folder path; ``from_pretrained(folder, local_files_only=True)`` then works with no network.
The processors saved are the ones real checkpoints carry (``image_processor_type`` names the plain class;
vreason loads them with the PIL backend, so torchvision is never needed).

``tiny_model(kind, tmp_path_factory)`` builds each kind at most once per test session.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

_WORDS = ("a", "an", "the", "cat", "dog", "red", "blue", "green", "box", "ball", "circle", "square", "car",
          "person", "photo", "of", "object", "star", "triangle", ".")


def _quiet():
    import transformers

    transformers.logging.set_verbosity_error()
    transformers.logging.disable_progress_bar()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    return transformers


def _seed() -> None:
    import torch

    torch.manual_seed(0)


def _bert_tokenizer():
    T = _quiet()
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *_WORDS]
    # transformers 5.x: `vocab=` takes the data itself (vocab_file= is silently ignored)
    return T.BertTokenizer(vocab={w: i for i, w in enumerate(vocab)})


def _byte_chars() -> list[str]:
    """The GPT-2 / CLIP byte → printable character table, in byte order."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return [chr(c) for _, c in sorted(zip(bs, cs, strict=True))]


def _clip_tokenizer():
    """Byte-level CLIP BPE with a handful of merges: every byte and byte + ``</w>`` is a token."""
    T = _quiet()
    chars = _byte_chars()
    toks = chars + [c + "</w>" for c in chars] + ["<|startoftext|>", "<|endoftext|>"]
    extra = ["ca", "cat</w>", "do", "dog</w>"]
    merges = [("c", "a"), ("ca", "t</w>"), ("d", "o"), ("do", "g</w>")]
    vocab = {t: i for i, t in enumerate(toks + extra)}
    return T.CLIPTokenizer(vocab=vocab, merges=merges)


def _wordlevel_tokenizer():
    """A word-level fast tokenizer (SigLIP's sentencepiece tokenizer needs the sentencepiece package)."""
    T = _quiet()
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {w: i for i, w in enumerate(["<pad>", "</s>", "<unk>", *_WORDS])}
    tk = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    return T.PreTrainedTokenizerFast(tokenizer_object=tk, pad_token="<pad>", eos_token="</s>", unk_token="<unk>")


def _vit_small(**kw) -> dict:
    return dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64, **kw)


def tiny_dinov2(folder: str | os.PathLike) -> str:
    T = _quiet()
    _seed()
    cfg = T.Dinov2Config(**_vit_small(image_size=56, patch_size=14))
    T.Dinov2Model(cfg).save_pretrained(folder)
    T.BitImageProcessorPil(size={"shortest_edge": 64}, crop_size={"height": 56, "width": 56}).save_pretrained(folder)
    return str(folder)


def tiny_dino_vit(folder: str | os.PathLike) -> str:
    """DINO v1 checkpoints are ``ViTModel`` (model type ``vit``)."""
    T = _quiet()
    _seed()
    cfg = T.ViTConfig(**_vit_small(image_size=64, patch_size=16))
    T.ViTModel(cfg, add_pooling_layer=False).save_pretrained(folder)
    T.ViTImageProcessorPil(size={"height": 64, "width": 64}).save_pretrained(folder)
    return str(folder)


def tiny_clip(folder: str | os.PathLike) -> str:
    T = _quiet()
    _seed()
    tok = _clip_tokenizer()
    cfg = T.CLIPConfig(
        text_config=_vit_small(vocab_size=len(tok), max_position_embeddings=32, eos_token_id=tok.eos_token_id,
                               bos_token_id=tok.bos_token_id),
        vision_config=_vit_small(image_size=64, patch_size=16), projection_dim=16)
    T.CLIPModel(cfg).save_pretrained(folder)
    T.CLIPImageProcessorPil(size={"shortest_edge": 64}, crop_size={"height": 64, "width": 64}).save_pretrained(folder)
    tok.save_pretrained(folder)
    return str(folder)


def tiny_siglip(folder: str | os.PathLike) -> str:
    T = _quiet()
    _seed()
    tok = _wordlevel_tokenizer()
    cfg = T.SiglipConfig(text_config=_vit_small(vocab_size=len(tok), max_position_embeddings=16),
                         vision_config=_vit_small(image_size=64, patch_size=16))
    T.SiglipModel(cfg).save_pretrained(folder)
    T.SiglipImageProcessorPil(size={"height": 64, "width": 64}).save_pretrained(folder)
    tok.save_pretrained(folder)
    return str(folder)


def tiny_depth_anything(folder: str | os.PathLike) -> str:
    T = _quiet()
    _seed()
    bb = T.Dinov2Config(hidden_size=32, num_hidden_layers=4, num_attention_heads=2, intermediate_size=64, image_size=56,
                        patch_size=14, out_indices=[1, 2, 3, 4], apply_layernorm=True, reshape_hidden_states=False)
    cfg = T.DepthAnythingConfig(backbone_config=bb, reassemble_hidden_size=32, patch_size=14,
                                neck_hidden_sizes=[8, 16, 32, 32], fusion_hidden_size=16, head_hidden_size=8,
                                depth_estimation_type="relative")
    T.DepthAnythingForDepthEstimation(cfg).save_pretrained(folder)
    T.DPTImageProcessorPil(size={"height": 56, "width": 56}, keep_aspect_ratio=True, ensure_multiple_of=14,
                           do_pad=False).save_pretrained(folder)
    return str(folder)


def tiny_grounding_dino(folder: str | os.PathLike) -> str:
    T = _quiet()
    _seed()
    tok = _bert_tokenizer()
    swin = T.SwinConfig(window_size=7, embed_dim=8, depths=[1, 1, 1, 1], num_heads=[1, 1, 1, 1], image_size=98,
                        out_features=["stage2", "stage3", "stage4"], out_indices=[2, 3, 4])
    text = dict(model_type="bert", hidden_size=8, num_hidden_layers=1, num_attention_heads=2, intermediate_size=8,
                max_position_embeddings=32, vocab_size=len(tok))
    cfg = T.GroundingDinoConfig(d_model=32, encoder_layers=1, decoder_layers=2, encoder_attention_heads=4,
                                decoder_attention_heads=4, encoder_ffn_dim=16, decoder_ffn_dim=16, num_queries=5,
                                num_feature_levels=4, encoder_n_points=2, decoder_n_points=2, use_timm_backbone=False,
                                backbone_config=swin, max_text_len=16, text_config=text)
    T.GroundingDinoForObjectDetection(cfg).save_pretrained(folder)
    T.GroundingDinoImageProcessorPil(size={"shortest_edge": 98, "longest_edge": 98}).save_pretrained(folder)
    tok.save_pretrained(folder)
    return str(folder)


def tiny_owlv2(folder: str | os.PathLike) -> str:
    T = _quiet()
    _seed()
    tok = _clip_tokenizer()
    cfg = T.Owlv2Config(
        text_config=_vit_small(vocab_size=len(tok), max_position_embeddings=16, eos_token_id=tok.eos_token_id,
                               bos_token_id=tok.bos_token_id),
        vision_config=_vit_small(image_size=64, patch_size=16),
        projection_dim=32)  # the class head needs projection_dim == text hidden_size
    T.Owlv2ForObjectDetection(cfg).save_pretrained(folder)
    T.Owlv2ImageProcessorPil(size={"height": 64, "width": 64}).save_pretrained(folder)
    tok.save_pretrained(folder)
    return str(folder)


def tiny_sam(folder: str | os.PathLike) -> str:
    T = _quiet()
    _seed()
    cfg = T.SamConfig(
        vision_config=dict(hidden_size=32, output_channels=16, num_hidden_layers=2, num_attention_heads=2,
                           intermediate_size=64, image_size=64, patch_size=8, global_attn_indexes=[1], window_size=4,
                           mlp_dim=64, num_pos_feats=8),
        prompt_encoder_config=dict(hidden_size=16, image_size=64, patch_size=8, mask_input_channels=4),
        mask_decoder_config=dict(hidden_size=16, mlp_dim=32, num_hidden_layers=2, num_attention_heads=2,
                                 iou_head_hidden_dim=16))
    T.SamModel(cfg).save_pretrained(folder)
    T.SamImageProcessorPil(size={"longest_edge": 64}, pad_size={"height": 64, "width": 64},
                           mask_size={"longest_edge": 16}, mask_pad_size={"height": 16, "width": 16}
                           ).save_pretrained(folder)
    return str(folder)


def tiny_sam2_video(folder: str | os.PathLike) -> str:
    """A random-init ``Sam2VideoModel`` (image size 64; hidden sizes 128 because the memory cross-attention
    expects 64-channel memories and object pointers need hidden > 64), saved without a processor."""
    T = _quiet()
    _seed()
    size = 64
    bb = T.Sam2HieraDetConfig(hidden_size=12, image_size=size, blocks_per_stage=[1, 1, 2, 1],
                              embed_dim_per_stage=[12, 24, 48, 96], num_attention_heads_per_stage=[1, 1, 1, 1],
                              window_size_per_stage=[8, 4, 4, 2], global_attention_blocks=[3])
    vc = T.Sam2VisionConfig(backbone_config=bb, backbone_channel_list=[96, 48, 24, 12], fpn_hidden_size=128,
                            backbone_feature_sizes=[[size // 4] * 2, [size // 8] * 2, [size // 16] * 2])
    cfg = T.Sam2VideoConfig(
        vision_config=vc, image_size=size,
        prompt_encoder_config=dict(hidden_size=128, image_size=size, patch_size=16, mask_input_channels=8),
        mask_decoder_config=dict(hidden_size=128, mlp_dim=64, num_hidden_layers=2, num_attention_heads=4,
                                 iou_head_hidden_dim=32),
        memory_attention_hidden_size=128, memory_encoder_hidden_size=128, mask_downsampler_embed_dim=128,
        memory_fuser_embed_dim=128, memory_attention_num_layers=1, memory_attention_feed_forward_hidden_size=32,
        memory_encoder_output_channels=64, memory_attention_rope_feat_sizes=[size // 16] * 2,
        memory_fuser_intermediate_dim=64)
    T.Sam2VideoModel(cfg).save_pretrained(folder)
    return str(folder)


BUILDERS = {
    "dinov2": tiny_dinov2,
    "dino_vit": tiny_dino_vit,
    "clip": tiny_clip,
    "siglip": tiny_siglip,
    "depth_anything": tiny_depth_anything,
    "grounding_dino": tiny_grounding_dino,
    "owlv2": tiny_owlv2,
    "sam": tiny_sam,
    "sam2_video": tiny_sam2_video,
}

_CACHE: dict[str, str] = {}
_LOCK = threading.Lock()


def tiny_model(kind: str, tmp_path_factory) -> str:
    """The folder of a tiny ``kind`` checkpoint, built at most once per pytest session."""
    with _LOCK:
        if kind not in _CACHE or not Path(_CACHE[kind], "config.json").is_file():
            folder = tmp_path_factory.mktemp(f"tiny_{kind}")
            _CACHE[kind] = BUILDERS[kind](folder)
        return _CACHE[kind]


def model_type(folder: str | os.PathLike) -> str:
    """The ``model_type`` written in a saved folder's config.json."""
    return json.loads(Path(folder, "config.json").read_text())["model_type"]
