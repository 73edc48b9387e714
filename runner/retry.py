"""The transport retry policy, shared by serving runs (off unless a workload enables it) and
agentic runs (on by default: a task should survive a 429)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

MAX_RETRY_AFTER_S = 120.0  # a hostile Retry-After must not stall a run for hours


@dataclass(frozen=True)
class RetryPolicy:
    """Retries after 429, 5xx, timeouts and cut streams, with capped exponential backoff."""

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
        """Seconds to wait before retry number `attempt` (1-based).

        Retry-After when the server sent one and the policy honours it (capped at
        MAX_RETRY_AFTER_S); else backoff_s * 2**(attempt-1), capped at backoff_max_s."""
        if self.honour_retry_after and retry_after_s is not None and retry_after_s >= 0:
            return min(float(retry_after_s), MAX_RETRY_AFTER_S)
        return float(min(self.backoff_s * 2 ** (attempt - 1), self.backoff_max_s))
