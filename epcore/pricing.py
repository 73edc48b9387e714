"""Price-card arithmetic shared by the runner (agentic spend per request) and the generator
(cost normalization). One formula per function; the methodology page cites them.

A price card is the `pricing` block of an endpoint file, pinned into each result at run time:
either per-token (`input_usd_per_mtok`, `output_usd_per_mtok`, optional
`cached_input_usd_per_mtok`) or hourly (`usd_per_hour`, optional `power_kw`).
"""

from __future__ import annotations

from collections.abc import Mapping
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
