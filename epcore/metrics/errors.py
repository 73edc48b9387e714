"""Error classes: every failed request is in exactly one, counted and never dropped.

    class         when
    rate_limited  HTTP 429
    overloaded    the server said it is overloaded: HTTP 529, or an `overloaded_error` (Anthropic)
                  or `server_is_overloaded` (OpenAI) error, as a status body or mid-stream
    http_4xx      any other 4xx status
    http_5xx      any 5xx status
    timeout       no byte for the client timeout (connect, pool, read or write)
    connection    the request got no response at all (refused, reset before headers)
    stream_error  a 200 stream with malformed SSE data or an {"error": ...} event
    truncated     the stream ended (or was cut) before [DONE] and before any finish_reason
    empty         a 200 answer that finished but carried no content-bearing event

Precedence inside a 200 stream: stream_error, then truncated, then empty. Failed requests
are excluded from latency percentiles (the `ok` class alone feeds them).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

OK = "ok"
ERROR_CLASSES: tuple[str, ...] = (
    "rate_limited",
    "overloaded",
    "http_4xx",
    "http_5xx",
    "timeout",
    "connection",
    "stream_error",
    "truncated",
    "empty",
)
# Classes worth retrying when a workload opts in: the endpoint was busy or unreachable.
TRANSPORT_CLASSES: frozenset[str] = frozenset(
    {"rate_limited", "overloaded", "http_5xx", "timeout", "connection"}
)


def class_for_status(status: int) -> str | None:
    """The error class of an HTTP status, or None for a success status."""
    if status == 429:
        return "rate_limited"
    if status == 529:
        return "overloaded"
    if 400 <= status < 500:
        return "http_4xx"
    if status >= 500:
        return "http_5xx"
    if status < 200 or status >= 300:
        return "http_4xx"  # 1xx/3xx never reach here through httpx; be conservative
    return None


def count_errors(records: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Counts of every error class (all eight keys, zeros included) over journal records."""
    counts = dict.fromkeys(ERROR_CLASSES, 0)
    for record in records:
        cls = record["class"]
        if cls != OK:
            counts[cls] += 1
    return counts
