"""`vreason run tivibench`: --features/--detector/--device reach the protocol's options, seeds default to 0..4,
and a videos folder in the release's layout is found."""

from __future__ import annotations

import json
import os

from typer.testing import CliRunner

from _tivibench_fixtures import release, video
from vreason.cli.main import app


def test_run_tivibench_options_and_default_seeds(tmp_path):
    data = release(str(tmp_path / "data"))
    vids = tmp_path / "vids"
    video(str(vids / "SL_medium_gamerule_001" / "SL_medium_gamerule_001-0.mp4"))
    res = CliRunner().invoke(app, ["run", "tivibench", "--runs", str(tmp_path / "runs"), "--name", "d", "--data", data,
                                   "--videos", str(vids), "--models", "mine", "--features", "classical:hog-hsv",
                                   "--detector", "transformers:/nowhere", "--device", "cpu", "--judge", "mock",
                                   "--dry-run"])
    assert res.exit_code == 0, res.output
    cfg = json.load(open(os.path.join(tmp_path, "runs", "d", "manifest.json")))["config"]
    assert cfg["seeds"] == [0, 1, 2, 3, 4]
    opts = cfg["resolved_options"]
    assert (opts["features"], opts["detector"], opts["device"]) == ("classical:hog-hsv", "transformers:/nowhere", "cpu")
    res = CliRunner().invoke(app, ["run", "tivibench", "--runs", str(tmp_path / "runs"), "--name", "e", "--data", data,
                                   "--videos", str(vids), "--models", "mine", "--opt", "ocr=tesseract", "--dry-run"])
    assert "ocr must be one of 'rapidocr' or 'none'" in str(res.exception)  # main() turns it into exit code 2


def test_run_tivibench_with_a_scripted_judge(tmp_path):
    """End to end with --judge: the QA sample passes on matching answers; the match-3 sample (default metric,
    no annotation) is scored by its check; a seed without a video is an error, not a failure."""
    import pandas as pd

    data = release(str(tmp_path / "data"), prompts={
        "SL": [{"image": "images/SL/SL_medium_gamerule_001.png", "prompt": "Make a match of three."}],
        "AT": {"data": [{"id": "easy_tool_001", "text": "Pick up the wrench and loosen the nut."}]}},
        annotations=[json.dumps({"key": "easy_tool_001", "dimension": "AT", "task_type": "tool",
                                 "difficulty": "easy", "metric": {"family": "vlm_qa", "questions": [
                                     {"text": "Is the wrench picked up?", "expected": "yes"},
                                     {"text": "Does the nut fall off?", "expected": "no"}]}})])
    vids = tmp_path / "vids"
    for sid in ("AT_easy_tool_001", "SL_medium_gamerule_001"):
        video(str(vids / sid / f"{sid}-0.mp4"))
    script = tmp_path / "judge.jsonl"
    script.write_text(json.dumps({"match": "wrench", "reply": '{"answers": ["yes", "no"]}'}) + "\n")
    runs = str(tmp_path / "runs")
    res = CliRunner().invoke(app, ["run", "tivibench", "--runs", runs, "--name", "j", "--data", data, "--videos",
                                   str(vids), "--models", "mine", "--seeds", "0,1", "--judge", f"scripted:{script}",
                                   "--workers", "1"])
    assert res.exit_code == 3, res.output  # seed 1 has no video: finished with errors
    cells = pd.read_csv(os.path.join(runs, "j", "report", "tivibench_cells.csv"))
    at = cells[(cells["k"] == 1) & (cells["dimension"] == "AT") & (cells["difficulty"] == "overall")].iloc[0]
    assert (at["value"], at["n_videos"], at["n_error"], at["n_short"]) == (100.0, 1, 1, 0)
    sl = cells[(cells["k"] == 5) & (cells["dimension"] == "SL") & (cells["difficulty"] == "overall")].iloc[0]
    assert sl["n_error"] == 1 and sl["n_videos"] + sl["n_unscored"] == 1 and sl["n_short"] == sl["n_videos"]
