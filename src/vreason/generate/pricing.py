"""Default prices of video-generation APIs, for the cost ledger and ``--dry-run`` estimates.

Prices change: every default names its source and the date it was read. Override them per model with
the spec parameters ``usd_per_second`` / ``usd_per_video`` (a YAML model spec or ``--models`` params).
Only finished jobs count as spent; refused and failed jobs are counted at 0 (as both providers bill).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Price:
    usd_per_second: float = 0.0
    usd_per_video: float = 0.0
    source: str = ""

    def cost(self, seconds: float) -> float:
        return round(self.usd_per_video + self.usd_per_second * max(0.0, seconds), 4)


_OPENAI = "OpenAI API pricing (sora-2 720p $0.10/s; sora-2-pro 720p $0.30/s, 1024p $0.50/s), read 2025-10-07"
_GEMINI = "Gemini API pricing (Veo 3/3.1 $0.40/s, Fast $0.15/s; Veo 2 $0.35/s), read 2026-03-02"

DEFAULT_PRICES: dict[str, Price] = {
    "sora-2": Price(0.10, source=_OPENAI),
    "sora-2-pro": Price(0.30, source=_OPENAI),
    "sora-2-pro@1024p": Price(0.50, source=_OPENAI),
    "veo-3.1-generate-preview": Price(0.40, source=_GEMINI),
    "veo-3.1-fast-generate-preview": Price(0.15, source=_GEMINI),
    "veo-3.0-generate-001": Price(0.40, source=_GEMINI),
    "veo-3.0-fast-generate-001": Price(0.15, source=_GEMINI),
    "veo-2.0-generate-001": Price(0.35, source=_GEMINI),
}


def price_for(model: str, *, size: str | None = None, usd_per_second: float | None = None,
              usd_per_video: float | None = None) -> Price:
    """The price of ``model`` (a dated snapshot such as ``sora-2-2025-10-06`` takes its family's price);
    explicit parameters win; an unknown model without them costs 0 with ``source`` saying so."""
    if usd_per_second is not None or usd_per_video is not None:
        return Price(usd_per_second or 0.0, usd_per_video or 0.0, source="spec parameters")
    hd = size is not None and max((int(x) for x in size.lower().split("x") if x.isdigit()), default=0) > 1280
    candidates = sorted((k for k in DEFAULT_PRICES if "@" not in k and model.startswith(k)), key=len, reverse=True)
    if candidates:
        base = candidates[0]
        return DEFAULT_PRICES.get(f"{base}@1024p", DEFAULT_PRICES[base]) if hd else DEFAULT_PRICES[base]
    return Price(source=f"no default price for {model!r}: set usd_per_second / usd_per_video")
