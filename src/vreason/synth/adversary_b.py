"""Adversarial variants (cheats and honest renderings) for the suite's part-B families: odd-one-out, sequence, gravity, sliding."""

from __future__ import annotations
