"""The six built-in models: what each renders, seeds, files, and how the verifier scores them."""

from __future__ import annotations

import os

import numpy as np
import pytest

from conftest import one_of
from vreason.core.records import ScoreStatus, Video, VideoStatus
from vreason.core.scoring import ScoreContext
from vreason.frames import probe, read_all
from vreason.synth.models import BUILTIN_MODELS, make_model
from vreason.synth.scorer import SynthVerifierScorer
from vreason.synth.suite import build_samples, instance_from_sample

MODELS = ("oracle", "static", "shortcut", "random", "noise", "reversed")


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    d = tmp_path_factory.mktemp("suite")
    return {s.id: s for s in build_samples(["maze", "symmetry", "sorting", "connect"], ["easy", "hard"], 1, 4,
                                           out_dir=str(d))}


def _gen(sample, model, seed, folder, **params):
    path = os.path.join(folder, model, f"{sample.id}__{seed}.mp4")
    return make_model(model, **params).generate(sample, seed, path)


def test_registry_and_names():
    from vreason.core.registry import generators, load_builtins

    load_builtins()
    assert tuple(BUILTIN_MODELS) == MODELS
    for m in MODELS:
        cls = generators.get(m)
        assert cls is BUILTIN_MODELS[m]
    with pytest.raises(KeyError):
        make_model("sora")


def test_each_model_renders_what_it_claims(samples, tmp_path):
    s = samples["maze-easy-000"]
    _, inst, cfg = instance_from_sample(s)
    vids = {m: _gen(s, m, 0, str(tmp_path)) for m in MODELS}
    frames = {}
    for m, v in vids.items():
        assert v.status == VideoStatus.ok and os.path.isfile(v.path)
        assert v.n_frames == cfg.n_frames and v.fps == cfg.fps
        assert v.manifest.model_id == f"vreason/{m}" and v.manifest.source == "generated"
        info = probe(v.path, exact=True)
        assert info.n_frames == cfg.n_frames and (info.width, info.height) == (cfg.width, cfg.height)
        assert info.codec == "h264"
        frames[m] = read_all(v.path)

    def close(a, b, tol=6.0):
        return float(np.abs(a.astype(np.int16) - b.astype(np.int16)).mean()) < tol

    assert close(frames["oracle"][0], inst.first_frame) and close(frames["oracle"][-1], inst.final_frame)
    assert all(close(f, inst.first_frame) for f in frames["static"])
    assert close(frames["reversed"][0], inst.final_frame) and close(frames["reversed"][-1], inst.first_frame)
    sc = frames["shortcut"]
    assert close(sc[0], inst.first_frame) and close(sc[len(sc) // 2 - 1], inst.first_frame)
    assert close(sc[-1], inst.final_frame)
    assert not close(frames["noise"][0], inst.first_frame, tol=30)
    assert not close(frames["random"][-1], inst.final_frame, tol=0.5)


def test_seeds_change_random_and_noise_only(samples, tmp_path):
    s = samples["sorting-hard-000"]
    for m in ("random", "noise"):
        a = read_all(_gen(s, m, 0, str(tmp_path / "a")).path)
        b = read_all(_gen(s, m, 1, str(tmp_path / "b")).path)
        assert any(not np.array_equal(x, y) for x, y in zip(a, b, strict=True)), m
    a = read_all(_gen(s, "oracle", 0, str(tmp_path / "a")).path)
    b = read_all(_gen(s, "oracle", 1, str(tmp_path / "b")).path)
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))


# `make test`: one (family, difficulty) drawn by the run's seed — the scorer's own contract (evidence, frame
# policy, debug image, the scale per model) is the same for every family, and each family's verdicts on these
# baselines are tested per family by test_synth_families_a/b; `make test-all`: all eight
SCORED = [f"{f}-{d}" for f in ("maze", "symmetry", "sorting", "connect") for d in ("easy", "hard")]


@pytest.mark.parametrize("family,difficulty", [
    pytest.param(*c.split("-"), id=c, marks=one_of(c, SCORED, salt="models")) for c in SCORED])
def test_scored_end_to_end(samples, tmp_path, family, difficulty):
    scorer = SynthVerifierScorer()
    ctx = ScoreContext(run_dir=str(tmp_path))
    for s in [samples[f"{family}-{difficulty}-000"]]:
        for m in MODELS:
            v = _gen(s, m, 0, str(tmp_path / "videos"))
            (score,) = scorer.score(s, v, ctx)
            assert score.status == ScoreStatus.ok and score.metric == "score" and score.scorer == "synth-verifier"
            assert 0.0 <= score.value <= 1.0 and score.normalized == score.value
            ev = score.evidence
            from vreason.synth.suite import get_family, render_config

            scale = getattr(get_family(s.category), "decode_scale", None) or 1.0
            cfg = render_config(s.metadata.get("render"))
            want = f"all+times=pts+max_side={round(max(cfg.width, cfg.height) * scale)}"
            assert ev.frame_policy == want and ev.frame_indices == list(range(v.n_frames))
            assert ev.details["family"] == s.category and "checks" in ev.details
            assert ev.debug_images and os.path.isfile(os.path.join(str(tmp_path), ev.debug_images[0]))
            if m == "oracle":
                assert score.passed and score.value >= 0.99, (s.id, ev.details.get("reasons"))
            elif m == "shortcut" and not s.metadata["process_rule"]:
                pass  # symmetry is a final-state task: a cut to the answer is a valid answer there
            else:
                assert not score.passed, (s.id, m, score.value)
                assert score.value <= 0.5, (s.id, m)
            if m in ("static", "noise", "reversed"):  # a wrong end state: 0 on the suite's scale
                assert score.value == 0.0, (s.id, m, ev.details.get("reason"))


def test_shortcut_cut_mode_fails_process_tasks(samples, tmp_path):
    scorer = SynthVerifierScorer()
    ctx = ScoreContext(run_dir=str(tmp_path))
    for sid in ("maze-hard-000", "sorting-easy-000", "connect-hard-000"):
        v = _gen(samples[sid], "shortcut", 0, str(tmp_path), mode="cut")
        (score,) = scorer.score(samples[sid], v, ctx)
        assert not score.passed
    with pytest.raises(ValueError):
        _gen(samples["maze-easy-000"], "shortcut", 0, str(tmp_path), mode="wipe")


def test_bad_videos_and_samples_become_error_scores(samples, tmp_path):
    scorer = SynthVerifierScorer()
    ctx = ScoreContext(run_dir=str(tmp_path))
    s = samples["connect-easy-000"]
    missing = Video(sample_id=s.id, model="m", seed=0, path=str(tmp_path / "nope.mp4"))
    (sc,) = scorer.score(s, missing, ctx)
    assert sc.status == ScoreStatus.error and sc.value is None and "nope.mp4" in sc.reason
    junk = tmp_path / "junk.mp4"
    junk.write_bytes(b"not a video at all")
    (sc,) = scorer.score(s, Video(sample_id=s.id, model="m", seed=0, path=str(junk)), ctx)
    assert sc.status == ScoreStatus.error and "junk.mp4" in sc.reason
    bare = s.model_copy(update={"metadata": {}})
    (sc,) = scorer.score(bare, missing, ctx)
    assert sc.status == ScoreStatus.error and "metadata" in sc.reason
    assert not scorer.applies(bare)
    # a sample whose stored state no longer matches its re-created instance cannot be generated
    tampered = s.model_copy(update={"metadata": {**s.metadata, "state": {**s.metadata["state"], "n": 99}}})
    v = make_model("oracle").generate(tampered, 0, str(tmp_path / "t.mp4"))
    assert v.status == VideoStatus.failed and "differs" in v.reason
    v = make_model("oracle").generate(bare, 0, str(tmp_path / "t.mp4"))
    assert v.status == VideoStatus.failed and "metadata lacks" in v.reason


def test_black_white_one_frame_videos_score_zero(samples, tmp_path):
    from vreason.frames import write_video

    scorer = SynthVerifierScorer()
    ctx = ScoreContext(run_dir=str(tmp_path))
    for sid in ("maze-easy-000", "symmetry-easy-000", "sorting-easy-000", "connect-easy-000"):
        s = samples[sid]
        _, inst, _ = instance_from_sample(s)
        for name, frames in {"black": [np.zeros((360, 640, 3), np.uint8)] * 4,
                             "white": [np.full((360, 640, 3), 255, np.uint8)] * 4,
                             "one": [inst.first_frame]}.items():
            p = str(tmp_path / f"{sid}-{name}.mp4")
            write_video(p, frames, 16)
            (sc,) = scorer.score(s, Video(sample_id=s.id, model="x", seed=0, path=p), ctx)
            assert sc.status == ScoreStatus.ok and sc.value == 0.0 and sc.passed is False, (sid, name)


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_non_finite_verifier_score_is_an_error_not_a_zero(samples, tmp_path, monkeypatch, bad):
    """A verifier that returns NaN/inf is broken: the scorer reports an error with the reason
    instead of clamping it into a 0 (or 1) that would count as a result."""
    from vreason.synth.base import VerifyResult
    from vreason.synth.suite import get_family

    s = samples["maze-easy-000"]
    fam = type(get_family("maze"))
    monkeypatch.setattr(fam, "verify",
                        lambda self, frames, state, cfg, times=None: VerifyResult(bad, False, {"reason": "x"}))
    v = _gen(s, "static", 0, str(tmp_path))
    (sc,) = SynthVerifierScorer().score(s, v, ScoreContext(run_dir=str(tmp_path)))
    assert sc.status == ScoreStatus.error and sc.value is None
    assert "not a finite" in sc.reason and "maze" in sc.reason
