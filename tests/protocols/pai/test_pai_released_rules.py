"""PAI-Bench-G/U defaults equal to the released code on small inputs built here (issue 25 items 2, 5, 6, 7;
issue 21 item 5). Each expected value is computed the released way in the test itself, from the formula
(file and function of origin named in a comment), never with vreason's own aggregation."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from vreason.core.records import Sample
from vreason.judge.parsers import ParseFailure
from vreason.protocols.pai.g.protocol import PaiGOptions, has_answer_word, official_correct, reply_parser
from vreason.protocols.pai.g.quality import DIMENSIONS, ConsistencyAcc
from vreason.protocols.pai.g.tables import aggregate_pai_g
from vreason.protocols.pai.tables import aggregate_pai_u, fig9_group
from vreason.protocols.pai.u.protocol import is_correct, released_answer


# ----------------------------------------------------------------------------- 25.5 judge replies
def _released_check_answer_accuracy(reply: str, gt: str) -> bool:
    # predict/evaluate_vqa.py, check_answer_accuracy: lower-cased substring test, no parse failure at all
    a = reply.lower().strip()
    if gt.lower() == "yes":
        return "yes" in a and "no" not in a
    if gt.lower() == "no":
        return "no" in a and "yes" not in a
    return gt.lower() in a


REPLIES = ["Yes", "No.", "Maybe.", "", "Hard to say", "Yes, no", "It does not", "YES!", "unclear"]


@pytest.mark.parametrize("gt", ["Yes", "No"])
def test_domain_reply_rule_default_is_released(gt):
    from vreason.protocols.pai.g.protocol import PaiGDomainScorer

    assert PaiGDomainScorer().unparsed == "wrong"  # the default: strict=False below
    parse = reply_parser(gt, "official", strict=False)
    for r in REPLIES:
        assert parse(r) == _released_check_answer_accuracy(r, gt) == official_correct(r, gt), r
    # the vreason option (unparsed=unscored) refuses exactly the replies without an answer word
    strict = reply_parser(gt, "official", strict=True)
    for r in REPLIES:
        if has_answer_word(r, gt):
            assert strict(r) == _released_check_answer_accuracy(r, gt)
        else:
            with pytest.raises(ParseFailure):
                strict(r)
    assert PaiGOptions().unparsed == "wrong"


def test_pai_u_missing_answer_tag_is_a_wrong_answer_as_released():
    # reason/run.py: the text between <answer> tags, else the whole reply + " N/A"; lower-cased, "." and spaces
    # removed, compared with the letter
    def released(reply: str, gt: str) -> bool:
        ans = reply.split("<answer>")[1].split("</answer>")[0].strip() if "<answer>" in reply else reply + " N/A"
        return ans.lower().replace(".", "").replace(" ", "") == gt.lower().replace(".", "").replace(" ", "")

    for reply in ["<answer>B</answer>", "<think>x</think><answer> b. </answer>", "B", "The answer is B", "A"]:
        ans, tagged = released_answer(reply)
        assert is_correct(ans, "B") == released(reply, "B"), reply
        assert tagged == ("<answer>" in reply)
    assert released_answer("B")[0] == "B N/A"


def _q_row(model, sid, seed, qs):
    qrows = []
    for uid, correct, wrong in qs:
        r = {"uid": uid, "correct": correct}
        if wrong:
            r["counted_wrong"] = "no yes/no word"
        qrows.append(r)
    return {"sample_id": sid, "model": model, "seed": seed, "scorer": "pai_g_domain", "metric": "domain",
            "value": 0.0, "normalized": 0.0, "status": "ok", "reason": None,
            "evidence": json.dumps({"details": {"questions": qrows}})}


def _dim_row(model, sid, seed, metric, v, **details):
    return {"sample_id": sid, "model": model, "seed": seed, "scorer": "pai_g_quality", "metric": metric,
            "value": v, "normalized": min(1.0, max(0.0, v)), "status": "ok", "reason": None,
            "evidence": json.dumps({"details": details})}


SAMPLES = [Sample(id="av_1", benchmark="pai-g", category="av"), Sample(id="robot_1", benchmark="pai-g",
                                                                        category="robot")]


def test_domain_counts_replies_counted_wrong_beside_the_numbers():
    scores = pd.DataFrame([_q_row("m", "av_1", 0, [("a", False, True), ("b", True, False)]),
                           _q_row("m", "robot_1", 0, [("c", True, False)])])
    res = aggregate_pai_g(scores, SAMPLES, "", n_boot=20, write=False)
    t8 = res.tables["pai_g_table8"].set_index("model")
    # released compute_vqa_accuracy: video = mean over questions, overall = mean over videos
    assert t8.loc["m", "Domain"] == pytest.approx(100 * (0.5 + 1.0) / 2)
    assert t8.loc["m", "replies_counted_wrong"] == 1 and t8.loc["m", "Domain_note"].startswith("1 replies")
    assert "1 replies without yes/no counted wrong" in t8.loc["m", "Overall_note"]  # Overall includes Domain
    cat = res.tables["pai_g_domain_by_category"].set_index("domain")
    assert cat.loc["av", "replies_counted_wrong"] == 1 and cat.loc["robot", "replies_counted_wrong"] == 0
    assert any("1 judge replies without yes/no counted wrong" in h for h in res.summary["header"])


# ----------------------------------------------------------------------------- 25.2 frame-weighted consistency
def test_consistency_over_unequal_videos_is_frame_weighted_as_released():
    rng = np.random.default_rng(3)
    feats = {"av_1": rng.normal(size=(4, 8)), "robot_1": rng.normal(size=(10, 8))}  # 3 and 9 frame pairs

    # VBench background_consistency.py / subject_consistency.py (one process): per frame t ≥ 1,
    # (max(0, cos(f_{t-1}, f_t)) + max(0, cos(f_0, f_t))) / 2 summed over all videos, divided by the summed
    # number of such frames (sim / cnt), not a mean of per-video means
    def cos(a, b):
        return max(0.0, float(a @ b / np.linalg.norm(a) / np.linalg.norm(b)))

    total, count, per_video = 0.0, 0, []
    for f in feats.values():
        sims = [(cos(f[t - 1], f[t]) + cos(f[0], f[t])) / 2 for t in range(1, len(f))]
        total, count = total + sum(sims), count + len(sims)
        per_video.append(np.mean(sims))
    released, per_video_mean = total / count, float(np.mean(per_video))
    assert abs(released - per_video_mean) > 1e-3  # the inputs tell the two aggregations apart

    rows = []
    for sid, f in feats.items():
        acc = ConsistencyAcc("released")
        acc.add(f[:3])
        acc.add(f[3:])  # streamed in two batches
        for d in ("subject_consistency", "background_consistency"):
            rows.append(_dim_row("m", sid, 0, d, acc.result(), pairs=acc.n))
    scores = pd.DataFrame(rows)
    dims = aggregate_pai_g(scores, SAMPLES, "", n_boot=20, write=False).tables["pai_g_quality_dimensions"]
    got = dims.set_index("dimension")
    for d in ("subject_consistency", "background_consistency"):
        assert got.loc[d, "value"] == pytest.approx(round(100 * released, 2), abs=1e-9)
        assert got.loc[d, "aggregation"] == "summed similarities / summed frame pairs"
    alt = aggregate_pai_g(scores, SAMPLES, "", n_boot=20, write=False, dimension_mean="per_video")
    got = alt.tables["pai_g_quality_dimensions"].set_index("dimension")
    assert got.loc["background_consistency", "value"] == pytest.approx(round(100 * per_video_mean, 2), abs=1e-9)


def test_other_dimensions_average_video_files_as_released():
    # VBench aesthetic_quality.py etc.: one value per video file (each seed is a file), mean over files
    rows = [_dim_row("m", "av_1", 0, "aesthetic_quality", 0.2), _dim_row("m", "av_1", 1, "aesthetic_quality", 0.4),
            _dim_row("m", "robot_1", 0, "aesthetic_quality", 0.9)]
    res = aggregate_pai_g(pd.DataFrame(rows), SAMPLES, "", n_boot=20, write=False)
    v = res.tables["pai_g_quality_dimensions"].set_index("dimension").loc["aesthetic_quality", "value"]
    assert v == pytest.approx(100 * (0.2 + 0.4 + 0.9) / 3)
    alt = aggregate_pai_g(pd.DataFrame(rows), SAMPLES, "", n_boot=20, write=False, dimension_mean="per_video")
    v = alt.tables["pai_g_quality_dimensions"].set_index("dimension").loc["aesthetic_quality", "value"]
    assert v == pytest.approx(100 * (0.3 + 0.9) / 2)


# ----------------------------------------------------------------------------- 25.6 edge cases
def test_aesthetic_above_the_normaliser_stays_unbounded_and_is_counted():
    # VBench aesthetic_quality.py: LAION score / 10 with no clamp; a score of 12 gives 1.2
    rows = [_dim_row("m", "av_1", 0, "aesthetic_quality", 1.2, normalized_unclamped=1.2),
            _dim_row("m", "robot_1", 0, "aesthetic_quality", 0.6)]
    res = aggregate_pai_g(pd.DataFrame(rows), SAMPLES, "", n_boot=20, write=False)
    d = res.tables["pai_g_quality_dimensions"].set_index("dimension").loc["aesthetic_quality"]
    assert d["value"] == pytest.approx(100 * (1.2 + 0.6) / 2) and d["outside_0_1"] == 1
    assert res.tables["pai_g_table8"].iloc[0]["values_outside_0_1"] == 1
    clamped = aggregate_pai_g(pd.DataFrame(rows), SAMPLES, "", n_boot=20, write=False, clamp=True)
    d = clamped.tables["pai_g_quality_dimensions"].set_index("dimension").loc["aesthetic_quality"]
    assert d["value"] == pytest.approx(100 * (1.0 + 0.6) / 2)


def test_a_category_without_videos_is_reported_zero_and_flagged():
    from vreason.protocols.pai.g.data import CATEGORIES

    scores = pd.DataFrame([_q_row("m", "av_1", 0, [("a", True, False)])])
    res = aggregate_pai_g(scores, SAMPLES, "", n_boot=20, write=False)
    cat = res.tables["pai_g_domain_by_category"].set_index("domain")
    # predict/evaluate_vqa.py: category_scores has every category; one without a video scores 0.0
    assert set(CATEGORIES) <= set(cat.index)
    assert cat.loc["robot", "value"] == 0.0 and bool(cat.loc["robot", "empty"]) and cat.loc["robot", "n"] == 0
    assert cat.loc["av", "value"] == 100.0 and not bool(cat.loc["av", "empty"])
    assert res.summary["counts"]["empty_categories"] == len(CATEGORIES) - 1


# ----------------------------------------------------------------------------- 21.5 dimensions and cell notes
def test_quality_cell_names_dimensions_and_substitutes():
    from vreason.report.cells import render_table

    rows = [_dim_row("m", s, 0, d, 0.8, substitute=sub) for s in ("av_1", "robot_1")
            for d, sub in (("motion_smoothness", "linear (AMT in the released code)"),
                           ("subject_consistency", "classical:hog-hsv (DINO ViT-B/16 in the released code)"),
                           ("imaging_quality", ""))]
    rows += [_q_row("m", "av_1", 0, [("a", True, False)])]
    chosen = ["subject_consistency", "motion_smoothness", "imaging_quality"]
    res = aggregate_pai_g(pd.DataFrame(rows), SAMPLES, "", n_boot=20, write=False, dimensions=chosen)
    t8 = res.tables["pai_g_table8"]
    note = t8.iloc[0]["Quality_note"]
    assert note.startswith("3/8 dims chosen") and "motion_smoothness=linear" in note
    assert "subject_consistency=classical:hog-hsv" in note
    cols, cells = render_table(t8, res.summary["table_formats"]["pai_g_table8"])
    q = cells[0][cols.index("Quality")].text
    assert q.startswith("80.00") and "(3/8 dims chosen; substitutes:" in q
    assert "Quality_note" not in cols and t8.iloc[0]["Quality"] == pytest.approx(80.0)  # the number stays numeric
    dims = res.tables["pai_g_quality_dimensions"]
    assert set(dims["dimension"]) == set(chosen)  # not chosen: not a row, not unscored


def test_dimensions_option_validates_and_limits_the_scorer():
    from vreason.protocols.pai.g.measure import PaiGQualityScorer

    o = PaiGOptions(dimensions="motion_smoothness, subject_consistency")
    assert o.dimension_list() == ["subject_consistency", "motion_smoothness"]  # released order
    with pytest.raises(ValueError, match="unknown dimension"):
        PaiGOptions(dimensions="motion,subject_consistency")
    sc = PaiGQualityScorer(interpolator="linear", dimensions=("motion_smoothness",))
    assert sc.metrics == ("motion_smoothness",)
    assert PaiGQualityScorer().metrics == DIMENSIONS


def test_motion_smoothness_only_run_needs_no_checkpoint(tmp_path):
    from _pai_gu_fixtures import write_g_dataset, write_g_videos
    from vreason.core.records import Video
    from vreason.core.scoring import ScoreContext
    from vreason.protocols.pai.g.data import load_pai_g
    from vreason.protocols.pai.g.measure import PaiGQualityScorer

    write_g_videos(str(tmp_path / "v"), ["av_0001"])
    s = load_pai_g(write_g_dataset(str(tmp_path / "G"))).samples[0]
    out = PaiGQualityScorer(interpolator="linear", dimensions=("motion_smoothness",)).score(
        s, Video(sample_id=s.id, model="m", path=str(tmp_path / "v/av_0001__0.mp4")), ScoreContext())
    assert [(x.metric, x.status.value) for x in out] == [("motion_smoothness", "ok")]


# ----------------------------------------------------------------------------- 25.7 layouts
def test_table8_has_the_elo_half_beside_the_evaluation_half():
    from vreason.human.ratings import ELO_K, ELO_START, pai_elo_half
    from vreason.human.records import PairVote

    votes = [PairVote(annotator="h", sample_id="av_1", left_model="m", right_model="src", dimension="quality",
                      verdict="a", created=1.0),
             PairVote(annotator="h", sample_id="av_1", left_model="m", right_model="src", dimension="physics",
                      verdict="b", created=1.0)]
    elo = pai_elo_half(votes)
    # paper A.4: start 1000, K 32; one win each way on the two trackers; overall from the averaged preference 0.5
    e = 1 / (1 + 10 ** 0)
    row = elo.set_index("model").loc["m"]
    assert row["ELO Quality"] == pytest.approx(ELO_START + ELO_K * (1 - e))
    assert row["ELO Domain"] == pytest.approx(ELO_START + ELO_K * (0 - e))
    assert row["ELO Overall"] == pytest.approx(ELO_START)
    scores = pd.DataFrame([_q_row("m", "av_1", 0, [("a", True, False)])])
    t8 = aggregate_pai_g(scores, SAMPLES, "", n_boot=20, write=False, elo=elo).tables["pai_g_table8"]
    assert list(t8.columns[:4]) == ["model", "ELO Overall", "ELO Domain", "ELO Quality"]
    assert {"Overall", "Domain", "Quality"} <= set(t8.columns) and set(t8["model"]) == {"m", "src"}


def test_pai_u_reports_the_papers_fig9_groups_beside_space_time():
    assert fig9_group("space_direction") == ("Common Sense", "Space")
    assert fig9_group("Time_order") == ("Common Sense", "Time")
    assert fig9_group("physics_gravity") == ("Common Sense", "Physics")
    assert fig9_group("embodied", "robovqa_affordance") == ("Embodied Reasoning", "RoboVQA")
    assert fig9_group("bridgedata_v2") == ("Embodied Reasoning", "BridgeData V2")
    assert fig9_group("av", "next action") == ("Embodied Reasoning", "AV")
    assert fig9_group("navigation") is None and fig9_group("avatar") is None

    items = [("u1", "space_x", "a", 1.0), ("u2", "time_y", "b", 0.0), ("u3", "agibot", "next", 1.0),
             ("u4", "holoassist", "next", 0.0), ("u5", "holoassist", "next", 1.0)]
    samples = [Sample(id=i, benchmark="pai-u", category=c, task=t) for i, c, t, _ in items]
    scores = pd.DataFrame([{"sample_id": i, "model": "vlm", "seed": 0, "scorer": "pai_u_mcq", "metric": "correct",
                            "value": v, "normalized": v, "status": "ok", "reason": None,
                            "evidence": json.dumps({"details": {}})} for i, _, _, v in items])
    acc = aggregate_pai_u(scores, samples, "", n_boot=20, write=False).tables["pai_u_accuracy"]
    g = acc[acc.level == "fig9_group"].set_index("name")["accuracy"]
    assert g["Common Sense"] == 50.0 and g["Embodied Reasoning"] == pytest.approx(200 / 3, abs=0.01)
    sub = acc[acc.level == "fig9_subgroup"].set_index("name")["accuracy"]
    assert sub["Embodied Reasoning / HoloAssist"] == 50.0 and sub["Embodied Reasoning / AgiBot"] == 100.0
    released = acc[acc.level == "group"].set_index("name")["accuracy"]
    assert released["Space"] == 100.0 and released["Time"] == 0.0  # the released main groups stay


def test_run_with_chosen_dimensions_and_no_checkpoint_exits_zero(tmp_path):
    from typer.testing import CliRunner

    from _pai_gu_fixtures import write_g_dataset, write_g_videos
    from vreason.cli.main import app

    data = write_g_dataset(str(tmp_path / "G"))
    write_g_videos(str(tmp_path / "v"), ["av_0001", "robot_0002", "physics_0003"])
    res = CliRunner().invoke(app, ["run", "pai-g", "--data", data, "--videos", str(tmp_path / "v"), "--models", "m",
                                   "--runs", str(tmp_path / "runs"), "--name", "d", "--workers", "1",
                                   "--opt", "domain=false", "--opt", "dimensions=motion_smoothness",
                                   "--opt", "interpolator=linear", "--opt", "n_boot=20"])
    assert res.exit_code == 0, res.output
    rep = tmp_path / "runs" / "d" / "report"
    assert not (rep / "pai_g_domain_by_category.csv").exists()  # no domain run: no 0.0 category rows
    t8 = pd.read_csv(rep / "pai_g_table8.csv")
    assert "1/8 dims chosen; substitutes: motion_smoothness=linear" in t8.iloc[0]["Quality_note"]
    assert "(1/8 dims chosen; substitutes: motion_smoothness=linear)" in (rep / "report.md").read_text()
    assert "(1/8 dims chosen; substitutes: motion_smoothness=linear)" in (rep / "index.html").read_text()


def test_report_puts_the_runs_votes_beside_table8_and_manifest_records_options(tmp_path):
    from typer.testing import CliRunner

    from _pai_gu_fixtures import write_g_dataset, write_g_videos
    from vreason.cli.main import app
    from vreason.human.records import PairVote
    from vreason.human.store import AnnotationStore
    from vreason.store import RunStore

    data = write_g_dataset(str(tmp_path / "G"))
    for m in ("m1", "m2"):
        write_g_videos(str(tmp_path / "v" / m), ["av_0001", "robot_0002", "physics_0003"])
    run = str(tmp_path / "runs" / "e")
    res = CliRunner().invoke(app, ["run", "pai-g", "--data", data, "--videos", str(tmp_path / "v"), "--models",
                                   "m1,m2", "--runs", str(tmp_path / "runs"), "--name", "e", "--workers", "1",
                                   "--opt", "domain=false", "--opt", "dimensions=motion_smoothness",
                                   "--opt", "interpolator=linear", "--opt", "n_boot=20"])
    assert res.exit_code == 0, res.output
    with RunStore(run, create=False) as st:
        text = json.dumps(st.read_manifest())
    for key in ('"unparsed": "wrong"', '"dimension_mean": "released"', '"clamp": false'):
        assert key in text  # the released defaults are recorded, not only departures
    with AnnotationStore(run) as ann:
        for dim, verdict in (("quality", "a"), ("physics", "a")):
            ann.add(PairVote(annotator="h", sample_id="av_0001", left_model="m1", right_model="m2", dimension=dim,
                             verdict=verdict, created=1.0))
    res = CliRunner().invoke(app, ["report", run])
    assert res.exit_code == 0, res.output
    t8 = pd.read_csv(f"{run}/report/pai_g_table8.csv").set_index("model")
    assert t8.loc["m1", "ELO Overall"] == pytest.approx(1016.0) and t8.loc["m2", "ELO Quality"] == pytest.approx(984.0)
    assert t8.loc["m1", "Quality"] > 90 and list(t8.columns[:3]) == ["ELO Overall", "ELO Domain", "ELO Quality"]
