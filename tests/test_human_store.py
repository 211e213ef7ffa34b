"""Annotation records and their store: validation, immediate commit, undo, round trip."""

import pytest
from pydantic import ValidationError

from vreason.human.records import PairVote, RubricLabel
from vreason.human.store import AnnotationStore, parse_annotation
from vreason.store import RunStore


def _vote(**kw):
    base = dict(annotator="ann", sample_id="s1", left_model="m1", right_model="m2", dimension="quality",
                verdict="a")
    base.update(kw)
    return PairVote(**base)


def test_preference_follows_pai_bench():
    assert _vote(verdict="a").preference("m1") == 1.0 and _vote(verdict="a").preference("m2") == 0.0
    assert _vote(verdict="b").preference("m2") == 1.0
    assert _vote(verdict="both_good").preference("m1") == 0.5 == _vote(verdict="both_bad").preference("m2")
    assert _vote(verdict="a").preference("other") is None


@pytest.mark.parametrize("bad", [dict(right_model="m1"), dict(verdict=None), dict(skipped=True),
                                 dict(verdict="tie"), dict(annotator=""), dict(extra=1)])
def test_invalid_votes_are_rejected(bad):
    with pytest.raises(ValidationError):
        _vote(**bad)


def test_label_needs_a_value_or_a_skip_and_a_normalised_value_in_range():
    with pytest.raises(ValidationError):
        RubricLabel(annotator="a", sample_id="s", model="m", metric="rise:tc")
    with pytest.raises(ValidationError):
        RubricLabel(annotator="a", sample_id="s", model="m", metric="rise:tc", value=5, normalized=1.5)
    assert RubricLabel(annotator="a", sample_id="s", model="m", metric="rise:tc", skipped=True).value is None


def test_store_commits_each_record_and_undoes_the_latest(tmp_path):
    RunStore(tmp_path).close()
    with AnnotationStore(tmp_path) as st:
        first = st.add(_vote())
        st.add(RubricLabel(annotator="ann", sample_id="s1", model="m1", metric="rise:tc", value=4, normalized=0.75))
        st.add(_vote(annotator="bob", verdict=None, skipped=True))
    with AnnotationStore(tmp_path) as again:  # another connection sees every record at once
        assert len(again.all()) == 3 and [v.annotator for v in again.votes()] == ["ann", "bob"]
        undone = again.undo("ann")
        assert isinstance(undone, RubricLabel) and undone.value == 4
        assert [a.id for a in again.all(annotator="ann")] == [first.id]
        assert parse_annotation(first.model_dump()) == first
    with pytest.raises(FileNotFoundError):
        AnnotationStore(tmp_path / "nope")
