"""VideoTPO: test-time prompt optimisation by self-analysis of two candidates (TiViBench seed §4, app. D).

For each sample, ``iterations`` times (the released script's ``--max_iterations`` default, 3):

1. generate two videos from the current prompt P_t with two seeds (the script's 42 and 123);
2. show the optimizer the first and last frames of the two videos stitched vertically (first frames on
   top, last frames below, resized to 256×256 and JPEG-encoded at quality 50, as the script does), with
   the prompt and the task's definition → a textual critique, the *loss* (eq. 1);
3. ask the optimizer for suggestions from the prompt and the critique → the *gradient* (eq. 2);
4. ask it to rewrite the prompt from the suggestions under the length limit ("within 300 tokens") →
   P_{t+1} (eq. 3).

Every step is stored under ``RUN/tpo/<sample>/step_<t>/`` (both videos, the judge image, critique,
suggestions, prompt in and out) and indexed in ``RUN/tpo/steps.jsonl`` with the optimizer's identity,
template versions and raw replies; a second invocation resumes after the last finished step. The final
prompts go to ``RUN/tpo/optimized_prompts.jsonl`` (``sample_id``, ``variant``, ``prompt``), which
``vreason run … --prompts FILE --prompt-variants default,videotpo`` uses as a named prompt variant.

A reply that never parses (an empty critique, an update without ``<IMPROVED_VARIABLE>`` tags) ends the
sample's optimisation at that step with the reason and the raw reply recorded; its last good prompt is
kept (never an invented one).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from vreason.core.errors import ConfigError
from vreason.core.records import Sample, VideoStatus
from vreason.judge.parsers import ParseFailure, strip_think

TAG_OPEN, TAG_CLOSE = "<IMPROVED_VARIABLE>", "</IMPROVED_VARIABLE>"
TEMPLATES = ("videotpo_loss", "videotpo_gradient", "videotpo_update")


@dataclass
class TpoConfig:
    protocol: str
    model: str
    """A model the protocol can generate with (built-in name or a generator spec such as ``diffusers:DIR``)."""
    optimizer: str
    """A judge spec (the paper: GPT-4o), e.g. ``openai:gpt-4o``."""
    run_dir: str
    options: dict[str, Any] = field(default_factory=dict)
    iterations: int = 3
    seeds: tuple[int, ...] = (42, 123)
    max_prompt_tokens: int = 300
    enforce_limit: bool = False
    """Faithful default: the limit is stated to the optimizer only. ``True``: an over-long rewrite is a
    parse failure (re-asked, then the step fails)."""
    variant: str = "videotpo"
    limit: int | None = None
    concurrency: int = 2
    image_size: int = 256
    jpeg_quality: int = 50
    judge_options: dict[str, Any] = field(default_factory=dict)
    template_dir: str | None = None


class StepRecord(BaseModel):
    sample_id: str
    step: int
    model: str
    status: str = "ok"
    """``ok`` or ``failed``."""
    reason: str | None = None
    prompt_in: str
    prompt_out: str | None = None
    critique: str | None = None
    gradient: str | None = None
    prompt_tokens: int | None = None
    over_limit: bool = False
    videos: list[str] = Field(default_factory=list)
    seeds: list[int] = Field(default_factory=list)
    judge_image: str | None = None
    optimizer: str = ""
    templates: dict[str, str] = Field(default_factory=dict)
    raw: dict[str, str | None] = Field(default_factory=dict)
    seconds: float = 0.0


def count_tokens(text: str) -> int:
    """An approximate token count (words and punctuation marks), recorded with every rewritten prompt."""
    return len(re.findall(r"\w+|[^\w\s]", text))


def free_text(text: str) -> str:
    body = strip_think(text or "").strip()
    if not body:
        raise ParseFailure("empty reply")
    return body


def improved_prompt(limit: int | None = None):
    """Parser of the update reply: the text between the improved-variable tags (last pair)."""

    def parse(text: str) -> str:
        body = strip_think(text or "")
        start = body.rfind(TAG_OPEN)
        end = body.find(TAG_CLOSE, start + len(TAG_OPEN)) if start >= 0 else -1
        if start < 0 or end < 0:
            raise ParseFailure(f"no {TAG_OPEN}…{TAG_CLOSE} block in the reply")
        prompt = body[start + len(TAG_OPEN):end].strip()
        if not prompt:
            raise ParseFailure("the improved prompt is empty")
        if limit is not None and count_tokens(prompt) > limit:
            raise ParseFailure(f"the improved prompt has {count_tokens(prompt)} tokens, over the limit of {limit}")
        return prompt

    return parse


def judge_image(paths: list[str], size: int = 256) -> np.ndarray:
    """First and last frames of the videos stacked vertically (videos top to bottom, first frames above
    last frames), resized to ``size``×``size`` (the released script's comparison image)."""
    import cv2

    from vreason.frames.video import probe, read_frames

    firsts, lasts = [], []
    for p in paths:
        n = probe(p, exact=True).n_frames  # the frames that decode (a declared count is a hint)
        a, b = read_frames(p, [0, n - 1])
        firsts.append(a)
        lasts.append(b)
    w, h = firsts[0].shape[1], firsts[0].shape[0]
    fit = [f if f.shape[:2] == (h, w) else cv2.resize(f, (w, h), interpolation=cv2.INTER_AREA)
           for f in firsts + lasts]
    stacked = np.concatenate(fit, axis=0)
    return cv2.resize(stacked, (size, size), interpolation=cv2.INTER_AREA)


def task_definition(sample: Sample) -> str:
    """What the optimizer is told the task is: the sample's own definition when it has one, else the
    TiViBench task's paper name, else its category / task, with the original prompt."""
    from vreason.verify.annotations import TASK_TYPES

    md = sample.metadata or {}
    if md.get("task_definition"):
        return str(md["task_definition"])
    tt = md.get("task_type") or (md.get("state", {}) or {}).get("tivibench", {}).get("task_type")
    name = TASK_TYPES[tt][1] if tt in TASK_TYPES else (sample.task or sample.category or sample.benchmark)
    return f"{name}: {sample.prompt}"


class TpoLog:
    """``steps.jsonl`` (append-only) and the per-step folders of one TPO run."""

    def __init__(self, run_dir: str):
        self.root = os.path.join(run_dir, "tpo")
        os.makedirs(self.root, exist_ok=True)
        self.index = os.path.join(self.root, "steps.jsonl")

    def records(self) -> list[StepRecord]:
        if not os.path.exists(self.index):
            return []
        out = []
        with open(self.index, encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    try:
                        out.append(StepRecord.model_validate_json(line))
                    except ValueError:
                        continue  # a line cut by a kill: that step is simply redone
        return out

    def append(self, rec: StepRecord) -> None:
        with open(self.index, "a", encoding="utf-8") as f:
            f.write(rec.model_dump_json() + "\n")

    def step_dir(self, sample_id: str, step: int) -> str:
        d = os.path.join(self.root, sample_id, f"step_{step}")
        os.makedirs(d, exist_ok=True)
        return d


def _write(path: str, text: str | None) -> None:
    if text is not None:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)


class VideoTPO:
    def __init__(self, cfg: TpoConfig, generator: Any, judge: Any, log: TpoLog):
        if cfg.iterations < 1 or len(cfg.seeds) < 2:
            raise ConfigError("VideoTPO needs at least one iteration and two seeds")
        self.cfg, self.gen, self.judge, self.log = cfg, generator, judge, log
        from vreason.judge.templates import get_template

        self.templates = {n: get_template(n, template_dir=cfg.template_dir) for n in TEMPLATES}

    async def _generate(self, sample: Sample, prompt: str, seed: int, out: str) -> str:
        s = sample.model_copy(update={"prompt": prompt})
        if getattr(self.gen, "kind", "cpu") == "io":
            video = await self.gen.agenerate(s, seed, out)
        else:
            video = await asyncio.to_thread(self.gen.generate, s, seed, out)
        if video.status != VideoStatus.ok or not video.path:
            raise RuntimeError(f"generation {video.status.value}: {video.reason}")
        return video.path

    async def _ask(self, name: str, parser: Any, image: np.ndarray | None = None, **variables: Any):
        from vreason.judge.base import ImagePart

        t = self.templates[name]
        req = t.request(**variables)
        if image is not None:  # after the text, JPEG at the script's quality
            req.parts.append(ImagePart(image, quality=self.cfg.jpeg_quality))
        return await self.judge.ask(req, parser)

    async def step(self, sample: Sample, t: int, prompt: str) -> StepRecord:
        cfg, t0 = self.cfg, time.perf_counter()
        d = self.log.step_dir(sample.id, t)
        rec = StepRecord(sample_id=sample.id, step=t, model=cfg.model, prompt_in=prompt, seeds=list(cfg.seeds),
                         optimizer=getattr(self.judge, "identity", ""),
                         templates={n: tp.version for n, tp in self.templates.items()})
        _write(os.path.join(d, "prompt.txt"), prompt)
        try:
            rec.videos = [await self._generate(sample, prompt, s, os.path.join(d, f"video_seed_{s}.mp4"))
                          for s in cfg.seeds]
            image = await asyncio.to_thread(judge_image, rec.videos, cfg.image_size)
        except Exception as exc:  # a failed generation or an unreadable video ends this sample here
            rec.status, rec.reason = "failed", f"{type(exc).__name__}: {exc}"
            rec.seconds = time.perf_counter() - t0
            return rec
        from PIL import Image

        rec.judge_image = os.path.join(d, "judge_image.jpg")
        Image.fromarray(image).save(rec.judge_image, quality=cfg.jpeg_quality)
        definition = task_definition(sample)
        loss = await self._ask("videotpo_loss", free_text, image, current_prompt=prompt,
                               task_definition=definition, n_videos=len(cfg.seeds))
        rec.raw["loss"] = loss.raw
        if not loss.ok:
            return self._failed(rec, f"critique unscored: {loss.reason}", t0)
        rec.critique = loss.value
        grad = await self._ask("videotpo_gradient", free_text, current_prompt=prompt, critique=rec.critique,
                               task_definition=definition)
        rec.raw["gradient"] = grad.raw
        if not grad.ok:
            return self._failed(rec, f"suggestions unscored: {grad.reason}", t0)
        rec.gradient = grad.value
        upd = await self._ask("videotpo_update", improved_prompt(cfg.max_prompt_tokens if cfg.enforce_limit else None),
                              current_prompt=prompt, gradient=rec.gradient, max_tokens=cfg.max_prompt_tokens)
        rec.raw["update"] = upd.raw
        if not upd.ok:
            return self._failed(rec, f"rewrite unscored: {upd.reason}", t0)
        rec.prompt_out = upd.value
        rec.prompt_tokens = count_tokens(rec.prompt_out)
        rec.over_limit = rec.prompt_tokens > cfg.max_prompt_tokens
        for fname, text in (("critique.txt", rec.critique), ("suggestions.txt", rec.gradient),
                            ("optimized_prompt.txt", rec.prompt_out)):
            _write(os.path.join(d, fname), text)
        rec.seconds = time.perf_counter() - t0
        return rec

    @staticmethod
    def _failed(rec: StepRecord, reason: str, t0: float) -> StepRecord:
        rec.status, rec.reason, rec.seconds = "failed", reason, time.perf_counter() - t0
        return rec

    async def optimise(self, sample: Sample, done: dict[int, StepRecord]) -> dict[str, Any]:
        """Run (or resume) one sample's loop; returns its final-prompt record."""
        prompt, steps_ok, failure = sample.prompt, 0, None
        for t in range(self.cfg.iterations):
            rec = done.get(t)
            if rec is None or rec.status != "ok" or rec.prompt_in != prompt:
                rec = await self.step(sample, t, prompt)
                self.log.append(rec)
            if rec.status != "ok":
                failure = f"step {t}: {rec.reason}"
                break
            prompt, steps_ok = rec.prompt_out or prompt, steps_ok + 1
        return {"sample_id": sample.id, "variant": self.cfg.variant, "prompt": prompt, "model": self.cfg.model,
                "steps": steps_ok, "complete": failure is None, "failure": failure, "original": sample.prompt}


def write_prompts(path: str, rows: list[dict[str, Any]]) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    os.replace(tmp, path)
