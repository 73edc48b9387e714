"""A result's prompt-cache figures as the tables and pages show them: the hit rate, pooled over
points, and in words whether the endpoint reported cached tokens at all.

A point's `cache` block (epbench.core.summary.cache_block) holds the input and cached input
tokens of the requests whose usage reported a cached count. Points pool as

    hit_rate = sum(cached) / sum(input)   over the points' reporting requests

and the status says how far that reaches:

    reported                       every request with usage reported a cached count
    partly reported (k of n ...)   some did: the rate is over those k
    not reported by the endpoint   none did: the rate is null, never 0
    no input tokens                the reporting requests had no input
    None                           the result predates cache figures (no `cache` block)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from epbench.generator.number_format import fmt_pct

REPORTED = "reported"
NOT_REPORTED = "not reported by the endpoint"
NO_INPUT = "no input tokens"


def cache_figures(points: Iterable[Mapping[str, Any]]) -> tuple[float | None, str | None]:
    """(hit rate, status) of these result points together (see the module docstring)."""
    blocks = [p["cache"] for p in points if isinstance(p.get("cache"), Mapping)]
    if not blocks:
        return None, None
    requests = sum(int(b["requests"]) for b in blocks)
    reported = sum(int(b["reported"]) for b in blocks)
    prompt = sum(int(b["input"]) for b in blocks)
    cached = sum(int(b["cached"]) for b in blocks)
    if reported == 0:
        return None, NOT_REPORTED
    if prompt <= 0:
        return None, NO_INPUT
    status = REPORTED if reported == requests else \
        f"partly reported ({reported} of {requests} requests)"
    return cached / prompt, status


def hit_rate_words(rate: float | None, status: str | None) -> str:
    """The hit rate as a run page shows it: a percentage (as the boards show one), or why
    there is none."""
    if rate is not None:
        return fmt_pct(rate) + ("" if status == REPORTED else f", {status}")
    return status or "not recorded (result written before cache figures)"
