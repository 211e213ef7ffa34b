"""Write built-in suite instances in TiViBench's release layout, so ``vreason run tivibench`` reads them.

``vreason synth export --format tivibench OUT [--videos-from RUN]`` writes::

    OUT/eval_cache/<DIM>_prompt.json          [{"key": <key>, "prompt": …, "vreason_synth_id": …}, …]
    OUT/eval_cache/<DIM>/<key>/end.png        the instance's ground-truth final frame
    OUT/images/<DIM>/<key>.png                its first frame
    OUT/vreason_annotations.jsonl             one TiviAnnotation per instance
    OUT/vreason_export.json                   synth sample id ↔ TiViBench sample id, the placement table
    OUT/videos/<model>/<DIM>_<key>/<DIM>_<key>-<seed>.mp4   with --videos-from: the run's videos

Placement: a family whose instance state carries ``tivibench`` (``{"dimension", "task_type", "metric"}``,
set by the families written for TiViBench's metric families) exports with that metric; the older families
keep their own verifier (metric ``vreason_synth``) under the dimension / task type of :data:`PLACEMENT`.
Keys are ``<difficulty>_<task type>_<NNN>``, numbered from 001 per (dimension, difficulty, task type) in
suite order.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from vreason.core.records import Sample
from vreason.verify.annotations import TASK_TYPES, TiviAnnotation

PLACEMENT: dict[str, tuple[str, str]] = {
    "maze": ("SS", "maze"),
    "sorting": ("SS", "sorting"),
    "sliding": ("SS", "gamemove"),
    "sequence": ("SS", "rule"),
    "symmetry": ("SV", "pattern"),
    "connect": ("SV", "connect"),
    "oddoneout": ("SV", "oddoneout"),
    "gravity": ("AT", "goal"),
}
"""Built-in families without TiViBench metric parameters → (dimension, task type). Maze, sorting, connect
colours and odd-one-out are TiViBench task types; a sliding puzzle is a game move, sequence completion a
rule extrapolation, symmetry completion a pattern; gravity (predicting a fall) has no counterpart and is
placed under goal-directed planning."""


@dataclass
class ExportResult:
    out_dir: str
    samples: int = 0
    videos: int = 0
    ids: dict[str, str] = field(default_factory=dict)
    """synth sample id → TiViBench sample id (``<DIM>_<key>``)."""
    errors: list[str] = field(default_factory=list)


def placement(sample: Sample) -> tuple[str, str, dict[str, Any]]:
    """``(dimension, task type, metric params)`` of a suite sample (``KeyError`` for an unplaced family)."""
    md = sample.metadata
    state = md.get("state") or {}
    tv = state.get("tivibench") if isinstance(state, dict) else None
    if isinstance(tv, dict) and tv.get("metric"):
        return str(tv["dimension"]), str(tv["task_type"]), dict(tv["metric"])
    fam = str(md.get("family"))
    if fam not in PLACEMENT:
        raise KeyError(f"family {fam!r} has no TiViBench placement (no state['tivibench'] and not in PLACEMENT)")
    dim, task = PLACEMENT[fam]
    return dim, task, {"family": "vreason_synth", "synth_family": fam, "state": state,
                       "render": md.get("render") or {}}


@functools.lru_cache(maxsize=64)
def family_placement(family: str) -> tuple[str, str]:
    """``(dimension, task type)`` of a family (from :data:`PLACEMENT` or one small instance's state);
    ``("?", family)`` when it has none."""
    if family in PLACEMENT:
        return PLACEMENT[family]
    try:
        from vreason.synth.base import RenderConfig
        from vreason.synth.suite import make_instance

        inst = make_instance(family, "easy", 0, 0, RenderConfig(width=320, height=180, fps=8, seconds=1.0))
        tv = inst.state.get("tivibench") or {}
        return str(tv["dimension"]), str(tv["task_type"])
    except Exception:  # noqa: BLE001 - an unknown family or one without placement: shown as "?"
        return "?", family


def _copy(src: str, dst: str) -> None:
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    if os.path.exists(dst):
        os.remove(dst)
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def _ensure_images(sample: Sample, tmp: str) -> tuple[str, str]:
    """The sample's first / final frame files (re-rendered into ``tmp`` when the run did not keep them)."""
    first, final = sample.resolve(sample.input_image), sample.resolve(sample.reference_image)
    if first and final and os.path.isfile(first) and os.path.isfile(final):
        return first, final
    from vreason.synth.suite import _write_png, instance_from_sample

    _, inst, _ = instance_from_sample(sample)
    first, final = os.path.join(tmp, f"{sample.id}.png"), os.path.join(tmp, f"{sample.id}_final.png")
    _write_png(first, inst.first_frame)
    _write_png(final, inst.final_frame)
    return first, final


def export_samples(samples: Sequence[Sample], out_dir: str, *, videos: Sequence[Any] = ()) -> ExportResult:
    """Write ``samples`` (built-in suite Samples) in TiViBench's layout; copy ``videos`` (Video records of
    those samples) into ``OUT/videos/<model>/…``."""
    import tempfile

    res = ExportResult(out_dir=out_dir)
    os.makedirs(out_dir, exist_ok=True)
    prompts: dict[str, list[dict[str, str]]] = {}
    counters: dict[tuple[str, str, str], int] = {}
    anns: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        for s in samples:
            try:
                dim, task, metric = placement(s)
                if task not in TASK_TYPES or TASK_TYPES[task][0] != dim:
                    raise KeyError(f"task type {task!r} is not a TiViBench task of dimension {dim}")
                diff = str(s.metadata.get("difficulty") or s.difficulty)
                n = counters[(dim, diff, task)] = counters.get((dim, diff, task), 0) + 1
                key = f"{diff}_{task}_{n:03d}"
                ann = TiviAnnotation(key=key, dimension=dim, task_type=task, difficulty=diff, metric=metric,
                                     note=f"vreason synth {s.id}")
                first, final = _ensure_images(s, tmp)
            except Exception as exc:  # noqa: BLE001 - one bad instance is reported, the rest export
                res.errors.append(f"{s.id}: {type(exc).__name__}: {exc}")
                continue
            _copy(first, os.path.join(out_dir, "images", dim, f"{key}.png"))
            _copy(final, os.path.join(out_dir, "eval_cache", dim, key, "end.png"))
            prompts.setdefault(dim, []).append({"key": key, "prompt": s.prompt, "vreason_synth_id": s.id})
            anns.append(ann.model_dump_json())
            res.ids[s.id] = f"{dim}_{key}"
    for dim, rows in prompts.items():
        with open(os.path.join(out_dir, "eval_cache", f"{dim}_prompt.json"), "w", encoding="utf-8") as fh:
            json.dump(rows, fh, indent=1, ensure_ascii=False)
    with open(os.path.join(out_dir, "vreason_annotations.jsonl"), "w", encoding="utf-8") as fh:
        fh.writelines(a + "\n" for a in anns)
    for v in videos:
        tid = res.ids.get(v.sample_id)
        if tid is None or getattr(v.status, "value", v.status) != "ok" or not v.path or not os.path.isfile(v.path):
            continue
        _copy(v.path, os.path.join(out_dir, "videos", v.model, tid, f"{tid}-{v.seed}.mp4"))
        res.videos += 1
    res.samples = len(res.ids)
    with open(os.path.join(out_dir, "vreason_export.json"), "w", encoding="utf-8") as fh:
        json.dump({"format": "tivibench", "ids": res.ids, "placement": PLACEMENT, "errors": res.errors}, fh,
                  indent=1)
    return res


def export_suite(out_dir: str, *, families: Sequence[str] | None = None, difficulties: Sequence[str] | None = None,
                 per_task: int = 10, seed: int = 0, cfg: Any = None, videos_from: str | None = None) -> ExportResult:
    """Export the built-in suite (built from the options) or, with ``videos_from``, the instances and
    videos of that ``run synth`` folder."""
    if videos_from:
        from vreason.core.errors import ConfigError
        from vreason.store import RunStore

        if not os.path.isdir(videos_from):
            raise ConfigError(f"--videos-from {videos_from}: no such run folder")
        with RunStore(videos_from, create=False) as store:
            samples = [s for s in store.samples() if s.benchmark == "synth"]
            vids = store.videos()
        if not samples:
            raise ConfigError(f"--videos-from {videos_from}: the run holds no built-in suite samples")
        if families:
            samples = [s for s in samples if s.category in families]
        return export_samples(samples, out_dir, videos=vids)
    import tempfile

    from vreason.synth.suite import build_samples

    with tempfile.TemporaryDirectory() as tmp:
        samples = build_samples(families, difficulties, per_task, seed, cfg, tmp)
        return export_samples(samples, out_dir)


__all__ = ["PLACEMENT", "ExportResult", "export_samples", "export_suite", "family_placement", "placement"]
