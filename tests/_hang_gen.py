"""A plugin generator for the killable-worker tests: it records its pid, then hangs or crashes the process."""

from __future__ import annotations

import os
import time

import numpy as np

from vreason.core.records import Video
from vreason.frames.write import write_video
from vreason.generate.base import Generator


class HangingGenerator(Generator):
    name = "hanging"

    def generate(self, sample, seed, out_path):
        with open(out_path + ".pid", "w") as fh:
            fh.write(str(os.getpid()))
        if self.params.get("behaviour") == "die":
            os._exit(9)
        if self.params.get("behaviour") == "hang" and seed == 0:
            time.sleep(600)
        write_video(out_path, [np.full((32, 32, 3), 40 * seed, np.uint8)] * 4, fps=8)
        return Video(sample_id=sample.id, model=self.model_name(), seed=seed, path=out_path,
                     manifest=self.manifest(sample, pid=os.getpid()))
