"""Anthropic Messages (`POST /v1/messages`): the request built from a chat-shaped body, and the
event stream translated into neutral events.

Request: system turns become the top-level `system`; an assistant turn with calls becomes
`text` + `tool_use` blocks (arguments parsed into `input`); consecutive `tool` turns become one
user turn of `tool_result` blocks; tools become `{name, description, input_schema}`;
`max_tokens` is required by the API (4096 when the caller sets none). Auth is `x-api-key`
plus `anthropic-version`.

Stream (what each event becomes):

    message_start          usage: input = input_tokens + cache_creation + cache_read
    content_block_start    tool_use: a tool-call delta with id and name (index = block index)
    content_block_delta    text_delta -> content; thinking_delta -> reasoning_content;
                           input_json_delta -> tool-call arguments (empty pieces dropped);
                           signature_delta, citations_delta -> nothing
    content_block_stop     a tool_use block that got no argument bytes gets "{}" (the API's
                           own `input` default)
    message_delta          finish_reason (end_turn/stop_sequence -> stop, max_tokens ->
                           length, tool_use -> tool_calls) and the cumulative usage
    message_stop           done
    ping                   nothing
    error                  an error event (`overloaded_error` is its own class, `overloaded`)

A stream opens with `message_start`: any event before it but `ping` (which carries nothing,
and which the API may send at any time) and `error` is out of order (`OutOfOrder`, a
stream_error), so nothing can be streamed outside a message. The stream ends
at `message_stop`, however long the server keeps the connection after it.

TTFT starts at the first text, thinking or tool_use byte; the first answer token is the
first text or tool_use. Reasoning tokens are `usage.output_tokens_details.thinking_tokens`
when the API reports them; `output_tokens` includes them either way.
"""

from __future__ import annotations

import json
from typing import Any

from epbench.runner.apis.base import (
    Api,
    Json,
    OutOfOrder,
    as_int,
    chat_completion,
    delta_event,
    neutral_usage,
    text_arguments,
    text_of,
    tool_delta,
)

VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4096
STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
}


def _auth(api_key: str | None) -> dict[str, str]:
    headers = {"anthropic-version": VERSION}
    if api_key:
        headers["x-api-key"] = api_key
    return headers


def _input(arguments: Any) -> Json:
    """A call's `input` object from its argument text ({} when it is not a JSON object)."""
    if isinstance(arguments, dict):
        return arguments
    try:
        value = json.loads(arguments) if isinstance(arguments, str) and arguments else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _messages(chat: list[Json]) -> tuple[str | None, list[Json]]:
    system: list[str] = []
    out: list[Json] = []
    for msg in chat:
        role = msg.get("role")
        if role in ("system", "developer"):
            system.append(text_of(msg.get("content")))
        elif role == "tool":
            block = {
                "type": "tool_result",
                "tool_use_id": str(msg.get("tool_call_id")),
                "content": text_of(msg.get("content")),
            }
            last = out[-1] if out else None
            if last and last["role"] == "user" and isinstance(last["content"], list) and all(
                b.get("type") == "tool_result" for b in last["content"]
            ):
                last["content"].append(block)
            else:
                out.append({"role": "user", "content": [block]})
        elif role == "assistant" and msg.get("tool_calls"):
            blocks: list[Json] = []
            if text_of(msg.get("content")):
                blocks.append({"type": "text", "text": text_of(msg.get("content"))})
            for call in msg["tool_calls"]:
                function = call.get("function") or {}
                blocks.append({
                    "type": "tool_use",
                    "id": str(call.get("id")),
                    "name": str(function.get("name", "")),
                    "input": _input(function.get("arguments")),
                })
            out.append({"role": "assistant", "content": blocks})
        else:
            out.append({"role": "user" if role == "user" else "assistant",
                        "content": text_of(msg.get("content"))})
    return ("\n\n".join(system) if system else None), out


def _tool_choice(choice: Any, parallel: Any) -> Json | None:
    out: Json | None
    if choice == "auto":
        out = {"type": "auto"}
    elif choice == "required":
        out = {"type": "any"}
    elif choice == "none":
        out = {"type": "none"}
    elif isinstance(choice, dict) and isinstance(choice.get("function"), dict):
        out = {"type": "tool", "name": choice["function"].get("name")}
    else:
        out = None
    if parallel is False:
        out = {**(out or {"type": "auto"}), "disable_parallel_tool_use": True}
    return out


def build(body: Json) -> Json:
    """The Messages body for a chat-shaped request body."""
    system, messages = _messages(list(body.get("messages") or []))
    out: Json = {
        "model": body.get("model"),
        "messages": messages,
        "max_tokens": body.get("max_tokens") or body.get("max_completion_tokens")
        or DEFAULT_MAX_TOKENS,
    }
    if system is not None:
        out["system"] = system
    if body.get("stream"):
        out["stream"] = True
    for key in ("temperature", "top_p", "top_k", "stop_sequences", "metadata", "thinking"):
        if body.get(key) is not None:
            out[key] = body[key]
    tools = body.get("tools")
    if tools:
        out["tools"] = [
            {
                "name": t["function"]["name"],
                "description": t["function"].get("description", ""),
                "input_schema": t["function"].get("parameters")
                or {"type": "object", "properties": {}},
                **({"strict": t["function"]["strict"]} if "strict" in t["function"] else {}),
            }
            for t in tools
            if isinstance(t, dict) and isinstance(t.get("function"), dict)
        ]
        choice = _tool_choice(body.get("tool_choice"), body.get("parallel_tool_calls"))
        if choice is not None:
            out["tool_choice"] = choice
    return out


def _usage(raw: Any, into: Json) -> None:
    """Fold one (cumulative) Anthropic usage object into `into`, field by field."""
    if not isinstance(raw, dict):
        return
    for key in ("input_tokens", "output_tokens", "cache_creation_input_tokens",
                "cache_read_input_tokens"):
        value = as_int(raw.get(key))
        if value is not None:
            into[key] = value
    details = raw.get("output_tokens_details")
    if isinstance(details, dict) and as_int(details.get("thinking_tokens")) is not None:
        into["thinking_tokens"] = details["thinking_tokens"]


def usage_event(u: Json) -> Json:
    cache_read, cache_write = u.get("cache_read_input_tokens"), u.get("cache_creation_input_tokens")
    total_in = None
    if "input_tokens" in u:
        total_in = u["input_tokens"] + (cache_read or 0) + (cache_write or 0)
    return {"usage": neutral_usage(total_in, u.get("output_tokens"), cache_read, cache_write,
                                   u.get("thinking_tokens"))}


class MessagesTranslator:
    """One response's events; remembers each content block's type and argument bytes."""

    __slots__ = ("_blocks", "_started", "_usage")

    def __init__(self) -> None:
        self._blocks: dict[int, list[Any]] = {}  # index -> [type, argument chars]
        self._usage: Json = {}
        self._started = False

    def event(self, obj: Any) -> list[Json]:
        kind = obj.get("type")
        if not self._started and kind not in ("message_start", "ping", "error"):
            raise OutOfOrder(f"a {str(kind)[:40]!r} event before message_start")
        if kind == "content_block_delta":
            delta = obj.get("delta") or {}
            dtype = delta.get("type")
            if dtype == "text_delta":
                return [delta_event({"content": delta.get("text", "")})]
            if dtype == "thinking_delta":
                return [delta_event({"reasoning_content": delta.get("thinking", "")})]
            if dtype == "input_json_delta":
                piece = delta.get("partial_json")
                index = int(obj.get("index", 0))
                if not isinstance(piece, str) or not piece:
                    return []
                seen = self._blocks.setdefault(index, ["tool_use", 0, None])
                seen[1] += len(piece)
                return [tool_delta(index, arguments=piece)]
            return []
        if kind == "content_block_start":
            index = int(obj.get("index", 0))
            block = obj.get("content_block") or {}
            btype = block.get("type")
            # a tool_use block's initial `input` (Anthropic sends {} and then deltas; some
            # compatible servers send it whole here): the arguments when no delta follows
            initial = block.get("input") if btype == "tool_use" else None
            self._blocks[index] = [btype, 0, initial if isinstance(initial, dict) else None]
            if btype == "tool_use":
                return [tool_delta(index, str(block.get("id") or "") or None,
                                   str(block.get("name") or ""), "")]
            if btype == "text" and block.get("text"):
                return [delta_event({"content": block["text"]})]
            if btype == "thinking" and block.get("thinking"):
                return [delta_event({"reasoning_content": block["thinking"]})]
            return []
        if kind == "content_block_stop":
            index = int(obj.get("index", 0))
            known = self._blocks.get(index)
            if known is not None and known[0] == "tool_use" and known[1] == 0:
                whole_input = json.dumps(known[2]) if known[2] else "{}"
                known[1] = len(whole_input)
                return [tool_delta(index, arguments=whole_input)]
            return []
        if kind == "message_start":
            self._started = True
            _usage((obj.get("message") or {}).get("usage"), self._usage)
            return [usage_event(self._usage)] if self._usage else []
        if kind == "message_delta":
            _usage(obj.get("usage"), self._usage)
            reason = (obj.get("delta") or {}).get("stop_reason")
            out = [usage_event(self._usage)] if self._usage else []
            if reason:
                out.append(delta_event({}, STOP_REASONS.get(reason, str(reason))))
            return out
        if kind == "message_stop":
            return [{"done": True}]
        if kind == "error":
            error = obj.get("error") if isinstance(obj.get("error"), dict) else {}
            return [{"error": {"type": error.get("type") or "error",
                               "message": error.get("message") or ""}}]
        return []  # ping, and event types added later


def whole(body: Json) -> Json:
    """A non-streamed Message as a chat.completion-shaped body."""
    if body.get("type") == "error":
        return {"error": body.get("error") or {"type": "error"}}
    content: list[str] = []
    reasoning: list[str] = []
    calls: list[Json] = []
    for block in body.get("content") or []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            content.append(str(block.get("text", "")))
        elif block.get("type") == "thinking":
            reasoning.append(str(block.get("thinking", "")))
        elif block.get("type") == "tool_use":
            calls.append({"index": len(calls), "id": block.get("id"), "type": "function",
                          "function": {"name": block.get("name", ""),
                                       "arguments": text_arguments(block.get("input", {}))}})
    u: Json = {}
    _usage(body.get("usage"), u)
    reason = body.get("stop_reason")
    finish = STOP_REASONS.get(reason, str(reason)) if reason else None
    return chat_completion("".join(content), "".join(reasoning), calls, finish,
                           usage_event(u)["usage"] if u else None)


ANTHROPIC_MESSAGES = Api(
    name="anthropic-messages",
    path="/messages",
    auth_headers=_auth,
    build=build,
    translator=MessagesTranslator,
    whole=whole,
    overloaded_types=frozenset({"overloaded_error"}),
)
