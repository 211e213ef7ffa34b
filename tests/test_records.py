import pytest
from pydantic import ValidationError

from vreason.core.records import (
    Sample,
    Score,
    ScoreStatus,
    Video,
    VideoStatus,
    check_safe_id,
    normalize_likert,
    safe_id_from,
)


@pytest.mark.parametrize("bad", ["../x", "..", ".hidden", "a/b", "a\\b", "", "x" * 201, "a..b", "/abs", "a b"])
def test_unsafe_ids_rejected(bad):
    with pytest.raises(ValueError):
        check_safe_id(bad)
    with pytest.raises(ValidationError):
        Sample(id=bad, benchmark="b")


@pytest.mark.parametrize("good", ["com_1", "maze-easy-003", "A.b-c_d", "0"])
def test_safe_ids_accepted(good):
    assert Sample(id=good, benchmark="b").id == good


def test_safe_id_from_is_safe():
    for text in ["../../etc/passwd", "Task Name/3", "..", "a..b", "ü"]:
        check_safe_id(safe_id_from(text))
    # readable and stable: safe ids pass through, others keep their words
    assert safe_id_from("maze-easy-003") == "maze-easy-003"
    assert safe_id_from("Task Name/3") == "Task_Name_3" != safe_id_from("Task Name/4")
    assert safe_id_from("../../etc/passwd") == "etc_passwd"


def test_video_model_name_checked_and_ok_needs_path():
    with pytest.raises(ValidationError):
        Video(sample_id="a", model="../m", seed=0, path="x.mp4")
    with pytest.raises(ValidationError):
        Video(sample_id="a", model="m", seed=0)
    v = Video(sample_id="a", model="m", seed=0, status=VideoStatus.missing)
    assert v.reason == "missing"


def test_failed_score_has_no_value_and_needs_reason():
    with pytest.raises(ValidationError):
        Score(sample_id="a", model="m", scorer="s", metric="x", status=ScoreStatus.unscored, value=0.0, reason="r")
    with pytest.raises(ValidationError):
        Score(sample_id="a", model="m", scorer="s", metric="x", status=ScoreStatus.error)
    with pytest.raises(ValidationError):
        Score(sample_id="a", model="m", scorer="s", metric="x", value=None)
    with pytest.raises(ValidationError):
        Score(sample_id="a", model="m", scorer="s", metric="x", value=2.0, normalized=1.5)
    s = Score.failed(ScoreStatus.unscored, "no parse", sample_id="a", model="m", seed=1, scorer="s")
    assert s.value is None and s.normalized is None and s.reason == "no parse"


def test_normalize_likert():
    assert normalize_likert(1, 1, 5) == 0.0
    assert normalize_likert(5, 1, 5) == 1.0
    assert normalize_likert(3, 1, 5) == 0.5
    assert normalize_likert(2, 1, 3) == 0.5
    with pytest.raises(ValueError):
        normalize_likert(1, 3, 3)


def test_prompt_variants():
    s = Sample(id="a", benchmark="b", prompt="p", prompt_variants={"text_hint": "p + hint"})
    assert s.prompt_for(None) == "p" and s.prompt_for("text_hint") == "p + hint"
    with pytest.raises(KeyError, match="no prompt variant"):
        s.prompt_for("visual_hint")


def test_a_scorer_must_implement_score_or_ascore():
    from vreason.core.scoring import Scorer

    with pytest.raises(TypeError, match="must override"):
        class Empty(Scorer):  # noqa: F841 - defining it is the test
            name = "empty"
