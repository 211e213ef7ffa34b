"""What a generator is asked for one (sample, seed): prompt, negative prompt, input image, mode, hints.

Shared by the ``cmd:`` and ``diffusers:`` kinds so both read a sample the same way: the protocol has
already put the setting's prompt and image into the sample (hint settings, ``prompt_variant``); a spec
may still pick a named prompt variant of its own.
"""

from __future__ import annotations

import os
from typing import Any

from pydantic import BaseModel, ConfigDict

from vreason.core.records import Mode, Sample


class GenRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    sample_id: str
    model: str
    seed: int
    mode: str
    """``t2v``, ``i2v`` or ``ti2v`` (the sample's); ``input_image`` is set for i2v / ti2v."""
    prompt: str
    negative_prompt: str | None = None
    input_image: str | None = None
    """Absolute path of the input (first-frame) image, or None."""
    num_frames: int | None = None
    fps: float | None = None
    width: int | None = None
    height: int | None = None
    output: str
    """Where the video must be written (MP4)."""
    prompt_variant: str | None = None
    params: dict[str, Any] = {}


class RequestError(ValueError):
    """The sample cannot be turned into a request (no such prompt variant, missing input image)."""


def build_request(sample: Sample, seed: int, out_path: str, model: str, *, prompt_variant: str | None = None,
                  negative_prompt: str | None = None, hints: dict[str, Any] | None = None,
                  params: dict[str, Any] | None = None) -> GenRequest:
    try:
        prompt = sample.prompt_for(prompt_variant)
    except KeyError as exc:
        raise RequestError(str(exc.args[0] if exc.args else exc)) from None
    image = None
    mode = sample.mode.value if isinstance(sample.mode, Mode) else str(sample.mode)
    if mode in ("i2v", "ti2v"):
        image = sample.resolve(sample.input_image)
        if not image:
            raise RequestError(f"sample {sample.id} is {mode} but has no input image")
        if not os.path.isfile(image):
            raise RequestError(f"sample {sample.id}: input image {image} does not exist")
        image = os.path.abspath(image)
    elif mode == "v2v":
        raise RequestError(f"sample {sample.id}: v2v samples are not supported by this generator")
    h = hints or {}
    return GenRequest(sample_id=sample.id, model=model, seed=seed, mode=mode, prompt=prompt,
                      negative_prompt=negative_prompt, input_image=image, num_frames=h.get("num_frames"),
                      fps=h.get("fps"), width=h.get("width"), height=h.get("height"),
                      output=os.path.abspath(out_path), prompt_variant=prompt_variant, params=params or {})
