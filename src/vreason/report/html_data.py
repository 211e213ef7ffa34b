"""What the HTML report shows, gathered from a run's store: samples, videos, scores, media jobs.

Everything here is plain data (dicts of str / numbers / lists); escaping is the templates' job
(jinja2 autoescape) and :func:`vreason.report.html.script_json` for JSON inside ``<script>``.
Paths are made relative to the page that shows them, so the pages work from ``file://``.
"""

from __future__ import annotations

import math
import os
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from vreason.core.records import Sample, Score, Video
from vreason.report.media import MediaJob, shown_indices, strip_name
from vreason.store import RunStore, redact_text

WORST = {"ok": 0, "unscored": 1, "error": 2}


@dataclass
class Declared:
    """What a protocol declares about its metrics for the report (``AggregateResult.summary``):

    * ``metric_scales``: metric → ``{"kind": "likert" | "unit" | "percent" | "binary", "low", "high",
      "digits", "pass"}``; ``pass: false`` (a judge's 1–5 scale) means the metric has no pass threshold, so
      no pass / fail badge is drawn for it, whatever its ``passed`` flag holds (RISE keeps "full marks" there
      for its Accuracy);
    * ``grid_metric``: the number a sample × model cell shows, the protocol's headline metric:
      ``{"label", "weights": {metric: w}, "weights_by_category": {category: {metric: w}}, "scale", "digits",
      "note", "pass_all", "pass_label"}`` = scale × Σ w · normalized over the unit's ok scores (none when a
      weighted metric is not ok); ``pass_all``: the metrics whose flags together make the cell's pass / fail
      (:meth:`unit_pass`). Without it a cell shows no number (an unweighted mean of unlike metrics would
      appear in no table)."""

    metric_scales: dict[str, dict[str, Any]] = field(default_factory=dict)
    grid_metric: dict[str, Any] | None = None

    @classmethod
    def of(cls, summary: Any) -> Declared:
        if not isinstance(summary, dict):
            return cls()
        return cls(metric_scales=dict(summary.get("metric_scales") or {}), grid_metric=summary.get("grid_metric"))

    def has_pass(self, metric: str) -> bool:
        return bool(self.metric_scales.get(metric, {}).get("pass", True))

    def unit_pass(self, scores: list[dict[str, Any]]) -> list[bool]:
        """The verdicts a grid cell's pass / fail comes from: with ``grid_metric["pass_all"]`` (a list of
        metrics) each of those metrics' own flag (RISE: all four at full marks, its Accuracy; a metric the unit
        does not have is skipped, one not scored leaves no verdict); else the flags of metrics with a pass
        threshold."""
        names = (self.grid_metric or {}).get("pass_all")
        if names:
            mine = [sc for sc in scores if sc["metric"] in names]
            if not mine or any(sc["status"] != "ok" or sc["full"] is None for sc in mine):
                return []
            return [bool(sc["full"]) for sc in mine]
        return [sc["passed"] for sc in scores if sc["passed"] is not None and sc["status"] == "ok"]

    def grid_value(self, category: str, scores: list[dict[str, Any]]) -> float | None:
        g = self.grid_metric
        if not g:
            return None
        weights = (g.get("weights_by_category") or {}).get(category) or g.get("weights") or {}
        got = {sc["metric"]: sc["normalized"] for sc in scores if sc["status"] == "ok" and sc["normalized"] is not None}
        if not weights or any(m not in got for m in weights):
            return None
        return round(float(g.get("scale", 1.0)) * sum(w * got[m] for m, w in weights.items()), 6)


@dataclass
class RunView:
    run_dir: str
    out_dir: str
    samples: list[dict[str, Any]] = field(default_factory=list)
    cells: list[dict[str, Any]] = field(default_factory=list)
    pages: dict[str, dict[str, Any]] = field(default_factory=dict)
    jobs: list[MediaJob] = field(default_factory=list)
    models: list[str] = field(default_factory=list)


def _video_path(run_dir: str, video: Video) -> str | None:
    if not video.path:
        return None
    return video.path if os.path.isabs(video.path) else os.path.join(run_dir, video.path)


def linked_inside(run_dir: str, media: str, vpath: str, name: str) -> str:
    """``vpath`` when it lies inside the run folder; else a symlink to it under ``media/linked/`` (made or
    refreshed here), so the pages reach an imported video or a data file both from ``file://`` and through
    ``vreason view``, which serves the run folder only."""
    run_real = os.path.realpath(run_dir)
    real = os.path.realpath(vpath)
    if os.path.commonpath([run_real, real]) == run_real:
        return vpath
    link = os.path.join(media, "linked", name + os.path.splitext(vpath)[1].lower())
    os.makedirs(os.path.dirname(link), exist_ok=True)
    if os.path.islink(link) and os.readlink(link) != real:
        os.remove(link)
    if not os.path.lexists(link):
        os.symlink(real, link)
    return link


def rel(path: str | None, page_dir: str) -> str | None:
    """``path`` relative to ``page_dir`` with forward slashes (None stays None)."""
    if not path:
        return None
    return os.path.relpath(path, page_dir).replace(os.sep, "/")


def _num(x: Any) -> float | None:
    if x is None:
        return None
    try:
        f = float(x)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def checks_of(details: dict[str, Any]) -> list[dict[str, Any]]:
    """``details["checks"]`` as rows ``{name, ok, reason}``: a dict of bools, a dict of dicts
    (``ok``/``passed`` and ``reason``) or a list of such dicts."""
    raw = details.get("checks")
    items: list[tuple[str, Any]]
    if isinstance(raw, dict):
        items = list(raw.items())
    elif isinstance(raw, list):
        items = [(str(c.get("name", i)) if isinstance(c, dict) else str(i), c) for i, c in enumerate(raw)]
    else:
        return []
    rows = []
    for name, val in items:
        if isinstance(val, dict):
            ok = val.get("ok", val.get("passed"))
            reason = val.get("reason") or val.get("why") or ""
        else:
            ok, reason = val, ""
        rows.append({"name": str(name), "ok": None if ok is None else bool(ok), "reason": str(reason)})
    return rows


_JUDGE_KEYS = ("answer", "parsed", "labels", "reasoning", "reason", "scores", "calls", "steps", "questions")


def _score_view(sc: Score, run_dir: str, page_dir: str, strip: str | None, shown: list[int],
                declared: Declared | None = None) -> dict[str, Any]:
    ev = sc.evidence
    details = ev.details or {}
    judge = None
    if ev.judge is not None:
        judge = {"judge": ev.judge.judge, "template": ev.judge.template,
                 "template_version": ev.judge.template_version, "raw_reply": ev.judge.raw_reply,
                 "attempts": ev.judge.attempts, "cached": ev.judge.cached,
                 "parsed": {k: details[k] for k in _JUDGE_KEYS if k in details}}
    checks = checks_of(details)
    other = {k: v for k, v in details.items() if k != "checks" and (judge is None or k not in judge["parsed"])}
    declared = declared or Declared()
    scale = declared.metric_scales.get(sc.metric) or {}
    return {
        "scorer": sc.scorer, "metric": sc.metric, "value": _num(sc.value), "normalized": _num(sc.normalized),
        "passed": sc.passed if declared.has_pass(sc.metric) else None, "full": sc.passed, "scale": scale,
        "status": sc.status.value, "reason": redact_text(sc.reason) if sc.reason else None,
        "frame_policy": ev.frame_policy, "n_indices": len(ev.frame_indices), "shown_indices": shown,
        "strip": rel(strip, page_dir) if strip else None,
        "debug": [rel(os.path.join(run_dir, p) if not os.path.isabs(p) else p, page_dir) for p in ev.debug_images],
        "checks": checks, "failed_checks": [c["name"] for c in checks if c["ok"] is False],
        "judge": judge, "details": other,
    }


def _sample_view(s: Sample, page_dir: str, run_dir: str, media: str) -> dict[str, Any]:
    def data_file(field: str) -> str | None:  # the sample's own files, linked in when outside the run
        path = s.resolve(getattr(s, field))
        if not path or not os.path.exists(path):
            return rel(path, page_dir)
        return rel(linked_inside(run_dir, media, path, os.path.join("data", s.id, field)), page_dir)

    return {
        "id": s.id, "benchmark": s.benchmark, "category": s.category or "", "task": s.task or "",
        "difficulty": s.difficulty or "", "mode": s.mode.value, "prompt": s.prompt,
        "prompt_variants": dict(s.prompt_variants),
        "input_image": data_file("input_image"), "input_video": data_file("input_video"),
        "reference_image": data_file("reference_image"), "reference_video": data_file("reference_video"),
        "rubric": [{"kind": r.kind, "dimension": r.dimension, "text": r.text} for r in s.rubric],
        "page": f"samples/{s.id}.html",
    }


def _metric_text(sc: dict[str, Any]) -> str:
    """``"tc 4 (1–5)"`` / ``"blur_ssim 0.9798"`` / ``"ra unscored"`` for a grid cell's tooltip."""
    if sc["status"] != "ok" or sc["value"] is None:
        return f"{sc['metric']} {sc['status']}"
    scale = sc.get("scale") or {}
    digits = scale.get("digits")
    value = f"{sc['value']:.{int(digits)}f}" if digits is not None else f"{sc['value']:.4g}"
    rng = f" ({scale['low']:g}–{scale['high']:g})" if "low" in scale and "high" in scale else ""
    return f"{sc['metric']} {value}{rng}"


def _cell(sample: Sample, model: str, seed: int, video: Video | None, scores: list[dict[str, Any]],
          thumb: str | None, declared: Declared | None = None) -> dict[str, Any]:
    declared = declared or Declared()
    statuses = [sc["status"] for sc in scores] or (["error"] if video is None or video.status.value != "ok" else [])
    status = max(statuses, key=lambda s: WORST.get(s, 2)) if statuses else "none"
    flags = declared.unit_pass(scores)
    return {
        "s": sample.id, "m": model, "seed": seed, "cat": sample.category or "", "diff": sample.difficulty or "",
        "status": status, "pass": (all(flags) if flags else None),
        "score": declared.grid_value(sample.category or "", scores),
        "metrics": [_metric_text(sc) for sc in scores][:12],
        "fails": sorted({c for sc in scores for c in sc["failed_checks"]})[:6],
        "thumb": thumb,
    }


def collect(store: RunStore, out_dir: str, declared: Declared | None = None) -> RunView:
    """Gather the run's samples, videos and scores into pages, grid cells and media jobs; ``declared``: what
    the protocol's summary declares about its metrics (:class:`Declared`)."""
    run_dir = store.run_dir
    view = RunView(run_dir=run_dir, out_dir=out_dir)
    samples = {s.id: s for s in store.samples()}
    videos = {(v.sample_id, v.model, v.seed): v for v in store.videos()}
    by_unit: dict[tuple[str, str, int], list[Score]] = defaultdict(list)
    for sc in store.scores():
        by_unit[(sc.sample_id, sc.model, sc.seed)].append(sc)
    units = sorted(set(videos) | set(by_unit))
    view.models = sorted({u[1] for u in units})
    page_dir = os.path.join(out_dir, "samples")
    media = os.path.join(out_dir, "media")
    for sid, s in sorted(samples.items()):
        view.samples.append(_sample_view(s, out_dir, run_dir, media))
        view.pages[sid] = {"sample": _sample_view(s, page_dir, run_dir, media), "runs": []}
    for key in units:
        sid, model, seed = key
        if sid not in samples:
            continue
        video = videos.get(key)
        vpath = _video_path(run_dir, video) if video is not None and video.status.value == "ok" else None
        if vpath is not None and not os.path.exists(vpath):
            vpath = None
        base = os.path.join(media, model, f"{sid}__{seed}")
        if vpath is not None:
            vpath = linked_inside(run_dir, media, vpath, os.path.join(model, f"{sid}__{seed}"))
        is_mp4 = bool(vpath and vpath.lower().endswith((".mp4", ".m4v")))
        job = MediaJob(video=vpath or "", thumb=base + ".thumb.jpg",
                       animation=base + ".anim.gif" if vpath and not is_mp4 else None)
        score_views = []
        for sc in sorted(by_unit.get(key, []), key=lambda x: (x.scorer, x.metric)):
            shown = shown_indices(list(sc.evidence.frame_indices))
            strip = None
            if vpath and shown:
                strip = os.path.join(base + "." + strip_name(sc.scorer, shown))
                job.strips.setdefault(sc.scorer + "/" + sc.metric, (strip, shown))
            score_views.append(_score_view(sc, run_dir, page_dir, strip, shown, declared))
        if vpath:
            view.jobs.append(job)
        thumb = rel(job.thumb, out_dir) if vpath else None
        view.cells.append(_cell(samples[sid], model, seed, video, score_views, thumb, declared))
        view.pages[sid]["runs"].append({
            "model": model, "seed": seed,
            "video": rel(vpath, page_dir), "is_mp4": is_mp4,
            "animation": rel(job.animation, page_dir) if job.animation else None,
            "video_status": video.status.value if video is not None else "none",
            "video_reason": redact_text(video.reason) if video is not None and video.reason else None,
            "video_info": ({"fps": video.fps, "n_frames": video.n_frames, "width": video.width,
                            "height": video.height} if video is not None else {}),
            "thumb": rel(job.thumb, page_dir) if vpath else None,
            "scores": score_views,
        })
    return view
