"""The mock judge's reply to TiViBench's QA template (``--judge mock``), in its output schema."""

from __future__ import annotations

import json

from vreason.judge.mock import Shape, n_questions, yes_no

MOCK_REPLIES: dict[str, Shape] = {
    "tivibench_qa": lambda r, q, req, t: json.dumps(
        {"answers": [yes_no(r, q, "yes", "no") for _ in range(n_questions(req, t))]}
    ),
}
