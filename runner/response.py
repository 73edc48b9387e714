"""What one request did: `ChatResponse`, filled by the client and the stream fold."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class ChatResponse:
    """What one chat-completions request did, with its times and (on failure) its class.

    `token_source` says where `output_tokens` came from ("usage", or "chunks": counted
    content-bearing events); `input_source` where `input_tokens` came from ("usage", or None
    when the endpoint reported none: the client never fills in a planned figure).
    """

    status: int | None = None
    t_send_ns: int = 0
    t_first_ns: int | None = None
    t_first_answer_ns: int | None = None  # first answer token (content or tool calls)
    t_last_ns: int | None = None
    t_done_ns: int = 0
    output_tokens: int | None = None
    input_tokens: int | None = None
    token_source: str | None = None  # "usage" | "chunks" | None (nothing to count)
    input_source: str | None = None  # "usage" | None
    reasoning_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    usage: dict[str, Any] | None = None
    error_class: str | None = None
    error: str | None = None
    retry_after_s: float | None = None
    itl_us: list[int] = field(default_factory=list)
    chunks: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    finish_reason: str | None = None
    content_events: int = 0
    done: bool = False
    t_byte_ns: int = 0  # the last read of the response (for deadline vs idle timeout)
    body_bytes: int = 0
    # What the server said about the answer (epcore/server_evidence.py), for the journal.
    response_id: str | None = None
    server_headers: dict[str, str] = field(default_factory=dict)
    # What usage is held to (epbench.core.usage_bounds): UTF-8 bytes of the text, reasoning and
    # tool-call names and arguments received, the tool calls seen, the SSE events read.
    content_bytes: int = 0
    tool_calls: int = 0
    sse_events: int = 0

    @property
    def ok(self) -> bool:
        return self.error_class is None
