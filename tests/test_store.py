import json

from vreason.core.records import Sample, Score, ScoreStatus, Video, VideoStatus
from vreason.store import RunStore, redact


def _score(sid, metric="m", value=1.0, status=ScoreStatus.ok, scorer="sc"):
    if status == ScoreStatus.ok:
        return Score(sample_id=sid, model="mod", seed=0, scorer=scorer, metric=metric, value=value, normalized=1.0)
    return Score.failed(status, "bad reply", sample_id=sid, model="mod", seed=0, scorer=scorer, metric=metric)


def test_units_resume_and_retry(tmp_path):
    st = RunStore(tmp_path / "run")
    st.put_samples([Sample(id=f"s{i}", benchmark="b", category="c") for i in range(3)])
    keys = [(f"s{i}", "mod", 0, "sc") for i in range(3)]
    assert st.pending(keys) == keys
    assert st.put_unit(keys[0], [_score("s0"), _score("s0", "m2")]) == "ok"
    assert st.put_unit(keys[1], [_score("s1"), _score("s1", "m2", status=ScoreStatus.unscored)]) == "unscored"
    assert st.pending(keys) == [keys[2]]
    assert st.pending(keys, retry_failed=True) == [keys[1], keys[2]]
    # a retry replaces the unit's rows, never duplicates them
    st.put_unit(keys[1], [_score("s1"), _score("s1", "m2")])
    df = st.scores_frame()
    assert len(df[df.sample_id == "s1"]) == 2
    assert set(df.columns) >= {"sample_id", "model", "seed", "scorer", "metric", "value", "normalized", "status",
                               "reason", "passed", "frame_policy", "judge", "category", "difficulty", "evidence"}
    assert (df.category == "c").all()
    st.close()
    # reopening keeps everything
    st2 = RunStore(tmp_path / "run", create=False)
    assert st2.pending(keys) == [keys[2]]
    assert st2.counts()["units"] == {"ok": 2}


def test_unscored_is_not_a_zero(tmp_path):
    st = RunStore(tmp_path / "run")
    st.put_samples([Sample(id="a", benchmark="b")])
    st.put_unit(("a", "mod", 0, "sc"), [_score("a", status=ScoreStatus.unscored)])
    df = st.scores_frame()
    assert df.value.isna().all() and (df.status == "unscored").all()
    assert st.failures()[0]["reason"] == "bad reply"


def test_export_and_manifest(tmp_path):
    st = RunStore(tmp_path / "run")
    st.start({"protocol": "x", "judge_api_key": "sk-secret", "nested": {"token": "t0k", "keep": 1}})
    st.put_samples([Sample(id="a", benchmark="b")])
    st.put_videos([Video(sample_id="a", model="mod", seed=0, status=VideoStatus.missing)])
    st.put_unit(("a", "mod", 0, "sc"), [_score("a")])
    paths = st.export()
    names = {p.rsplit("/", 1)[-1] for p in paths}
    assert {"scores.jsonl", "scores.csv", "videos.jsonl"} <= names
    rows = [json.loads(line) for line in open(tmp_path / "run" / "scores.jsonl")]
    assert rows[0]["sample_id"] == "a" and rows[0]["value"] == 1.0
    st.finish("ok", {"n": 1})
    man = json.loads(open(tmp_path / "run" / "manifest.json").read())
    text = json.dumps(man)
    assert "sk-secret" not in text and "t0k" not in text and man["config"]["nested"]["keep"] == 1
    assert man["versions"]["vreason"] and man["invocations"][-1]["status"] == "ok"
    assert redact({"api_key": None}) == {"api_key": None}


def test_missing_run_dir_is_clear(tmp_path):
    import pytest

    with pytest.raises(FileNotFoundError, match="not a vreason run directory"):
        RunStore(tmp_path / "nope", create=False)
