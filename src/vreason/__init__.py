"""vreason: evaluate reasoning in video generation models.

``vreason.evaluate(...)`` / ``await vreason.aevaluate(...)`` run a protocol from Python and return its
tables as DataFrames (see :mod:`vreason.api`); the CLI is ``vreason``.
"""

from __future__ import annotations

from typing import Any

from vreason import _moved

__version__ = "0.1.0"

_moved.install()  # old module paths keep importing for one release (see vreason._moved)
__all__ = ["__version__", "aevaluate", "evaluate"]


def __getattr__(name: str) -> Any:  # lazy: importing vreason stays cheap (workers, the CLI)
    if name in ("evaluate", "aevaluate", "Evaluation"):
        from vreason import api

        return getattr(api, name)
    raise AttributeError(f"module 'vreason' has no attribute {name!r}")
