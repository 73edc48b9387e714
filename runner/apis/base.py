"""The seam every wire API implements, and the neutral events it translates into.

A neutral event is a dict in the shape of an OpenAI chat-completion chunk, because that is
what the client's timing and the agentic assembler already read:

    {"choices": [{"index": 0, "delta": {...}, "finish_reason": ...}]}
        delta keys: `content` (answer text), `reasoning_content` (reasoning text),
        `tool_calls` ([{"index", "id", "function": {"name", "arguments"}}])
    {"usage": {"prompt_tokens", "completion_tokens",
               "prompt_tokens_details": {"cached_tokens", "cache_write_tokens"},
               "completion_tokens_details": {"reasoning_tokens"}}}
        cumulative: a later usage event replaces an earlier one; `prompt_tokens` is every
        input token, cached or not
    {"error": {"type", "message"}}    an error inside a 200 stream
    {"done": true}                    the API's own end of stream ([DONE], message_stop,
                                      response.completed)

An `Api` is pure: `build` maps a chat-shaped request body to the API's own body, a
`Translator` maps one parsed SSE payload to zero or more neutral events and keeps only the
little state the API needs (which block is which), and `whole` maps a non-streamed answer to
a chat.completion-shaped body. None of them does I/O.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

Json = dict[str, Any]


class OutOfOrder(ValueError):
    """An event the API does not allow where it came (e.g. content before `message_start`)."""


class Translator(Protocol):
    def event(self, obj: Any) -> list[Json]:
        """The neutral events that one parsed SSE payload stands for (maybe none)."""
        ...


@dataclass(frozen=True)
class Api:
    """One wire API: where to send, how to authenticate, how to speak and how to listen."""

    name: str
    path: str  # appended to the endpoint's base_url (which ends in /v1)
    auth_headers: Callable[[str | None], dict[str, str]]
    build: Callable[[Json], Json]
    translator: Callable[[], Translator]
    whole: Callable[[Json], Json]
    # Error types inside a stream that mean "busy, try again" rather than a broken stream.
    overloaded_types: frozenset[str] = frozenset()


def neutral_usage(
    input_tokens: int | None,
    output_tokens: int | None,
    cache_read: int | None = None,
    cache_write: int | None = None,
    reasoning: int | None = None,
) -> Json:
    """The neutral usage dict (see the module docstring); absent figures stay absent."""
    usage: Json = {}
    if input_tokens is not None:
        usage["prompt_tokens"] = input_tokens
    if output_tokens is not None:
        usage["completion_tokens"] = output_tokens
    details = {
        k: v for k, v in (("cached_tokens", cache_read), ("cache_write_tokens", cache_write))
        if v is not None
    }
    if details:
        usage["prompt_tokens_details"] = details
    if reasoning is not None:
        usage["completion_tokens_details"] = {"reasoning_tokens": reasoning}
    return usage


def delta_event(delta: Json, finish_reason: str | None = None) -> Json:
    """One neutral chunk of choice 0."""
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}


def tool_delta(
    index: int, call_id: str | None = None, name: str | None = None, arguments: str | None = None
) -> Json:
    """A neutral tool-call delta for the call at `index`."""
    call: Json = {"index": index}
    if call_id is not None:
        call["id"] = call_id
    function: Json = {}
    if name is not None:
        function["name"] = name
    if arguments is not None:
        function["arguments"] = arguments
    call["function"] = function
    return delta_event({"tool_calls": [call]})


def as_int(value: Any) -> int | None:
    """An integer token count, or None for anything else (bools included)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def chat_completion(
    content: str,
    reasoning: str,
    calls: list[Json],
    finish_reason: str | None,
    usage: Json | None,
) -> Json:
    """A chat.completion-shaped body (the neutral form of a non-streamed answer)."""
    message: Json = {"role": "assistant", "content": content or None}
    if reasoning:
        message["reasoning_content"] = reasoning
    if calls:
        message["tool_calls"] = calls
    body: Json = {"choices": [{"index": 0, "message": message, "finish_reason": finish_reason}]}
    if usage:
        body["usage"] = usage
    return body


def text_arguments(arguments: Any) -> str:
    """Tool-call arguments as the JSON text the assembler expects."""
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))


def text_of(content: Any) -> str:
    """A turn's text: a string as is, chat content parts joined, None as ""."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return "" if content is None else str(content)
