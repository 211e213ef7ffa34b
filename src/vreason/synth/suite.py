"""Build the built-in suite as Samples and write/read it as a benchmark folder.

A benchmark folder (``write_benchmark``) holds everything a real video model needs and
everything the verifiers need, so anyone can generate videos for it and score them:

    manifest.jsonl      one Sample per line (paths relative to the folder)
    prompts.txt         "<id>\\t<prompt>" per line
    suite.json          seed, render config, families, difficulties, per_task
    images/<id>.png     the first frame (model input)
    images/<id>_final.png   the ground-truth final frame
    videos/<id>.mp4     the ground-truth solution (only with ``write_videos``)

Each Sample's ``metadata`` carries the re-creation keys (family, difficulty, index,
instance seed, render config, family version) and the verifier ``state``.
"""

from __future__ import annotations

import functools
import importlib
import json
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from vreason.core.records import Mode, Sample
from vreason.synth.base import DIFFICULTIES, FAMILIES, RenderConfig, TaskFamily, TaskInstance, instance_seed

FAMILY_MODULES = ("maze", "symmetry", "sorting", "connect", "oddoneout", "sequence", "gravity", "sliding",
                  "sudoku", "arithmetic", "choice", "numseq", "match3", "counting", "graph", "toolqa")
"""Family packages in suite order (``vreason.synth.families.<name>``); each one's ``family`` module registers
the family on import."""
BENCHMARK = "synth"


def load_families() -> dict[str, type[TaskFamily]]:
    """Import every family module that exists; returns the registry (name → class)."""
    for mod in FAMILY_MODULES:
        name = f"vreason.synth.families.{mod}.family"
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:  # a real missing dependency inside the module
                raise
    return FAMILIES


def default_families() -> list[str]:
    fams = load_families()
    ordered = [f for f in FAMILY_MODULES if f in fams]
    return ordered + sorted(set(fams) - set(ordered))


def get_family(name: str) -> TaskFamily:
    fams = load_families()
    if name not in fams:
        raise KeyError(f"unknown synth family {name!r} (known: {', '.join(default_families())})")
    return fams[name]()


def render_config(d: dict[str, Any] | RenderConfig | None) -> RenderConfig:
    if isinstance(d, RenderConfig):
        return d
    d = d or {}
    return RenderConfig(width=int(d.get("width", 640)), height=int(d.get("height", 360)),
                        fps=int(d.get("fps", 16)), seconds=float(d.get("seconds", 4.0)))


def _cfg_json(cfg: RenderConfig) -> dict[str, Any]:
    return {"width": cfg.width, "height": cfg.height, "fps": cfg.fps, "seconds": cfg.seconds}


def make_instance(family: str, difficulty: str, index: int, seed: int, cfg: RenderConfig) -> TaskInstance:
    """The instance ``index`` of (family, difficulty) for suite seed ``seed`` (deterministic)."""
    if difficulty not in DIFFICULTIES:
        raise ValueError(f"unknown difficulty {difficulty!r} (use one of {', '.join(DIFFICULTIES)})")
    fam = get_family(family)
    s = instance_seed(seed, family, difficulty, index)
    return fam.make(np.random.default_rng(s), difficulty, index, s, cfg)


def _jsonable(obj: Any) -> Any:
    return json.loads(json.dumps(obj, default=_np_default))


def _np_default(o: Any) -> Any:
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    raise TypeError(f"not JSON-serialisable: {type(o).__name__}")


def _write_png(path: str, rgb: np.ndarray) -> None:
    import cv2

    from vreason.frames.write import write_image

    os.makedirs(os.path.dirname(path), exist_ok=True)
    if not write_image(path, cv2.cvtColor(np.ascontiguousarray(rgb), cv2.COLOR_RGB2BGR)):
        raise OSError(f"could not write {path}")


def make_sample(family: str, difficulty: str, index: int, seed: int, cfg: RenderConfig | None = None,
                out_dir: str | None = None, *, write_videos: bool = False) -> Sample:
    """One suite Sample (files written under ``out_dir`` when given); the instance is not kept."""
    from vreason.frames import write_video

    cfg = cfg or RenderConfig()
    inst = make_instance(family, difficulty, index, seed, cfg)
    sid = inst.sample_id
    img, final = f"images/{sid}.png", f"images/{sid}_final.png"
    video = f"videos/{sid}.mp4" if write_videos else None
    if out_dir:
        _write_png(os.path.join(out_dir, img), inst.first_frame)
        _write_png(os.path.join(out_dir, final), inst.final_frame)
        if video:
            write_video(os.path.join(out_dir, video), inst.solution, cfg.fps)
    return Sample(
        id=sid, benchmark=BENCHMARK, category=family, task=family, difficulty=difficulty, mode=Mode.ti2v,
        prompt=inst.prompt,
        input_image=img if out_dir else None,
        reference_image=final if out_dir else None,
        reference_video=video if out_dir else None,
        root=os.path.abspath(out_dir) if out_dir else None,
        metadata={
            "family": family, "difficulty": difficulty, "index": index, "instance_seed": inst.seed,
            "suite_seed": seed, "render": _cfg_json(cfg), "family_version": get_family(family).version,
            "directional": bool(inst.directional), "process_rule": bool(inst.process_rule),
            "state": _jsonable(inst.state),
        },
    )


def build_samples(
    families: Sequence[str] | None = None,
    difficulties: Sequence[str] | None = None,
    per_task: int = 10,
    seed: int = 0,
    cfg: RenderConfig | None = None,
    out_dir: str | None = None,
    *,
    write_videos: bool = False,
) -> list[Sample]:
    """Generate the suite; write first/final frame PNGs (and GT videos if asked) under ``out_dir``.

    Instances are built one at a time and dropped after their files are written, so memory
    stays flat. Paths in the Samples are relative to ``out_dir`` (their ``root``).
    """
    cfg = cfg or RenderConfig()
    fams = list(families) if families else default_families()
    diffs = list(difficulties) if difficulties else list(DIFFICULTIES)
    for f in fams:
        get_family(f)  # fail early on an unknown name
    keys = [(fam, diff, i) for fam in fams for diff in diffs for i in range(per_task)]
    build = functools.partial(_make_sample_key, seed=seed, cfg=cfg, out_dir=out_dir, write_videos=write_videos)
    workers = min(8, os.cpu_count() or 1)
    if len(keys) < 24 or workers < 2:
        return [build(k) for k in keys]
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    from vreason.core import deathguard

    # instances are independent and deterministic per key: build them on every core, in order; the
    # project's guarded start: workers die with this process (kill -9 included)
    ctx = mp.get_context("forkserver") if "forkserver" in mp.get_all_start_methods() else None
    deathguard.install()
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=deathguard.die_with_parent) as pool:
        return list(pool.map(build, keys, chunksize=8))


def _make_sample_key(key: tuple[str, str, int], *, seed: int, cfg: RenderConfig, out_dir: str | None,
                     write_videos: bool) -> Sample:
    fam, diff, i = key
    return make_sample(fam, diff, i, seed, cfg, out_dir, write_videos=write_videos)


def write_benchmark(
    out_dir: str,
    families: Sequence[str] | None = None,
    difficulties: Sequence[str] | None = None,
    per_task: int = 10,
    seed: int = 0,
    cfg: RenderConfig | None = None,
    *,
    write_videos: bool = False,
) -> list[Sample]:
    """Write the suite as a benchmark folder (see the module docstring); returns its Samples."""
    cfg = cfg or RenderConfig()
    os.makedirs(out_dir, exist_ok=True)
    samples = build_samples(families, difficulties, per_task, seed, cfg, out_dir, write_videos=write_videos)
    with open(os.path.join(out_dir, "manifest.jsonl"), "w", encoding="utf-8") as fh:
        for s in samples:
            fh.write(s.model_copy(update={"root": None}).model_dump_json(exclude_none=True) + "\n")
    with open(os.path.join(out_dir, "prompts.txt"), "w", encoding="utf-8") as fh:
        for s in samples:
            fh.write(f"{s.id}\t{' '.join(s.prompt.split())}\n")
    meta = {"benchmark": BENCHMARK, "seed": seed, "per_task": per_task, "render": _cfg_json(cfg),
            "families": sorted({s.category for s in samples}, key=lambda f: (FAMILY_MODULES + (f,)).index(f)),
            "difficulties": list(difficulties) if difficulties else list(DIFFICULTIES), "samples": len(samples)}
    with open(os.path.join(out_dir, "suite.json"), "w", encoding="utf-8") as fh:
        json.dump(meta, fh, indent=2)
    return samples


def load_benchmark(folder: str):
    """Read a folder written by :func:`write_benchmark` → ``LoadResult`` (samples + per-line errors)."""
    from pydantic import ValidationError

    from vreason.core.errors import ConfigError
    from vreason.core.protocol import LoadResult

    path = os.path.join(folder, "manifest.jsonl")
    if not os.path.isfile(path):
        raise ConfigError(f"{folder}: no manifest.jsonl (write one with `vreason synth generate --out {folder}`)")
    res = LoadResult()
    root = os.path.abspath(folder)
    seen: set[str] = set()
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            where = f"{path}:{n}"
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                res.errors.append({"where": where, "reason": f"invalid JSON: {exc.msg} at column {exc.colno}"})
                continue
            if not isinstance(rec, dict):
                res.errors.append({"where": where, "reason": f"expected a JSON object, got {type(rec).__name__}"})
                continue
            try:
                s = Sample.model_validate({**rec, "root": root})
            except ValidationError as exc:
                first = exc.errors()[0]
                loc = ".".join(str(x) for x in first.get("loc", ()))
                res.errors.append({"where": where, "reason": f"invalid sample: {loc}: {first.get('msg')}"})
                continue
            md = s.metadata
            missing = [k for k in ("family", "difficulty", "state", "render") if k not in md]
            if missing:
                res.errors.append({"where": where, "reason": f"sample {s.id}: metadata lacks {', '.join(missing)}"})
                continue
            if md["family"] not in load_families():
                res.errors.append({"where": where, "reason": f"sample {s.id}: unknown family {md['family']!r}"})
                continue
            if s.id in seen:
                res.errors.append({"where": where, "reason": f"duplicate sample id {s.id}"})
                continue
            if s.input_image and not os.path.isfile(s.resolve(s.input_image)):
                res.errors.append({"where": where, "reason": f"sample {s.id}: missing image {s.input_image}"})
                continue
            seen.add(s.id)
            res.samples.append(s)
    return res


@functools.lru_cache(maxsize=2)
def _instance_cached(family: str, difficulty: str, index: int, iseed: int, cfg: RenderConfig) -> TaskInstance:
    fam = get_family(family)
    return fam.make(np.random.default_rng(iseed), difficulty, index, iseed, cfg)


def instance_from_sample(sample: Sample) -> tuple[TaskFamily, TaskInstance, RenderConfig]:
    """Re-create a Sample's task instance from its metadata (checked against the stored state).

    Raises ``ValueError`` naming the sample when the metadata is incomplete or the re-created
    instance differs from the stored one (e.g. the family's generator changed since).
    """
    md = sample.metadata
    missing = [k for k in ("family", "difficulty", "index", "instance_seed", "render") if k not in md]
    if missing:
        raise ValueError(f"sample {sample.id}: metadata lacks {', '.join(missing)}")
    cfg = render_config(md["render"])
    inst = _instance_cached(str(md["family"]), str(md["difficulty"]), int(md["index"]), int(md["instance_seed"]),
                            cfg)
    if "state" in md and _jsonable(inst.state) != md["state"]:
        raise ValueError(f"sample {sample.id}: re-created instance differs from the stored one "
                         f"(family {md['family']} version {md.get('family_version')} vs "
                         f"{get_family(md['family']).version})")
    return get_family(md["family"]), inst, cfg
