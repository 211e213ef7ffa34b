"""Generation presets per known model family (frames, fps, resolution, guidance, steps, negative prompt).

Sources, per field:

* frames / fps / width × height: PAI-Bench appendix A.4, Table 7 ("Generation parameters for the evaluated
  video models") where the family is listed; VideoTPO's released script for Wan 2.1 I2V (81 frames,
  guidance 5.0, 16 fps, ``max_area = 720*1280``, a fixed negative prompt).
* guidance / steps / negative prompt: the model cards' diffusers examples (Wan-AI/Wan2.1-*-Diffusers and
  Wan2.2-*-Diffusers, THUDM/CogVideoX-5b, Lightricks/LTX-Video, hunyuanvideo-community/HunyuanVideo,
  nvidia/Cosmos-Predict2) and the pipelines' own defaults.

Every value can be overridden by a spec parameter; the resolved values are recorded with each video.
Width × height is a target *area*: an input image keeps its aspect ratio (:func:`fit_size`).
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass, field
from typing import Any

WAN_NEGATIVE = (
    "色调艳丽，过曝，静态，细节模糊不清，字幕，风格，作品，画作，画面，静止，整体发灰，最差质量，低质量，JPEG压缩残留，丑陋的，"
    "残缺的，多余的手指，画得不好的手部，画得不好的脸部，畸形的，毁容的，形态畸形的肢体，手指融合，静止不动的画面，杂乱的背景，"
    "三条腿，背景人很多，倒着走"
)
"""Wan's default negative prompt (the Wan 2.1 / 2.2 model cards' diffusers examples; VideoTPO uses a
fixed negative prompt of this kind)."""

LTX_NEGATIVE = "worst quality, inconsistent motion, blurry, jittery, distorted"
"""LTX-Video model card's diffusers example."""


@dataclass(frozen=True)
class Preset:
    family: str
    num_frames: int
    fps: float
    width: int
    height: int
    guidance_scale: float
    num_inference_steps: int
    negative_prompt: str | None = None
    multiple_of: int = 16
    """Height and width are rounded to a multiple of this (VAE stride × patch size)."""
    t2v_class: str | None = None
    i2v_class: str | None = None
    call_kwargs: dict[str, Any] = field(default_factory=dict)
    source: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


PRESETS: dict[str, Preset] = {p.family: p for p in (
    Preset("wan2.1", 81, 16, 1280, 720, 5.0, 50, WAN_NEGATIVE, 16, "WanPipeline", "WanImageToVideoPipeline",
           source="PAI-Bench Table 7 (Wan2.1-I2V-14B-720P: 81 frames, 16 fps, 1280×720); VideoTPO script (guidance "
                  "5.0, 16 fps, max_area 720*1280, negative prompt); Wan2.1 model card (50 steps)"),
    Preset("wan2.2-ti2v", 121, 24, 1280, 704, 5.0, 50, WAN_NEGATIVE, 32, "WanPipeline", "WanImageToVideoPipeline",
           source="PAI-Bench Table 7 (Wan2.2-TI2V-5B: 121 frames, 24 fps, 1248×704); Wan2.2-TI2V-5B model card "
                  "(1280×704, guidance 5.0, 50 steps)"),
    Preset("wan2.2-a14b", 81, 16, 1280, 720, 3.5, 40, WAN_NEGATIVE, 16, "WanPipeline", "WanImageToVideoPipeline",
           source="PAI-Bench Table 7 (Wan2.2-I2V-A14B: 81 frames, 16 fps, 1280×720); Wan2.2-I2V-A14B model card "
                  "(guidance 3.5, 40 steps)"),
    Preset("cogvideox", 49, 16, 720, 480, 6.0, 50, None, 16, "CogVideoXPipeline", "CogVideoXImageToVideoPipeline",
           source="PAI-Bench Table 7 (CogVideoX: 49 frames, 16 fps, 720×480; the model card exports at 8 fps); "
                  "CogVideoX-5b model card (guidance 6, 50 steps)"),
    Preset("cogvideox1.5", 81, 16, 1360, 768, 6.0, 50, None, 16, "CogVideoXPipeline",
           "CogVideoXImageToVideoPipeline",
           source="PAI-Bench Table 7 (CogVideoX1.5: 81 frames, 16 fps, 1360×768); CogVideoX1.5-5B model card "
                  "(guidance 6, 50 steps)"),
    Preset("ltx-video", 121, 30, 1216, 704, 3.0, 50, LTX_NEGATIVE, 32, "LTXPipeline", "LTXImageToVideoPipeline",
           source="PAI-Bench Table 7 (LTX-Video 2B/13B: 121 frames, 30 fps, 1216×704); LTX-Video model card "
                  "(negative prompt, 50 steps) and LTXPipeline default guidance 3.0"),
    Preset("hunyuanvideo", 129, 24, 1184, 768, 6.0, 50, None, 16, "HunyuanVideoPipeline",
           "HunyuanVideoImageToVideoPipeline",
           source="PAI-Bench Table 7 (HunyuanVideo-I2V: 129 frames, 24 fps, 1184×768); HunyuanVideoPipeline "
                  "defaults (embedded guidance 6.0, 50 steps)"),
    Preset("cosmos", 93, 16, 1280, 704, 7.0, 35, None, 16, None, "Cosmos2VideoToWorldPipeline",
           source="PAI-Bench Table 7 (Cosmos-Predict2 / 2.5: 93 frames, 16 fps, 1280×704); "
                  "Cosmos2VideoToWorldPipeline defaults (guidance 7.0, 35 steps)"),
)}

_BY_CLASS_PREFIX = (("Wan", "wan2.1"), ("CogVideoX", "cogvideox"), ("LTX", "ltx-video"),
                    ("HunyuanVideo", "hunyuanvideo"), ("Cosmos", "cosmos"))


def pipeline_class_name(folder: str) -> str | None:
    """The ``_class_name`` in a diffusers folder's ``model_index.json`` (read without loading anything)."""
    try:
        with open(os.path.join(folder, "model_index.json"), encoding="utf-8") as fh:
            return json.load(fh).get("_class_name")
    except (OSError, ValueError, AttributeError):
        return None


def detect(class_name: str | None, folder: str) -> Preset | None:
    """The preset of a pipeline folder: by its name (``Wan2.2-TI2V-5B``…), else by its pipeline class."""
    name = os.path.basename(folder.rstrip("/")).lower().replace("_", "-")
    if "wan2.2" in name or "wan-2.2" in name:
        return PRESETS["wan2.2-ti2v" if "ti2v" in name else "wan2.2-a14b"]
    if "cogvideox1.5" in name or "cogvideox-1.5" in name:
        return PRESETS["cogvideox1.5"]
    for needle, fam in (("wan", "wan2.1"), ("cogvideox", "cogvideox"), ("ltx", "ltx-video"),
                        ("hunyuan", "hunyuanvideo"), ("cosmos", "cosmos")):
        if needle in name:
            return PRESETS[fam]
    for prefix, fam in _BY_CLASS_PREFIX:
        if class_name and class_name.startswith(prefix):
            return PRESETS[fam]
    return None


def fit_size(width: int, height: int, multiple_of: int, image_size: tuple[int, int] | None = None) -> tuple[int, int]:
    """(width, height) for a target area ``width × height``: with an input image ``(w, h)`` its aspect
    ratio is kept (as VideoTPO's ``max_area`` does), both sides rounded to ``multiple_of`` (at least one
    multiple)."""
    m = max(1, int(multiple_of))
    if image_size:
        iw, ih = image_size
        area = width * height
        aspect = ih / iw
        height, width = math.sqrt(area * aspect), math.sqrt(area / aspect)
    return max(m, int(round(width / m)) * m), max(m, int(round(height / m)) * m)
