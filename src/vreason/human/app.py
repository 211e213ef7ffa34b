"""`vreason annotate`: the FastAPI app where people label a run's videos (extra ``web``).

Served on 127.0.0.1 only, to a ``Host`` of 127.0.0.1 / localhost / [::1] (DNS rebinding; the guard of
``vreason view``). Every route wants the access token: ``?token=…`` on the first visit (the printed
URL carries it), then an HttpOnly SameSite cookie; anything else gets 403. The page is one HTML file with
its script and style inline (no CDN, works offline); all run text reaches the page as JSON inside
``<script type="application/json">`` (escaped by :func:`vreason.report.html.script_json`) and is put into
the DOM with ``textContent``, never as HTML. Each answer is committed to the run's store when given, then
checked to have landed in the run's ``results.sqlite`` (the file at that path is still the one written);
an answer that did not is a 409 with the reason, never a 200. (`vreason annotate` holds the run's lock
shared, so ``run --force-new`` is refused while it serves.)
Media come from two routes that serve only what the run registered: ``/video/<sample>/<model>/<seed>``
(a video of the run's videos table, resolved, inside the run's allowed folders, with a video suffix) and
``/image/<sample>`` (the sample's input image, same checks).
"""

from __future__ import annotations

import hashlib
import os
import secrets
import threading
from typing import Any, Literal

from vreason.core.records import Sample, Video, VideoStatus
from vreason.human.questions import video_tasks
from vreason.human.records import VERDICTS, PairVote, RubricLabel
from vreason.human.schedule import PairTask, VideoTask, next_pair, next_video, pair_tasks, qkey
from vreason.human.store import AnnotationStore

DEFAULT_DIMENSIONS = ("quality", "physics")
"""PAI-Bench's human study (appendix A.4): Video Quality and Physical Plausibility."""
DIMENSION_TEXT = {"quality": "Video quality: visual coherence, motion smoothness, clarity",
                  "physics": "Physical plausibility: adherence to physical laws and domain realism"}
VIDEO_SUFFIXES = {".mp4": "video/mp4", ".webm": "video/webm", ".mov": "video/quicktime", ".mkv": "video/x-matroska",
                  ".m4v": "video/mp4"}
IMAGE_SUFFIXES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".webp": "image/webp",
                  ".gif": "image/gif", ".bmp": "image/bmp"}
COOKIE = "vreason_annotate"
Task = Literal["pairwise", "rubric"]


class RunMedia:
    """The run's samples and videos, and the rule for which files may be served."""

    def __init__(self, run_dir: str):
        from vreason.store import RunStore

        self.run_dir = os.path.realpath(run_dir)
        with RunStore(self.run_dir, create=False) as store:
            self.samples: dict[str, Sample] = {s.id: s for s in store.samples()}
            self.videos: dict[tuple[str, str, int], Video] = {v.key: v for v in store.videos()}
            self.scores = store.scores()
            self.config: dict[str, Any] = store.read_manifest().get("config", {})
        self.protocol = str(self.config.get("protocol", ""))
        self.roots = self._roots()

    def _roots(self) -> list[str]:
        roots = [self.run_dir]
        opts = {**self.config.get("options", {}), **self.config.get("resolved_options", {})}
        for value in (self.config.get("videos_dir"), opts.get("videos"), opts.get("data")):
            if isinstance(value, str) and value and os.path.isdir(value):
                roots.append(os.path.realpath(value))
        roots += [os.path.realpath(s.root) for s in self.samples.values() if s.root and os.path.isdir(s.root)]
        return sorted(set(roots))

    def _allowed(self, path: str | None, suffixes: dict[str, str]) -> tuple[str, str] | None:
        if not path:
            return None
        full = os.path.realpath(path if os.path.isabs(path) else os.path.join(self.run_dir, path))
        kind = suffixes.get(os.path.splitext(full)[1].lower())
        inside = any(full == r or full.startswith(r.rstrip(os.sep) + os.sep) for r in self.roots)
        if kind is None or not inside or not os.path.isfile(full):
            return None
        return full, kind

    def video_file(self, sample_id: str, model: str, seed: int) -> tuple[str, str] | None:
        v = self.videos.get((sample_id, model, seed))
        if v is None or v.status != VideoStatus.ok:
            return None
        return self._allowed(v.path, VIDEO_SUFFIXES)

    def image_file(self, sample_id: str) -> tuple[str, str] | None:
        s = self.samples.get(sample_id)
        return self._allowed(s.resolve(s.input_image), IMAGE_SUFFIXES) if s else None

    def sample_view(self, sample_id: str) -> dict[str, Any]:
        s = self.samples.get(sample_id)
        return {"id": sample_id, "prompt": s.prompt if s else "", "category": s.category if s else "",
                "image": f"/image/{sample_id}" if self.image_file(sample_id) else None}

    def video_view(self, sample_id: str, model: str | None, seed: int) -> dict[str, Any]:
        v = self.videos[(sample_id, model, seed)] if model else None
        return {"fps": (v.fps if v and v.fps else 16.0)}


class AnswerNotSaved(RuntimeError):
    """A write went to a store file that is no longer the run's (answered with 409, never 200)."""


def _opaque(salt: str, *parts: object) -> str:
    return hashlib.sha256("\x1f".join(map(str, (salt, *parts))).encode()).hexdigest()[:20]


class Annotation:
    """The app's state: the run's tasks and the store (one lock: sqlite connections are not thread-safe)."""

    def __init__(self, run_dir: str, task: Task, dimensions: list[str]):
        self.media = RunMedia(run_dir)
        self.task = task
        self.dimensions = list(dimensions)
        self.store = AnnotationStore(run_dir)
        self.db_path = os.path.join(self.store.run_dir, "results.sqlite")
        self._db_fd = os.open(self.db_path, os.O_RDONLY)  # the file the store writes into, to compare after
        self.lock = threading.Lock()
        self.pairs: list[PairTask] = pair_tasks(self.media.videos.values()) if task == "pairwise" else []
        self.pair_index = {t.key: t for t in self.pairs}
        self.videos: list[VideoTask] = (video_tasks(self.media.protocol, list(self.media.samples.values()),
                                                    list(self.media.videos.values()), self.media.scores)
                                        if task == "rubric" else [])
        self.video_index = {t.key: t for t in self.videos}
        # the page never sees a model name: videos and sides go by ids salted per server start
        self.salt = secrets.token_hex(8)
        self.video_ids = {_opaque(self.salt, "video", *k): k for k in self.media.videos}
        self.side_ids: dict[str, tuple[PairTask, str, str]] = {}
        for t in self.pairs:
            for left, right in (t.models, t.models[::-1]):
                self.side_ids[_opaque(self.salt, "pair", t.sample_id, t.seed, left, right)] = (t, left, right)

    def video_url(self, sample_id: str, model: str, seed: int) -> str:
        return "/video/" + _opaque(self.salt, "video", sample_id, model, seed)

    def state(self, annotator: str) -> dict[str, Any]:
        with self.lock:
            if self.task == "pairwise":
                st = next_pair(self.pairs, self.store.votes(), annotator, self.dimensions)
                out: dict[str, Any] = {"task": "pairwise", "done": st.done, "total": st.total, "item": None}
                if st.task:
                    t = st.task
                    out["item"] = {
                        "sample": self.media.sample_view(t.sample_id), "seed": t.seed,
                        "pair": _opaque(self.salt, "pair", t.sample_id, t.seed, st.left, st.right),
                        "a": {"url": self.video_url(t.sample_id, st.left, t.seed),
                              **self.media.video_view(t.sample_id, st.left, t.seed)},
                        "b": {"url": self.video_url(t.sample_id, st.right, t.seed),
                              **self.media.video_view(t.sample_id, st.right, t.seed)},
                        "dimensions": [{"name": d, "text": DIMENSION_TEXT.get(d, d)} for d in self.dimensions],
                        "answered": st.answered}
                return out
            rs = next_video(self.videos, self.store.labels(), annotator)
            out = {"task": "rubric", "done": rs.done, "total": rs.total, "item": None}
            if rs.task:
                t = rs.task
                out["item"] = {
                    "sample": self.media.sample_view(t.sample_id), "seed": t.seed,
                    "video_id": _opaque(self.salt, "video", t.sample_id, t.model, t.seed),
                    "video": {"url": self.video_url(t.sample_id, t.model, t.seed),
                              **self.media.video_view(t.sample_id, t.model, t.seed)},
                    "questions": [{"key": qkey(q.metric, q.item), "metric": q.metric, "item": q.item, "text": q.text,
                                   "choices": [{"value": v, "label": lab} for v, lab in q.choices]}
                                  for q in t.questions],
                    "answered": rs.answered}
            return out

    def vote(self, annotator: str, pair: str, dimension: str, verdict: str | None) -> PairVote:
        if pair not in self.side_ids:
            raise ValueError("no such pair in this run")
        task, left, right = self.side_ids[pair]
        sample_id, seed = task.sample_id, task.seed
        if dimension not in self.dimensions:
            raise ValueError(f"unknown dimension {dimension!r}")
        if verdict is not None and verdict not in VERDICTS:
            raise ValueError(f"unknown verdict {verdict!r}")
        rec = PairVote(annotator=annotator, sample_id=sample_id, seed=seed, left_model=left, right_model=right,
                       dimension=dimension, verdict=verdict, skipped=verdict is None)  # type: ignore[arg-type]
        with self.lock:
            return self._landed(self.store.add(rec))

    def _landed(self, result: Any) -> Any:
        """``result`` when the store file written is still the run's ``results.sqlite``; else
        :class:`AnswerNotSaved` (the folder was cleared or the file replaced under the server)."""
        mine = os.fstat(self._db_fd)
        try:
            now = os.stat(self.db_path)
        except FileNotFoundError:
            now = None
        if mine.st_nlink == 0 or now is None or (now.st_ino, now.st_dev) != (mine.st_ino, mine.st_dev):
            raise AnswerNotSaved(
                f"NOT SAVED: {self.db_path} was deleted or replaced while this server ran (another command "
                "cleared the run?). Stop `vreason annotate` and start it again; answers since then are lost.")
        return result

    def label(self, annotator: str, video_id: str, key: str, value: float | None) -> RubricLabel:
        sample_id, model, seed = self.video_ids.get(video_id, ("", "", 0))
        task = self.video_index.get((sample_id, model, seed))
        q = next((q for q in task.questions if qkey(q.metric, q.item) == key), None) if task else None
        if q is None:
            raise ValueError("no such question for this video")
        if value is not None and value not in [c[0] for c in q.choices]:
            raise ValueError(f"{value} is not on the question's scale")
        rec = RubricLabel(annotator=annotator, sample_id=sample_id, model=model, seed=seed, metric=q.metric,
                          item=q.item, value=value, normalized=None if value is None else q.normalized(value),
                          skipped=value is None)
        with self.lock:
            return self._landed(self.store.add(rec))

    def skip(self, annotator: str) -> int:
        """Skip what is left of the person's current item (one skipped record per open answer)."""
        st = self.state(annotator)
        item = st["item"]
        if item is None:
            return 0
        n = 0
        if st["task"] == "pairwise":
            for d in self.dimensions:
                if d not in item["answered"]:
                    self.vote(annotator, item["pair"], d, None)
                    n += 1
            return n
        for q in item["questions"]:
            if q["key"] not in item["answered"]:
                self.label(annotator, item["video_id"], q["key"], None)
                n += 1
        return n

    def undo(self, annotator: str) -> bool:
        with self.lock:
            return self._landed(self.store.undo(annotator) is not None)

    def add_annotator(self, name: str, when: float) -> None:
        with self.lock:
            self._landed(self.store.add_annotator(name, when))


def make_app(run_dir: str, *, task: Task = "pairwise", dimensions: list[str] | None = None,
             token: str | None = None) -> Any:
    """The annotation app for ``run_dir``; ``app.state.token`` holds the access token."""
    from fastapi import Body, FastAPI, HTTPException, Request
    from fastapi.responses import FileResponse, HTMLResponse, PlainTextResponse

    from vreason.human.page import render_page
    from vreason.report.serve_guard import guard

    ann = Annotation(run_dir, task, list(dimensions or DEFAULT_DIMENSIONS))
    token = token or secrets.token_urlsafe(24)
    app = FastAPI(title="vreason annotate", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.annotation = ann

    guard(app, token, "vreason annotate", cookie=COOKIE)  # Host allow-list (DNS rebinding) + token

    @app.exception_handler(AnswerNotSaved)
    async def not_saved(request: Request, exc: AnswerNotSaved):  # noqa: ANN202
        return PlainTextResponse(str(exc), status_code=409)

    def who(body: dict[str, Any]) -> str:
        name = str(body.get("annotator", "")).strip()
        if not name or len(name) > 80:
            raise HTTPException(400, "an annotator name (1–80 characters) is required")
        return name

    @app.get("/", response_class=HTMLResponse)
    def page() -> str:
        return render_page(ann.task, os.path.basename(ann.media.run_dir), ann.media.protocol)

    @app.get("/api/state")
    def state(annotator: str) -> dict[str, Any]:
        return ann.state(who({"annotator": annotator}))

    @app.post("/api/annotator")
    def annotator(body: dict[str, Any] = Body(...)) -> dict[str, Any]:
        import time

        name = who(body)
        ann.add_annotator(name, time.time())
        return ann.state(name)

    @app.post("/api/answer")
    def answer(body: dict[str, Any] = Body(...)) -> dict[str, Any]:
        name = who(body)
        try:
            if ann.task == "pairwise":
                ann.vote(name, str(body["pair"]), str(body["dimension"]), body.get("verdict"))
            else:
                value = body.get("value")
                ann.label(name, str(body["video_id"]), str(body["key"]), None if value is None else float(value))
        except (KeyError, ValueError, TypeError) as exc:
            raise HTTPException(400, f"bad answer: {exc}") from exc
        return ann.state(name)

    @app.post("/api/skip")
    def skip(body: dict[str, Any] = Body(...)) -> dict[str, Any]:
        name = who(body)
        ann.skip(name)
        return ann.state(name)

    @app.post("/api/undo")
    def undo(body: dict[str, Any] = Body(...)) -> dict[str, Any]:
        name = who(body)
        return {"undone": ann.undo(name), **ann.state(name)}

    @app.get("/video/{video_id}")
    def video(video_id: str) -> FileResponse:
        key = ann.video_ids.get(video_id)
        found = ann.media.video_file(*key) if key else None
        if found is None:
            raise HTTPException(404, "not a video of this run")
        return FileResponse(found[0], media_type=found[1])

    @app.get("/image/{sample_id}")
    def image(sample_id: str) -> FileResponse:
        found = ann.media.image_file(sample_id)
        if found is None:
            raise HTTPException(404, "not an input image of this run")
        return FileResponse(found[0], media_type=found[1])

    return app
