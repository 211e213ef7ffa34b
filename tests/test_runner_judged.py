"""The runner with a judged protocol (RISE fixture) against the loopback judge: dry run, real run,
resume from the store and the judge cache."""

import os
import shutil

from fixtures_rise import write_dataset, write_videos
from test_rise_e2e import judge_script
from vreason.runner.run import RunConfig, Runner
from vreason.store import RunStore
from vreason.testing.loopback import LoopbackServer


def test_dry_run_sends_and_stores_nothing_then_real_run_and_resume(tmp_path):
    data = write_dataset(str(tmp_path / "RISE"))
    videos = str(tmp_path / "videos")
    write_videos(videos, "good", good=True)
    run_dir = str(tmp_path / "runs" / "rise")
    with LoopbackServer(judge_script(True)) as srv:
        def cfg(**kw):
            return RunConfig(protocol="rise", run_dir=run_dir, models=["good"],
                             options={"data": data, "videos": videos, "n_boot": 100},
                             judges={"default": f"vllm:judge@{srv.base_url}"}, workers=1, **kw)

        dry = Runner(cfg(dry_run=True)).run()
        assert srv.count == 0
        est = dry.judge_stats["default"]
        assert est["questions"] > 0 and est.get("estimated_requests", 0) > 0
        with RunStore(run_dir) as st:
            assert st.counts()["units"] == {}  # nothing persisted: a later real run is not blocked

        real = Runner(cfg()).run()
        assert real.units_run == {"ok": real.units_total}
        sent = srv.count
        assert sent > 0 and real.judge_stats["default"]["requests"] == sent
        with RunStore(run_dir) as st:
            df = st.scores_frame()
        judged = df[df.judge.notna()]
        assert len(judged) and judged.judge.str.contains("judge").all()
        assert judged.evidence.str.contains("raw_reply").all() and judged.frame_policy.notna().all()

        # the runs below check units and requests only: no report (≈ 3–8 s each; the real run above wrote one)
        again = Runner(cfg(aggregate=False)).run()  # resume: every unit already done, no request
        assert again.units_skipped == real.units_total and srv.count == sent

        retry = Runner(cfg(retry_failed=True, aggregate=False)).run()  # nothing failed: still nothing to do
        assert retry.units_run == {} and srv.count == sent

        # a fresh run directory holding the same judge cache file answers from it: zero requests
        run2 = os.path.join(str(tmp_path), "runs", "rise2")
        os.makedirs(run2)
        shutil.copy(os.path.join(run_dir, "judge_cache.sqlite"), os.path.join(run2, "judge_cache.sqlite"))
        fresh = Runner(RunConfig(protocol="rise", run_dir=run2, models=["good"],
                                 options={"data": data, "videos": videos, "n_boot": 100},
                                 judges={"default": f"vllm:judge@{srv.base_url}"}, workers=1,
                                 aggregate=False)).run()
        assert fresh.units_run == {"ok": real.units_total} and srv.count == sent
        with RunStore(run2) as st:
            assert (st.scores_frame().evidence.str.contains('"cached": true')).any()


def test_ruler_through_the_runner_with_its_own_video_layout(tmp_path):
    """`vreason run ruler --videos DIR` finds {model}/{task_name}/{index}.mp4 without --convention."""
    from _ruler_mmecof_fixtures import keyed_script, ruler_dataset, ruler_videos
    from test_ruler_e2e import SCRIPTS
    from vreason.protocols.ruler.protocol import RulerProtocol

    data = ruler_dataset(str(tmp_path / "data"))
    samples = RulerProtocol(data=data).load().samples
    videos = str(tmp_path / "videos")
    ruler_videos(videos, ["m1"], samples)
    with LoopbackServer(keyed_script(SCRIPTS["m1"])) as srv:
        s = Runner(RunConfig(protocol="ruler", run_dir=str(tmp_path / "run"), models=["m1"],
                             options={"data": data, "n_boot": 100}, videos_dir=videos,
                             judges={"default": f"vllm:judge@{srv.base_url}"}, workers=1)).run()
    assert s.videos == {"ok": 3} and s.units_run == {"ok": 3}
    with RunStore(str(tmp_path / "run")) as st:
        df = st.scores_frame()
    assert set(df.sample_id) == {x.id for x in samples} and (df.status == "ok").all()
    assert (tmp_path / "run" / "report" / "ruler_tables.md").exists()
