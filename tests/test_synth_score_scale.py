"""One score scale across the suite's families: 1 = solved, 0.5 = right end state reached by a
process that breaks the rule, 0 = wrong end state. Trivial baselines must score 0 on the scale,
not only fail the pass flag (a static video earning partial credit is a bug)."""

import numpy as np
import pytest

from vreason.synth.base import RenderConfig
from vreason.synth.suite import FAMILY_MODULES, get_family, make_instance

CFG = RenderConfig(width=320, height=180, fps=12, seconds=3.0)


@pytest.mark.parametrize("family", FAMILY_MODULES)
def test_score_scale(family):
    fam = get_family(family)
    inst = make_instance(family, "medium", 0, 1234, CFG)
    n = len(inst.solution)
    rng = np.random.default_rng(0)
    videos = {
        "oracle": inst.solution,
        "static": [inst.first_frame] * n,
        "noise": [rng.integers(0, 256, inst.first_frame.shape, dtype=np.uint8) for _ in range(n)],
        "reversed": inst.solution[::-1],
        "cut": [inst.first_frame] * (n // 2) + [inst.final_frame] * (n - n // 2),
    }
    got = {k: fam.verify(list(v), inst.state, CFG) for k, v in videos.items()}
    assert got["oracle"].passed and got["oracle"].score == 1.0
    for k in ("static", "noise"):
        assert not got[k].passed and got[k].score == 0.0, (k, got[k].evidence.get("reason"))
    if inst.directional:  # the reversed solution ends in the start state: a wrong end state
        assert not got["reversed"].passed and got["reversed"].score == 0.0, got["reversed"].evidence.get("reason")
    if inst.process_rule:  # a cut reaches the right end state by a forbidden process: exactly half
        assert not got["cut"].passed and got["cut"].score == 0.5, got["cut"].evidence.get("reason")


@pytest.mark.parametrize("family", ["gravity", "maze"])
def test_other_frame_rates_are_verified_on_the_suite_time_base(tmp_path, family):
    """A correct video at 24 fps (the same motion in time) passes; the evidence names its time base."""
    from vreason.core.records import Video
    from vreason.core.scoring import ScoreContext
    from vreason.frames import write_video
    from vreason.synth.scorer import SynthVerifierScorer
    from vreason.synth.suite import make_sample

    cfg = RenderConfig()  # the default the suite renders at (16 fps)
    sample = make_sample(family, "easy", 0, 77, cfg, out_dir=str(tmp_path / "suite"))
    inst = make_instance(family, "easy", 0, 77, cfg)
    n24 = int(round(len(inst.solution) * 24 / cfg.fps))
    frames24 = [inst.solution[min(len(inst.solution) - 1, int(round(j * cfg.fps / 24)))] for j in range(n24)]
    path = str(tmp_path / "v24.mp4")
    write_video(path, frames24, fps=24)
    video = Video(sample_id=sample.id, model="m", seed=0, path=path)
    (score,) = SynthVerifierScorer().score(sample, video, ScoreContext(run_dir=str(tmp_path)))
    assert score.passed and score.value == 1.0, score.evidence.details.get("reason")
    assert score.evidence.frame_policy.startswith("all+times=pts")
    assert score.evidence.frame_indices == list(range(n24))  # every frame, none resampled away
