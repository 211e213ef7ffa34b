"""Adversarial variants (cheats and honest renderings) for the part-A families (maze, symmetry, sorting, connect)."""

from __future__ import annotations
