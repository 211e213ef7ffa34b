"""The mock judge's replies to RISE-Video's templates (``--judge mock``), in each template's output schema."""

from __future__ import annotations

import json

from vreason.judge.mock import Shape, n_questions, yes_no

MOCK_REPLIES: dict[str, Shape] = {
    "rise_ra": lambda r, q, req, t: json.dumps(
        [{"question": f"Q{i + 1}", "answer": yes_no(r, q), "reason": "mock"}
         for i in range(n_questions(req, t, per_text_part=True))]
    ),
    "rise_ra_ref": lambda r, q, req, t: json.dumps({"Question": "mock", "Score": r.grade(q, 1, 5), "Reason": "mock"}),
    "rise_tc": lambda r, q, req, t: json.dumps(
        {"Instruction": "mock", "Final Score": r.grade(q, 1, 5), "Reason": "mock"}
    ),
    "rise_pr": lambda r, q, req, t: json.dumps({"score": r.grade(q, 1, 5), "justification": "mock"}),
    "rise_vq": lambda r, q, req, t: json.dumps({"score": r.grade(q, 1, 3), "justification": "mock"}),
}
