"""Agents at SLO: how many concurrent agents an endpoint serves before tasks start failing or
steps get too slow.

A workload with load levels (`load: {concurrency: [1, 4, 16, 64], slo: {decision_p90_ms}}`)
is played once per level. Level L is *at the SLO* when both hold:

    success   not below the baseline (the first, lowest level) by the tool-call quality gate's
              one-sided test (epbench.core.metrics.quality.quality_gate: H1 p_L < 0.97 p_base,
              p < 0.01), the baseline taking the place of the model's reference result
    decision  the level's step decision p90 (request sent -> last tool-call argument byte)
              is at most `decision_p90_ms`; a level without a decision has no p90 and fails

    agents_at_slo = the largest measured level L such that every measured level <= L is at
                    the SLO; 0 when the baseline is not

A step function over the measured levels: nothing is interpolated between them, and a level
above a failing one does not count (a fleet scaled up passes through the failing level).
With an hourly price (self-hosted and emulated endpoints, `usd_per_hour` in the price card):

    agents_per_usd_hour = agents_at_slo / usd_per_hour      (None without an hourly price
                                                             or with no agent at the SLO)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from epbench.core.metrics.quality import quality_gate


@dataclass(frozen=True)
class Level:
    """One measured level: agents at once, trials played and won, step decision p90."""

    concurrency: int
    successes: int
    n: int
    decision_p90_ms: float | None


def capacity(levels: Sequence[Level], decision_p90_slo_ms: float,
             card: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The `capacity` block of an agentic section with load levels (result.schema.json)."""
    if not levels:
        raise ValueError("capacity needs at least one measured level")
    base = levels[0]
    rows: list[dict[str, Any]] = []
    agents = 0
    passing = True
    for level in levels:
        if level.n and base.n:
            gate = quality_gate(level.successes, level.n, base.successes, base.n)
            p_value: float | None = gate.p_value
            below = gate.below
        else:
            p_value, below = None, True  # a level that played no trial measured nothing
        meets = level.decision_p90_ms is not None and level.decision_p90_ms <= decision_p90_slo_ms
        at_slo = meets and not below
        passing = passing and at_slo
        if passing:
            agents = level.concurrency
        rows.append({"concurrency": level.concurrency, "success_p_value": p_value,
                     "success_below_baseline": below, "decision_ms_p90": level.decision_p90_ms,
                     "meets_decision_slo": meets, "at_slo": at_slo})
    per_hour = hourly_price(card)
    return {
        "agents_at_slo": agents,
        "baseline": base.concurrency,
        "decision_p90_slo_ms": decision_p90_slo_ms,
        "levels": rows,
        "usd_per_hour": per_hour,
        "agents_per_usd_hour": agents / per_hour if per_hour and agents else None,
    }


def hourly_price(pricing: Any) -> float | None:
    """The $/hour of a result's price card (of the latest hourly card when it pins several);
    None for a per-token card or none."""
    cards = pricing if isinstance(pricing, list) else [pricing]
    hourly = [c for c in cards if isinstance(c, Mapping)
              and isinstance(c.get("usd_per_hour"), int | float) and c["usd_per_hour"] > 0]
    if not hourly:
        return None
    latest = max(hourly, key=lambda c: str(c.get("effective_date", "")))
    return float(latest["usd_per_hour"])
