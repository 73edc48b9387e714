"""Summaries the agentic section reports: distributions and a binomial interval."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

INSUFFICIENT_P90 = 64
INSUFFICIENT_P99 = 662
Z95 = 1.959963984540054


def dist(values: Sequence[float]) -> dict[str, Any]:
    """`{p50, p90, p95, p99, mean, n}` with numpy's linear percentiles (None when empty), plus
    `insufficient` where the sample is too small for p90 (< 64) or p99 (< 662)."""
    n = len(values)
    if n == 0:
        return {
            "p50": None,
            "p90": None,
            "p95": None,
            "p99": None,
            "mean": None,
            "n": 0,
            "insufficient": ["p90", "p99"],
        }
    arr = np.asarray(values, dtype=float)
    p50, p90, p95, p99 = (float(v) for v in np.percentile(arr, [50, 90, 95, 99]))
    out: dict[str, Any] = {
        "p50": p50,
        "p90": p90,
        "p95": p95,
        "p99": p99,
        "mean": float(arr.mean()),
        "n": n,
    }
    flags = [
        name for name, need in (("p90", INSUFFICIENT_P90), ("p99", INSUFFICIENT_P99)) if n < need
    ]
    if flags:
        out["insufficient"] = flags
    return out


def wilson(successes: int, n: int) -> tuple[float, float]:
    """Wilson score 95% interval for a proportion; (0, 1) when n is 0."""
    if n <= 0:
        return (0.0, 1.0)
    p = successes / n
    z2 = Z95 * Z95
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return (max(0.0, centre - half), min(1.0, centre + half))
