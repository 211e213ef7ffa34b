"""The mock judge's replies to PAI-Bench's templates (``--judge mock``), in each template's output schema."""

from __future__ import annotations

from vreason.judge.mock import Shape, letters, yes_no

MOCK_REPLIES: dict[str, Shape] = {
    "pai_g_vqa": lambda r, q, req, t: yes_no(r, q, "YES", "NO"),
    "pai_u_mcq": lambda r, q, req, t: f"<think>mock</think><answer>{r.pick(letters(t))}</answer>",
}
