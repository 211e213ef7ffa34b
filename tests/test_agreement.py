"""Judge-vs-human and human-vs-human agreement: the metric mapping, hand/scipy-computed statistics,
perfect and random judges, unscored items counted, κ/α against textbook values, and the CLI end to end."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from scipy import stats

from vreason.core.records import Evidence, JudgeEvidence, Score, ScoreStatus
from vreason.human.agreement import (
    agreement_tables,
    cohen_kappa,
    fleiss_kappa,
    human_agreement,
    judge_agreement,
    krippendorff_alpha,
)
from vreason.human.agreement_links import METRIC_LINKS, judge_cells
from vreason.human.records import PairVote, RubricLabel
from vreason.human.store import AnnotationStore
from vreason.store import RunStore


def score(sample: str, value: float | None, *, scorer="rise_tc", metric="tc", lo=1, hi=5, model="m", seed=0,
          status="ok", details=None, passed=None) -> Score:
    ev = Evidence(judge=JudgeEvidence(judge="loopback:judge"), details=details or {})
    if status != "ok":
        return Score(sample_id=sample, model=model, seed=seed, scorer=scorer, metric=metric,
                     status=ScoreStatus(status), reason="reply did not parse", evidence=ev)
    return Score(sample_id=sample, model=model, seed=seed, scorer=scorer, metric=metric, value=value,
                 normalized=(value - lo) / (hi - lo), evidence=ev, passed=passed)


def label(sample: str, value: float, *, metric="rise:tc", who="h1", model="m", item="", lo=1, hi=5) -> RubricLabel:
    return RubricLabel(annotator=who, sample_id=sample, model=model, metric=metric, item=item, value=value,
                       normalized=(value - lo) / (hi - lo))


def test_mapping_table_names_real_scorers_and_metrics():
    from vreason.protocols.mmecof import protocol as mmecof
    from vreason.protocols.rise import scorers as rise_scorers
    from vreason.protocols.ruler import protocol as ruler
    from vreason.synth import scorer as synth_scorer

    real = {}
    for mod in (rise_scorers, ruler, mmecof, synth_scorer):
        for obj in vars(mod).values():
            if isinstance(obj, type) and isinstance(getattr(obj, "name", None), str) and hasattr(obj, "metrics"):
                real[obj.name] = tuple(obj.metrics)
    assert {k.split(":")[0] for k in METRIC_LINKS} == {"rise", "ruler", "mmecof", "synth"}
    for key, link in METRIC_LINKS.items():
        for s in link.scorers:
            assert s in real, (key, s)
            assert link.metric == "*" or link.metric in real[s], (key, link.metric, real[s])
    tc = METRIC_LINKS["rise:tc"]
    assert tc.scorers == ("rise_tc",) and (tc.lo, tc.hi) == (1.0, 5.0)
    assert METRIC_LINKS["rise:vq"].levels == (1.0, 2.0, 3.0)
    assert set(METRIC_LINKS["rise:ra"].scorers) == {"rise_ra", "rise_puzzle"}
    assert METRIC_LINKS["ruler:checklist"].levels == (0.0, 1.0, 2.0)


def test_small_table_matches_hand_and_scipy():
    judge, human = [1, 2, 3, 4, 5], [1, 3, 3, 5, 4]
    scores = [score(f"s{i}", v) for i, v in enumerate(judge)]
    labels = [label(f"s{i}", v) for i, v in enumerate(human)]
    row = judge_agreement(METRIC_LINKS["rise:tc"], labels, scores, n_boot=200)
    # |errors| = 0, 1, 0, 1, 1 → MAE 0.6; population STD of the absolute errors sqrt(0.6·0.4) = 0.4899
    assert row["n"] == 5 and row["mae"] == pytest.approx(0.6) and row["std"] == pytest.approx(0.24 ** 0.5)
    assert row["mae_norm"] == pytest.approx(0.6 / 4)
    assert row["acc"] == pytest.approx(2 / 5)
    assert row["kendall"] == pytest.approx(stats.kendalltau(judge, human)[0])
    assert row["spearman"] == pytest.approx(stats.spearmanr(judge, human)[0])
    assert row["pearson"] == pytest.approx(stats.pearsonr(judge, human)[0])
    assert row["mae_lo"] <= row["mae"] <= row["mae_hi"]


def test_human_consensus_is_the_mean_of_annotators():
    scores = [score("s0", 3), score("s1", 5), score("s2", 1)]
    labels = [label("s0", 2, who="a"), label("s0", 4, who="b"), label("s1", 5, who="a"), label("s1", 4, who="b"),
              label("s2", 1, who="a"), label("s2", 2, who="b")]
    row = judge_agreement(METRIC_LINKS["rise:tc"], labels, scores, n_boot=0)
    # consensus 3, 4.5, 1.5 → |err| 0, 0.5, 0.5 → MAE 1/3; ACC per item = share of annotators matching: 0, ½, ½
    assert row["mae"] == pytest.approx(1 / 3) and row["acc"] == pytest.approx(1 / 3)
    assert row["n_labels"] == 6 and row["annotators"] == 2


def test_perfect_judge():
    rng = np.random.default_rng(0)
    vals = rng.integers(1, 6, size=60)
    row = judge_agreement(METRIC_LINKS["rise:tc"], [label(f"s{i}", v) for i, v in enumerate(vals)],
                          [score(f"s{i}", v) for i, v in enumerate(vals)], n_boot=100)
    assert row["mae"] == 0 and row["std"] == 0 and row["acc"] == 1.0
    assert row["kendall"] == pytest.approx(1) and row["spearman"] == pytest.approx(1)
    assert row["pearson"] == pytest.approx(1)


def test_random_judge_is_near_zero():
    rng = np.random.default_rng(1)
    n = 1500
    human, judge = rng.integers(1, 6, size=n), rng.integers(1, 6, size=n)
    row = judge_agreement(METRIC_LINKS["rise:tc"], [label(f"s{i}", v) for i, v in enumerate(human)],
                          [score(f"s{i}", v) for i, v in enumerate(judge)], n_boot=100)
    for k in ("kendall", "spearman", "pearson"):
        assert abs(row[k]) < 0.07 and row[f"{k}_lo"] < 0 < row[f"{k}_hi"]
    assert row["acc"] == pytest.approx(0.2, abs=0.04)  # chance on a 5-level scale
    assert row["mae"] == pytest.approx(1.6, abs=0.1)  # E|X − Y| for two uniform 1..5


def test_unscored_error_and_missing_judge_are_counted_not_zero():
    scores = [score("s0", 4), score("s1", 2), score("s2", None, status="unscored"),
              score("s3", None, status="error")]
    labels = [label("s0", 4), label("s1", 2), label("s2", 5), label("s3", 5), label("s4", 1),
              RubricLabel(annotator="h1", sample_id="s5", model="m", metric="rise:tc", skipped=True)]
    row = judge_agreement(METRIC_LINKS["rise:tc"], labels, scores, n_boot=0)
    assert row["n"] == 2 and row["mae"] == 0.0  # a failed score counted as 0 would give MAE > 0
    assert (row["judge_unscored"], row["judge_error"], row["no_judge"], row["skipped"]) == (1, 1, 1, 1)


def test_ruler_questions_and_mmecof_steps_from_evidence():
    qs = [{"id": "q1", "metric": "IF"}, {"id": "q2", "metric": "RC"}, {"id": "q3", "metric": "RC"}]
    details = {"questions": qs, "labels": ["Good", "Medium", "Poor"]}
    scores = [score("r", 50.0, scorer="ruler_checklist", metric=m, lo=0, hi=100, details=details)
              for m in ("IF", "RC")]
    cells, _ = judge_cells(METRIC_LINKS["ruler:checklist"], scores)
    # each question under its checklist index and its rubric id
    assert {k[3]: c.native for k, c in cells.items()} == {"q1": 2.0, "q2": 1.0, "q3": 0.0, "0": 2.0, "1": 1.0,
                                                          "2": 0.0}
    labels = [label("r", v, metric="ruler:checklist", item=q, lo=0, hi=2) for q, v in (("q1", 2), ("q2", 1),
                                                                                        ("q3", 1))]
    row = judge_agreement(METRIC_LINKS["ruler:checklist"], labels, scores, n_boot=0)
    assert row["n"] == 3 and row["acc"] == pytest.approx(2 / 3)
    # per metric code, items by checklist index (the annotation app's convention): RC = questions 1 and 2
    rc = [label("r", v, metric="ruler:RC", item=i, lo=0, hi=2) for i, v in (("1", 1), ("2", 0), ("0", 2))]
    row = judge_agreement(METRIC_LINKS["ruler:RC"], rc, scores, n_boot=0)
    assert row["n"] == 2 and row["acc"] == 1.0 and row["no_judge"] == 1  # item 0 is an IF question
    steps = [{"id": "st1", "ok": True, "completed": True}, {"id": "st2", "ok": False, "unscored_reason": "x"},
             {"id": "st3", "ok": True, "completed": False}]
    mm = [score("v", None, scorer="mmecof_rs", metric="RS", status="unscored", details={"steps": steps})]
    # the annotation app records a step by its 1-based index
    labels = [label("v", v, metric="mmecof:RS", item=i, lo=0, hi=1) for i, v in (("1", 1), ("2", 1), ("3", 1))]
    row = judge_agreement(METRIC_LINKS["mmecof:RS"], labels, mm, n_boot=0)
    assert row["n"] == 2 and row["acc"] == pytest.approx(0.5) and row["judge_unscored"] == 1


def test_rise_ra_yes_no_answers_average_per_annotator():
    # the judge's RA = share of yes answers; an annotator answers each question yes (1) / no (0)
    scores = [score("s0", 0.5, scorer="rise_ra", metric="ra", lo=0, hi=1),
              score("s1", 1.0, scorer="rise_puzzle", metric="ra", lo=0, hi=1)]
    labels = [label("s0", v, metric="rise:ra", item=str(i), lo=0, hi=1, who=w)
              for w, answers in (("a", (1, 0)), ("b", (1, 1))) for i, v in enumerate(answers)]
    labels += [label("s1", 1, metric="rise:ra", item="0", lo=0, hi=1)]
    row = judge_agreement(METRIC_LINKS["rise:ra"], labels, scores, n_boot=0)
    # s0: a → 0.5, b → 1.0, consensus 0.75 vs judge 0.5; s1: 1 vs 1 → MAE = 0.125
    assert row["n"] == 2 and row["mae"] == pytest.approx(0.125) and row["n_labels"] == 3


def test_cohen_kappa_textbook():
    # 50 items: yes/yes 20, yes/no 5, no/yes 10, no/no 15 → p_o 0.7, p_e 0.5 → κ = 0.4
    a = [1] * 20 + [1] * 5 + [0] * 10 + [0] * 15
    b = [1] * 20 + [0] * 5 + [1] * 10 + [0] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4)


def test_fleiss_kappa_textbook():
    # Fleiss (1971) as worked on Wikipedia: 10 subjects, 14 raters, 5 categories → κ = 0.210
    table = np.array([[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
                      [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]])
    assert fleiss_kappa(table) == pytest.approx(0.210, abs=5e-4)


def test_krippendorff_alpha_textbook():
    # Krippendorff's reliability-data example (3 coders, 15 units, missing allowed): nominal 0.691, interval 0.811
    n = np.nan
    data = np.array([[n, n, n, n, n, 3, 4, 1, 2, 1, 1, 3, 3, n, 3],
                     [1, n, 2, 1, 3, 3, 4, 3, n, n, n, n, n, n, n],
                     [n, n, 2, 1, 3, 4, 4, n, 2, 1, 1, 3, 3, n, 4]])
    assert krippendorff_alpha(data, "nominal") == pytest.approx(0.691, abs=5e-4)
    assert krippendorff_alpha(data, "interval") == pytest.approx(0.811, abs=5e-4)


def test_human_vs_human_two_and_three_annotators():
    labels = [label(f"s{i}", v, who=w) for i, v in enumerate([1, 2, 3, 4, 5, 3]) for w in ("a", "b")]
    row = human_agreement("rise:tc", labels, METRIC_LINKS["rise:tc"], n_boot=50)
    assert row["n"] == 6 and row["annotators"] == 2
    assert row["cohen_kappa"] == pytest.approx(1.0) and row["alpha"] == pytest.approx(1.0)
    assert row["pair_agree"] == 1.0 and np.isnan(row["fleiss_kappa"])
    rng = np.random.default_rng(3)
    noisy = [label(f"s{i}", int(rng.integers(1, 6)), who=w) for i in range(300) for w in ("a", "b", "c")]
    row = human_agreement("rise:tc", noisy, METRIC_LINKS["rise:tc"], n_boot=50)
    assert row["annotators"] == 3 and np.isnan(row["cohen_kappa"])
    assert abs(row["fleiss_kappa"]) < 0.06 and abs(row["alpha"]) < 0.08


def test_unmapped_metric_still_gets_human_agreement():
    labels = [label(f"s{i}", v, metric="custom:x", who=w) for i, v in enumerate([1, 2, 1, 2]) for w in "ab"]
    tables = agreement_tables(labels, [], n_boot=0)
    assert tables["judge_vs_human"].empty and list(tables["unmapped"]["metric"]) == ["custom:x"]
    assert tables["human_vs_human"].iloc[0]["cohen_kappa"] == pytest.approx(1.0)


# ---------------------------------------------------------------------------------------------- CLI end to end
def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "vreason.cli.main", *args], capture_output=True, text=True,
                          timeout=120)


def test_cli_ratings_and_agreement_end_to_end(tmp_path):
    run = tmp_path / "run"
    rng = np.random.default_rng(0)
    models = ["good", "bad", "m<script>|x"]
    with RunStore(run) as store:
        for i in range(12):
            for m, base in zip(models, (5, 2, 3), strict=True):
                s = score(f"s{i}", base if i % 4 else None, model=m, status="ok" if i % 4 else "unscored")
                store.put_unit((f"s{i}", m, 0, "rise_tc"), [s])
    with AnnotationStore(run) as ann:
        t = 0.0
        for i in range(12):
            for a, b in (("good", "bad"), ("bad", "m<script>|x"), ("good", "m<script>|x")):
                for d in ("quality", "physics"):
                    t += 1
                    verdict = "a" if rng.random() < 0.8 else "both_good"
                    ann.add(PairVote(annotator="h1", sample_id=f"s{i}", left_model=a, right_model=b, dimension=d,
                                     verdict=verdict, created=t))
            for m, v in zip(models, (5, 2, 3), strict=True):
                for w in ("h1", "h2"):
                    ann.add(label(f"s{i}", v if w == "h1" else max(1, v - (i % 2)), who=w, model=m))
    res = _cli("ratings", str(run), "--boot", "30")
    assert res.returncode == 0, res.stderr + res.stdout
    out = run / "report" / "human"
    for f in ("ratings_table8.csv", "ratings_long.csv", "ratings_correlation.csv", "ratings.md", "ratings.json"):
        assert (out / f).is_file(), f
    md = (out / "ratings.md").read_text()
    assert "<script>" not in md and "m&lt;script&gt;\\|x" in md
    data = json.loads((out / "ratings.json").read_text())
    rows = {r["model"]: r for r in data["tables"]["ratings_table8"]}
    assert rows["good"]["rank"] == 1 and rows["good"]["elo_overall"] > rows["bad"]["elo_overall"]
    res = _cli("agreement", str(run), "--boot", "30")
    assert res.returncode == 0, res.stderr + res.stdout
    for f in ("agreement_judge.csv", "agreement_human.csv", "agreement.md", "agreement.json"):
        assert (out / f).is_file(), f
    judge = json.loads((out / "agreement.json").read_text())["tables"]["agreement_judge"][0]
    # 3 of 12 samples unscored for 3 models, 2 annotators each → 18 labels counted as judge_unscored
    assert judge["metric"] == "rise:tc" and judge["n"] == 27 and judge["judge_unscored"] == 18
    assert os.path.getsize(out / "agreement_human.csv") > 0


def test_cli_refuses_a_run_without_annotations(tmp_path):
    run = tmp_path / "empty"
    with RunStore(run):
        pass
    res = _cli("ratings", str(run))
    assert res.returncode == 2 and "no pairwise votes" in res.stderr
    res = _cli("agreement", str(run))
    assert res.returncode == 2 and "no rubric labels" in res.stderr
