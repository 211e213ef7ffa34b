"""Typed protocol options: one pydantic model per protocol, unknown keys rejected.

A protocol declares ``options_model = <Name>Options`` (a subclass of :class:`ProtocolOptions`);
:class:`~vreason.core.protocol.Protocol` validates its keyword options against it once, in the
constructor. The model is the single place where an option's type, default, allowed values and
meaning are written: the CLI's ``--opt key=value`` checks, ``vreason list --options`` and the
resolved options recorded in the run manifest all come from it.

Values from the command line arrive as JSON-decoded strings (``--opt sym_jpeg=false`` → ``False``,
``--opt n_boot=200`` → ``200``, ``--opt maze_mode=strict`` → ``"strict"``); pydantic's lax mode
coerces ``"false"`` / ``"0"`` / ``"200"`` / ``"0.9"``, and numbers given for a text option are
turned into text.
"""

from __future__ import annotations

import difflib
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from vreason.core.errors import ConfigError

INTERNAL = {"internal": True}
"""``json_schema_extra`` of options the runner sets (not shown to users, not recorded as settings)."""

RELEASED = {"released": True}
"""``json_schema_extra`` of an option that changes what is measured and whose default is the released code's (or,
without released code, the paper's) setting: a run with another value departs from it, which the manifest records
and the report header names (:func:`departures`). Use ``Field(..., json_schema_extra=RELEASED)``."""


class OptionsError(ConfigError):
    """An option key the protocol does not declare, or a value it does not accept."""


class ProtocolOptions(BaseModel):
    """Options every protocol accepts: the data, the videos, and the runner's run folder."""

    model_config = ConfigDict(extra="forbid", coerce_numbers_to_str=True, validate_assignment=True)

    data: str | None = Field(None, description="The benchmark's data (folder or file); `--data`.")
    videos: str | None = Field(None, description="The videos folder (`--videos`); the runner imports videos "
                               "from it.")
    run_dir: str | None = Field(None, description="Set by the runner: the run folder.", json_schema_extra=INTERNAL)


class SeedOptions(ProtocolOptions):
    """Options every seed protocol (a published benchmark) accepts besides the common ones; each seed
    protocol's options model derives from it, so the option is declared (and validated) once."""

    decode: Literal["released", "strict"] = Field(
        "released", description="What a video that decodes fewer frames than its container declares is: "
        "`released` (default, as the released readers: scored on the frames that decode, both counts in the "
        "evidence and the report) or `strict` (an error naming both counts, as the built-in suite).")


# Option types shared by the options models: declared (type, bounds, default, description, validator) once
# and used as ``name: <Type>`` in each model, in the model's own field order (a shared base model would move
# the keys to the front, changing ``vreason list --options`` and the "known: ..." list of option errors).
# A model may override the default or description with ``= Field(...)``.

NBootField = Annotated[int, Field(1000, ge=1, description="Bootstrap resamples for the intervals.")]
"""Bootstrap resamples (``n_boot`` of :mod:`vreason.aggregate.bootstrap`)."""

LevelField = Annotated[float, Field(0.95, gt=0, lt=1, description="Confidence level of the intervals.")]
"""Confidence level of the bootstrap intervals."""

BootSeedField = Annotated[int, Field(0, description="Seed of the bootstrap.")]
"""Seed of the bootstrap (``boot_seed``; RISE's ``ci_seed``)."""


def is_internal(model: type[BaseModel], key: str) -> bool:
    extra = model.model_fields[key].json_schema_extra
    return isinstance(extra, dict) and bool(extra.get("internal"))


def is_released(model: type[BaseModel], key: str) -> bool:
    """Whether option ``key`` is marked :data:`RELEASED`."""
    extra = model.model_fields[key].json_schema_extra
    return isinstance(extra, dict) and bool(extra.get("released"))


def released_defaults(model: type[BaseModel]) -> dict[str, Any]:
    """The options marked :data:`RELEASED` with their released (default) values, in declaration order."""
    return {k: f.get_default(call_default_factory=True) for k, f in model.model_fields.items()
            if is_released(model, k)}


def departures(opts: BaseModel | None) -> dict[str, Any]:
    """The options of ``opts`` marked :data:`RELEASED` whose value departs from the released default, with their
    values, in declaration order (the order of ``vreason list --options``). Empty text given for an option whose
    default is unset is not a departure."""
    if opts is None:
        return {}
    out: dict[str, Any] = {}
    for key, default in released_defaults(type(opts)).items():
        value = getattr(opts, key)
        if value != default and not (default is None and value == ""):
            out[key] = value
    return out


def public_keys(model: type[BaseModel]) -> list[str]:
    """The option names a user sets (declaration order), without the runner's internal ones."""
    return [k for k in model.model_fields if not is_internal(model, k)]


def closest(name: str, candidates: list[str], n: int = 3) -> list[str]:
    return difflib.get_close_matches(name, sorted(set(candidates)), n=n, cutoff=0.5)


def _allowed(err: dict[str, Any]) -> str | None:
    expected = (err.get("ctx") or {}).get("expected")
    return str(expected) if expected else None


def _message(protocol: str, model: type[BaseModel], exc: ValidationError) -> str:
    known = public_keys(model)
    unknown = sorted({str(e["loc"][0]) for e in exc.errors() if e["type"] == "extra_forbidden" and e["loc"]})
    lines = []
    if unknown:
        near = closest(unknown[0], known)
        lines.append(f"{protocol}: unknown option {', '.join(repr(k) for k in unknown)}"
                     + (f"; did you mean {', '.join(near)}?" if near else "")
                     + f" (known: {', '.join(known)})")
    seen = set()
    for e in exc.errors():
        if e["type"] == "extra_forbidden" or not e["loc"]:
            continue
        key = str(e["loc"][0])
        if key in seen:  # a union reports one error per member: keep the first, most telling one
            continue
        seen.add(key)
        got = e.get("input")
        allowed = _allowed(e)
        if e["type"] == "literal_error" and allowed:
            lines.append(f"{protocol}: {key} must be one of {allowed} (got {got!r})")
        else:
            msg = str(e.get("msg", "invalid value")).removeprefix("Value error, ")
            lines.append(f"{protocol}: option {key}: {msg} (got {got!r})")
    return "\n".join(lines) or f"{protocol}: invalid options: {exc}"


def resolve_options(protocol: str, model: type[ProtocolOptions], options: dict[str, Any]) -> ProtocolOptions:
    """Validate ``options`` against ``model``; raise :class:`OptionsError` naming the key and the
    accepted keys (closest first) or the allowed values."""
    try:
        return model.model_validate(dict(options))
    except ValidationError as exc:
        raise OptionsError(_message(protocol, model, exc)) from None


def resolved_dict(opts: ProtocolOptions, *, internal: bool = False) -> dict[str, Any]:
    """Every option with its value (defaults filled in) as JSON-able data, for the manifest."""
    dumped = opts.model_dump(mode="json", fallback=lambda v: f"<{type(v).__name__}>")
    return {k: v for k, v in dumped.items() if internal or not is_internal(type(opts), k)}


def describe(model: type[ProtocolOptions]) -> list[dict[str, str]]:
    """One row per public option: name, type, default, description (for ``vreason list --options``)."""
    rows = []
    for key in public_keys(model):
        f = model.model_fields[key]
        kind = type_text(f.annotation)
        default = f.get_default(call_default_factory=True)
        rows.append({"name": key, "type": kind, "default": "–" if default is None else _show(default),
                     "description": f.description or ""})
    return rows


def type_text(ann: Any) -> str:
    """``Literal['a', 'b'] | None`` → ``a | b (or unset)``; ``list[str]`` → ``list[str]``."""
    import types
    import typing

    origin, args = typing.get_origin(ann), typing.get_args(ann)
    if origin is typing.Literal:
        return " | ".join(str(a) for a in args)
    if origin in (typing.Union, types.UnionType):
        parts = [type_text(a) for a in args if a is not type(None)]
        return " or ".join(parts) + (" (or unset)" if type(None) in args else "")
    if origin in (list, dict, tuple):
        return f"{origin.__name__}[{', '.join(type_text(a) for a in args)}]"
    if ann is Any:
        return "any"
    return getattr(ann, "__name__", None) or str(ann).replace("typing.", "")


def _show(v: Any) -> str:
    if isinstance(v, bool):
        return str(v).lower()
    return str(v)


class DeclaredOptions(dict):
    """The resolved options as a dict whose ``get`` refuses undeclared keys, so a module reading an
    option its model does not declare fails loudly instead of silently using a local default."""

    def get(self, key: Any, default: Any = None) -> Any:
        if key not in self:
            raise OptionsError(f"option {key!r} is read but not declared in the protocol's options model "
                               f"(declared: {', '.join(sorted(self))})")
        return super().get(key, default)

    def __reduce__(self):  # pickles (to worker processes) as a plain dict
        return (dict, (dict(self),))
