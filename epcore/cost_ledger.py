"""What each request cost, summed per tag.

Every request is tagged by why it was sent: `productive` (the task moving on), `repair` (the
model is answering a tool error about its own invalid call), `recovery` (the model is answering
a tool fault), `transport` (a resend after 429, 5xx, a timeout or a cut stream). Seconds count
the request's own wall time plus the backoff waited before it; USD comes from the endpoint's
price card (`epbench.core.pricing.cost_usd`): per token, or per second for an hourly card.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from epbench.core.pricing import cost_usd

TAGS: tuple[str, ...] = ("productive", "repair", "recovery", "transport")


@dataclass
class TagCost:
    requests: int = 0
    tokens: int = 0
    seconds: float = 0.0
    usd: float | None = 0.0


class CostLedger:
    """Sums per tag; `usd` turns None for good once any request's cost is unknown (no card)."""

    def __init__(self, card: Mapping[str, Any] | None) -> None:
        self.card = card
        self.tags: dict[str, TagCost] = {tag: TagCost() for tag in TAGS}

    def request_usd(
        self, input_tokens: int, output_tokens: int, seconds: float, **split: int
    ) -> float | None:
        """`split`: cached_input_tokens, cache_write_tokens, reasoning_tokens
        (epbench.core.pricing)."""
        if not self.card:
            return None
        return cost_usd(self.card, input_tokens, output_tokens, seconds, **split)

    def add(
        self, tag: str, input_tokens: int, output_tokens: int, seconds: float, **split: int
    ) -> float | None:
        """Count one request; returns its USD (None when the card cannot price it)."""
        usd = self.request_usd(input_tokens, output_tokens, seconds, **split)
        cost = self.tags[tag]
        cost.requests += 1
        cost.tokens += input_tokens + output_tokens
        cost.seconds += seconds
        cost.usd = None if usd is None or cost.usd is None else cost.usd + usd
        return usd

    def merge(self, other: Mapping[str, Mapping[str, Any]]) -> None:
        """Add sums saved by `to_dict` (a finished trial read back from the journal)."""
        for tag, data in other.items():
            cost = self.tags[tag]
            cost.requests += int(data["requests"])
            cost.tokens += int(data["tokens"])
            cost.seconds += float(data["seconds"])
            usd = data.get("usd")
            cost.usd = None if usd is None or cost.usd is None else cost.usd + float(usd)

    def total_usd(self) -> float | None:
        values = [c.usd for c in self.tags.values()]
        return None if any(v is None for v in values) else sum(v for v in values if v is not None)

    def retry_usd(self) -> float | None:
        values = [self.tags[t].usd for t in ("repair", "recovery", "transport")]
        return None if any(v is None for v in values) else sum(v for v in values if v is not None)

    def to_dict(self) -> dict[str, dict[str, Any]]:
        return {tag: asdict(cost) for tag, cost in self.tags.items()}


def tag_after(invalid_calls: int, tool_faults: int) -> str:
    """The tag of the next request, from what the tool messages just sent carry: a repair when
    any call was invalid (it takes precedence), a recovery after a tool fault, else productive."""
    if invalid_calls:
        return "repair"
    if tool_faults:
        return "recovery"
    return "productive"
