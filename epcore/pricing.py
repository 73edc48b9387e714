"""Price-card arithmetic shared by the runner (agentic spend per request) and the generator
(cost normalization). One formula per function; the methodology page cites them.

A price card is the `pricing` block of an endpoint file, pinned into each result at run time:
either per-token (`input_usd_per_mtok`, `output_usd_per_mtok`, optional
`cached_input_usd_per_mtok`) or hourly (`usd_per_hour`, optional `power_kw`). An endpoint
file may keep its price history instead (a list of cards); `card_on` picks the one in force.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, date, datetime
from typing import Any

MTOK = 1_000_000


def is_per_token(card: Mapping[str, Any]) -> bool:
    """True for a serviced price card (USD per million tokens)."""
    return "input_usd_per_mtok" in card and "output_usd_per_mtok" in card


def is_hourly(card: Mapping[str, Any]) -> bool:
    """True for a self-hosted (or emulated) card priced per hour of the deployment."""
    return "usd_per_hour" in card


def request_cost_usd(
    card: Mapping[str, Any], input_tokens: int, output_tokens: int, cached_input_tokens: int = 0
) -> float | None:
    """USD for one request on a per-token card; None for an hourly card.

    cost = (input - cached) * input_price / 1e6 + cached * cached_price / 1e6
           + output * output_price / 1e6
    where cached_price falls back to input_price when the card has none.
    """
    if not is_per_token(card):
        return None
    cached = max(0, min(cached_input_tokens, input_tokens))
    cached_price = float(card.get("cached_input_usd_per_mtok", card["input_usd_per_mtok"]))
    return (
        (input_tokens - cached) * float(card["input_usd_per_mtok"])
        + cached * cached_price
        + output_tokens * float(card["output_usd_per_mtok"])
    ) / MTOK


def hourly_cost_usd(card: Mapping[str, Any], seconds: float) -> float | None:
    """USD for `seconds` of an hourly-priced deployment; None for a per-token card.

    cost = usd_per_hour * seconds / 3600
    """
    if not is_hourly(card):
        return None
    return float(card["usd_per_hour"]) * seconds / 3600.0


def cost_usd(
    card: Mapping[str, Any],
    input_tokens: int,
    output_tokens: int,
    seconds: float,
    cached_input_tokens: int = 0,
) -> float | None:
    """USD for work that used these tokens over these wall seconds, on either kind of card.

    cost = request_cost_usd(...) on a per-token card, hourly_cost_usd(seconds) on an hourly one
    """
    if is_per_token(card):
        return request_cost_usd(card, input_tokens, output_tokens, cached_input_tokens)
    return hourly_cost_usd(card, seconds)


def card_on(pricing: Any, day: date | None = None) -> dict[str, Any] | None:
    """The card in force on `day` (UTC today when None): an endpoint's `pricing` is one card
    or its history, a list of cards each in force from its `effective_date` on. None when no
    card had taken effect yet (or `pricing` is neither)."""
    day = day or datetime.now(UTC).date()
    cards = pricing if isinstance(pricing, list) else [pricing]
    best: dict[str, Any] | None = None
    best_day = ""
    for card in cards:
        if not isinstance(card, dict):
            continue
        effective = str(card.get("effective_date", ""))
        if effective <= day.isoformat() and (best is None or effective >= best_day):
            best, best_day = card, effective
    return best


def cards(pricing: Any) -> list[dict[str, Any]]:
    """Every card of a `pricing` block (one card, or a history)."""
    items = pricing if isinstance(pricing, list) else [pricing]
    return [card for card in items if isinstance(card, dict)]
