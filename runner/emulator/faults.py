"""Which fault, if any, one request gets: a token bucket for 429s, then one seeded draw.

At most one fault per request. The rate limit is checked first (it is a bucket, not a
probability); otherwise one uniform number u from the request's generator is walked through
the probabilities in the fixed order of `PROBABILISTIC`: the first kind whose cumulative
probability exceeds u is the fault. So each kind happens with exactly its configured
probability while the probabilities sum to at most 1 (beyond 1, the later kinds are cut).

Kinds, and the error class a correct client files each under (`FAULT_CLASSES`):

| kind | what the client sees | class |
| --- | --- | --- |
| rate_limit | 429, `Retry-After` seconds, OpenAI-style error body | rate_limited |
| http_5xx | 500 or 503 with an error body | http_5xx |
| drop_mid_stream | some content chunks, then the connection closes mid-body | truncated |
| malformed_sse | a `data:` line that is not JSON, mid-stream | stream_error |
| stream_error | a `data: {"error": ...}` event in the 200 stream, then the end | stream_error |
| empty_choices | a 200 stream whose chunks carry no choices, then `[DONE]` | empty |
| stall | `stall_s` seconds of silence before the first token | timeout |
| overloaded | native APIs: an overloaded error event mid-stream; chat: 529 | overloaded |

(`overloaded` events are `overloaded_error` on Anthropic Messages and `server_is_overloaded` on
OpenAI Responses; chat completions has no such event, so there it is a 529 at the door.)
"""

from __future__ import annotations

import math
import random
import time

from epbench.runner.emulator.settings import FaultSettings

PROBABILISTIC: tuple[str, ...] = (
    "http_5xx",
    "stall",
    "drop_mid_stream",
    "malformed_sse",
    "stream_error",
    "empty_choices",
    "overloaded",  # last, so that adding it left the earlier kinds' draws unchanged
)
FAULT_KINDS: tuple[str, ...] = ("rate_limit", *PROBABILISTIC)
FAULT_CLASSES: dict[str, str] = {
    "rate_limit": "rate_limited",
    "http_5xx": "http_5xx",
    "drop_mid_stream": "truncated",
    "malformed_sse": "stream_error",
    "stream_error": "stream_error",
    "empty_choices": "empty",
    "stall": "timeout",
    "overloaded": "overloaded",
}


class TokenBucket:
    """Requests per minute as a bucket of one second's worth (at least 1), refilled evenly.

    Providers enforce per-minute limits over short windows, so a burst of a whole minute's
    requests is not allowed: capacity = max(1, rpm / 60), refill = rpm / 60 per second.
    """

    def __init__(self, rpm: float) -> None:
        self.rate = rpm / 60.0
        self.capacity = max(1.0, self.rate)
        self.tokens = self.capacity
        self._t = time.monotonic()

    def take(self) -> float:
        """0.0 if the request may pass (one token taken); else seconds until a token is due."""
        now = time.monotonic()
        self.tokens = min(self.capacity, self.tokens + (now - self._t) * self.rate)
        self._t = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return 0.0
        return (1.0 - self.tokens) / self.rate


def retry_after_header(wait_s: float) -> int:
    """Whole seconds for `Retry-After` (rounded up, at least 1)."""
    return max(1, math.ceil(wait_s))


class FaultDrawer:
    """Draws each request's fault; the bucket is shared, the draw uses the request's generator."""

    def __init__(self, faults: FaultSettings) -> None:
        self.settings = faults
        self.bucket = TokenBucket(faults.rate_limit_rpm) if faults.rate_limit_rpm > 0 else None
        self._cumulative: list[tuple[float, str]] = []
        total = 0.0
        for kind in PROBABILISTIC:
            p = float(getattr(faults, kind))
            if p > 0:
                total += p
                self._cumulative.append((total, kind))

    def draw(self, rng: random.Random) -> tuple[str | None, float]:
        """(kind or None, seconds until the bucket refills when the kind is rate_limit).

        One number is taken from `rng` whatever the settings, so that the rest of a request's
        draws (output length, jitter) do not depend on which faults are switched on.
        """
        u = rng.random()
        if self.bucket is not None:
            wait = self.bucket.take()
            if wait > 0:
                return "rate_limit", wait
        for edge, kind in self._cumulative:
            if u < edge:
                return kind, 0.0
        return None, 0.0
