"""Bring your own videos: a manifest (JSONL / CSV) or a seed benchmark's path convention.

Identity comes from the manifest row or from the path convention — never from guessing: a file
whose name does not parse, or whose id is unsafe, is reported as an error for that file; a
sample without a file is *missing* (decided by preflight / the runner), never matched to
another sample's file.

Conventions are the registered :class:`~vreason.data.layout.VideoLayout` s (``vreason list`` shows each
one's pattern): ``vreason`` (``{model}/{sample_id}__{seed}.mp4``, what ``vreason run`` writes) is built in;
each benchmark package declares its released layout.
"""

from __future__ import annotations

import csv
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from vreason.core.errors import ConfigError
from vreason.core.records import GenerationManifest, Video, VideoStatus, check_safe_id
from vreason.core.registry import layouts, load_builtins
from vreason.data.layout import IdSeedLayout, VideoLayout
from vreason.data.loaderrors import WHOLE_RECORD, decode_utf8, field_with_bad_text, load_error, utf8_lines

VIDEO_EXTS = (".mp4", ".webm", ".mkv", ".mov", ".avi")


class VreasonLayout(IdSeedLayout):
    """What ``vreason run`` writes."""

    name = "vreason"
    pattern = "{model}/{sample_id}__{seed}.mp4"
    identity = "sample, seed from the name; model = the folder"


layouts.register("vreason")(VreasonLayout())


def conventions() -> list[str]:
    """The registered layout names (``--convention``)."""
    load_builtins()
    return layouts.names()


def layout(convention: str) -> VideoLayout:
    """The layout named ``convention`` (:class:`ConventionError` when there is none)."""
    load_builtins()
    if convention not in layouts:
        raise ConventionError(f"--convention {convention!r}: unknown convention (known: {', '.join(conventions())})")
    return layouts.get(convention)


class ConventionError(ConfigError, ValueError):
    """A convention that does not exist, or one that needs a model name and got none (a usage mistake:
    exit code 2 from the command line; still a ``ValueError`` for callers that catch one)."""


def check_convention(convention: str, model: str | None) -> None:
    """Raise :class:`ConventionError` for an unknown convention or a model-less one without ``model``."""
    if layout(convention).needs_model and not model:
        raise ConventionError(f"--convention {convention}: its layout has no model folder, so name the model "
                              "the videos belong to with --model NAME")


@dataclass
class ImportResult:
    videos: list[Video] = field(default_factory=list)
    errors: list[dict[str, str]] = field(default_factory=list)

    def add_error(self, where: str, reason: str, field: str = "path") -> None:
        """An error dict (``where``, ``field``, ``reason``; see :mod:`vreason.data.loaderrors`)."""
        self.errors.append(load_error(where, field, reason))


def is_video(p: Path) -> bool:
    return p.is_file() and p.suffix.lower() in VIDEO_EXTS


def add_video(sample_id: str, model: str, seed: int, path: Path, res: ImportResult, **manifest) -> None:
    try:
        exists = path.is_file()
        res.videos.append(Video(
            sample_id=sample_id, model=model, seed=int(seed), path=str(path.resolve()),
            status=VideoStatus.ok if exists else VideoStatus.missing,
            reason=None if exists else f"listed but not found: {path}",
            manifest=GenerationManifest(source="imported", **manifest)))
    except (ValidationError, ValueError) as exc:
        res.add_error(str(path), f"odd id: {_first_error(exc)}", "sample_id")


def _first_error(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        e = exc.errors()[0]
        return f"{'.'.join(str(x) for x in e.get('loc', ()))}: {e.get('msg')}"
    return str(exc)


def model_dirs(root: Path, model: str | None) -> list[Path]:
    if model:
        check_safe_id(model, "model name")
        d = root / model
        return [d] if d.is_dir() else []
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))


def scan(root: str | os.PathLike, convention: str, model: str | None = None) -> ImportResult:
    """Find videos under ``root`` laid out by ``convention`` (see the module docstring)."""
    check_convention(convention, model)
    root_p = Path(root)
    res = ImportResult()
    if not root_p.is_dir():
        res.add_error(str(root), "videos folder does not exist")
        return res

    layout(convention).scan(root_p, model, res)
    return _drop_duplicates(res)


def _drop_duplicates(res: ImportResult) -> ImportResult:
    """Two files claiming one (sample, model, seed) are both reported, neither used."""
    seen: dict[tuple, list[Video]] = {}
    for v in res.videos:
        seen.setdefault(v.key, []).append(v)
    keep = []
    for key, vs in seen.items():
        if len(vs) == 1:
            keep.append(vs[0])
        else:
            for v in vs:
                res.add_error(v.path or "?", f"ambiguous: {len(vs)} files claim sample {key[0]} / {key[1]} / seed "
                                             f"{key[2]}: {', '.join(os.path.basename(x.path or '') for x in vs)}")
    res.videos = keep
    return res


def read_manifest(path: str | os.PathLike, default_model: str | None = None) -> ImportResult:
    """Read a JSONL or CSV manifest with columns ``sample_id, model, seed, path`` (model/seed
    optional when ``default_model`` / seed 0 apply). Relative paths are resolved against the
    manifest's folder. Each bad row is an error naming the file, line and reason."""
    p = Path(path)
    res = ImportResult()
    if not p.is_file():
        res.add_error(str(p), "manifest does not exist", WHOLE_RECORD)
        return res
    base = p.parent
    rows: list[tuple[int, dict]] = []
    data = p.read_bytes()
    if p.suffix.lower() == ".csv":
        reader = csv.DictReader(decode_utf8(data).splitlines())
        for row in reader:
            bad = field_with_bad_text(row)
            if bad:  # undecodable bytes kept as surrogates: name the column that holds them
                res.add_error(f"{p}:{reader.line_num}", "text that is not valid UTF-8", bad)
            else:
                rows.append((reader.line_num, dict(row)))
    else:
        for i, line, bad_utf8 in utf8_lines(data):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
                if not isinstance(obj, dict):
                    raise ValueError("not a JSON object")
            except ValueError as exc:
                res.add_error(f"{p}:{i}", bad_utf8 or f"malformed JSON line: {exc}", WHOLE_RECORD)
                continue
            if bad_utf8:
                res.add_error(f"{p}:{i}", bad_utf8, field_with_bad_text(obj) or WHOLE_RECORD)
                continue
            rows.append((i, obj))
    for line_no, row in rows:
        where = f"{p}:{line_no}"
        sid = row.get("sample_id") or row.get("id")
        model = row.get("model") or default_model
        vpath = row.get("path") or row.get("video_path")
        if not sid or not model or not vpath:
            missing = [k for k, v in (("sample_id", sid), ("model", model), ("path", vpath)) if not v]
            res.add_error(where, f"missing field(s): {', '.join(missing)}", ", ".join(missing))
            continue
        try:
            seed = int(row.get("seed") if row.get("seed") not in (None, "") else 0)
        except (TypeError, ValueError):
            res.add_error(where, f"seed {row.get('seed')!r} is not an integer", "seed")
            continue
        fp = Path(str(vpath))
        fp = fp if fp.is_absolute() else base / fp
        extra = {k: row[k] for k in ("prompt", "model_id", "revision") if row.get(k)}
        n = len(res.videos)
        add_video(str(sid), str(model), seed, fp, res, **extra)
        if len(res.videos) == n:
            res.errors[-1]["where"] = where
    return _drop_duplicates(res)
