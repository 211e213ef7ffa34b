"""Prompt templates: YAML files with ``name``, ``version``, ``system`` and ``user`` (jinja2).

The package ships its templates in ``vreason/judge/templates/<name>.yaml``. A user overrides any
of them without touching the package: put a file with the same name in a folder and set
``VREASON_TEMPLATE_DIR`` (several folders separated by ``os.pathsep``), or pass ``path=`` /
``template_dir=`` explicitly. The template name and version travel into every judged score and
into the cache key, so bump ``version`` whenever the wording changes.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from vreason.core.errors import ConfigError

ENV_DIR = "VREASON_TEMPLATE_DIR"
_PACKAGE_DIR = Path(__file__).with_name("templates")
"""The shared templates (used by more than one protocol, or by the engine); a protocol package keeps its own
in its ``templates/`` folder, found through the ``template_packages`` registry (declared in the catalog)."""


def _package_dirs() -> list[Path]:
    """The shared folder, then every declared protocol package's ``templates/`` folder."""
    import importlib.util

    from vreason.core.registry import load_builtins, template_packages

    load_builtins()
    dirs = [_PACKAGE_DIR]
    for entry in template_packages.entries():
        spec = importlib.util.find_spec(str(entry.target))
        for loc in (spec.submodule_search_locations or []) if spec else []:
            dirs.append(Path(loc) / "templates")
    return dirs


def _package_file(name: str) -> Path | None:
    for d in _package_dirs():
        if (d / f"{name}.yaml").is_file():
            return d / f"{name}.yaml"
    return None


@dataclass(frozen=True)
class Template:
    name: str
    version: str
    system: str
    user: str
    source: str = field(default="", compare=False)
    """Where the template came from (``package`` or the override file's path)."""

    def render(self, **variables: Any) -> tuple[str, str]:
        """``(system, user)`` with ``variables`` filled in; a missing variable raises ``ConfigError``."""
        import jinja2

        env = jinja2.Environment(
            undefined=jinja2.StrictUndefined, keep_trailing_newline=False, autoescape=False
        )
        try:
            system = env.from_string(self.system).render(**variables)
            user = env.from_string(self.user).render(**variables)
        except jinja2.UndefinedError as e:
            raise ConfigError(f"template {self.name} v{self.version}: {e.message}") from None
        except jinja2.TemplateError as e:
            raise ConfigError(f"template {self.name} v{self.version}: {e}") from None
        return system.strip(), user.strip()

    def request(
        self,
        frames: Sequence[Any] = (),
        *,
        labels: Sequence[str | None] | None = None,
        images_first: bool = False,
        decoding: Any = None,
        **variables: Any,
    ) -> Any:
        """A :class:`~vreason.judge.base.JudgeRequest` carrying this template's name and version:
        the rendered user text plus ``frames`` (RGB uint8 arrays, in order, each with an optional
        label) before or after it."""
        from vreason.judge.base import Decoding, ImagePart, JudgeRequest, TextPart

        system, user = self.render(**variables)
        if labels is not None and len(labels) != len(frames):
            raise ConfigError(f"template {self.name}: {len(labels)} labels for {len(frames)} frames")
        images = [ImagePart(f, label=labels[i] if labels else None) for i, f in enumerate(frames)]
        parts = [*images, TextPart(user)] if images_first else [TextPart(user), *images]
        return JudgeRequest(
            parts=parts,
            system=system or None,
            decoding=decoding or Decoding(),
            template=self.name,
            template_version=self.version,
        )


def load_template(path: str | os.PathLike[str]) -> Template:
    """Read one template file (YAML with ``name``, ``version``, ``system``, ``user``)."""
    import yaml

    p = Path(path)
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"template file {p} does not exist") from None
    except yaml.YAMLError as e:
        raise ConfigError(f"template file {p} is not valid YAML: {e}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"template file {p}: expected a mapping with name/version/system/user")
    missing = [k for k in ("name", "version", "user") if not data.get(k)]
    if missing:
        raise ConfigError(f"template file {p}: missing {missing}")
    unknown = set(data) - {"name", "version", "system", "user", "description"}
    if unknown:
        raise ConfigError(f"template file {p}: unknown keys {sorted(unknown)}")
    return Template(
        name=str(data["name"]),
        version=str(data["version"]),
        system=str(data.get("system") or ""),
        user=str(data["user"]),
        source=str(p),
    )


@lru_cache(maxsize=256)
def _package_template(name: str) -> Template:
    path = _package_file(name)
    if path is None:
        raise ConfigError(f"no judge template {name!r} (have: {', '.join(list_templates())})")
    t = load_template(path)
    return Template(t.name, t.version, t.system, t.user, source="package")


def _override_dirs(template_dir: str | os.PathLike[str] | None) -> list[Path]:
    dirs = [Path(template_dir)] if template_dir else []
    env = os.environ.get(ENV_DIR, "")
    dirs += [Path(d) for d in env.split(os.pathsep) if d]
    return dirs


def get_template(
    name: str,
    *,
    path: str | os.PathLike[str] | None = None,
    template_dir: str | os.PathLike[str] | None = None,
) -> Template:
    """The template ``name``: an explicit ``path``, else an override folder, else the package's."""
    if path is not None:
        t = load_template(path)
    else:
        for d in _override_dirs(template_dir):
            candidate = d / f"{name}.yaml"
            if candidate.is_file():
                t = load_template(candidate)
                break
        else:
            if _package_file(name) is None:
                raise ConfigError(f"no judge template {name!r} (have: {', '.join(list_templates())})")
            return _package_template(name)
    if t.name != name:
        raise ConfigError(f"template file {t.source} is named {t.name!r}, expected {name!r}")
    return t


def list_templates() -> list[str]:
    """Names of the templates shipped in the package."""
    return sorted({p.stem for d in _package_dirs() for p in d.glob("*.yaml")})
