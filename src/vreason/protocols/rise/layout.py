"""RISE-Video's released video layout: ``{model}/{category}/{task_id}.mp4`` (sample = task_id, seed 0)."""

from __future__ import annotations

import os
from pathlib import Path

from vreason.core.records import Sample
from vreason.core.registry import layouts
from vreason.data.importer import ImportResult, add_video, is_video, model_dirs
from vreason.data.layout import VideoLayout


class RiseLayout(VideoLayout):
    name = "rise"
    pattern = "{model}/{category}/{task_id}.mp4"
    identity = "sample = task_id, seed 0"

    def scan(self, root: Path, model: str | None, res: ImportResult) -> None:
        for mdir in model_dirs(root, model):
            for cdir in sorted(p for p in mdir.iterdir() if p.is_dir()):
                for f in sorted(cdir.iterdir()):
                    if is_video(f):
                        add_video(f.stem, mdir.name, 0, f, res, params={"category_folder": cdir.name})

    def path(self, root: str, model: str, sample: Sample, seed: int) -> str:
        return os.path.join(root, model, sample.category or "<category>", f"{sample.id}.mp4")


LAYOUT = layouts.register("rise")(RiseLayout())
