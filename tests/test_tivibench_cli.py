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
                                   "--detector", "transformers:/nowhere", "--device", "cpu", "--dry-run"])
    assert res.exit_code == 0, res.output
    cfg = json.load(open(os.path.join(tmp_path, "runs", "d", "manifest.json")))["config"]
    assert cfg["seeds"] == [0, 1, 2, 3, 4]
    opts = cfg["resolved_options"]
    assert (opts["features"], opts["detector"], opts["device"]) == ("classical:hog-hsv", "transformers:/nowhere", "cpu")
    res = CliRunner().invoke(app, ["run", "tivibench", "--runs", str(tmp_path / "runs"), "--name", "e", "--data", data,
                                   "--videos", str(vids), "--models", "mine", "--opt", "ocr=tesseract", "--dry-run"])
    assert "ocr must be one of 'rapidocr' or 'none'" in str(res.exception)  # main() turns it into exit code 2
