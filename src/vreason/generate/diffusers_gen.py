"""``diffusers:`` — a local diffusers pipeline folder as a video model (extra ``gen``).

``diffusers:/models/Wan2.2-TI2V-5B-Diffusers`` loads ``DiffusionPipeline.from_pretrained(folder,
local_files_only=True)`` once per worker process and reuses it. Each sample's mode picks text-to-video or
image-to-video (a T2V pipeline whose family has an I2V class is switched with ``from_pipe``; a sample
that needs an image the pipeline cannot take fails with the reason unless ``t2v_fallback`` is set).
Frames, fps, resolution, guidance, steps and negative prompt come from the family's preset
(:mod:`vreason.generate.presets`), overridable per parameter; the input image is resized to the model's
size keeping its aspect ratio; the seed drives ``torch.Generator(device).manual_seed(seed)``; the video
is written as H.264 MP4 at the model's fps with PyAV, reproducibly (x264 without MB-tree: see
:func:`vreason.frames.write.write_video`), so one seed gives one file.
"""

from __future__ import annotations

import inspect
import os
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from vreason.core.records import GenerationManifest, Sample, Video, check_safe_id
from vreason.generate.base import Generator
from vreason.generate.presets import PRESETS, Preset, detect, fit_size, pipeline_class_name
from vreason.generate.request import RequestError, build_request


class DiffusersParams(BaseModel):
    """Parameters of a ``diffusers:`` model (YAML ``params``; unknown keys are rejected). Unset
    generation values come from the preset."""

    model_config = ConfigDict(extra="forbid")

    preset: str = Field("auto", description="auto (from the folder / pipeline class), none, or a preset name.")
    num_frames: int | None = Field(None, ge=1)
    fps: float | None = Field(None, gt=0)
    width: int | None = Field(None, ge=8, description="Target width; with an input image width×height is an area.")
    height: int | None = Field(None, ge=8)
    multiple_of: int | None = Field(None, ge=1)
    guidance_scale: float | None = None
    num_inference_steps: int | None = Field(None, ge=1)
    negative_prompt: str | None = None
    max_sequence_length: int | None = Field(None, ge=1)
    device: str = Field("auto", description="cpu, cuda, cuda:1, mps or auto (cuda when available).")
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = "auto"
    cpu_offload: Literal["none", "model", "sequential"] = "none"
    t2v_fallback: bool = Field(False, description="Generate from the prompt alone when the pipeline cannot "
                               "take the sample's input image (recorded per video).")
    prompt_variant: str | None = None
    workers: int = Field(1, ge=1, description="Worker processes holding this pipeline (one per GPU).")
    call_kwargs: dict[str, Any] = Field(default_factory=dict, description="Extra pipeline call arguments.")


class DiffusersGenerator(Generator):
    """A local diffusers video pipeline (T2V / I2V / TI2V)."""

    name: ClassVar[str] = "diffusers"
    kind: ClassVar[Literal["cpu", "io"]] = "cpu"
    needs_worker: ClassVar[bool] = True
    """Run in a killable generation worker that keeps the pipeline loaded across videos."""

    def __init__(self, target: str, name: str, **params: Any):
        try:
            self.opts = DiffusersParams(**params)
        except ValidationError as exc:
            err = exc.errors()[0]
            raise ValueError(f"diffusers parameter {'.'.join(map(str, err['loc']))}: {err['msg']}") from None
        super().__init__(**self.opts.model_dump(exclude_defaults=True))
        self.run_name = check_safe_id(name, "model name")
        self.folder = os.path.abspath(target)
        if not os.path.isfile(os.path.join(self.folder, "model_index.json")):
            raise ValueError(f"diffusers: {target} is not a diffusers pipeline folder (no model_index.json)")
        self.class_name = pipeline_class_name(self.folder)
        if self.opts.preset == "auto":
            self.preset = detect(self.class_name, self.folder)
        elif self.opts.preset == "none":
            self.preset = None
        elif self.opts.preset in PRESETS:
            self.preset = PRESETS[self.opts.preset]
        else:
            raise ValueError(f"diffusers: unknown preset {self.opts.preset!r} (known: auto, none, "
                             f"{', '.join(PRESETS)})")
        self.workers = self.opts.workers
        self._pipe: Any = None
        self._variants: dict[str, Any] = {}

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_pipe"], state["_variants"] = None, {}  # the pipeline is loaded in the worker, never pickled
        return state

    def model_name(self) -> str:
        return self.run_name

    # ------------------------------------------------------------------ settings
    def settings(self) -> dict[str, Any]:
        """Generation values after the preset and the overrides (what the manifest records)."""
        p: Preset | None = self.preset
        o = self.opts

        def pick(key: str, fallback: Any) -> Any:
            v = getattr(o, key)
            return v if v is not None else (getattr(p, key) if p is not None else fallback)

        return {
            "preset": p.family if p else None, "num_frames": pick("num_frames", 49), "fps": pick("fps", 16),
            "width": pick("width", 832), "height": pick("height", 480), "multiple_of": pick("multiple_of", 16),
            "guidance_scale": pick("guidance_scale", 5.0), "num_inference_steps": pick("num_inference_steps", 50),
            "negative_prompt": pick("negative_prompt", None), "max_sequence_length": o.max_sequence_length,
        }

    def resolved_params(self) -> dict[str, Any]:
        return {"folder": self.folder, "pipeline_class": self.class_name, **self.opts.model_dump(),
                **self.settings(), "preset_source": self.preset.source if self.preset else None}

    def versions(self) -> dict[str, str]:
        from importlib import metadata

        out = {}
        for pkg in ("diffusers", "torch", "transformers", "accelerate"):
            try:
                out[pkg] = metadata.version(pkg)
            except metadata.PackageNotFoundError:
                continue
        return out

    def manifest(self, sample: Sample, prompt: str | None = None, **extra: Any) -> GenerationManifest:
        return GenerationManifest(model_id=f"diffusers:{os.path.basename(self.folder)}", revision=self.class_name,
                                  params={**self.settings(), **extra},
                                  prompt=prompt if prompt is not None else sample.prompt,
                                  prompt_variant=self.opts.prompt_variant, source="generated")

    # ------------------------------------------------------------------ pipeline
    def _device(self) -> str:
        import torch

        if self.opts.device != "auto":
            return self.opts.device
        return "cuda" if torch.cuda.is_available() else "cpu"

    def _load(self) -> Any:
        if self._pipe is not None:
            return self._pipe
        import torch
        from diffusers import DiffusionPipeline
        from diffusers.utils import logging as dlog

        dlog.set_verbosity_error()
        device = self._device()
        dtype = self.opts.dtype
        if dtype == "auto":
            dtype = "bfloat16" if device.startswith("cuda") else "float32"
        import diffusers

        key = "dtype" if tuple(int(x) for x in diffusers.__version__.split(".")[:2]) >= (0, 36) else "torch_dtype"
        pipe = DiffusionPipeline.from_pretrained(self.folder, local_files_only=True, **{key: getattr(torch, dtype)})
        pipe.set_progress_bar_config(disable=True)
        if self.opts.cpu_offload == "model":
            pipe.enable_model_cpu_offload()
        elif self.opts.cpu_offload == "sequential":
            pipe.enable_sequential_cpu_offload()
        else:
            pipe.to(device)
        self._pipe = pipe
        return pipe

    def _variant(self, want_image: bool) -> tuple[Any | None, str]:
        """The pipeline for T2V (``want_image`` False) or I2V, switched with ``from_pipe`` when the loaded
        one is the other kind; ``(None, reason)`` when the family has no such pipeline."""
        pipe = self._load()
        if _takes_image(pipe) == want_image:
            return pipe, type(pipe).__name__
        key = "i2v" if want_image else "t2v"
        if key in self._variants:
            return self._variants[key], type(self._variants[key]).__name__
        cls_name = (self.preset.i2v_class if want_image else self.preset.t2v_class) if self.preset else None
        if not cls_name or not _weights_fit(pipe, want_image, self.preset):
            return None, f"{type(pipe).__name__} cannot {'take an input image' if want_image else 'run without one'}"
        import diffusers

        try:
            other = getattr(diffusers, cls_name).from_pipe(pipe)
        except Exception as exc:  # missing components (e.g. no image encoder)
            return None, (f"{type(pipe).__name__} cannot {'take an input image' if want_image else 'run without one'}"
                          f" ({cls_name}.from_pipe failed: {type(exc).__name__}: {str(exc)[:200]})")
        other.set_progress_bar_config(disable=True)
        self._variants[key] = other
        return other, cls_name

    # ------------------------------------------------------------------ generate
    def generate(self, sample: Sample, seed: int, out_path: str) -> Video:
        import numpy as np
        import torch
        from PIL import Image

        from vreason.frames.write import write_video

        st = self.settings()
        try:
            req = build_request(sample, seed, out_path, self.run_name, prompt_variant=self.opts.prompt_variant,
                                negative_prompt=st["negative_prompt"])
        except RequestError as exc:
            return self.failed(sample, seed, f"diffusers: {exc}")
        want_image = req.input_image is not None
        pipe, used = self._variant(want_image)
        fallback = None
        if pipe is None and want_image and self.opts.t2v_fallback:
            fallback, (pipe, used) = used, self._variant(False)
        if pipe is None:
            return self.failed(sample, seed, f"diffusers: sample is {req.mode}: {used}")
        image = Image.open(req.input_image).convert("RGB") if want_image and fallback is None else None
        width, height = fit_size(st["width"], st["height"], st["multiple_of"], image.size if image else None)
        kwargs: dict[str, Any] = {
            "prompt": req.prompt, "negative_prompt": req.negative_prompt, "height": height, "width": width,
            "num_frames": st["num_frames"], "num_inference_steps": st["num_inference_steps"],
            "guidance_scale": st["guidance_scale"], "output_type": "np",
            "max_sequence_length": st["max_sequence_length"], **self.opts.call_kwargs,
        }
        if image is not None:
            kwargs["image"] = image.resize((width, height), Image.Resampling.BICUBIC)
        accepted = set(inspect.signature(pipe.__call__).parameters)
        dropped = sorted(k for k, v in kwargs.items() if k not in accepted and v is not None)
        kwargs = {k: v for k, v in kwargs.items() if k in accepted and v is not None}
        gen_device = "cpu" if self.opts.cpu_offload != "none" else self._device()
        kwargs["generator"] = torch.Generator(gen_device).manual_seed(int(seed))
        with torch.inference_mode():
            frames = pipe(**kwargs).frames
        arr = np.asarray(frames[0] if isinstance(frames, list | tuple) or np.ndim(frames) == 5 else frames)
        if arr.dtype != np.uint8:
            arr = (np.clip(arr, 0.0, 1.0) * 255.0).round().astype(np.uint8)
        # the same seed must give the same file: x264's MB-tree makes the bytes depend on heap contents
        write_video(out_path, list(arr), fps=st["fps"], reproducible=True)
        extra: dict[str, Any] = {"pipeline": used, "width": width, "height": height, "seed": int(seed),
                                 "input_image": req.input_image if image is not None else None}
        if dropped:
            extra["not_accepted_by_pipeline"] = dropped
        if fallback:
            extra["t2v_fallback"] = fallback
        return Video(sample_id=sample.id, model=self.run_name, seed=seed, path=out_path,
                     manifest=self.manifest(sample, req.prompt, **extra))


def _weights_fit(pipe: Any, want_image: bool, preset: Preset | None) -> bool:
    """Whether the loaded weights can serve the other task: image-conditioned transformers take more input
    channels than they put out (Wan 2.1 I2V 36 → 16, CogVideoX I2V 32 → 16); Wan 2.2 TI2V
    (``expand_timesteps``) and LTX-Video do both with one set of weights."""
    if preset is not None and preset.family in ("ltx-video", "wan2.2-ti2v"):
        return True
    if getattr(pipe.config, "expand_timesteps", False):
        return True
    cfg = getattr(getattr(pipe, "transformer", None), "config", None)
    cin, cout = getattr(cfg, "in_channels", None), getattr(cfg, "out_channels", None)
    if cin is None or cout is None:
        return False
    return (cin > cout) if want_image else (cin == cout)


def _takes_image(pipe: Any) -> bool:
    """An image-to-video pipeline: its call takes ``image`` (required, or by its class name)."""
    p = inspect.signature(pipe.__call__).parameters.get("image")
    if p is None:
        return False
    name = type(pipe).__name__
    return p.default is inspect.Parameter.empty or "ImageToVideo" in name or "VideoToWorld" in name
