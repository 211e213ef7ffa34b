"""Old module paths that still import, for one release, with a ``DeprecationWarning``.

Benchmark code moved into one package per benchmark (``vreason.protocols.<name>``) and the contracts
into :mod:`vreason.core`. A plugin file (``--plugin``) that imports an old path keeps working: the finder
below loads the new module and registers it under the old name too, so both names are the same module.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings
from types import ModuleType

MOVED: dict[str, str] = {
    # old module path -> new module path
    "vreason.records": "vreason.core.records",
    "vreason.errors": "vreason.core.errors",
    "vreason.scoring": "vreason.core.scoring",
    "vreason.registry": "vreason.core.registry",
    "vreason.protocols.base": "vreason.core.protocol",
    "vreason.protocols.options": "vreason.core.options",
    "vreason.frames.counts": "vreason.core.decoding",
    # -- end of table --
}


def new_name(old: str) -> str | None:
    """Where ``old`` lives now (following chains of moves), or ``None`` if it did not move."""
    seen = set()
    name = MOVED.get(old)
    while name is not None and name in MOVED and name not in seen:
        seen.add(name)
        name = MOVED[name]
    return name


class _Alias(importlib.abc.Loader):
    def __init__(self, target: str):
        self.target = target

    def create_module(self, spec):  # noqa: ANN001
        module = importlib.import_module(self.target)
        self._spec = module.__spec__  # the import system overwrites it with the alias's spec: put it back
        return module

    def exec_module(self, module: ModuleType) -> None:
        module.__spec__ = self._spec


class MovedFinder(importlib.abc.MetaPathFinder):
    """Resolves an old module path to its new module (same object), warning once per name."""

    def find_spec(self, fullname, path=None, target=None):  # noqa: ANN001
        new = new_name(fullname)
        if new is None:
            return None
        warnings.warn(f"{fullname} moved to {new}; the old path works for one release",
                      DeprecationWarning, stacklevel=3)
        return importlib.util.spec_from_loader(fullname, _Alias(new))


def install() -> None:
    if not any(isinstance(f, MovedFinder) for f in sys.meta_path):
        sys.meta_path.append(MovedFinder())
