"""A plugin generator for the full-disk tests: its write fails with ENOSPC, as on a full filesystem."""

from __future__ import annotations

import errno

from vreason.generate.base import Generator


class DiskFullGenerator(Generator):
    name = "disk-full"

    def generate(self, sample, seed, out_path):
        raise OSError(errno.ENOSPC, "No space left on device", out_path)
