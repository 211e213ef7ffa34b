"""Token and cost accounting, and the estimates of a dry run.

Prices are USD per million tokens, from a price table the user supplies (in the judge YAML,
``price: {input: 1.25, output: 10.0}``, or ``make_judge(..., price_table={model: {...}})``). There is
no built-in price list: provider prices change, and a stale default would print wrong costs.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Price:
    input: float = 0.0
    """USD per 1M prompt tokens."""
    output: float = 0.0
    """USD per 1M completion tokens."""

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.input + completion_tokens * self.output) / 1e6

    @classmethod
    def from_any(cls, value: Any) -> Price | None:
        if value is None or isinstance(value, Price):
            return value
        if isinstance(value, dict):
            unknown = set(value) - {"input", "output"}
            if unknown:
                raise ValueError(
                    f"price: unknown keys {sorted(unknown)} (use input/output, USD per 1M tokens)"
                )
            return cls(float(value.get("input", 0.0)), float(value.get("output", 0.0)))
        raise ValueError(f"price: expected a mapping with input/output, got {value!r}")


def price_for(model: str, price_table: dict[str, Any] | None) -> Price | None:
    """The price of ``model`` in ``price_table`` (exact name, else the longest matching prefix)."""
    if not price_table:
        return None
    if model in price_table:
        return Price.from_any(price_table[model])
    best = max((k for k in price_table if model.startswith(k)), key=len, default=None)
    return Price.from_any(price_table[best]) if best else None


def estimate_text_tokens(text: str) -> int:
    """A rough token count (≈ 4 characters per token), for dry runs only."""
    return math.ceil(len(text) / 4) if text else 0


def estimate_image_tokens(height: int, width: int, max_side: int | None = None) -> int:
    """Tokens for one image under tiled accounting (85 + 170 per 512-px tile), for dry runs only."""
    if max_side and max(height, width) > max_side:
        s = max_side / max(height, width)
        height, width = max(1, round(height * s)), max(1, round(width * s))
    tiles = math.ceil(height / 512) * math.ceil(width / 512)
    return 85 + 170 * tiles


@dataclass
class Stats:
    """What a judge client did (or, in a dry run, would do)."""

    questions: int = 0
    requests: int = 0
    """Requests actually sent to the backend (retries included)."""
    cache_hits: int = 0
    retries: int = 0
    reasks: int = 0
    length_retries: int = 0
    """Re-asks with a larger completion-token cap after a cut-off reply."""
    unscored: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    images: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    dry_run: bool = False
    estimated_requests: int = 0
    estimated_images: int = 0
    estimated_prompt_tokens: int = 0
    estimated_completion_tokens: int = 0
    completion_assumption: str = ""
    """How the dry run counted completion tokens (a short answer, or a reasoning judge's token cap)."""
    estimated_cost: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["cost"] = round(self.cost, 6)
        d["estimated_cost"] = round(self.estimated_cost, 6)
        return d


def completion_estimate(floor: int | None, max_tokens: int | None, short_answer: int = 256) -> tuple[int, str]:
    """Completion tokens a dry run counts for a request sent with the cap ``max_tokens``, and the
    assumption in words. A judge with a completion-token ``floor`` (a reasoning model: its thinking
    is billed as output and may fill the cap) is counted at the cap it is sent — an upper bound; a
    judge without one at ``short_answer`` tokens, at most the cap."""
    if floor is not None:
        n = int(max_tokens or floor)
        return n, (f"{n} completion tokens per request: the cap sent to a reasoning judge (floor {floor}), "
                   "which its thinking may fill; an upper bound")
    n = min(short_answer, max_tokens) if max_tokens else short_answer
    return n, f"{n} completion tokens per request: a short answer (the judge has no completion-token floor)"
