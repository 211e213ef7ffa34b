"""`vreason annotate`: the schedule (balance over model pairs, no repeat per person, resume), the app served
by uvicorn on 127.0.0.1 (token required, only the run's registered videos served), export and import."""

from __future__ import annotations

import json
import os
from collections import Counter

import httpx
import pytest
from typer.testing import CliRunner

from _serve import serve
from conftest import SMALL_SYNTH
from vreason.cli.main import app as cli
from vreason.core.records import Video
from vreason.human.app import make_app
from vreason.human.records import PairVote, RubricLabel
from vreason.human.schedule import Question, VideoTask, next_pair, next_video, pair_tasks, qkey
from vreason.human.store import AnnotationStore
from vreason.runner.run import RunConfig, Runner
from vreason.store import RunStore

DIMS = ["quality", "physics"]


def synth_run(path: str, models=("oracle", "static", "shortcut"), difficulties=("easy", "medium")) -> str:
    opts = {"per_task": 1, "families": ["maze"], "difficulties": list(difficulties), **SMALL_SYNTH}
    Runner(RunConfig(protocol="synth", run_dir=path, models=list(models), options=opts, workers=1,
                     aggregate=False)).run()
    return path


# ---------------------------------------------------------------- schedule
def _videos(models, samples, seeds=(0,)) -> list[Video]:
    return [Video(sample_id=s, model=m, seed=k, path=f"/v/{s}_{m}_{k}.mp4") for s in samples for m in models
            for k in seeds]


def _answer_all(tasks, votes, person, dims=DIMS, limit=1000):
    seen = []
    for _ in range(limit):
        st = next_pair(tasks, votes, person, dims)
        if st.task is None:
            return seen, st
        seen.append(st.task.key)
        for d in dims:
            votes.append(PairVote(annotator=person, sample_id=st.task.sample_id, seed=st.task.seed,
                                  left_model=st.left, right_model=st.right, dimension=d, verdict="a"))
    raise AssertionError("the schedule never ran out")


def test_pair_tasks_only_ok_videos_of_one_sample_and_seed():
    vids = _videos(["m1", "m2", "m3"], ["s1", "s2"], seeds=(0, 1))
    vids.append(Video(sample_id="s3", model="m1", path="/v/x.mp4"))  # alone: no pair
    vids.append(Video(sample_id="s3", model="m2", status="missing"))
    tasks = pair_tasks(vids)
    assert len(tasks) == 2 * 2 * 3 and all(t.sample_id != "s3" for t in tasks)
    assert all(t.models[0] < t.models[1] for t in tasks)


def test_schedule_never_repeats_and_covers_everything_per_person():
    tasks = pair_tasks(_videos(["m1", "m2", "m3", "m4"], [f"s{i}" for i in range(5)]))
    votes: list[PairVote] = []
    for person in ("ann", "bob"):
        seen, st = _answer_all(tasks, votes, person)
        assert len(seen) == len(set(seen)) == len(tasks) == 30
        assert (st.done, st.total) == (30, 30)
    # another dimension set is another task: the same person is offered the pairs again
    assert next_pair(tasks, votes, "ann", ["overall"]).task is not None


def test_schedule_balances_model_pairs():
    tasks = pair_tasks(_videos(["m1", "m2", "m3", "m4"], [f"s{i}" for i in range(6)]))
    votes: list[PairVote] = []
    for person in ("ann", "bob", "cy"):
        for _ in range(8):  # part of the work only: counts per model pair stay within one of each other
            st = next_pair(tasks, votes, person, DIMS)
            for d in DIMS:
                votes.append(PairVote(annotator=person, sample_id=st.task.sample_id, seed=st.task.seed,
                                      left_model=st.left, right_model=st.right, dimension=d, verdict="b"))
            per_pair = Counter(tuple(sorted((v.left_model, v.right_model))) for v in votes if v.dimension == "quality")
            counts = [per_pair[p] for p in {t.models for t in tasks}]
            assert max(counts) - min(counts) <= 1, counts


def test_sides_are_randomised_stable_and_recorded():
    tasks = pair_tasks(_videos(["m1", "m2"], [f"s{i}" for i in range(40)]))
    firsts = Counter(t.sides("ann")[0] for t in tasks)
    assert 8 <= firsts["m1"] <= 32  # a fair coin, not always the same side
    assert [t.sides("ann") for t in tasks] == [t.sides("ann") for t in tasks]
    assert [t.sides("ann") for t in tasks] != [t.sides("bob") for t in tasks]


def test_half_answered_pair_resumes_with_its_sides():
    tasks = pair_tasks(_videos(["m1", "m2", "m3"], ["s1", "s2"]))
    first = next_pair(tasks, [], "ann", DIMS)
    # the recorded sides win even when they differ from the coin (e.g. the vote was imported)
    vote = PairVote(annotator="ann", sample_id=first.task.sample_id, seed=0, left_model=first.right,
                    right_model=first.left, dimension="quality", verdict="both_bad")
    again = next_pair(tasks, [vote], "ann", DIMS)
    assert again.task == first.task and (again.left, again.right) == (first.right, first.left)
    assert again.answered == {"quality": "both_bad"} and again.done == 0
    other = next_pair(tasks, [vote], "bob", DIMS)  # someone else is not stuck on ann's half-done pair
    assert other.answered == {}


def _vtasks() -> list[VideoTask]:
    q = (Question("rise:tc", "", "tc?", ((1.0, "1"), (5.0, "5"))), Question("rise:ra", "0", "q0", ((1.0, "yes"),)))
    return [VideoTask(s, m, 0, q) for s in ("s1", "s2") for m in ("m1", "m2")]


def test_rubric_schedule_no_repeat_resume_and_spread():
    tasks = _vtasks()
    labels: list[RubricLabel] = []
    st = next_video(tasks, labels, "ann")
    t = st.task
    labels.append(RubricLabel(annotator="ann", sample_id=t.sample_id, model=t.model, metric="rise:tc", value=5.0))
    again = next_video(tasks, labels, "ann")
    assert again.task == t and again.answered == {qkey("rise:tc", ""): 5.0}
    assert next_video(tasks, labels, "bob").task != t  # bob starts on a video nobody has labelled
    labels.append(RubricLabel(annotator="ann", sample_id=t.sample_id, model=t.model, metric="rise:ra", item="0",
                              skipped=True))
    seen = {t.key}
    while (st := next_video(tasks, labels, "ann")).task is not None:
        assert st.task.key not in seen
        seen.add(st.task.key)
        for q in st.task.questions:
            labels.append(RubricLabel(annotator="ann", sample_id=st.task.sample_id, model=st.task.model,
                                      metric=q.metric, item=q.item, value=q.choices[0][0]))
    assert len(seen) == 4 and (st.done, st.total) == (4, 4)


def test_question_normalisation_uses_the_native_scale():
    q = Question("rise:vq", "", "vq", ((1.0, "1"), (2.0, "2"), (3.0, "3")))
    assert [q.normalized(v) for v in (1.0, 2.0, 3.0)] == [0.0, 0.5, 1.0]


# ---------------------------------------------------------------- the served app
@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> str:
    return synth_run(str(tmp_path_factory.mktemp("annotate") / "small"))


def test_every_route_wants_the_token(run_dir):
    app = make_app(run_dir, token="s3cret-token")
    with serve(app) as base:
        for path in ("/", "/api/state?annotator=x", "/video/abc", "/image/maze-easy-000", "/docs"):
            assert httpx.get(base + path).status_code == 403, path
            assert httpx.get(base + path + ("&" if "?" in path else "?") + "token=wrong").status_code == 403
        assert httpx.post(base + "/api/answer", json={"annotator": "x"}).status_code == 403
        with httpx.Client(base_url=base) as client:
            first = client.get("/?token=s3cret-token")
            assert first.status_code == 200 and "vreason annotate" in first.text
            assert client.cookies.get("vreason_annotate") == "s3cret-token"
            assert client.get("/api/state", params={"annotator": "x"}).status_code == 200  # the cookie suffices


def test_answers_are_stored_at_once_and_undo_skip_work(run_dir):
    app = make_app(run_dir, token="t")
    with serve(app) as base, httpx.Client(base_url=base, params={"token": "t"}) as c:
        st = c.post("/api/annotator", json={"annotator": "zoe"}).json()
        assert (st["done"], st["total"]) == (0, 6)
        assert "oracle" not in json.dumps(st) and "static" not in json.dumps(st)  # the page is blind to models
        pair = st["item"]["pair"]
        st = c.post("/api/answer", json={"annotator": "zoe", "pair": pair, "dimension": "quality",
                                         "verdict": "a"}).json()
        with AnnotationStore(run_dir) as store:  # committed before the next answer
            got = store.all(annotator="zoe")
        assert len(got) == 1 and got[0].verdict == "a" and got[0].dimension == "quality"
        assert st["item"]["pair"] == pair and st["item"]["answered"] == {"quality": "a"}
        bad = c.post("/api/answer", json={"annotator": "zoe", "pair": pair, "dimension": "quality",
                                          "verdict": "maybe"})
        assert bad.status_code == 400
        st = c.post("/api/answer", json={"annotator": "zoe", "pair": pair, "dimension": "physics",
                                         "verdict": "both_good"}).json()
        assert st["done"] == 1 and st["item"]["pair"] != pair
        st = c.post("/api/skip", json={"annotator": "zoe"}).json()
        assert st["done"] == 2
        st = c.post("/api/undo", json={"annotator": "zoe"}).json()
        assert st["undone"] and st["done"] == 1 and list(st["item"]["answered"]) == ["quality"]
    with AnnotationStore(run_dir) as store:
        mine = store.all(annotator="zoe")
        assert [(v.dimension, v.verdict, v.skipped) for v in mine] == [
            ("quality", "a", False), ("physics", "both_good", False), ("quality", None, True)]
        assert "zoe" in store.annotators()
        assert {mine[0].left_model, mine[0].right_model} <= {"oracle", "static", "shortcut"}


def test_only_registered_videos_inside_the_run_are_served(run_dir, tmp_path):
    outside = tmp_path / "outside.mp4"
    outside.write_bytes(open(os.path.join(run_dir, "videos", "oracle", "maze-easy-000__0.mp4"), "rb").read())
    link = os.path.join(run_dir, "videos", "link.mp4")
    os.symlink(outside, link)
    with RunStore(run_dir, create=False) as store:
        store.put_videos([Video(sample_id="maze-easy-000", model="evil", path=str(outside)),
                          Video(sample_id="maze-easy-000", model="evil2", path=link),
                          Video(sample_id="maze-easy-000", model="evil3", path="/etc/passwd")])
    app = make_app(run_dir, token="t")
    ann = app.state.annotation
    try:
        with serve(app) as base, httpx.Client(base_url=base, params={"token": "t"}) as c:
            good = c.get(ann.video_url("maze-easy-000", "oracle", 0))
            assert good.status_code == 200 and good.headers["content-type"] == "video/mp4"
            part = c.get(ann.video_url("maze-easy-000", "oracle", 0), headers={"Range": "bytes=0-99"})
            assert part.status_code == 206 and len(part.content) == 100  # seeking works
            for model in ("evil", "evil2", "evil3"):  # registered, but outside the run's folders or not a video
                assert c.get(ann.video_url("maze-easy-000", model, 0)).status_code == 404, model
            for path in ("/video/../../etc/passwd", "/video/..%2F..%2Fetc%2Fpasswd", "/video/%2e%2e/%2e%2e/etc/passwd",
                         "/video/maze-easy-000", "/image/..%2F..%2Fetc%2Fpasswd", "/image/nope"):
                r = c.get(path)
                assert r.status_code in (403, 404) and b"root:" not in r.content, path
            assert c.get("/image/maze-easy-000").headers["content-type"] == "image/png"
    finally:
        with RunStore(run_dir, create=False) as store:
            store.conn.execute("DELETE FROM videos WHERE model LIKE 'evil%'")
        os.remove(link)


def test_export_and_import_round_trip_with_a_bad_row(run_dir, tmp_path):
    with AnnotationStore(run_dir) as store:
        store.add(PairVote(annotator="eve", sample_id="maze-easy-000", left_model="oracle", right_model="static",
                           dimension="quality", verdict="b"))
        store.add(RubricLabel(annotator="eve", sample_id="maze-easy-000", model="oracle", metric="synth:pass",
                              value=1.0, normalized=1.0))
        n_all = len(store.all())
    runner = CliRunner()
    for ext in ("jsonl", "csv"):
        out = str(tmp_path / f"a.{ext}")
        res = runner.invoke(cli, ["annotate", "export", run_dir, "--out", out])
        assert res.exit_code == 0, res.output
        other = synth_run(str(tmp_path / f"other_{ext}"), models=("oracle", "static"), difficulties=("easy",))
        # one broken row in the middle: reported with its line, the rest imported
        lines = open(out, encoding="utf-8").read().splitlines()
        if ext == "jsonl":
            lines.insert(1, json.dumps({"kind": "pairwise", "annotator": "x", "sample_id": "s", "left_model": "m",
                                        "right_model": "m", "dimension": "quality", "verdict": "a"}))
        else:
            lines.insert(2, "pairwise,someone")  # too few cells: no sample, no models
        bad_file = str(tmp_path / f"bad.{ext}")
        open(bad_file, "w", encoding="utf-8").write("\n".join(lines) + "\n")
        res = runner.invoke(cli, ["annotate", "import", other, bad_file])
        assert res.exit_code == 3, res.output
        assert f"bad.{ext}:{2 if ext == 'jsonl' else 3}: skipped" in res.output
        assert f"{n_all} annotation(s) imported, 1 row(s) skipped" in res.output
        with AnnotationStore(run_dir) as a, AnnotationStore(other) as b:
            assert [r.model_dump() for r in a.all()] == [r.model_dump() for r in b.all()]


def test_protocol_questions_on_native_scales():
    from vreason.core.records import RubricItem, Sample
    from vreason.human.questions import questions_for

    items = [RubricItem(text="q0", dimension="Rule Coherence"), RubricItem(text="q1", kind="step"),
             RubricItem(text="q2", kind="step")]
    s = Sample(id="s", benchmark="b", rubric=items)
    rise = questions_for("rise", s, {"tc", "vq", "ra"})  # pr not scored for this video: not asked
    assert [(q.metric, q.item) for q in rise] == [("rise:tc", ""), ("rise:vq", ""), ("rise:ra", "0"),
                                                  ("rise:ra", "1"), ("rise:ra", "2")]
    assert [c[0] for c in rise[0].choices] == [1, 2, 3, 4, 5] and [c[0] for c in rise[1].choices] == [1, 2, 3]
    ruler = questions_for("ruler", s, set())
    assert ruler[0].metric == "ruler:RC" and [c[1] for c in ruler[0].choices] == ["Good", "Medium", "Poor"]
    assert ruler[0].normalized(1.0) == 0.5
    assert [(q.metric, q.item) for q in questions_for("mmecof", s, {"RS"})] == [("mmecof:RS", "1"), ("mmecof:RS", "2")]
    (synth,) = questions_for("synth", s, {"score"})
    assert synth.metric == "synth:pass" and synth.normalized(0.0) == 0.0 and synth.normalized(1.0) == 1.0
