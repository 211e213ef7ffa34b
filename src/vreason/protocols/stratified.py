"""Deprecated location of the category-stratified bootstrap: use :mod:`vreason.aggregate.bootstrap`
(``stratified_replicates``, ``percentile_ci``). Kept for one release for ``--plugin`` files."""

from __future__ import annotations

import warnings
from typing import Any

_MOVED = {"category_replicates": "stratified_replicates", "percentile_ci": "percentile_ci"}


def __getattr__(name: str) -> Any:
    if name not in _MOVED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from vreason.aggregate import bootstrap

    warnings.warn(f"vreason.protocols.stratified.{name} moved to vreason.aggregate.bootstrap.{_MOVED[name]}",
                  DeprecationWarning, stacklevel=2)
    return getattr(bootstrap, _MOVED[name])
