"""The one retry rule: a policy (how often, how long to wait) and one helper that sends with
retries, given the set of error classes worth retrying.

Serving and agentic runs both call `send_with_retries`; they differ only in the set:

    SERVING_RETRYABLE  rate_limited, http_5xx, timeout, deadline, connection
                       the endpoint was busy or unreachable. A serving run measures the
                       endpoint's streams: retrying a cut, malformed or empty stream would
                       hide exactly the faults its error classes exist to count.
    AGENTIC_RETRYABLE  the above, plus truncated, stream_error and empty
                       an agentic run measures whether a task gets done by a client that
                       behaves like a real agent, and a real agent sends a cut or broken
                       answer again. The retry is tagged `transport` and costed.

Never retried by either: http_4xx (the request itself is wrong), http_other, protocol and
too_large (the endpoint is not speaking the API; sending again would not change it).

Waits: Retry-After when the server sent one and the policy honours it, capped at
MAX_RETRY_AFTER_S (120 s: a server may ask for more than our own backoff would wait, but a
hostile value must not stall a run for hours); else `backoff_s * 2**(attempt-1)`, capped at
`backoff_max_s`. Serving retries are off unless a workload turns them on; agentic ones are on
by default (`epbench.runner.agentic.model.AGENTIC_RETRY`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any, Generic, Protocol, TypeVar

from epbench.core.metrics.errors import TRANSPORT_CLASSES

MAX_RETRY_AFTER_S = 120.0
SERVING_RETRYABLE: frozenset[str] = TRANSPORT_CLASSES
AGENTIC_RETRYABLE: frozenset[str] = TRANSPORT_CLASSES | {"truncated", "stream_error", "empty"}


class Answer(Protocol):
    error_class: str | None
    retry_after_s: float | None


A = TypeVar("A", bound=Answer)


@dataclass(frozen=True)
class RetryPolicy:
    """How many retries and how long to wait before each."""

    enabled: bool = False
    max_retries: int = 3
    backoff_s: float = 0.5
    backoff_max_s: float = 30.0
    honour_retry_after: bool = True

    def with_block(self, block: dict[str, Any] | None) -> RetryPolicy:
        """This policy with the fields a workload's `retry` block sets."""
        block = block or {}
        return replace(
            self,
            enabled=bool(block.get("enabled", self.enabled)),
            max_retries=int(block.get("max_retries", self.max_retries)),
            backoff_s=float(block.get("backoff_s", self.backoff_s)),
            backoff_max_s=float(block.get("backoff_max_s", self.backoff_max_s)),
            honour_retry_after=bool(block.get("honour_retry_after", self.honour_retry_after)),
        )

    def delay_s(self, attempt: int, retry_after_s: float | None) -> float:
        """Seconds to wait before retry number `attempt` (1-based): see the module docstring."""
        if self.honour_retry_after and retry_after_s is not None and retry_after_s >= 0:
            return min(float(retry_after_s), MAX_RETRY_AFTER_S)
        return float(min(self.backoff_s * 2 ** (attempt - 1), self.backoff_max_s))


@dataclass
class Retried(Generic[A]):
    """The final answer, how many attempts it took, and the seconds slept between them."""

    answer: A
    attempts: int
    backoff_s: float


async def send_with_retries(
    send: Callable[[], Awaitable[A]],
    policy: RetryPolicy,
    retryable: frozenset[str],
    on_attempt: Callable[[A, int, float], None] | None = None,
) -> Retried[A]:
    """Send, and send again while the answer's class is in `retryable` and the policy allows.

    `on_attempt(answer, attempt, backoff_before_s)` sees every attempt (1-based), the last
    one included, as it finishes."""
    attempt, backoff, slept = 1, 0.0, 0.0
    while True:
        answer = await send()
        if on_attempt is not None:
            on_attempt(answer, attempt, backoff)
        if not (
            policy.enabled
            and answer.error_class in retryable
            and attempt <= policy.max_retries
        ):
            return Retried(answer, attempt, slept)
        backoff = policy.delay_s(attempt, answer.retry_after_s)
        slept += backoff
        await asyncio.sleep(backoff)
        attempt += 1
