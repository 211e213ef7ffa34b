"""Adversarial variants (cheats, honest renderings) for the part-B families (oddoneout, sequence, gravity, sliding)."""

from __future__ import annotations
