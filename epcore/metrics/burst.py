"""Burst metrics: each phase's p99 TTFT and error rate, and the seconds to recover.

Times are the requests' planned arrival offsets (seconds from the start of the burst), so
the phases are where the schedule put each request, not where a slow client got to it.

    phase.requests     = requests issued in the phase
    phase.ttft_p99_ms  = percentiles.percentile(TTFT of its successful requests, 99)
                         (numpy's linear method; None if none)
    phase.error_rate   = failed requests / requests  (0 when it has no requests)
    recovery_s         = the smallest k·step (step = window/10, k = 0, 1, ...) such that the
                         successful requests arriving in [spike_end + k·step,
                         spike_end + k·step + window) have p99 TTFT <= 1.1 · base p99;
                         None when no such window fits before the end of the run (or the
                         base phase has no p99)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from epbench.core.metrics.percentiles import percentile

RECOVERY_TOLERANCE = 1.10


def p99(values: Sequence[float]) -> float | None:
    return percentile(values, 99)


def phase_stats(
    name: str,
    start_s: float,
    end_s: float,
    rate_rps: float,
    ttfts_ok: Sequence[float],
    issued: int,
    failed: int,
) -> dict[str, Any]:
    """One entry of the result's `burst.phases`."""
    value = p99(ttfts_ok)
    return {
        "name": name,
        "start_s": round(start_s, 6),
        "end_s": round(end_s, 6),
        "rate_rps": rate_rps,
        "requests": issued,
        "ttft_p99_ms": None if value is None else round(value, 6),
        "error_rate": failed / issued if issued else 0.0,
    }


def recovery_seconds(
    samples: Sequence[tuple[float, float]],
    spike_end_s: float,
    run_end_s: float,
    base_p99_ms: float | None,
    window_s: float,
) -> float | None:
    """Seconds after the spike until a sliding window's p99 TTFT is within 10% of base.

    `samples` are (arrival offset s, TTFT ms) of successful requests.
    """
    if base_p99_ms is None or window_s <= 0:
        return None
    limit = base_p99_ms * RECOVERY_TOLERANCE
    step = window_s / 10
    after = sorted(s for s in samples if s[0] >= spike_end_s)
    offsets = np.asarray([s[0] for s in after])
    ttfts = np.asarray([s[1] for s in after])
    k = 0
    eps = 1e-9
    while spike_end_s + k * step + window_s <= run_end_s + eps:
        start = spike_end_s + k * step
        lo = int(np.searchsorted(offsets, start - eps, side="left"))
        hi = int(np.searchsorted(offsets, start + window_s - eps, side="left"))
        window_p99 = percentile(ttfts[lo:hi], 99)
        if window_p99 is not None and window_p99 <= limit:
            return round(k * step, 6)
        k += 1
    return None
