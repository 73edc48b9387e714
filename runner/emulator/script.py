"""What the emulator streams for one request: the seam between the server and the agentic player.

The server owns timing (queueing, prefill, per-token decode) and framing (SSE or one JSON body);
a player only decides *what* is said, as a list of OpenAI `delta` objects. One delta is one
streamed chunk and costs one decode step.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Script:
    """The reply to one chat-completions request, as the deltas of its chunks."""

    deltas: list[dict[str, Any]]
    finish_reason: str = "stop"
    completion_tokens: int | None = None  # None: one token per delta
    injected: dict[str, int] = field(default_factory=dict)  # fault kind -> how many, for stats
