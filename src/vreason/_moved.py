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
    "vreason.data.rise": "vreason.protocols.rise.data",
    "vreason.protocols.rise": "vreason.protocols.rise.protocol",
    "vreason.protocols.rise_scorers": "vreason.protocols.rise.scorers",
    "vreason.protocols.rise_aggregate": "vreason.protocols.rise.aggregate",
    "vreason.protocols.rise_layout": "vreason.protocols.rise.tables",
    "vreason.verify.rise_maze": "vreason.protocols.rise.maze",
    "vreason.verify.rise_symmetry": "vreason.protocols.rise.symmetry",
    "vreason.data.ruler": "vreason.protocols.ruler.data",
    "vreason.protocols.ruler": "vreason.protocols.ruler.protocol",
    "vreason.protocols.ruler_tables": "vreason.protocols.ruler.tables",
    "vreason.protocols.ruler_tools": "vreason.protocols.ruler.tools",
    "vreason.data.mmecof": "vreason.protocols.mmecof.data",
    "vreason.protocols.mmecof": "vreason.protocols.mmecof.protocol",
    "vreason.protocols.mmecof_tables": "vreason.protocols.mmecof.tables",
    "vreason.data.tivibench": "vreason.protocols.tivibench.data",
    "vreason.data.tivibench_schema": "vreason.protocols.tivibench.schema",
    "vreason.protocols.tivibench": "vreason.protocols.tivibench.protocol",
    "vreason.protocols.tivibench_scorers": "vreason.protocols.tivibench.scorers",
    "vreason.protocols.tivibench_tables": "vreason.protocols.tivibench.tables",
    "vreason.data.pai_g": "vreason.protocols.pai.g.data",
    "vreason.data.pai_u": "vreason.protocols.pai.u.data",
    "vreason.protocols.pai_g": "vreason.protocols.pai.g.protocol",
    "vreason.protocols.pai_g_measure": "vreason.protocols.pai.g.measure",
    "vreason.protocols.pai_g_quality": "vreason.protocols.pai.g.quality",
    "vreason.protocols.pai_g_tables": "vreason.protocols.pai.g.tables",
    "vreason.protocols.pai_u": "vreason.protocols.pai.u.protocol",
    "vreason.protocols.pai_tables": "vreason.protocols.pai.tables",
    "vreason.protocols.synth": "vreason.protocols.synth.protocol",
    "vreason.aggregate.synth_tables": "vreason.protocols.synth.tables",
    "vreason.protocols.tivibench.schema": "vreason.verify.annotations",
    "vreason.runner.deathguard": "vreason.core.deathguard",
    "vreason.optimize.variants": "vreason.data.prompt_variants",
    "vreason.judge.suite_answerer": "vreason.synth.answerer",
    # the suite: one package per family (vreason.synth.families.<family>: family, check, adversary)
    "vreason.synth.maze": "vreason.synth.families.maze.family",
    "vreason.synth.symmetry": "vreason.synth.families.symmetry.family",
    "vreason.synth.sorting": "vreason.synth.families.sorting.family",
    "vreason.synth.connect": "vreason.synth.families.connect.family",
    "vreason.synth.oddoneout": "vreason.synth.families.oddoneout.family",
    "vreason.synth.sequence": "vreason.synth.families.sequence.family",
    "vreason.synth.gravity": "vreason.synth.families.gravity.family",
    "vreason.synth.sliding": "vreason.synth.families.sliding.family",
    "vreason.synth.sudoku": "vreason.synth.families.sudoku.family",
    "vreason.synth.arithmetic": "vreason.synth.families.arithmetic.family",
    "vreason.synth.choice": "vreason.synth.families.choice.family",
    "vreason.synth.numseq": "vreason.synth.families.numseq.family",
    "vreason.synth.match3": "vreason.synth.families.match3.family",
    "vreason.synth.counting": "vreason.synth.families.counting.family",
    "vreason.synth.graph": "vreason.synth.families.graph.family",
    "vreason.synth.toolqa": "vreason.synth.families.toolqa.family",
    "vreason.synth.maze_check": "vreason.synth.families.maze.check",
    "vreason.synth.sorting_check": "vreason.synth.families.sorting.check",
    "vreason.synth.connect_check": "vreason.synth.families.connect.check",
    "vreason.synth.gravity_check": "vreason.synth.families.gravity.check",
    "vreason.synth.sliding_check": "vreason.synth.families.sliding.check",
    # the part-B honest transforms (exposure, hue_shift, resize, retime, ...); adversary_a/c/d had no public
    # names: they resolve to the registry (vreason.synth.adversary.load_variants() registers every family's)
    "vreason.synth.adversary_b": "vreason.synth.adversary_replay",
    "vreason.synth.adversary_a": "vreason.synth.adversary",
    "vreason.synth.adversary_c": "vreason.synth.adversary",
    "vreason.synth.adversary_d": "vreason.synth.adversary",
    "vreason.protocols.pai_c": "vreason.protocols.pai.c.protocol",
    "vreason.protocols.pai_c_fidelity": "vreason.protocols.pai.c.fidelity",
    "vreason.protocols.pai_c_lpips": "vreason.protocols.pai.c.lpips",
    "vreason.protocols.pai_c_metrics": "vreason.protocols.pai.c.metrics",
    "vreason.protocols.pai_c_quality": "vreason.protocols.pai.c.quality",
    "vreason.protocols.pai_c_scorers": "vreason.protocols.pai.c.scorers",
    "vreason.protocols.pai_c_tables": "vreason.protocols.pai.c.tables",
    "vreason.protocols.pai_c_torch": "vreason.protocols.pai.c.gpu",
    "vreason.data.pai_c": "vreason.protocols.pai.c.data",
    "vreason.data.pai_c_masks": "vreason.protocols.pai.c.masks",
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


def forward_attrs(package: str, target: str):  # noqa: ANN201
    """A module ``__getattr__`` for a package that took the name of a moved module (``vreason.protocols.rise``
    was a module and is now the RISE package): a name the package lacks is read from ``target`` (the old
    module's new home), with a ``DeprecationWarning``."""

    def __getattr__(name: str):  # noqa: ANN202
        if name.startswith("__"):
            raise AttributeError(name)
        mod = importlib.import_module(target)
        if not hasattr(mod, name):
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        warnings.warn(f"{package}.{name} moved to {target}.{name}; the old path works for one release",
                      DeprecationWarning, stacklevel=2)
        return getattr(mod, name)

    return __getattr__
