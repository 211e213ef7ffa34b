"""Registries by decorator, with lazy entries.

A registry maps a name to a factory. Entries are either registered eagerly with the
decorator (``@scorers.register("maze")``) or declared lazily as ``"module:attr"`` strings,
so heavy modules (torch, transformers) are imported only when the entry is used. Each
entry records the optional extra it needs, which ``vreason list`` shows.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from vreason.core.errors import MissingExtraError, UnknownNameError

T = TypeVar("T")


@dataclass
class Entry:
    name: str
    target: Any  # the object, or "module:attr" for a lazy entry
    extra: str | None = None
    summary: str = ""

    @property
    def lazy(self) -> bool:
        return isinstance(self.target, str)


class Registry(Generic[T]):
    def __init__(self, kind: str):
        self.kind = kind
        self._entries: dict[str, Entry] = {}

    def register(self, name: str, *, extra: str | None = None, summary: str = "") -> Callable[[T], T]:
        def deco(obj: T) -> T:
            doc = (getattr(obj, "__doc__", None) or "").strip().splitlines()
            self._entries[name] = Entry(name, obj, extra, summary or (doc[0] if doc else ""))
            return obj

        return deco

    def declare(self, name: str, target: str, *, extra: str | None = None, summary: str = "") -> None:
        """Declare a lazy entry: ``target`` is ``"package.module:attr"``."""
        if name not in self._entries:
            self._entries[name] = Entry(name, target, extra, summary)

    def names(self) -> list[str]:
        return sorted(self._entries)

    def entries(self) -> list[Entry]:
        return [self._entries[n] for n in self.names()]

    def __contains__(self, name: str) -> bool:
        return name in self._entries

    def get(self, name: str) -> T:
        if name not in self._entries:
            close = difflib.get_close_matches(name, self.names(), n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise UnknownNameError(f"unknown {self.kind} {name!r}{hint} (known: {', '.join(self.names()) or 'none'})")
        entry = self._entries[name]
        if entry.lazy:
            mod_name, _, attr = entry.target.partition(":")
            try:
                mod = importlib.import_module(mod_name)
            except ImportError as exc:
                need = f" (install the extra: pip install 'vreason[{entry.extra}]')" if entry.extra else ""
                raise MissingExtraError(f"{self.kind} {name!r} needs {exc.name or exc}{need}",
                                        name=exc.name) from exc
            # importing the module usually registers the real object under the same name
            current = self._entries[name]
            if current.lazy:
                current.target = getattr(mod, attr)
            entry = current
        return entry.target


benchmarks: Registry[Any] = Registry("benchmark")
"""Protocols: name → Protocol class (binds loader, scorers, aggregator)."""
generators: Registry[Any] = Registry("generator")
"""Video sources: name → Generator class (built-in models, diffusers pipelines, importers)."""
scorers: Registry[Any] = Registry("scorer")
"""Scorers: name → Scorer class (verifiers, judged metrics, embedding metrics)."""
judges: Registry[Any] = Registry("judge backend")
"""Judge backends: name → Judge class."""
layouts: Registry[Any] = Registry("video layout")
"""Video folder layouts (``--convention``): name → :class:`~vreason.data.layout.VideoLayout` instance."""
frame_presets: Registry[Any] = Registry("frame-policy preset family")
"""Named frame policies: a family (the preset name's first dotted part, ``rise`` in ``rise.tc``) → a dict
of preset name → policy spec."""
metric_links: Registry[Any] = Registry("judge-human metric link")
"""Judge-human agreement: a label metric (``rise:tc``) → its :class:`~vreason.core.human.MetricLink`."""
mock_replies: Registry[Any] = Registry("mock judge reply shape")
"""The mock judge's reply shapes of a package's templates: template name → the package's dict of shapes."""
template_packages: Registry[Any] = Registry("judge-template package")
"""Packages holding judge templates in a ``templates/`` folder: name → the package's dotted name."""


_PLUGINS: list[str] = []


def load_plugin(spec: str) -> None:
    """Import a plugin (a ``.py`` file or a module name); it registers entries on import, or, for a benchmark
    package, declares them in its ``DECLARES`` (see docs/new_protocol.md). Remembered (:func:`plugins`) so
    that worker processes load the same plugins."""
    import os
    import sys

    from vreason.core.errors import ConfigError

    if spec.endswith(".py"):
        if not os.path.isfile(spec):
            raise ConfigError(f"plugin {spec}: file does not exist")
        # import by module name from its folder, so worker processes can import it too
        folder = os.path.dirname(os.path.abspath(spec))
        if folder not in sys.path:
            sys.path.insert(0, folder)
        mod = importlib.import_module(os.path.splitext(os.path.basename(spec))[0])
    else:
        mod = importlib.import_module(spec)
    if hasattr(mod, "DECLARES"):
        load_builtins()
        declare_package(mod.__name__)
    if spec not in _PLUGINS:
        _PLUGINS.append(spec)


def plugins() -> list[str]:
    """The plugins this process loaded (for worker processes to load them too)."""
    return list(_PLUGINS)


BUILTIN_CATALOG = "vreason.catalog"
"""The module declaring every built-in entry. Other packages add theirs through the ``vreason.catalogs``
entry-point group (a module whose import declares or registers entries)."""
_loaded = False


def load_builtins() -> None:
    """Declare every built-in entry lazily (cheap: imports nothing heavy), then any installed package's
    catalog (entry-point group ``vreason.catalogs``). Loaded by name, so the contracts import no
    benchmark."""
    global _loaded
    if _loaded:
        return
    importlib.import_module(BUILTIN_CATALOG)
    from importlib.metadata import entry_points

    for ep in entry_points(group="vreason.catalogs"):
        if ep.value.split(":")[0] != BUILTIN_CATALOG:
            ep.load()
    _loaded = True


@dataclass(frozen=True)
class PackageDeclaration:
    """What a benchmark package declares (``DECLARES`` in its ``__init__``, which imports nothing heavy): the
    catalog's one line per package (:func:`declare_package`) turns it into lazy registry entries."""

    benchmarks: dict[str, tuple[str, str]]
    """Protocol name → (``"module:Class"``, one-line summary)."""
    scorers: dict[str, tuple[str, str]]
    """Scorer name → (``"module:Class"``, one-line summary)."""
    layouts: dict[str, str] | None = None
    """Video layout name → ``"module:INSTANCE"``."""
    frame_presets: dict[str, str] | None = None
    """Frame-policy preset name → spec (registered under the names' first dotted part)."""
    templates: tuple[str, ...] = ()
    """Packages (this one or its sub-packages) keeping judge templates in a ``templates/`` folder."""
    metric_links: tuple[Any, ...] = ()
    """:class:`~vreason.core.human.MetricLink` s: which scores a human label metric is compared with."""
    mock_replies: tuple[str, str] | None = None
    """``("module:DICT", "template, template…")``: the mock judge's reply shapes of its templates."""


def declare_package(package: str) -> None:
    """Declare every entry of a benchmark package (``package.DECLARES``, a :class:`PackageDeclaration`)."""
    decl: PackageDeclaration = importlib.import_module(package).DECLARES
    for name, (target, summary) in decl.benchmarks.items():
        benchmarks.declare(name, target, summary=summary)
    for name, (target, summary) in decl.scorers.items():
        scorers.declare(name, target, summary=summary)
    for name, target in (decl.layouts or {}).items():
        layouts.declare(name, target)
    for name, spec in (decl.frame_presets or {}).items():
        family = name.split(".")[0]
        if family not in frame_presets:
            frame_presets.register(family)({})
        frame_presets.get(family)[name] = spec
    for link in decl.metric_links:
        metric_links.register(link.label_metric)(link)
    if decl.mock_replies:
        target, names = decl.mock_replies
        for template in (n.strip() for n in names.split(",") if n.strip()):
            mock_replies.declare(template, target)
    for pkg in decl.templates:
        template_packages.declare(pkg, pkg)
