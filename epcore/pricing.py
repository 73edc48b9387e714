"""Price-card arithmetic shared by the runner (agentic spend per request) and the generator
(cost normalization). One formula per function; the methodology page cites them.

A price card is the `pricing` block of an endpoint file, pinned into each result at run time:
either per-token (`input_usd_per_mtok`, `output_usd_per_mtok`, optional
`cached_input_usd_per_mtok` (cache reads), `cache_write_input_usd_per_mtok` (cache writes) and
`reasoning_usd_per_mtok` (absent: reasoning is billed as output)) or hourly (`usd_per_hour`,
optional `power_kw`).
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
    card: Mapping[str, Any],
    input_tokens: int,
    output_tokens: int,
    cached_input_tokens: int = 0,
    cache_write_tokens: int = 0,
    reasoning_tokens: int = 0,
) -> float | None:
    """USD for one request (or a sum of requests) on a per-token card; None for an hourly card.

    `input_tokens` counts every input token, cached or not; `output_tokens` every output token,
    reasoning included (every API here reports them that way).

    cost = (input - cache_read - cache_write) * input_price
           + cache_read * cached_input_price        (falls back to input_price)
           + cache_write * cache_write_input_price  (falls back to input_price)
           + (output - reasoning) * output_price
           + reasoning * reasoning_price            (falls back to output_price: reasoning
                                                     tokens are billed as output)
    all over 1e6 (prices are USD per million tokens). Cache and reasoning counts are clamped
    to the totals they are part of.
    """
    if not is_per_token(card):
        return None
    input_price = float(card["input_usd_per_mtok"])
    output_price = float(card["output_usd_per_mtok"])
    read = max(0, min(cached_input_tokens, input_tokens))
    write = max(0, min(cache_write_tokens, input_tokens - read))
    reasoning = max(0, min(reasoning_tokens, output_tokens))
    return (
        (input_tokens - read - write) * input_price
        + read * float(card.get("cached_input_usd_per_mtok", input_price))
        + write * float(card.get("cache_write_input_usd_per_mtok", input_price))
        + (output_tokens - reasoning) * output_price
        + reasoning * float(card.get("reasoning_usd_per_mtok", output_price))
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
    cache_write_tokens: int = 0,
    reasoning_tokens: int = 0,
) -> float | None:
    """USD for work that used these tokens over these wall seconds, on either kind of card.

    cost = request_cost_usd(...) on a per-token card, hourly_cost_usd(seconds) on an hourly one
    """
    if is_per_token(card):
        return request_cost_usd(card, input_tokens, output_tokens, cached_input_tokens,
                                cache_write_tokens, reasoning_tokens)
    return hourly_cost_usd(card, seconds)
