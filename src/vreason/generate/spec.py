"""Model specs: what a ``--models`` entry means, and the Generator it resolves to.

An entry is one of

* a plain name — a built-in model (``oracle``…), a registered plugin generator, or an imported
  model whose videos are found on disk;
* ``kind:target`` — a generator kind from the ``generators`` registry with its target, e.g.
  ``diffusers:/models/Wan2.2-TI2V-5B-Diffusers``, ``cmd:./my_model.sh``, ``sora:sora-2``;
* ``name=kind:target`` — the same under a chosen run name;
* a YAML file (``.yaml`` / ``.yml``) with ``kind``, ``target``, ``name``, ``params``, ``timeout`` and
  per-protocol overrides ``protocols: {rise: {...}}`` (optionally ``name=file.yaml``).

A kind is registered as ``generators.declare("<kind>", "module:Class")``; the class is built with
``Class(target=..., name=..., **params)``. The run's model name must be a safe id: when a spec does not
name it, it is derived from the target (a folder's or file's base name, an API model id).
"""

from __future__ import annotations

import inspect
import os
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from vreason.core.errors import ConfigError
from vreason.core.records import check_safe_id, safe_id_from

_NAMED = re.compile(r"^([A-Za-z0-9_][A-Za-z0-9_.\-]*)=(.+)$")
_KIND = re.compile(r"^[a-z][a-z0-9_\-]*$")
YAML_SUFFIXES = (".yaml", ".yml")


class ModelSpec(BaseModel):
    """One ``--models`` entry, parsed. ``kind is None``: a plain (built-in / plugin / imported) name."""

    model_config = ConfigDict(extra="forbid")

    name: str
    kind: str | None = None
    target: str = ""
    params: dict[str, Any] = Field(default_factory=dict)
    protocols: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Per-protocol parameter overrides (``{rise: {num_frames: 49}}``)."""
    timeout_s: float | None = Field(default=None, gt=0)
    """Wall-clock limit for one video (YAML key ``timeout``); wins over the run's ``--gen-timeout``."""
    source: str = ""
    """The entry as given on the command line."""

    @field_validator("name")
    @classmethod
    def _safe(cls, v: str) -> str:
        return check_safe_id(v, "model name")

    def params_for(self, protocol: str) -> dict[str, Any]:
        return {**self.params, **self.protocols.get(protocol, {})}


class _SpecFile(BaseModel):
    """The YAML form of a spec (unknown keys are rejected)."""

    model_config = ConfigDict(extra="forbid")

    kind: str
    target: str = ""
    name: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    protocols: dict[str, dict[str, Any]] = Field(default_factory=dict)
    timeout: float | None = Field(default=None, gt=0)


def default_name(kind: str, target: str) -> str:
    """A safe run name derived from a target: the base name of a folder or file (without its
    extension), else the target itself (an API model id), made safe."""
    cls = _kind_class(kind, required=False)
    custom = getattr(cls, "default_name", None)
    if callable(custom):
        return check_safe_id(custom(target), "model name")
    base = os.path.basename(target.rstrip("/\\")) or target
    if os.path.splitext(base)[1] and not os.path.isdir(target):
        base = os.path.splitext(base)[0]
    return safe_id_from(base)


def parse_entry(entry: str) -> ModelSpec:
    """Parse one ``--models`` entry (see the module docstring). Raises ConfigError for an unknown kind,
    a missing or invalid YAML file, or an unsafe name."""
    from vreason.core.registry import generators, load_builtins

    load_builtins()
    text = entry.strip()
    name = None
    m = _NAMED.match(text)
    if m:
        name, text = m.group(1), m.group(2).strip()
    try:
        if text.lower().endswith(YAML_SUFFIXES):
            spec = _from_yaml(text, name)
        elif ":" in text:
            kind, _, target = text.partition(":")
            if not _KIND.match(kind) or kind not in generators:
                raise ConfigError(f"--models {entry!r}: unknown generator kind {kind!r} (kinds: "
                                  f"{', '.join(generator_kinds()) or 'none'}; see `vreason list`)")
            if not target:
                raise ConfigError(f"--models {entry!r}: {kind} needs a target ({kind}:<target>)")
            spec = ModelSpec(name=name or default_name(kind, target), kind=kind, target=target)
        elif name is not None:
            raise ConfigError(f"--models {entry!r}: name=… needs a spec kind:target or a YAML file")
        else:
            spec = ModelSpec(name=text)
    except ValidationError as exc:
        raise ConfigError(f"--models {entry!r}: {_first_error(exc)}") from None
    return spec.model_copy(update={"source": entry})


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err.get("loc", ())) or "value"
    return f"{where}: {err.get('msg')}"


def _from_yaml(path: str, name: str | None) -> ModelSpec:
    import yaml

    if not os.path.isfile(path):
        raise ConfigError(f"--models {path}: no such model spec file")
    try:
        with open(path, encoding="utf-8") as fh:
            raw = yaml.safe_load(fh)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: expected a mapping with kind, target, name, params, protocols, timeout")
    try:
        doc = _SpecFile.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(f"{path}: {_first_error(exc)} (keys: kind, target, name, params, protocols, "
                          "timeout)") from None
    from vreason.core.registry import generators

    if doc.kind not in generators:
        raise ConfigError(f"{path}: unknown generator kind {doc.kind!r} (kinds: {', '.join(generator_kinds())})")
    target = doc.target
    if target.startswith(("./", "../")):  # relative to the YAML file's folder
        target = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(path)), target))
    return ModelSpec(name=name or doc.name or default_name(doc.kind, target or os.path.basename(path)),
                     kind=doc.kind, target=target, params=doc.params, protocols=doc.protocols,
                     timeout_s=doc.timeout)


def parse_models(entries: list[str]) -> list[ModelSpec]:
    """Parse every entry; two entries with the same run name are refused."""
    specs = [parse_entry(e) for e in entries]
    seen: dict[str, str] = {}
    for s in specs:
        if s.name in seen:
            raise ConfigError(f"--models: {seen[s.name]!r} and {s.source!r} both run as {s.name!r}: "
                              f"name one of them (name=kind:target)")
        seen[s.name] = s.source
    return specs


# ---------------------------------------------------------------------- kinds
def is_kind_class(obj: Any) -> bool:
    """A generator kind: a Generator class whose constructor takes ``target``."""
    from vreason.generate.base import Generator

    if not (inspect.isclass(obj) and issubclass(obj, Generator)):
        return False
    return "target" in inspect.signature(obj.__init__).parameters


def _kind_class(kind: str, required: bool = True) -> Any:
    from vreason.core.registry import generators

    try:
        obj = generators.get(kind)
    except ImportError:
        if required:
            raise
        return None
    if not is_kind_class(obj):
        if required:
            raise ConfigError(f"{kind!r} is a model name, not a generator kind: use it alone in --models")
        return None
    return obj


def generator_kinds() -> list[str]:
    """Registered kinds: entries whose class takes a target (an entry that cannot be imported counts too,
    so `vreason list` shows it with its extra)."""
    from vreason.core.registry import generators, load_builtins

    load_builtins()
    out = []
    for e in generators.entries():
        try:
            obj = generators.get(e.name)
        except ImportError:  # its module (or extra) is missing: still listed, `build` names what is needed
            out.append(e.name)
            continue
        if is_kind_class(obj):
            out.append(e.name)
    return out


def plugin_generator(name: str) -> Any:
    """A plugin generator registered under a plain name (a Generator class built without arguments,
    or an instance), or ``None``."""
    from vreason.core.registry import generators
    from vreason.generate.base import Generator

    if name not in generators:
        return None
    obj = generators.get(name)
    if isinstance(obj, Generator):
        return obj
    if inspect.isclass(obj) and issubclass(obj, Generator) and not is_kind_class(obj):
        return obj()
    return None


def build(spec: ModelSpec, protocol: str) -> Any:
    """The Generator of a ``kind:target`` spec for ``protocol`` (per-protocol overrides applied)."""
    cls = _kind_class(spec.kind or "")
    try:
        gen = cls(target=spec.target, name=spec.name, **spec.params_for(protocol))
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"model {spec.name} ({spec.source}): {exc}") from None
    return gen


def describe(spec: ModelSpec, gen: Any, protocol: str) -> dict[str, Any]:
    """What the manifest records for a model: its spec, resolved parameters and library versions."""
    if spec.kind is None:
        return {"spec": spec.source, "kind": "builtin" if gen is not None else "imported"}
    versions = getattr(gen, "versions", None)
    resolved = getattr(gen, "resolved_params", None)
    return {
        "spec": spec.source,
        "kind": spec.kind,
        "target": spec.target,
        "generator": f"{type(gen).__module__}:{type(gen).__name__}",
        "params": resolved() if callable(resolved) else dict(gen.params),
        "protocol_overrides": spec.protocols.get(protocol, {}),
        "timeout_s": spec.timeout_s,
        "versions": versions() if callable(versions) else {},
    }
