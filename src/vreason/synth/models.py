"""The six built-in baseline models of the suite.

Each re-creates the task instance from the Sample's metadata (deterministic; one or two
instances are cached per process, never the whole suite) and writes an H.264 video:

* ``oracle``   — the rendered ground-truth solution;
* ``static``   — the first frame held for the whole clip;
* ``shortcut`` — the first frame held, then a cut (``mode=cut``) or a short cross-fade
  (``mode=fade``, default, ``fade_frames`` frames) to the ground-truth final frame: the right
  end state without the process;
* ``random``   — the family's plausible-but-wrong motion (depends on the seed);
* ``noise``    — random blocky noise frames (depends on the seed);
* ``reversed`` — the oracle played backwards.
"""

from __future__ import annotations

import zlib
from abc import abstractmethod
from typing import Any

import numpy as np

from vreason.core.records import Sample, Video, VideoStatus
from vreason.core.registry import generators
from vreason.generate.base import Generator
from vreason.synth.base import RenderConfig, TaskFamily, TaskInstance


class BuiltinModel(Generator):
    """Base: re-create the instance, render frames, write the video."""

    kind = "cpu"
    default_crf: int = 18

    @abstractmethod
    def frames(self, fam: TaskFamily, inst: TaskInstance, cfg: RenderConfig, rng: np.random.Generator
               ) -> list[np.ndarray]:
        """The model's frames for this instance (each built-in model defines what it renders)."""

    def rng(self, inst: TaskInstance, seed: int) -> np.random.Generator:
        return np.random.default_rng([int(inst.seed), int(seed), zlib.crc32(self.name.encode())])

    def generate(self, sample: Sample, seed: int, out_path: str) -> Video:
        from vreason.frames import write_video
        from vreason.synth.suite import instance_from_sample

        try:
            fam, inst, cfg = instance_from_sample(sample)
        except (KeyError, ValueError) as exc:
            return self.failed(sample, seed, f"cannot re-create the task: {exc}")
        frames = self.frames(fam, inst, cfg, self.rng(inst, seed))
        crf = int(self.params.get("crf", self.default_crf))
        preset = str(self.params.get("preset", "ultrafast"))
        codec = write_video(out_path, frames, cfg.fps, crf=crf, preset=preset)
        h, w = frames[0].shape[:2]
        return Video(sample_id=sample.id, model=self.model_name(), seed=seed, path=out_path,
                     status=VideoStatus.ok, manifest=self.manifest(sample, codec=codec, crf=crf, preset=preset),
                     fps=float(cfg.fps), n_frames=len(frames), width=w + (w % 2), height=h + (h % 2))


@generators.register("oracle")
class Oracle(BuiltinModel):
    """Renders the ground-truth solution."""

    name = "oracle"

    def frames(self, fam, inst, cfg, rng):
        return list(inst.solution)


@generators.register("static")
class Static(BuiltinModel):
    """Holds the first frame."""

    name = "static"

    def frames(self, fam, inst, cfg, rng):
        return [inst.first_frame] * len(inst.solution)


@generators.register("shortcut")
class Shortcut(BuiltinModel):
    """Holds the first frame, then cuts or cross-fades to the final frame."""

    name = "shortcut"

    def frames(self, fam, inst, cfg, rng):
        n = len(inst.solution)
        mode = str(self.params.get("mode", "fade"))
        k = n // 2
        out = [inst.first_frame] * k
        if mode == "fade":
            m = int(self.params.get("fade_frames", 3))
            a = inst.first_frame.astype(np.float32)
            b = inst.final_frame.astype(np.float32)
            for i in range(1, min(m, n - k - 1) + 1):
                t = i / (m + 1)
                out.append(np.round(a * (1 - t) + b * t).astype(np.uint8))
        elif mode != "cut":
            raise ValueError(f"shortcut mode must be 'cut' or 'fade', not {mode!r}")
        out += [inst.final_frame] * (n - len(out))
        return out


@generators.register("random")
class RandomMotion(BuiltinModel):
    """Plausible but wrong motion (the family's ``random_motion``), different per seed."""

    name = "random"

    def frames(self, fam, inst, cfg, rng):
        return fam.random_motion(inst, rng, cfg)


@generators.register("noise")
class Noise(BuiltinModel):
    """Random blocky noise frames, different per seed."""

    name = "noise"
    default_crf = 35  # noise does not compress; a higher crf keeps it fast and small

    def frames(self, fam, inst, cfg, rng):
        block = int(self.params.get("block", 16))
        h, w = inst.first_frame.shape[:2]
        hb, wb = -(-h // block), -(-w // block)
        out = []
        for _ in range(len(inst.solution)):
            small = rng.integers(0, 256, (hb, wb, 3), dtype=np.uint8)
            out.append(np.ascontiguousarray(small.repeat(block, 0).repeat(block, 1)[:h, :w]))
        return out


@generators.register("reversed")
class Reversed(BuiltinModel):
    """The ground-truth solution played backwards."""

    name = "reversed"

    def frames(self, fam, inst, cfg, rng):
        return list(inst.solution[::-1])


BUILTIN_MODELS: dict[str, type[BuiltinModel]] = {
    c.name: c for c in (Oracle, Static, Shortcut, RandomMotion, Noise, Reversed)
}


def make_model(name: str, **params: Any) -> BuiltinModel:
    if name not in BUILTIN_MODELS:
        raise KeyError(f"unknown built-in model {name!r} (known: {', '.join(BUILTIN_MODELS)})")
    return BUILTIN_MODELS[name](**params)
