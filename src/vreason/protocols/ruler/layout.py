"""RULER-Bench's released video layout: ``{model}/{task_name}/{index}.mp4``
(sample = ``safe_id_from(task_name-index)``, seed 0)."""

from __future__ import annotations

import re
from pathlib import Path

from vreason.core.records import Sample, safe_id_from
from vreason.core.registry import layouts
from vreason.data.importer import ImportResult, add_video, is_video, model_dirs
from vreason.data.layout import VideoLayout
from vreason.protocols.ruler.data import ruler_video_path


class RulerLayout(VideoLayout):
    name = "ruler"
    pattern = "{model}/{task_name}/{index}.mp4"
    identity = "sample = safe_id_from(task_name-index), seed 0"

    def scan(self, root: Path, model: str | None, res: ImportResult) -> None:
        for mdir in model_dirs(root, model):
            for tdir in sorted(p for p in mdir.iterdir() if p.is_dir()):
                for f in sorted(tdir.iterdir()):
                    if not is_video(f):
                        continue
                    if not re.fullmatch(r"\d+", f.stem):
                        res.add_error(str(f), "name is not {index}.mp4")
                        continue
                    add_video(safe_id_from(f"{tdir.name}-{int(f.stem)}"), mdir.name, 0, f, res)

    def path(self, root: str, model: str, sample: Sample, seed: int) -> str:
        return ruler_video_path(root, model, sample)


LAYOUT = layouts.register("ruler")(RulerLayout())
