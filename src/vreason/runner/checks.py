"""Checks that stop a user mistake before any scoring: unknown options, models and video folders.

Each failure is a :class:`~vreason.core.errors.ConfigError` whose message says what was expected
(the closest names, one expected path) so it can be fixed without reading the code. Option
keys and values are checked against the protocol's typed options model
(:mod:`vreason.core.options`).
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Iterable, Sequence
from typing import Any

from vreason.core.errors import ConfigError
from vreason.core.options import OptionsError, closest, public_keys, resolve_options
from vreason.core.protocol import Protocol
from vreason.core.records import Sample

INTERNAL_OPTIONS = frozenset({"run_dir"})
"""Options the runner sets itself (declared, hidden, in every options model as ``run_dir``); a
protocol without an options model that takes ``run_dir`` gets it too."""

__all__ = ["INTERNAL_OPTIONS", "OptionsError", "check_judges", "check_options", "closest", "known_option_keys",
           "missing_judge_roles"]

ROLE_FLAGS = {"default": "--judge SPEC", "vq": "--vq-judge SPEC"}
"""How a role is given on the command line (other roles: the API's ``judges={role: spec}``)."""


def _did_you_mean(name: str, candidates: Iterable[str]) -> str:
    near = closest(name, list(candidates))
    return f"; did you mean {', '.join(near)}?" if near else ""


def known_option_keys(protocol_cls: type[Protocol]) -> frozenset[str] | None:
    """The option names a protocol accepts (its options model's fields, internal ones included), or
    ``None`` when it cannot be known (a plugin protocol taking ``**options``: accept all)."""
    model = protocol_cls.options_model
    if model is not None:
        return frozenset(model.model_fields)
    params = inspect.signature(protocol_cls.__init__).parameters
    if any(p.kind == p.VAR_KEYWORD for p in params.values()):
        return None
    named = {k for k, p in params.items() if k != "self" and p.kind != p.VAR_POSITIONAL}
    return frozenset(named) | INTERNAL_OPTIONS


def check_options(protocol: str, protocol_cls: type[Protocol], options: dict[str, Any]) -> None:
    """Reject option keys the protocol does not declare and values it does not accept, before any
    scoring: :class:`OptionsError` (a ConfigError, exit code 2) with the accepted keys or values."""
    model = protocol_cls.options_model
    if model is not None:
        resolve_options(protocol, model, options)
        return
    known = known_option_keys(protocol_cls)
    if known is None:
        return
    unknown = sorted(set(options) - known)
    if unknown:
        shown = sorted(known - INTERNAL_OPTIONS)
        raise OptionsError(f"{protocol}: unknown option {', '.join(repr(k) for k in unknown)}"
                           + _did_you_mean(unknown[0], shown) + f" (known: {', '.join(shown)})")


def declared_keys(protocol_cls: type[Protocol]) -> list[str] | None:
    """The option names a user can set, in declaration order (``None`` when not declared)."""
    model = protocol_cls.options_model
    return public_keys(model) if model is not None else None


def expected_path(protocol: Protocol, root: str, convention: str, model: str, sample: Sample, seed: int) -> str:
    """Where ``convention`` expects ``model``'s video of ``sample`` under ``root`` (for messages): the
    protocol's own look-up when the convention is its layout, else the layout's path."""
    from vreason.data.importer import layout

    if convention == (protocol.layout or "vreason"):
        located = protocol.locate_video(model, sample, seed)
        if located:
            return located
    return layout(convention).path(root, model, sample, seed)


def check_videos_dir(videos_dir: str | None, example: str) -> None:
    if videos_dir and not os.path.isdir(videos_dir):
        raise ConfigError(f"--videos {videos_dir}: folder does not exist (a video would be expected at {example})")


def check_models(
    models: list[str],
    builtin: list[str],
    found: dict[str, int],
    *,
    protocol: str,
    videos_dir: str | None,
    example: dict[str, str],
    folder_names: list[str],
) -> None:
    """Every model must be built in or have at least one video: fail before scoring otherwise.

    ``found`` counts the usable videos per model (imported or located); ``example`` is one expected
    path per model; ``folder_names`` are the model folders seen under ``videos_dir``.
    """
    unknown = [m for m in models if m not in builtin and not found.get(m)]
    if not unknown:
        return
    candidates = [*builtin, *folder_names, *(m for m, n in found.items() if n)]
    lines = []
    for m in unknown:
        where = f"no video of it was found (expected e.g. {example[m]})" if videos_dir \
            else "no video of it was imported (use --videos, --manifest or `vreason import`)"
        lines.append(f"model {m!r} is not a built-in model of {protocol} and {where}{_did_you_mean(m, candidates)}")
    if videos_dir and not any(found.get(m) for m in models if m not in builtin) and os.path.isdir(videos_dir):
        lines.append(f"no file under {videos_dir} matched an expected name: check --convention and the layout")
    if builtin:
        lines.append(f"built-in models: {', '.join(sorted(builtin))}")
    raise ConfigError("\n".join(lines))


def model_folders(videos_dir: str | None) -> list[str]:
    if not videos_dir or not os.path.isdir(videos_dir):
        return []
    return sorted(e.name for e in os.scandir(videos_dir) if e.is_dir() and not e.name.startswith("."))


def outside_links(videos: Iterable[Any], videos_dir: str) -> list[dict[str, str]]:
    """Imported files that live outside ``videos_dir`` once symlinks are followed."""
    root = os.path.realpath(videos_dir)
    out = []
    for v in videos:
        if not v.path:
            continue
        real = os.path.realpath(v.path)
        if os.path.commonpath([root, real]) != root:
            out.append({"where": f"{v.model}/{v.sample_id}#{v.seed}", "reason": f"a symlink leads outside "
                        f"{videos_dir}: {real}"})
    return out


def missing_judge_roles(protocol_cls: type[Protocol], options: dict[str, Any], judges: dict[str, Any],
                        samples: Sequence[Sample] | None = None) -> list[str]:
    """The judge roles the protocol needs with these options (see ``Protocol.judge_roles``) that no
    judge serves: a role is served by its own judge or by the ``default`` one."""
    model = protocol_cls.options_model
    opts = resolve_options(protocol_cls.name or protocol_cls.__name__, model, options) \
        if model is not None else None
    needed = list(dict.fromkeys(protocol_cls.judge_roles(opts, samples)))
    return [r for r in needed if not judges.get(r) and not judges.get("default")]


def check_judges(protocol: str, protocol_cls: type[Protocol], options: dict[str, Any], judges: dict[str, Any],
                 samples: Sequence[Sample] | None = None) -> None:
    """Refuse a run whose protocol needs judge roles nobody was given, before anything is recorded:
    a :class:`ConfigError` (exit code 2) naming the roles and the flag that gives them."""
    missing = missing_judge_roles(protocol_cls, options, judges, samples)
    if not missing:
        return
    # a role without a judge of its own falls back to the default one: --judge always fixes it
    own = [f"{ROLE_FLAGS[r]} gives {r} its own" for r in missing if r in ROLE_FLAGS and r != "default"]
    how = f" (serves every role; {'; '.join(own)})" if own else ""
    raise ConfigError(f"{protocol} needs a judge for role{'s' if len(missing) > 1 else ''} {', '.join(missing)} "
                      f"and none was given: pass --judge SPEC{how}, e.g. --judge openai:gpt-5, or --judge mock to "
                      "try it offline")
