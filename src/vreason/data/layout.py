"""Video folder layouts (``--convention NAME``): how a folder of videos names (sample, model, seed).

A layout scans a folder into :class:`~vreason.data.importer.ImportResult` rows (identity read from the path,
never guessed) and says where it expects one video (for messages and for protocols that find videos by
themselves). The built-in ``vreason`` layout is what ``vreason run`` writes; each benchmark package declares
its released layout (registered in :data:`vreason.core.registry.layouts`, declared lazily in the catalog).
"""

from __future__ import annotations

import os
import re
from abc import ABC, abstractmethod
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from vreason.core.records import Sample

if TYPE_CHECKING:
    from vreason.data.importer import ImportResult


class VideoLayout(ABC):
    """One folder layout. Subclasses set the class attributes and implement :meth:`scan` and :meth:`path`."""

    name: ClassVar[str] = ""
    pattern: ClassVar[str] = ""
    """The layout as a path pattern, for the docs and ``vreason list`` (``{model}/{sample_id}__{seed}.mp4``)."""
    identity: ClassVar[str] = ""
    """How (sample, model, seed) are read from the path."""
    needs_model: ClassVar[bool] = False
    """The layout has no model folder: the model must be named (``--model``)."""

    @abstractmethod
    def scan(self, root: Path, model: str | None, res: ImportResult) -> None:
        """Add every video under ``root`` (and an error per file whose name does not parse) to ``res``."""

    @abstractmethod
    def path(self, root: str, model: str, sample: Sample, seed: int) -> str:
        """Where this layout expects ``model``'s video of ``sample`` for ``seed`` under ``root``."""


class IdSeedLayout(VideoLayout):
    """Files named ``{sample_id}__{seed}.<ext>``, in a folder per model (or, with ``per_model=False``, directly
    under the root for the one model named)."""

    per_model: ClassVar[bool] = True

    def scan(self, root: Path, model: str | None, res: ImportResult) -> None:
        from vreason.data.importer import add_video, is_video, model_dirs

        dirs = model_dirs(root, model) if self.per_model else [root]
        for mdir in dirs:
            for f in sorted(mdir.iterdir()):
                if not is_video(f):
                    continue
                m = re.fullmatch(r"(.+)__(\d+)", f.stem)
                if not m:
                    what = "sample_id" if self.per_model else "video_id"
                    res.add_error(str(f), f"name is not {{{what}}}__{{seed}}")
                    continue
                add_video(m.group(1), mdir.name if self.per_model else model, int(m.group(2)), f, res)

    def path(self, root: str, model: str, sample: Sample, seed: int) -> str:
        parts = (model,) if self.per_model else ()
        return os.path.join(root, *parts, f"{sample.id}__{seed}.mp4")
