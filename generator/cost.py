"""Cost normalization: one formula per function (the methodology page cites them).

All request and deployment costs come from the shared price-card arithmetic in
`epbench.core.pricing` (`request_cost_usd`, `hourly_cost_usd`); this module only normalizes them.
The price card used is the one pinned in the result at run time; `todays_card` reads the card
in the current `endpoints/<id>.yaml`, so the site can show both ("at run time" and "at today's
price"). A newer card never rewrites an old result.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from epbench.core.documents import DocumentError, load_document
from epbench.core.paths import data_dir
from epbench.core.pricing import (
    MTOK,
    card_on,
    hourly_cost_usd,
    is_hourly,
    is_per_token,
    request_cost_usd,
)
from epbench.core.schema import check_schema, kind_of

Card = Mapping[str, Any]
RETRY_TAGS = ("repair", "recovery", "transport")
TAGS = ("productive", *RETRY_TAGS)


def point_cost_usd(card: Card, point: Mapping[str, Any]) -> float | None:
    """USD a measurement point cost.

    per-token card: request_cost_usd(card, tokens.input, tokens.output, tokens.cached_input,
                    tokens.cache_write, tokens.reasoning) (every request's tokens, failed ones
                    included: they were billed; cache reads and writes at the card's cache
                    prices, reasoning at its reasoning price or else as output)
    hourly card:    hourly_cost_usd(card, window_s) = usd_per_hour * window_s / 3600
    """
    tokens = point["tokens"]
    if is_per_token(card):
        return request_cost_usd(card, tokens["input"], tokens["output"],
                                tokens.get("cached_input", 0), tokens.get("cache_write", 0),
                                tokens.get("reasoning", 0))
    return hourly_cost_usd(card, point["window_s"])


def point_cost_uncached_usd(card: Card, point: Mapping[str, Any]) -> float | None:
    """USD the point would cost with no cache prices: every input token at the input price.

    per-token card: cost = request_cost_usd(card, tokens.input, tokens.output, 0, 0,
                                            tokens.reasoning)
    hourly card:    cost = hourly_cost_usd(card, window_s) (an hour costs the same cached or not)
    """
    tokens = point["tokens"]
    if is_per_token(card):
        return request_cost_usd(card, tokens["input"], tokens["output"], 0, 0,
                                tokens.get("reasoning", 0))
    return hourly_cost_usd(card, point["window_s"])


def billed_output_tokens(card: Card, point: Mapping[str, Any]) -> int:
    """Output tokens the cost buys: tokens.output on a per-token card (all billed tokens);
    tokens.output_in_window on an hourly card (what the deployment produced in the window)."""
    tokens = point["tokens"]
    return int(tokens["output"] if is_per_token(card) else tokens["output_in_window"])


def usd_per_mtok_output(cost_usd: float | None, output_tokens: int) -> float | None:
    """USD per million output tokens at the measured mix = cost / output tokens * 1e6."""
    if cost_usd is None or output_tokens <= 0:
        return None
    return cost_usd / output_tokens * MTOK


def blended_usd_per_mtok(card: Card) -> float | None:
    """Blended 3:1 price = (3 * input_usd_per_mtok + output_usd_per_mtok) / 4 (per-token only)."""
    if not is_per_token(card):
        return None
    return (3 * float(card["input_usd_per_mtok"]) + float(card["output_usd_per_mtok"])) / 4


def output_tokens_per_usd(cost_usd: float | None, output_tokens: int) -> float | None:
    """Output tokens per USD = output tokens / cost."""
    if cost_usd is None or cost_usd <= 0:
        return None
    return output_tokens / cost_usd


def usd_per_1k_requests(cost_usd: float | None, completed: int) -> float | None:
    """USD per 1,000 requests = cost / completed requests * 1000."""
    if cost_usd is None or completed <= 0:
        return None
    return cost_usd / completed * 1000


def tokens_per_kwh(card: Card, output_tokens: int, seconds: float) -> float | None:
    """Output tokens per kWh = tokens / (power_kw * seconds / 3600) (hourly cards with power_kw)."""
    power = card.get("power_kw")
    if power is None or seconds <= 0:
        return None
    return output_tokens / (float(power) * seconds / 3600)


def usd_per_task(total_usd: float | None, trials: int) -> float | None:
    """USD per task trial = total spend (retries included) / trials."""
    if total_usd is None or trials <= 0:
        return None
    return total_usd / trials


def usd_per_successful_task(total_usd: float | None, successes: int) -> float | None:
    """USD per successful task = total spend (retries included) / successful trials."""
    if total_usd is None or successes <= 0:
        return None
    return total_usd / successes


def retry_spend_share(usd_by_tag: Mapping[str, float]) -> float | None:
    """Share of spend on retries = (repair + recovery + transport USD) / total USD."""
    total = sum(usd_by_tag.values())
    if total <= 0:
        return None
    return sum(usd_by_tag.get(tag, 0.0) for tag in RETRY_TAGS) / total


@dataclass(frozen=True)
class RunCost:
    """Cost figures of a serving result (or of one point) on one price card."""

    cost_usd: float | None
    output_tokens: int
    completed: int
    seconds: float
    usd_per_mtok_output: float | None
    blended_usd_per_mtok: float | None
    output_tokens_per_usd: float | None
    usd_per_1k_requests: float | None
    tokens_per_kwh: float | None


def serving_cost(card: Card, points: Iterable[Mapping[str, Any]]) -> RunCost:
    """The cost figures of these points together: costs and tokens summed, then normalized."""
    return serving_costs(card, list(points))[0]


def serving_costs(card: Card, points: Sequence[Mapping[str, Any]]
                  ) -> tuple[RunCost, list[RunCost]]:
    """serving_cost(card, points) and serving_cost(card, [point]) for each point, with each
    point's cost worked out once (the sums are taken in the same order, so the figures are
    the same to the last bit)."""
    total: float | None = 0.0
    tokens = completed = 0
    seconds = 0.0
    each: list[RunCost] = []
    blended = blended_usd_per_mtok(card)
    hourly = is_hourly(card)
    for point in points:
        cost = point_cost_usd(card, point)
        billed = billed_output_tokens(card, point)
        done = int(point["requests"]["completed"])
        window = float(point["window_s"])
        each.append(_normalized(card, None if cost is None else 0.0 + cost, billed, done,
                                0.0 + window, blended, hourly))
        total = None if cost is None or total is None else total + cost
        tokens += billed
        completed += done
        seconds += window
    return _normalized(card, total, tokens, completed, seconds, blended, hourly), each


def _normalized(card: Card, total: float | None, tokens: int, completed: int,
                seconds: float, blended: float | None, hourly: bool) -> RunCost:
    if completed == 0 and tokens == 0:
        total = None
    return RunCost(
        cost_usd=total,
        output_tokens=tokens,
        completed=completed,
        seconds=seconds,
        usd_per_mtok_output=usd_per_mtok_output(total, tokens),
        blended_usd_per_mtok=blended,
        output_tokens_per_usd=output_tokens_per_usd(total, tokens),
        usd_per_1k_requests=usd_per_1k_requests(total, completed),
        tokens_per_kwh=tokens_per_kwh(card, tokens, seconds) if hourly else None,
    )


@dataclass(frozen=True)
class AgenticCost:
    """Spend of an agentic result: total, per tag, per task, per successful task."""

    total_usd: float | None
    usd_by_tag: dict[str, float]
    usd_per_task: float | None
    usd_per_successful_task: float | None
    retry_spend_share: float | None


def _agentic_total(card: Card, block: Mapping[str, Any], pinned: bool) -> dict[str, float] | None:
    """USD per retry tag. At run time the recorded per-tag USD is used when every tag has one;
    otherwise (or on another card) it is recomputed: hourly cards from each tag's seconds,
    per-token cards from the run's input/output tokens split by each tag's share of tokens."""
    tags = block["retry_cost"]
    if pinned and all(tags[t].get("usd") is not None for t in TAGS):
        return {t: float(tags[t]["usd"]) for t in TAGS}
    if is_hourly(card):
        return {t: hourly_cost_usd(card, float(tags[t]["seconds"])) or 0.0 for t in TAGS}
    tokens = block.get("tokens") or {}
    all_tokens = sum(int(tags[t]["tokens"]) for t in TAGS)
    if not tokens or all_tokens <= 0:
        return None
    total = request_cost_usd(card, int(tokens.get("input", 0)), int(tokens.get("output", 0)))
    if total is None:
        return None
    return {t: total * int(tags[t]["tokens"]) / all_tokens for t in TAGS}


def agentic_cost(card: Card, result: Mapping[str, Any], pinned: bool = True) -> AgenticCost:
    """Agentic spend on `card` (pinned=True: the result's own card, recorded USD preferred)."""
    block = result["agentic"]
    trials = sum(int(task["trials"]) for task in block["tasks"])
    successes = sum(int(task["successes"]) for task in block["tasks"])
    by_tag = _agentic_total(card, block, pinned)
    total = sum(by_tag.values()) if by_tag is not None else None
    return AgenticCost(
        total_usd=total,
        usd_by_tag=by_tag or {},
        usd_per_task=usd_per_task(total, trials),
        usd_per_successful_task=usd_per_successful_task(total, successes),
        retry_spend_share=retry_spend_share(by_tag) if by_tag else None,
    )


def todays_card(project: Path, endpoint_id: str) -> Card | None:
    """The price card in the current endpoints/<id>.yaml (the project's endpoints folder,
    else the shipped one, as `epbench run` finds it), if that file exists and is valid."""
    folder = data_dir("endpoints", project)
    for suffix in (".yaml", ".yml", ".json"):
        path = folder / f"{endpoint_id}{suffix}"
        if not path.is_file():
            continue
        try:
            document = load_document(path)
        except DocumentError:
            return None
        if kind_of(document) != "endpoint" or check_schema(document, "endpoint", str(path)):
            return None
        return card_on(document["pricing"])
    return None
