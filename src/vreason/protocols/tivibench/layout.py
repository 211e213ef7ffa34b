"""TiViBench's released video layout: ``{key}/{key}-{0..4}.mp4`` (sample = key, seed = the suffix; no model
folder, so the model is named with ``--model``)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from vreason.core.records import Sample
from vreason.core.registry import layouts
from vreason.data.importer import ImportResult, add_video, is_video
from vreason.data.layout import VideoLayout


class TiviLayout(VideoLayout):
    name = "tivibench"
    pattern = "{key}/{key}-{0..4}.mp4"
    identity = "sample = key, seed = the suffix; --model"
    needs_model = True

    def scan(self, root: Path, model: str | None, res: ImportResult) -> None:
        for kdir in sorted(p for p in root.iterdir() if p.is_dir()):
            for f in sorted(kdir.iterdir()):
                if not is_video(f):
                    continue
                m = re.fullmatch(re.escape(kdir.name) + r"-(\d+)", f.stem)
                if not m:
                    res.add_error(str(f), f"name is not {kdir.name}-<n> (file outside its key folder?)")
                    continue
                add_video(kdir.name, model, int(m.group(1)), f, res)

    def path(self, root: str, model: str, sample: Sample, seed: int) -> str:
        return os.path.join(root, sample.id, f"{sample.id}-{seed}.mp4")


LAYOUT = layouts.register("tivibench")(TiviLayout())
