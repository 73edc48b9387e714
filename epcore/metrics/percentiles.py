"""Percentiles with counts, sufficiency flags and seeded bootstrap confidence intervals.

    pXX        = numpy.percentile(values, XX)  (numpy's default "linear" method:
                 with sorted values v[0..n-1], h = (n-1)·XX/100,
                 pXX = v[floor h] + (h - floor h)·(v[floor h + 1] - v[floor h]))
    mean       = sum(values) / n
    n          = number of samples (failed requests never contribute one)
    insufficient: "p90" when n < 64, "p99" when n < 662
    ci95[p]    = the 2.5th and 97.5th percentiles (linear) of pXX over B bootstrap resamples
                 (n draws with replacement each), drawn by numpy.random.default_rng(seed);
                 for p50 and p90, when n >= 2 and the sample's values are independent draws
                 (not inter-token gaps, several of which come from one request)

An empty sample gives None for every statistic and n = 0. Inter-token latency (integer
microsecond gaps, millions of them in a large point) is summarized from the integers
(`summarize_integers`): the same percentiles, and the mean as the exact sum / n.
"""

from __future__ import annotations

import functools
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
_COUNTED_FROM = 40
"""From this many samples a resample's order statistics are counted, not sorted."""


def _round(value: float, digits: int | None) -> float:
    return value if digits is None else round(value, digits)


def percentile(values: Sequence[float] | np.ndarray, q: float) -> float | None:
    """The q-th percentile (numpy's linear method, as pXX above); None for no values."""
    arr = np.asarray(values, dtype=float)
    if arr.size == 0:
        return None
    return float(sorted_percentile(np.sort(arr), q))


def sorted_percentile(ordered: np.ndarray, q: float) -> Any:
    """pXX of values already sorted (along the last axis: one pXX per row of a 2-D array),
    equal to the last bit to numpy.percentile on them, without its partition and copies."""
    below, above, gamma = _interpolation(ordered.shape[-1], q)
    return _lerp(ordered[..., below], ordered[..., above], gamma)


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
    if arr.size < 2:
        return {q: None for q in qs}
    stats = bootstrap_statistics(arr, qs, seed, resamples)
    stats.sort(axis=1)
    lows, highs = sorted_percentile(stats, 2.5), sorted_percentile(stats, 97.5)
    return {q: (round(float(low), 6), round(float(high), 6))
            for q, low, high in zip(qs, lows, highs, strict=True)}


def bootstrap_statistics(
    arr: np.ndarray, qs: Sequence[float], seed: int, resamples: int = BOOTSTRAP_RESAMPLES
) -> np.ndarray:
    """pXX of each resample (one row per q), unrounded: what the intervals are taken from.

    Equal, bit for bit, to numpy.percentile(arr[idx], qs, axis=1) over the resamples
    idx = default_rng(seed).integers(0, n, (B, n))
    (tests/core/metrics/test_metrics_percentiles.py checks it), at a fraction of its cost.
    """
    n = arr.size
    resamples = max(100, min(resamples, _BOOTSTRAP_BUDGET // n))
    rng = np.random.default_rng(seed)
    stats = np.empty((len(qs), resamples))
    batch = max(1, min(resamples, 1_000_000 // n))
    ordered, ranks = _ranked(arr)
    where = [_interpolation(n, q) for q in qs]
    # For n < 2**31 numpy draws the same integers as int32 as it does as int64, in less time.
    draw = np.int32 if n < 2**31 else np.int64
    places = sorted({place for below, above, _ in where for place in (below, above)})
    rows = np.arange(batch, dtype=np.intp)[:, None] * n
    done = 0
    while done < resamples:
        k = min(batch, resamples - done)
        idx = rng.integers(0, n, size=(k, n), dtype=draw)
        drawn = np.take(ranks, idx)  # each draw's place in `ordered`
        smallest = _order_statistics(drawn, rows[:k], places)
        for row, (below, above, gamma) in enumerate(where):
            stats[row, done : done + k] = _lerp(
                ordered[smallest[below]], ordered[smallest[above]], gamma)  # numpy's pXX
        done += k
    return stats


def _order_statistics(drawn: np.ndarray, rows: np.ndarray,
                      places: list[int]) -> dict[int, np.ndarray]:
    """For each 0-based place m, the m-th smallest of each row of `drawn` (ints in [0, n)):
    column m of the rows sorted. From n = 40 on it is counted instead: each row's draws are
    tallied per value (one bincount over the rows side by side), the tallies summed along the
    row, and the m-th smallest is the number of values whose running count is at most m.
    `summarize` of one sample, 1,000 resamples, against sorting: 3.1 ms instead of 4.4 at
    n = 128, 9.9 instead of 17.7 at 512, 31 instead of 87 at 2,000; at 16-32 sorting is faster.
    """
    k, n = drawn.shape
    if n < _COUNTED_FROM:
        drawn.sort(axis=1)
        return {place: drawn[:, place] for place in places}
    tally = np.bincount((drawn + rows).ravel(), minlength=k * n).reshape(k, n)
    running = tally.cumsum(axis=1)
    return {place: np.count_nonzero(running <= place, axis=1) for place in places}


def _ranked(arr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The values sorted, and each value's position among them (as the smallest int type).

    A resample's k-th smallest value is `ordered[k-th smallest of its drawn positions]`, so
    the resamples' order statistics are counted over small integers instead of partitioned
    as floats; ties do not matter, since equal values are interchangeable in every order
    statistic.
    """
    order = np.argsort(arr, kind="stable")
    ranks = np.empty(arr.size, dtype=np.int16 if arr.size <= np.iinfo(np.int16).max else np.intp)
    ranks[order] = np.arange(arr.size)
    return arr[order], ranks


@functools.lru_cache(maxsize=4096)
def _interpolation(n: int, q: float) -> tuple[int, int, float]:
    """numpy's linear method for n sorted values: the two neighbours and the weight.

    Computed as numpy.percentile computes it (virtual index (n - 1)·q, with q the fraction
    q/100 as numpy divides it), so each statistic is the one numpy.percentile over the
    resample would give, to the last bit (tests/core/metrics/test_metrics_percentiles.py
    compares them).
    """
    fraction = np.true_divide(np.asarray([q], dtype=float), 100)
    virtual = (n - 1) * fraction
    below = np.floor(virtual)
    if virtual[0] >= n - 1:
        return n - 1, n - 1, float(virtual[0] - below[0])
    return int(below[0]), int(below[0]) + 1, float(virtual[0] - below[0])


def _lerp(a: Any, b: Any, t: float) -> Any:
    """numpy.percentile's interpolation between neighbours, operation for operation."""
    gamma = np.float64(t)
    diff = b - a
    if gamma >= 0.5:
        return b - diff * (1 - gamma)
    return a + diff * gamma


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
    ordered = np.sort(arr)
    for name, q in QUANTILES:
        out[name] = _round(float(sorted_percentile(ordered, q)), digits)
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


def summarize_integers(
    values: np.ndarray, divisor: int, seed: int | None = None, digits: int | None = 6
) -> dict[str, Any]:
    """`summarize(values / divisor, seed, digits)` for an integer array (inter-token gaps in
    microseconds, as ms), sorting the integers in place (the caller's array is consumed) instead
    of holding their floats and a sorted copy of them: 4 or 8 bytes a value instead of 16.

    Each percentile is the one `summarize` gives, to the last bit: dividing by a positive number
    keeps the order, so the two neighbours are the same values, divided as `summarize`'s input
    was. The mean is the exact one, correctly rounded (numpy's pairwise sum of the floats can
    differ from it in the last bits, far below the 6 digits a result keeps). With a seed (the
    intervals resample the floats) it is `summarize` of the floats.
    """
    n = int(values.size)
    if n == 0 or seed is not None:
        return summarize(values / divisor, seed, digits)
    total = int(values.sum(dtype=np.int64)) if values.dtype.itemsize <= 4 \
        else sum(int(v) for v in values)  # (int64 sums could wrap)
    values.sort()
    out: dict[str, Any] = {}
    for name, q in QUANTILES:
        below, above, gamma = _interpolation(n, q)
        out[name] = _round(float(_lerp(np.float64(values[below]) / divisor,
                                       np.float64(values[above]) / divisor, gamma)), digits)
    out["mean"] = _round(total / (n * divisor), digits)
    out["n"] = n
    out["insufficient"] = insufficient(n)
    return out
