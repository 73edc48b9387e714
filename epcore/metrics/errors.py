"""Error classes: every failed request is in exactly one, counted and never dropped.

This table is the one description of the taxonomy (the runner's DESIGN and the methodology
page point here).

    class         when
    rate_limited  HTTP 429
    overloaded    the server said it is overloaded: HTTP 529, or an `overloaded_error` (Anthropic)
                  or `server_is_overloaded` (OpenAI) error, as a status body or mid-stream
    http_4xx      any other 4xx status
    http_5xx      any 5xx status
    http_other    a status outside 2xx, 4xx and 5xx (1xx, 3xx, 600 and up)
    timeout       no byte for the idle timeout (connect, pool, read or write)
    deadline      the request as a whole ran past its total deadline (`timeout_s`), even
                  though bytes kept arriving
    connection    the request got no response at all (refused, reset before headers)
    protocol      the answer is not what the API promises: a 200 that is neither SSE nor JSON
                  (an HTML page), or a malformed HTTP response
    too_large     the endpoint sent more than a cap allows: header bytes, one SSE event, one
                  JSON body, a whole response, or an assembled message
    stream_error  a 200 stream with malformed SSE data or an {"error": ...} event
    truncated     the stream ended (or was cut) before [DONE] and before any finish_reason
    empty         a 200 answer that finished but carried no content-bearing event
    usage_implausible  a finished answer whose `usage` no stream could carry: a negative
                  count, more output tokens than max_tokens allows, or more visible output
                  tokens than the bytes that were streamed (epbench.core.usage_bounds)

Precedence: a cap or the deadline ends the request at once and wins; inside a finished 200
stream, stream_error, then truncated, then empty, then usage_implausible. Failed requests are
excluded from latency percentiles (the `ok` class alone feeds them). Eight classes are required
in every result; the ones added later (`overloaded`, `http_other`, `deadline`, `protocol`,
`too_large`, `usage_implausible`) are optional in the result schema, so results written
before them still load; `count_errors` lists every class, zeros included.
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
    "http_other",
    "deadline",
    "protocol",
    "too_large",
    "usage_implausible",
)
# The classes every result carries (the rest were added later and are optional in the schema).
CLASSES_IN_EVERY_RESULT: tuple[str, ...] = (
    "rate_limited", "http_4xx", "http_5xx", "timeout", "connection", "stream_error",
    "truncated", "empty",
)
# Classes where the endpoint was busy or unreachable: a retry may succeed.
TRANSPORT_CLASSES: frozenset[str] = frozenset(
    {"rate_limited", "overloaded", "http_5xx", "timeout", "connection", "deadline"}
)


def class_for_status(status: int) -> str | None:
    """The error class of an HTTP status, or None for a success (2xx) status."""
    if 200 <= status < 300:
        return None
    if status == 429:
        return "rate_limited"
    if status == 529:
        return "overloaded"
    if 400 <= status < 500:
        return "http_4xx"
    if 500 <= status < 600:
        return "http_5xx"
    return "http_other"


def count_errors(records: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Counts of every error class (all keys, zeros included) over journal records."""
    counts = dict.fromkeys(ERROR_CLASSES, 0)
    for record in records:
        cls = record["class"]
        if cls != OK:
            counts[cls] += 1
    return counts
