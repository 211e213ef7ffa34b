"""PAI-Bench's video layout (G, C and U): ``{video_id}__{seed}.mp4`` in one folder (sample = video_id; no
model folder, so the model is named with ``--model``)."""

from __future__ import annotations

from vreason.core.registry import layouts
from vreason.data.layout import IdSeedLayout


class PaiLayout(IdSeedLayout):
    name = "pai"
    pattern = "{video_id}__{seed}.mp4"
    identity = "sample = video_id; --model"
    needs_model = True
    per_model = False


LAYOUT = layouts.register("pai")(PaiLayout())
