"""A local Qwen2-VL / Qwen2.5-VL-family checkpoint as a judge (extra ``deep``: torch + transformers).

The checkpoint is a local folder (``from_pretrained(path, local_files_only=True)``); nothing is
downloaded. Frames go to the model as images, in order, each optionally preceded by its label; a
part carrying a file's original bytes is decoded from them, a part naming a JPEG quality goes through
a JPEG round trip at that quality (the model sees what an API judge would). A
:class:`~vreason.judge.base.VideoPart` is not supported here (give frames instead). Generation runs
in a worker thread, one request at a time per model (the client's limiter should be 1 as well).
"""

from __future__ import annotations

import asyncio
import os
import threading
from typing import Any

from vreason.core.errors import ConfigError
from vreason.judge.base import (
    Decoding,
    ImagePart,
    Judge,
    JudgeReply,
    JudgeRequest,
    TextPart,
    Usage,
    VideoPart,
)
from vreason.judge.retry import JudgeTransportError

# Qwen-VL chat markup, used when a checkpoint ships no chat template.
_CHATML = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{% for c in m['content'] %}"
    "{% if c['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>"
    "{% else %}{{ c['text'] }}{% endif %}"
    "{% endfor %}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
IMAGE_PAD = "<|image_pad|>"


def pixels_of(p: ImagePart) -> Any:
    """The PIL RGB image a local model sees for ``p`` (decoded original bytes, a JPEG round trip at the
    part's quality, or its pixels as they are)."""
    import io

    import numpy as np
    from PIL import Image

    if p.data is not None:
        with Image.open(io.BytesIO(p.data)) as im:
            return im.convert("RGB")
    img = Image.fromarray(np.asarray(p.image)[..., :3])
    if p.quality is None:
        return img
    buf = io.BytesIO()
    img.save(buf, format="JPEG", quality=int(p.quality))
    with Image.open(io.BytesIO(buf.getvalue())) as im:
        return im.convert("RGB")


class TransformersJudge(Judge):
    """Loads the tokenizer, the image processor and the model separately (``AutoProcessor`` for the
    Qwen-VL family needs torchvision for its video processor; this path does not) and expands each
    image placeholder to the number of vision tokens the image processor's grid gives."""

    backend = "transformers"

    def __init__(
        self,
        path: str,
        *,
        device: str = "cpu",
        dtype: str | None = None,
        max_side: int | None = None,
        model: Any = None,
        tokenizer: Any = None,
        image_processor: Any = None,
        name: str | None = None,
    ):
        """``path``: a local checkpoint folder. ``model``/``tokenizer``/``image_processor`` may be given
        ready-made (then ``path`` only names the judge)."""
        if model is None and not os.path.isdir(path):
            raise ConfigError(f"transformers judge: checkpoint folder {path} does not exist")
        self.path = path
        self.device = device
        self.dtype = dtype
        self.max_side = max_side
        self.name = name or os.path.basename(os.path.normpath(path)) or "checkpoint"
        self._model = model
        self._tokenizer = tokenizer
        self._image_processor = image_processor
        self._lock = threading.Lock()

    @property
    def identity(self) -> str:
        return f"transformers:{self.name}"

    def settings(self) -> dict[str, Any]:
        return {"max_side": self.max_side, "dtype": self.dtype}

    def sent_decoding(self, decoding: Decoding) -> dict[str, Any]:
        d: dict[str, Any] = {
            "do_sample": decoding.temperature > 0,
            "max_new_tokens": decoding.max_tokens or 512,
        }
        if decoding.temperature > 0:
            d["temperature"] = decoding.temperature
            if decoding.top_p is not None:
                d["top_p"] = decoding.top_p
            if decoding.seed is not None:
                d["seed"] = decoding.seed
        return d

    # ------------------------------------------------------------------ loading
    def _load(self) -> tuple[Any, Any, Any]:
        try:
            import torch
            from transformers import AutoImageProcessor, AutoModelForImageTextToText, AutoTokenizer
        except ImportError as e:
            raise ConfigError(
                "the transformers judge needs the 'deep' extra: "
                "pip install 'vreason[deep]' (torch + transformers)"
            ) from e
        try:
            if self._tokenizer is None:
                self._tokenizer = AutoTokenizer.from_pretrained(self.path, local_files_only=True)
            if self._image_processor is None:
                self._image_processor = AutoImageProcessor.from_pretrained(self.path, local_files_only=True)
            if self._model is None:
                kw: dict[str, Any] = {"local_files_only": True}
                if self.dtype:
                    kw["dtype"] = getattr(torch, self.dtype)
                self._model = AutoModelForImageTextToText.from_pretrained(self.path, **kw)
                self._model.to(self.device)
        except (OSError, ValueError) as e:
            raise ConfigError(f"transformers judge: cannot load checkpoint {self.path}: {e}") from None
        self._model.eval()
        return self._model, self._tokenizer, self._image_processor

    # ------------------------------------------------------------------ generation
    def _inputs(self, request: JudgeRequest, tok: Any, improc: Any) -> dict[str, Any]:

        content: list[dict[str, Any]] = []
        images: list[Any] = []
        for p in request.parts:
            if isinstance(p, TextPart):
                content.append({"type": "text", "text": p.text})
            elif isinstance(p, ImagePart):
                if p.label:
                    content.append({"type": "text", "text": p.label})
                img = pixels_of(p)
                if self.max_side and max(img.size) > self.max_side:
                    s = self.max_side / max(img.size)
                    img = img.resize((max(1, round(img.width * s)), max(1, round(img.height * s))))
                images.append(img)
                content.append({"type": "image"})
            elif isinstance(p, VideoPart):
                raise JudgeTransportError("fatal", "the transformers judge takes frames, not a video part")
        messages: list[dict[str, Any]] = []
        if request.system:
            messages.append({"role": "system", "content": [{"type": "text", "text": request.system}]})
        messages.append({"role": "user", "content": content})
        template = getattr(tok, "chat_template", None) or _CHATML
        prompt = tok.apply_chat_template(
            messages, chat_template=template, tokenize=False, add_generation_prompt=True
        )
        extra: dict[str, Any] = {}
        if images:
            vis = improc(images=images, return_tensors="pt")
            merge = int(getattr(improc, "merge_size", 2))
            counts = [int(g.prod()) // (merge * merge) for g in vis["image_grid_thw"]]
            pieces = prompt.split(IMAGE_PAD)
            if len(pieces) - 1 != len(images):
                raise JudgeTransportError(
                    "fatal",
                    f"chat template produced {len(pieces) - 1} image placeholders for {len(images)} images",
                )
            prompt = pieces[0] + "".join(
                IMAGE_PAD * n + rest for n, rest in zip(counts, pieces[1:], strict=True)
            )
            extra = {"pixel_values": vis["pixel_values"], "image_grid_thw": vis["image_grid_thw"]}
        enc = tok(prompt, return_tensors="pt", add_special_tokens=False)
        inputs = {"input_ids": enc["input_ids"], "attention_mask": enc["attention_mask"], **extra}
        if images:
            image_token_id = tok.convert_tokens_to_ids(IMAGE_PAD)
            inputs["mm_token_type_ids"] = (inputs["input_ids"] == image_token_id).int()
        return inputs

    def _generate(self, request: JudgeRequest) -> JudgeReply:
        import inspect

        import torch

        model, tok, improc = self._load()
        inputs = self._inputs(request, tok, improc)
        if (
            "mm_token_type_ids" in inputs
            and "mm_token_type_ids" not in inspect.signature(model.forward).parameters
        ):
            inputs.pop("mm_token_type_ids")
        inputs = {k: v.to(self.device) for k, v in inputs.items()}
        gen = self.sent_decoding(request.decoding)
        seed = gen.pop("seed", None)
        if seed is not None:
            torch.manual_seed(int(seed))
        pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
        with self._lock, torch.inference_mode():
            out = model.generate(**inputs, **gen, pad_token_id=pad)
        prompt_len = int(inputs["input_ids"].shape[1])
        new = out[0, prompt_len:]
        text = tok.decode(new, skip_special_tokens=True)
        hit_eos = tok.eos_token_id is not None and len(new) > 0 and int(new[-1]) == tok.eos_token_id
        finish = "length" if (not hit_eos and len(new) >= gen["max_new_tokens"]) else "stop"
        return JudgeReply(text=text, usage=Usage(prompt_len, int(len(new))), finish_reason=finish)

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        try:
            return await asyncio.to_thread(self._generate, request)
        except (ConfigError, JudgeTransportError):
            raise
        except Exception as e:  # noqa: BLE001 - a model error is not retryable
            raise JudgeTransportError(
                "fatal", f"transformers generate failed: {type(e).__name__}: {e}"
            ) from None
