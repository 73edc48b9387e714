"""Percentiles with counts, sufficiency flags and seeded bootstrap confidence intervals.

    pXX        = numpy.percentile(values, XX)  (numpy's default "linear" method:
                 with sorted values v[0..n-1], h = (n-1)·XX/100,
                 pXX = v[floor h] + (h - floor h)·(v[floor h + 1] - v[floor h]))
    mean       = sum(values) / n
    n          = number of samples (failed requests never contribute one)
    insufficient: "p90" when n < 64, "p99" when n < 662
    ci95[p]    = the 2.5th and 97.5th percentiles (linear) of pXX over B bootstrap resamples
                 (n draws with replacement each), drawn by numpy.random.default_rng(seed);
                 for p50 and p90, when n >= 2

An empty sample gives None for every statistic and n = 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

QUANTILES: tuple[tuple[str, float], ...] = (
    ("p50", 50.0),
    ("p90", 90.0),
    ("p95", 95.0),
    ("p99", 99.0),
)
MIN_SAMPLES = {"p90": 64, "p99": 662}
BOOTSTRAP_RESAMPLES = 1000
# Resampling cost is B·n; past this many samples the CI uses fewer resamples.
_BOOTSTRAP_BUDGET = 4_000_000


def _round(value: float, digits: int | None) -> float:
    return value if digits is None else round(value, digits)


def percentile(values: Sequence[float] | np.ndarray, q: float) -> float | None:
    """The q-th percentile (numpy's linear method, as pXX above); None for no values."""
    arr = np.asarray(values, dtype=float)
    if arr.size == 0:
        return None
    return float(np.percentile(arr, q))


def insufficient(n: int) -> list[str]:
    """Which percentiles have too few samples to be trusted."""
    return [name for name, need in MIN_SAMPLES.items() if n < need]


def bootstrap_ci(
    values: Sequence[float] | np.ndarray, q: float, seed: int, resamples: int = BOOTSTRAP_RESAMPLES
) -> tuple[float, float] | None:
    """The seeded bootstrap 95% interval of the q-th percentile, or None for n < 2."""
    return bootstrap_cis(values, (q,), seed, resamples)[q]


def bootstrap_cis(
    values: Sequence[float] | np.ndarray, qs: Sequence[float], seed: int,
    resamples: int = BOOTSTRAP_RESAMPLES,
) -> dict[float, tuple[float, float] | None]:
    """`bootstrap_ci` for several percentiles from one set of resamples.

    Each percentile's interval is exactly what `bootstrap_ci(values, q, seed)` alone gives
    (the same seed draws the same resamples); drawing and gathering them once is what makes
    recomputing a result's intervals in `epbench validate` affordable.
    """
    arr = np.asarray(values, dtype=float)
    n = arr.size
    if n < 2:
        return {q: None for q in qs}
    resamples = max(100, min(resamples, _BOOTSTRAP_BUDGET // n))
    rng = np.random.default_rng(seed)
    stats = np.empty((len(qs), resamples))
    batch = max(1, min(resamples, 1_000_000 // n))
    done = 0
    while done < resamples:
        k = min(batch, resamples - done)
        idx = rng.integers(0, n, size=(k, n))
        stats[:, done : done + k] = np.percentile(arr[idx], list(qs), axis=1)
        done += k
    out: dict[float, tuple[float, float] | None] = {}
    for q, row in zip(qs, stats, strict=True):
        low, high = np.percentile(row, [2.5, 97.5])
        out[q] = (round(float(low), 6), round(float(high), 6))
    return out


def summarize(
    values: Sequence[float] | np.ndarray, seed: int | None = 0, digits: int | None = 6
) -> dict[str, Any]:
    """The `dist` object of result.schema.json for one sample.

    seed=None skips the CIs; digits=None keeps full precision (the agentic section's
    distributions), otherwise each statistic is rounded to `digits` decimals.
    """
    arr = np.asarray(values, dtype=float)
    n = int(arr.size)
    out: dict[str, Any] = {}
    if n == 0:
        out = {name: None for name, _ in QUANTILES}
        out.update(mean=None, n=0, insufficient=insufficient(0))
        return out
    qs = np.percentile(arr, [q for _, q in QUANTILES])
    for (name, _), value in zip(QUANTILES, qs, strict=True):
        out[name] = _round(float(value), digits)
    out["mean"] = _round(float(arr.mean()), digits)
    out["n"] = n
    if seed is not None and n >= 2:
        ci: dict[str, list[float]] = {}
        intervals = bootstrap_cis(arr, (50.0, 90.0), seed)
        for name, q in (("p50", 50.0), ("p90", 90.0)):
            interval = intervals[q]
            if interval is not None:
                ci[name] = list(interval)
        out["ci95"] = ci
    out["insufficient"] = insufficient(n)
    return out
