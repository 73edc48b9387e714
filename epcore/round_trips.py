"""Round trips the runner measured: the floor under every latency, read from the journal.

Before a process sends its first request (the first run and every `--resume`), the runner's
preflight times TCP connects to the endpoint's host and port and journals them on that
process's session line (`{"type": "session", ..., "rtt_ms": [...]}`). A connect is one round
trip through the network path the requests take (to the endpoint, or to the edge in front of
it), with no server work in it, so no answer can come faster: `round_trips(records)` is the
result's `round_trips` block, recomputed by `epbench validate` like every other figure, and
`min_ms` is the bound a TTFT or end-to-end latency is held against
(epbench.generator.checks.plausible.round_trip). The submitter's own `client.rtt_ms` bounds nothing.

Timing the preflight's HTTP requests instead would include the server's work (a slow
`/models` could take longer than a fast chat answer), so that time is an upper bound on a round
trip, not the floor a latency needs.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping
from typing import Any

MAX_SAMPLES = 1000
"""More samples than any run journals: a hostile journal cannot make this block large."""


def samples_of(records: Iterable[Mapping[str, Any]]) -> list[float]:
    """Every round trip (ms) journaled on session lines, in journal order."""
    out: list[float] = []
    for record in records:
        if record.get("type") != "session":
            continue
        values = record.get("rtt_ms")
        if not isinstance(values, list):
            continue
        out += [float(v) for v in values
                if isinstance(v, int | float) and not isinstance(v, bool) and 0 < v < 1e7]
    return out[:MAX_SAMPLES]


def round_trips(records: Iterable[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The result's `round_trips` block, or None when the journal holds none."""
    samples = samples_of(records)
    if not samples:
        return None
    return {"samples": len(samples), "min_ms": round(min(samples), 4),
            "median_ms": round(statistics.median(samples), 4)}
