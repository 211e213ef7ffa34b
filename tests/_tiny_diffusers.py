"""Tiny random-init diffusers video pipelines built from configs on CPU (no download), saved to a folder."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

WORDS = ["a", "the", "green", "dot", "red", "square", "maze", "robot", "exit", "walls", "moves", "ball"]


def _tokenizer():
    import transformers as T
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    vocab = {"<pad>": 0, "</s>": 1, "<unk>": 2, **{w: i + 3 for i, w in enumerate(WORDS)}}
    tk = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tk.normalizer = normalizers.Lowercase()
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    tk.post_processor = processors.TemplateProcessing(single="$A </s>", special_tokens=[("</s>", 1)])
    return T.PreTrainedTokenizerFast(tokenizer_object=tk, pad_token="<pad>", eos_token="</s>", unk_token="<unk>")


def _wan_parts(tok, in_channels=16, image_dim=None):
    import diffusers as D
    import torch
    import transformers as T

    torch.manual_seed(0)
    te = T.UMT5EncoderModel(T.UMT5Config(vocab_size=len(tok), d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4,
                                         relative_attention_num_buckets=8, relative_attention_max_distance=16)).eval()
    vae = D.AutoencoderKLWan(base_dim=3, z_dim=16, dim_mult=[1, 1, 1, 1], num_res_blocks=1,
                             temperal_downsample=[False, True, True])
    kw = dict(patch_size=(1, 2, 2), num_attention_heads=2, attention_head_dim=12, in_channels=in_channels,
              out_channels=16, text_dim=32, freq_dim=256, ffn_dim=32, num_layers=2, cross_attn_norm=True,
              qk_norm="rms_norm_across_heads", rope_max_seq_len=32)
    if image_dim:
        kw["image_dim"] = image_dim
    return dict(tokenizer=tok, text_encoder=te, vae=vae, transformer=D.WanTransformer3DModel(**kw),
                scheduler=D.FlowMatchEulerDiscreteScheduler(shift=7.0))


def build_wan_t2v(folder: str) -> str:
    import diffusers as D

    D.WanPipeline(**_wan_parts(_tokenizer())).save_pretrained(folder)
    return folder


def build_wan_i2v(folder: str) -> str:
    import diffusers as D
    import transformers as T

    ienc = T.CLIPVisionModelWithProjection(T.CLIPVisionConfig(
        hidden_size=4, projection_dim=4, num_hidden_layers=2, num_attention_heads=2, image_size=32,
        intermediate_size=16, patch_size=1))
    parts = _wan_parts(_tokenizer(), in_channels=36, image_dim=4)
    pipe = D.WanImageToVideoPipeline(**parts, image_encoder=ienc,
                                     image_processor=T.CLIPImageProcessor(crop_size=32, size=32), transformer_2=None)
    pipe.save_pretrained(folder)
    return folder


def build_cogvideox(folder: str) -> str:
    import diffusers as D
    import torch
    import transformers as T

    torch.manual_seed(0)
    tok = _tokenizer()
    te = T.T5EncoderModel(T.T5Config(vocab_size=len(tok), d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4,
                                     relative_attention_num_buckets=8)).eval()
    vae = D.AutoencoderKLCogVideoX(in_channels=3, out_channels=3, down_block_types=("CogVideoXDownBlock3D",) * 4,
                                   up_block_types=("CogVideoXUpBlock3D",) * 4, block_out_channels=(8, 8, 8, 8),
                                   latent_channels=4, layers_per_block=1, norm_num_groups=2,
                                   temporal_compression_ratio=4)
    tr = D.CogVideoXTransformer3DModel(num_attention_heads=4, attention_head_dim=8, in_channels=4, out_channels=4,
                                       time_embed_dim=2, text_embed_dim=32, num_layers=1, sample_width=2,
                                       sample_height=2, sample_frames=9, patch_size=2, temporal_compression_ratio=4,
                                       max_text_seq_length=16)
    D.CogVideoXPipeline(tokenizer=tok, text_encoder=te, vae=vae, transformer=tr,
                        scheduler=D.CogVideoXDDIMScheduler()).save_pretrained(folder)
    return folder
