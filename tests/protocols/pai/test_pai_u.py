"""PAI-Bench-U: the MCQ letter rule, the loader's per-item errors, and `vreason run pai-u` end to end against the
loopback judge (the model under test), with a corrupt video and a reply without an answer tag."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from typer.testing import CliRunner

from _pai_gu_fixtures import write_u_dataset
from _ruler_mmecof_fixtures import body_text
from vreason.cli.main import app
from vreason.judge.parsers import ParseFailure
from vreason.protocols.pai.tables import main_group
from vreason.protocols.pai.u.data import load_pai_u
from vreason.protocols.pai.u.protocol import answer_text, choices_text, is_correct


def test_letter_rule_as_released():
    assert answer_text("<think>hmm</think>\n<answer> B. </answer>") == "B."
    assert is_correct("B.", "B") and is_correct(" b ", "B") and is_correct("B", "b.")
    assert not is_correct("B: right", "B")  # the option text is not stripped: exact letter only
    assert not is_correct("A", "B")
    assert answer_text("<answer>C</answer> then <answer>D</answer>") == "C"  # the first tag, as released
    assert answer_text("<answer>C") == "C"  # an unclosed tag runs to the end
    with pytest.raises(ParseFailure):
        answer_text("<think>I think B</think> B")
    assert choices_text({"A": "left", "B": "right", "C": None}) == "A: left\nB: right"
    assert main_group("Space_direction") == "Space" and main_group("time_order") == "Time" and main_group("x") is None


def test_loader_items_and_errors(tmp_path):
    res = load_pai_u(write_u_dataset(str(tmp_path / "U")))
    assert [s.id for s in res.samples] == ["u00000", "u00001", "u00002", "u00003"]
    s0 = res.samples[0]
    assert s0.category == "space_direction" and s0.task == "direction" and s0.metadata["answer"] == "B"
    assert s0.metadata["index2ans"] == {"A": "left", "B": "right", "C": "up"}  # None options dropped
    fields = sorted(e["field"] for e in res.errors)
    assert fields == ["answer", "answer", "record"]  # no answer, answer not an option, a line that is not JSON


def _reply(body):
    text = body_text(body)
    if "QU_1" in text:
        return "<think>it glides to the right</think>\n<answer>B</answer>"
    if "QU_2" in text:
        return "<think>constant speed</think>\n<answer>A</answer>"  # wrong
    if "QU_3" in text:
        return "The square is yellow."  # no answer tag, every time
    return "<answer>A</answer>"


def _run(tmp_path, srv, *extra):
    data = str(tmp_path / "U")
    return CliRunner().invoke(app, ["run", "pai-u", "--data", data, "--models", "cosmos-reason1", "--runs",
                                    str(tmp_path / "runs"), "--judge", f"vllm:cr1@{srv.base_url}", "--workers", "1",
                                    "--opt", "n_boot=100", *extra])


def test_vreason_run_pai_u_end_to_end(tmp_path):
    from vreason.testing.loopback import LoopbackServer

    write_u_dataset(str(tmp_path / "U"))
    with LoopbackServer(_reply) as srv:
        res = _run(tmp_path, srv, "--name", "u")
        body = srv.requests[0]
    assert res.exit_code == 3, res.output  # a corrupt video
    sys_msg = body["messages"][0]["content"]
    assert "<think>reasoning</think>\n<answer>answer</answer>." in json.dumps(sys_msg).replace("\\n", "\n")
    assert body["temperature"] == 0.6 and body["top_p"] == 0.95 and body.get("repetition_penalty") == 1.05
    rep = tmp_path / "runs" / "u" / "report"
    acc = pd.read_csv(rep / "pai_u_accuracy.csv")
    ov = acc[acc.level == "overall"].iloc[0]
    # released rule: QU_3's reply without <answer> is a wrong answer, counted beside the number
    assert ov["accuracy"] == pytest.approx(100 / 3, abs=0.01) and ov["n"] == 3 and ov["unscored"] == 0
    assert ov["errors"] == 1 and ov["counted_wrong"] == 1 and "1 replies without <answer>" in ov["note"]
    grp = acc[acc.level == "group"].set_index("name")
    assert grp.loc["Space", "accuracy"] == 50.0 and grp.loc["Space", "counted_wrong"] == 1
    assert grp.loc["Time", "accuracy"] == 0.0 and grp.loc["Time", "errors"] == 1
    sub = acc[acc.level == "subcategory"].set_index("name")
    assert sub.loc["direction", "accuracy"] == 100.0 and sub.loc["colour", "accuracy"] == 0.0
    f9 = acc[acc.level == "fig9_subgroup"].set_index("name")
    assert f9.loc["Common Sense / Space", "accuracy"] == 50.0 and f9.loc["Common Sense / Time", "accuracy"] == 0.0
    md = (tmp_path / "runs" / "u" / "report" / "pai_u_tables.md").read_text()
    assert "1 replies without an <answer> tag counted wrong" in md
    from vreason.store import RunStore

    with RunStore(str(tmp_path / "runs" / "u"), create=False) as st:
        df = st.scores_frame()
    w = df[df.sample_id == "u00002"].iloc[0]
    assert w.value == 0.0 and "The square is yellow. N/A" in w.evidence  # compared with " N/A", as released


def test_missing_answer_unscored_is_a_named_option(tmp_path):
    from vreason.testing.loopback import LoopbackServer

    write_u_dataset(str(tmp_path / "U"), corrupt=None)
    with LoopbackServer(_reply) as srv:
        res = _run(tmp_path, srv, "--name", "u2", "--opt", "missing_answer=unscored")
    assert res.exit_code == 3, res.output  # QU_3 re-asked, then unscored
    acc = pd.read_csv(tmp_path / "runs" / "u2" / "report" / "pai_u_accuracy.csv")
    ov = acc[acc.level == "overall"].iloc[0]
    assert ov["accuracy"] == pytest.approx(200 / 3, abs=0.01) and ov["n"] == 3 and ov["unscored"] == 1
    assert ov["counted_wrong"] == 0
    md = (tmp_path / "runs" / "u2" / "report" / "pai_u_tables.md").read_text()
    assert "missing_answer=unscored" in md
    from vreason.store import RunStore

    with RunStore(str(tmp_path / "runs" / "u2"), create=False) as st:
        df = st.scores_frame()
    un = df[df.status == "unscored"].iloc[0]
    assert un.value != un.value and "The square is yellow." in un.evidence  # no value, the raw reply kept
