"""PAI-Bench-C loader, scorers and `vreason run pai-c` end to end on a fixture in the released layout,
with tiny random-init models (Depth Anything, Grounding DINO, SAM), a TorchScript quality model and
random LPIPS weights."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from _pai_c_fixtures import scene, write_dataset, write_results
from _tiny_models import tiny_model
from vreason.core.records import Video
from vreason.core.scoring import ScoreContext
from vreason.protocols.pai.c import scorers as S
from vreason.protocols.pai.c.data import load_pai_c
from vreason.protocols.pai.c.protocol import PaiCOptions


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    import torch

    from vreason.measure.lpips import build_network

    root = tmp_path_factory.mktemp("paic_models")

    class Quality(torch.nn.Module):
        def forward(self, x):
            return x.float().std() / 255.0

    torch.jit.trace(Quality(), torch.zeros(2, 4, 4, 3, dtype=torch.uint8)).save(str(root / "q.pt"))
    torch.manual_seed(0)
    net = build_network("alex")
    state = net.state_dict()
    torch.save({k: v for k, v in state.items() if k.startswith("features.")}, root / "alex_backbone.pth")
    torch.save({k: v.abs() for k, v in state.items() if k.startswith("lin")}, root / "alex_heads.pth")
    return {"depth": f"transformers:{tiny_model('depth_anything', tmp_path_factory)}",
            "detector": f"transformers:{tiny_model('grounding_dino', tmp_path_factory)}",
            "segmenter": f"transformers:{tiny_model('sam', tmp_path_factory)}",
            "quality": f"torchscript:{root / 'q.pt'}", "lpips_backbone": str(root / "alex_backbone.pth"),
            "lpips_heads": str(root / "alex_heads.pth")}


def test_loader_reads_the_released_layout_and_reports_bad_records(tmp_path):
    root = tmp_path / "d"
    write_dataset(root)
    res = load_pai_c(root)
    samples, errors = res.samples, res.errors
    assert errors == []
    assert {s.id: s.category for s in samples} == {"task_0001": "robotics", "task_0002": "driving",
                                                   "task_0003": "egocentric"}
    s = samples[0]
    assert s.prompt == "a red box. a blue ball" and s.resolve(s.reference_video).endswith("videos/task_0001.mp4")
    assert s.metadata["depth_npz"] == "depth_npzs/task_0001.npz" and "blur" in s.metadata["controls"]
    # break records: caption not a single-key dict, caption missing, GT video missing, unsafe id, duplicate
    (root / "captions" / "task_0001.json").write_text(json.dumps({"a": "x", "b": "y"}))
    (root / "captions" / "task_0002.json").unlink()
    with open(root / "metadata.csv", "a") as fh:
        fh.write("task_0009,agibot,10\n../etc,agibot,10\ntask_0003,agibot,10\n")
    res = load_pai_c(root)
    samples, errors = res.samples, res.errors
    assert [s.id for s in samples] == ["task_0003"]
    reasons = {e["field"] + ": " + e["reason"] for e in errors}
    assert any("single-key dict" in r and r.startswith("caption") for r in reasons)
    assert any("task_0002.json: file is missing" in r for r in reasons)
    assert any("videos/task_0009.mp4 is missing" in r for r in reasons)
    assert any(r.startswith("video_id") and "../etc" in r for r in reasons)
    assert len(errors) == 5
    assert any("duplicate" in r for r in reasons)
    assert all(":" in e["where"] for e in errors)


def _score(scorer, sample, path, seed=0):
    return {s.metric: s for s in scorer.score(sample, Video(sample_id=sample.id, model="m", seed=seed, path=path),
                                              ScoreContext())}


def test_validity_self_scores_best_noise_scores_low(tmp_path, models):
    root = write_dataset(tmp_path / "d", ids={"task_0001": "agibot"})
    sample = load_pai_c(root).samples[0]
    gt = sample.resolve(sample.reference_video)
    noise = write_results(tmp_path / "n", root, "noise", k=1, ids=["task_0001"]) + "/task_0001__0.mp4"
    o = PaiCOptions(**models, depth_gt="recompute", seg_gt="recompute", box_threshold=0.0,
                    text_threshold=0.0).model_dump()
    o["device"] = "cpu"
    fid, depth, seg = S.PaiCFidelityScorer(**o), S.PaiCDepthScorer(**o), S.PaiCSegScorer(**o)
    same, bad = _score(fid, sample, gt), _score(fid, sample, noise)
    assert same["blur_ssim"].value == pytest.approx(1.0) and same["canny_f1_score"].value == pytest.approx(1.0)
    assert bad["blur_ssim"].value < 0.3 and bad["canny_f1_score"].value < 0.3
    d_same, d_bad = _score(depth, sample, gt)["depth_si_rmse"], _score(depth, sample, noise)["depth_si_rmse"]
    assert d_same.value == pytest.approx(0.0, abs=1e-9) and d_bad.value > d_same.value
    assert d_same.evidence.details["depth_backend"].startswith("transformers:")
    sg = _score(seg, sample, gt)
    assert sg["seg_m_iou"].status.value == "ok", sg["seg_m_iou"].reason
    assert sg["seg_m_iou"].value == pytest.approx(1.0) and sg["seg_recall"].value == pytest.approx(1.0)


def test_static_prediction_canny_is_unscored_as_released_or_scored_zero_by_option(tmp_path):
    root = write_dataset(tmp_path / "d", ids={"task_0001": "agibot"})
    sample = load_pai_c(root).samples[0]
    static = write_results(tmp_path / "s", root, "static", k=1, ids=["task_0001"]) + "/task_0001__0.mp4"
    got = _score(S.PaiCFidelityScorer(), sample, static)
    assert got["canny_f1_score"].status.value == "unscored" and "no Canny edge" in got["canny_f1_score"].reason
    assert got["canny_f1_score"].value is None
    got = _score(S.PaiCFidelityScorer(canny_degenerate="score"), sample, static)
    assert got["canny_f1_score"].value == 0.0


def test_missing_models_are_unscored_with_the_option_to_pass(tmp_path):
    root = write_dataset(tmp_path / "d", ids={"task_0001": "agibot"})
    sample = load_pai_c(root).samples[0]
    gt = sample.resolve(sample.reference_video)
    for scorer, word in ((S.PaiCDepthScorer(), "depth"), (S.PaiCSegScorer(), "detector"),
                         (S.PaiCDoverScorer(), "quality=torchscript"), (S.PaiCDiversityScorer(), "lpips_backbone")):
        for sc in _score(scorer, sample, gt).values():
            assert sc.status.value == "unscored" and sc.value is None and word in sc.reason


def test_run_end_to_end_writes_tables_and_isolates_bad_inputs(tmp_path, models):
    from vreason.cli.main import app

    root = write_dataset(tmp_path / "d")
    res = write_results(tmp_path / "r", root, "copy", k=2)
    (tmp_path / "r" / "task_0002__1.mp4").write_bytes(b"\x00\x00\x00\x18ftypmp42" + b"\x00" * 64)  # corrupt
    (tmp_path / "d" / "depth_npzs" / "task_0003.npz").unlink()                                      # GT missing
    opts = [f"{k}={v}" for k, v in models.items() if k not in ("detector",)]
    args = ["run", "pai-c", "--data", root, "--videos", res, "--models", "gen", "--seeds", "0,1",
            "--runs", str(tmp_path / "runs"), "--name", "e2e", "--workers", "1", "--detector", models["detector"],
            "--opt", "n_variants=2", "--opt", "lpips_net=alex", *sum((["--opt", o] for o in opts), [])]
    out = CliRunner().invoke(app, args)
    assert out.exit_code == 3, out.output
    run = tmp_path / "runs" / "e2e"
    table = pd.read_csv(run / "report" / "pai_c_metrics.csv")
    got = table.set_index("metric")
    assert got.loc["blur_ssim", "n"] == 5 and got.loc["blur_ssim", "error"] == 1      # corrupt video only
    assert got.loc["depth_si_rmse", "n"] == 3 and got.loc["depth_si_rmse", "error"] == 3
    assert 0.5 < got.loc["blur_ssim", "mean"] <= 1 and got.loc["dover_tech_score", "n"] == 5
    assert got.loc["diversity_lpips", "n"] == 2 and got.loc["diversity_lpips", "mean"] > 0   # task_0002 incomplete
    domains = pd.read_csv(run / "report" / "pai_c_domains.csv")
    assert set(domains["domain"]) == {"robotics", "driving", "egocentric"}
    glob = pd.read_csv(run / "report" / "pai_c_global.csv")
    assert glob.loc[0, "blur_ssim"] == pytest.approx(got.loc["blur_ssim", "mean"])
    scores = [json.loads(line) for line in (run / "scores.jsonl").read_text().splitlines()]
    errs = [s for s in scores if s["status"] == "error"]
    assert any("depth_npzs/task_0003.npz is missing" in s["reason"] for s in errs)
    assert any(s["sample_id"] == "task_0002" and s["seed"] == 1 for s in errs)
    dover = next(s for s in scores if s["metric"] == "dover_tech_score" and s["status"] == "ok"
                 and s["sample_id"] == "task_0001" and s["seed"] == 0)
    frames = np.stack(scene(seed=0, shift=0)).astype(float)
    assert dover["value"] == pytest.approx(frames.std() / 255.0, abs=0.01)  # lossy codec: close, not equal
    assert dover["evidence"]["details"]["quality_backend"] == "torchscript:q.pt"
    summary = json.dumps(json.loads((run / "report" / "summary.json").read_text()))
    assert "torchscript:q.pt" in summary and "diversity_incomplete" in summary
    shutil.rmtree(run)
