"""Checks that stop a user mistake before any scoring: unknown options, models and video folders.

Each failure is a :class:`~vreason.errors.ConfigError` whose message says what was expected
(the closest names, one expected path) so it can be fixed without reading the code.
"""

from __future__ import annotations

import difflib
import inspect
import os
import re
from collections.abc import Iterable
from typing import Any

from vreason.errors import ConfigError
from vreason.records import Sample

# Options each built-in protocol reads beyond those its own module reads (found by
# :func:`options_read_by`), for protocols whose constructor takes ``**options``; a protocol can
# declare its complete set as ``option_keys``.
BUILTIN_OPTION_KEYS: dict[str, frozenset[str]] = {
    "synth": frozenset({"data", "videos", "families", "difficulties", "per_task", "seed", "width", "height", "fps",
                        "seconds", "write_videos", "shortcut_mode", "max_frames"}),
    "rise": frozenset({"data", "videos", "check_files", "ra_mode", "ra_count", "maze_mode", "n_boot", "ci_seed"}),
    "ruler": frozenset({"data", "videos", "root", "check_files", "frame_policy", "template", "template_path",
                        "judge_role", "missing_metric", "n_boot", "level", "boot_seed", "prompt_variant"}),
    "mmecof": frozenset({"data", "videos", "hint", "field_map", "root", "frame_policy", "step_template",
                         "step_template_path", "judge_role", "quality", "quality_template", "quality_template_path",
                         "quality_judge_role", "quality_scale", "n_boot", "level", "boot_seed", "compare_runs"}),
}
INTERNAL_OPTIONS = frozenset({"run_dir", "out_dir"})


def closest(name: str, candidates: Iterable[str], n: int = 3) -> list[str]:
    return difflib.get_close_matches(name, sorted(set(candidates)), n=n, cutoff=0.5)


def _did_you_mean(name: str, candidates: Iterable[str]) -> str:
    near = closest(name, candidates)
    return f"; did you mean {', '.join(near)}?" if near else ""


_READ_OPTION = re.compile(r"""\b(?:options|o|opts)(?:\.get\(|\[)\s*["']([A-Za-z_][A-Za-z0-9_]*)["']""")


def options_read_by(cls: Any) -> set[str]:
    """Option names the class's module reads (``options.get("k")``, ``o["k"]``…), so an option a
    protocol gains is known without another list to keep in step."""
    try:
        src = inspect.getsource(inspect.getmodule(cls))
    except (OSError, TypeError):
        return set()
    return set(_READ_OPTION.findall(src))


def known_option_keys(protocol_cls: Any) -> frozenset[str] | None:
    """The option names a protocol accepts, or ``None`` when it cannot be known (accept all)."""
    declared = getattr(protocol_cls, "option_keys", None)
    if declared:
        return frozenset(declared) | INTERNAL_OPTIONS
    params = inspect.signature(protocol_cls.__init__).parameters
    named = {k for k, p in params.items() if k != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)}
    if not any(p.kind == p.VAR_KEYWORD for p in params.values()):
        return frozenset(named) | INTERNAL_OPTIONS
    table = BUILTIN_OPTION_KEYS.get(getattr(protocol_cls, "name", ""))
    if table is None:
        return None
    return table | frozenset(named) | frozenset(options_read_by(protocol_cls)) | INTERNAL_OPTIONS


def check_option_keys(protocol: str, protocol_cls: Any, keys: Iterable[str]) -> None:
    """Reject ``--opt`` keys the protocol does not read (a typo would otherwise be ignored silently)."""
    known = known_option_keys(protocol_cls)
    if known is None:
        return
    unknown = sorted(set(keys) - known)
    if unknown:
        shown = sorted(known - INTERNAL_OPTIONS)
        raise ConfigError(
            f"{protocol}: unknown option {', '.join(repr(k) for k in unknown)}"
            + _did_you_mean(unknown[0], shown) + f" (known: {', '.join(shown)})"
        )


def expected_path(protocol: Any, root: str, convention: str, model: str, sample: Sample, seed: int) -> str:
    """Where ``convention`` expects ``model``'s video of ``sample`` under ``root`` (for messages)."""
    if convention == getattr(protocol, "convention", None):
        located = getattr(protocol, "locate_video", lambda *a: None)(model, sample, seed)
        if located:
            return located
        video_path = getattr(protocol, "video_path", None)
        if convention == "ruler" and video_path is not None:
            return video_path(root, model, sample)
    layouts = {
        "vreason": (model, f"{sample.id}__{seed}.mp4"),
        "rise": (model, sample.category or "<category>", f"{sample.id}.mp4"),
        "ruler": (model, sample.task or "<task_name>", f"{sample.metadata.get('index', '<index>')}.mp4"),
        "tivibench": (sample.id, f"{sample.id}-{seed}.mp4"),
        "pai": (f"{sample.id}__{seed}.mp4",),
    }
    return os.path.join(root, *layouts.get(convention, (model, f"{sample.id}__{seed}.mp4")))


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
