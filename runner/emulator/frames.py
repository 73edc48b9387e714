"""The bytes the emulator sends: SSE events and JSON bodies, built from templates.

A streamed text token is `prefix + delta + suffix`, where the prefix (id, created, model) is
built once per request and the delta bytes once per vocabulary word, so the hot path is one
bytes concatenation per chunk and no JSON encoding.
"""

from __future__ import annotations

import json
from typing import Any

from epbench.runner.emulator.tokens import VOCABULARY

DONE = b"data: [DONE]\n\n"
_DELTA_BYTES: tuple[bytes, ...] = tuple(
    json.dumps({"content": word}, separators=(",", ":")).encode() for word in VOCABULARY
)
_OPEN_SUFFIX = b',"logprobs":null,"finish_reason":null}]}\n\n'


def _dumps(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def error_body(message: str, kind: str, code: str | None = None) -> bytes:
    """An OpenAI-style error object: {"error": {"message", "type", "param", "code"}}."""
    return _dumps({"error": {"message": message, "type": kind, "param": None, "code": code}})


class ChunkFrames:
    """SSE events of one streamed completion. `tally` (prompt, cache and reasoning figures,
    `native_frames.Tally`) adds the usage details; without it usage has the two counts."""

    def __init__(self, completion_id: str, created: int, model: str, tally: Any = None) -> None:
        self.tally = tally
        self._head = (
            b'data: {"id":' + _dumps(completion_id)
            + b',"object":"chat.completion.chunk","created":' + str(created).encode()
            + b',"model":' + _dumps(model)
        )
        self._prefix = self._head + b',"choices":[{"index":0,"delta":'

    def role(self) -> bytes:
        """The role-only first chunk (no content: a correct client does not count it)."""
        return self._prefix + b'{"role":"assistant","content":""}' + _OPEN_SUFFIX

    def token(self, index: int) -> bytes:
        """One text token: the vocabulary word at `index` (modulo its size)."""
        return self._prefix + _DELTA_BYTES[index % len(_DELTA_BYTES)] + _OPEN_SUFFIX

    def delta(self, delta: dict[str, Any]) -> bytes:
        """Any delta a script gives (tool calls, content), JSON-encoded as is."""
        return self._prefix + _dumps(delta) + _OPEN_SUFFIX

    def finish(self, reason: str) -> bytes:
        """The empty-delta chunk that carries finish_reason."""
        return (
            self._prefix + b'{},"logprobs":null,"finish_reason":' + _dumps(reason) + b"}]}\n\n"
        )

    def usage(self, prompt_tokens: int, completion_tokens: int) -> bytes:
        """The usage-only last chunk (`choices` empty), sent when include_usage was asked."""
        return (
            self._head + b',"choices":[],"usage":' + _usage(prompt_tokens, completion_tokens)
            + b"}\n\n"
        )

    def end(self, reason: str, completion_tokens: int, include_usage: bool) -> bytes:
        """The finish chunk, the usage chunk when asked for, and [DONE]."""
        tail = self.finish(reason)
        if include_usage:
            t = self.tally
            if t is None or not (t.cache_reported or t.cache_read or t.reasoning):
                tail += self.usage(t.prompt if t is not None else 0, completion_tokens)
            else:
                usage = chat_usage(t, completion_tokens)
                tail += self._head + b',"choices":[],"usage":' + _dumps(usage) + b"}\n\n"
        return tail + DONE

    def empty(self) -> bytes:
        """A chunk with no choices and no usage (the empty_choices fault)."""
        return self._head + b',"choices":[]}\n\n'

    def malformed(self) -> bytes:
        """A data line that is not valid JSON (the malformed_sse fault)."""
        return self._prefix + b'{"content":" broken\n\n'

    @staticmethod
    def error(message: str) -> bytes:
        """An error event inside a 200 stream (the stream_error fault)."""
        return b"data: " + error_body(message, "server_error", "internal_error") + b"\n\n"


def _usage(prompt_tokens: int, completion_tokens: int) -> bytes:
    return (
        b'{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}'
        % (prompt_tokens, completion_tokens, prompt_tokens + completion_tokens)
    )


def chat_usage(t: Any, completion_tokens: int) -> dict[str, Any]:
    """Chat usage with its details, from a `native_frames.Tally`."""
    return {"prompt_tokens": t.prompt, "completion_tokens": completion_tokens,
            "total_tokens": t.prompt + completion_tokens,
            "prompt_tokens_details": {"cached_tokens": t.cache_read},
            "completion_tokens_details": {"reasoning_tokens": t.reasoning}}


def completion_body(
    completion_id: str,
    created: int,
    model: str,
    message: dict[str, Any],
    finish_reason: str,
    prompt_tokens: int,
    completion_tokens: int,
    tally: Any = None,
) -> bytes:
    """A non-streaming chat.completion body (usage details from `tally` when it reports the
    prompt cache)."""
    return _dumps(
        {
            "id": completion_id,
            "object": "chat.completion",
            "created": created,
            "model": model,
            "choices": [
                {"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}
            ],
            "usage": chat_usage(tally, completion_tokens)
            if tally is not None and tally.cache_reported else {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
    )


def assemble_message(deltas: list[dict[str, Any]]) -> dict[str, Any]:
    """The assistant message that a list of deltas adds up to (tool calls merged by index)."""
    content: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    for delta in deltas:
        if isinstance(delta.get("content"), str):
            content.append(delta["content"])
        for part in delta.get("tool_calls") or []:
            index = int(part.get("index", 0))
            call = calls.setdefault(index, {"type": "function", "function": {}})
            if part.get("id") and "id" not in call:
                call["id"] = part["id"]
            function = part.get("function") or {}
            for key in ("name", "arguments"):
                value = function.get(key)
                if isinstance(value, str):
                    call["function"][key] = call["function"].get(key, "") + value
                elif value is not None:
                    call["function"][key] = value  # an object, passed on as the player gave it
    message: dict[str, Any] = {"role": "assistant", "content": "".join(content) or None}
    if calls:
        message["tool_calls"] = [
            {"id": c["id"], **c} if "id" in c else c for _, c in sorted(calls.items())
        ]
        for call in message["tool_calls"]:
            call["function"].setdefault("name", "")
            call["function"].setdefault("arguments", "")
    return message
