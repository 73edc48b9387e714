"""Usage the endpoint reports, held to what it streamed: the one rule for the runner and for
`epbench validate`.

An endpoint's `usage` is its own word, and output tokens drive every throughput figure, so a
count no stream could carry must not reach a board. A request whose counts break a bound is a
failed request of class `usage_implausible` (epbench.core.metrics.errors) and its point is not
ranked (epbench.core.rankable). The bounds, each of which an honest server meets by construction:

    never negative    no reported count (input, output, reasoning, cached, cache-write) < 0
    parts of a whole  reasoning tokens <= output tokens; cached + cache-write <= input
    the request's     output tokens <= max_tokens + the API's allowance (ALLOWANCE_TOKENS):
      own limit       the three APIs document their limit as covering every generated token,
                      reasoning and tool calls included (chat `max_completion_tokens`,
                      Responses `max_output_tokens`, Messages `max_tokens` with thinking's
                      budget inside it); the one token of allowance is the end-of-sequence
                      token some servers count
    the streamed      output tokens - reasoning tokens <= content bytes + allowance +
      bytes           TOOL_CALL_TOKENS per tool call. Every token a tokenizer emits spells at
                      least one byte, so the visible tokens cannot outnumber the bytes of text,
                      reasoning, tool names and arguments that arrived; reasoning a server
                      keeps hidden is counted by its own field (`reasoning_tokens`) and held
                      to the limit above; a tool call's wrapper (its markers and JSON keys,
                      which the server turns into structure) is allowed its own tokens

`content_bytes`, `tool_calls` and the SSE event count are journaled per request, so the
validator recomputes the same decision from the journal alone (a line written before they
existed is held to the first three bounds only).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

CLASS = "usage_implausible"
ALLOWANCE_TOKENS: dict[str, int] = {
    "openai-chat": 1,
    "openai-responses": 1,
    "anthropic-messages": 1,
}
"""Output tokens past max_tokens an API's answer may report: none is documented; one token
for the end-of-sequence token some servers count."""
TOOL_CALL_TOKENS = 64
"""Tokens one tool call may spend on its wrapper (markers, `{"name": ..., "arguments": ...}`)
that reach the client as structure rather than bytes: the wrapper's bytes, since a token spells
at least one. Hermes/Qwen's `<tool_call>\n{"name": "", "arguments": }\n</tool_call>` is 52
bytes, and a server whose grammar forces it may spell it a byte a token: vLLM 0.32 with a
strict tool spent 70 tokens on a call whose name and arguments are 27 bytes: its tiny model
spelled the 50-byte wrapper (no newlines) nearly a byte a token, then the eos."""
_COUNTS = ("input_tokens", "output_tokens", "reasoning_tokens", "cache_read_tokens",
           "cache_write_tokens")


@dataclass(frozen=True, slots=True)
class Streamed:
    """What one request reported and received: the counts a bound reads."""

    input_tokens: int | None
    output_tokens: int | None
    reasoning_tokens: int | None
    cache_read_tokens: int | None
    cache_write_tokens: int | None
    content_bytes: int | None  # None: not journaled (a line written before the field)
    tool_calls: int = 0

    @staticmethod
    def from_line(line: Mapping[str, Any]) -> Streamed:
        """The counts of one journal request line (absent or non-integer fields are None)."""
        values = {k: _int(line.get(k)) for k in _COUNTS}
        return Streamed(**values, content_bytes=_int(line.get("content_bytes")),
                        tool_calls=_int(line.get("tool_calls")) or 0)


def implausible(s: Streamed, max_tokens: int | None, api: str | None) -> str | None:
    """The first bound `s` breaks, as one phrase; None when the counts are plausible."""
    for name in _COUNTS:
        value = getattr(s, name)
        if value is not None and value < 0:
            return f"usage reports {name} {value}, a negative count"
    out, reasoning = s.output_tokens, s.reasoning_tokens or 0
    if out is not None and reasoning > out:
        return f"usage reports {reasoning} reasoning tokens but {out} output tokens in all"
    cached = (s.cache_read_tokens or 0) + (s.cache_write_tokens or 0)
    if s.input_tokens is not None and cached > s.input_tokens:
        return f"usage reports {cached} cached input tokens but {s.input_tokens} input in all"
    if out is None:
        return None
    allowance = ALLOWANCE_TOKENS.get(api or "openai-chat", 1)
    if max_tokens is not None and out > max_tokens + allowance:
        return f"usage reports {out} output tokens for a request of max_tokens {max_tokens}"
    if s.content_bytes is not None:
        room = s.content_bytes + allowance + TOOL_CALL_TOKENS * s.tool_calls
        if out - reasoning > room:
            return (f"usage reports {out - reasoning} visible output tokens but "
                    f"{s.content_bytes} bytes of content streamed")
    return None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
