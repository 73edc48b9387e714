"""The emulator's side of the two native APIs: their request bodies read back into the chat
shape the planner and the agentic player read, and their error and whole-answer bodies.

The runner's `epbench.runner.apis` modules go chat -> native; this goes native -> chat, so a request
built by epbench (or by any client) for `/v1/messages` or `/v1/responses` plays exactly as
its chat-completions twin: the same prompt tokens and the same player script.
"""

from __future__ import annotations

import json
from typing import Any

from epbench.runner.emulator.frames import error_body as chat_error_body
from epbench.runner.emulator.native_frames import Tally

Json = dict[str, Any]
MESSAGES = "anthropic-messages"
RESPONSES = "openai-responses"
CHAT = "openai-chat"
ROUTES = {
    "/v1/chat/completions": CHAT, "/chat/completions": CHAT,
    "/v1/messages": MESSAGES, "/messages": MESSAGES,
    "/v1/responses": RESPONSES, "/responses": RESPONSES,
}
# Anthropic's error types for the statuses the emulator sends.
_ANTHROPIC_TYPES = {
    400: "invalid_request_error", 404: "not_found_error", 405: "invalid_request_error",
    429: "rate_limit_error", 500: "api_error", 503: "api_error", 529: "overloaded_error",
}


class NativeError(ValueError):
    """The body is not a request of its API (answered with 400)."""


def error_body(api: str, status: int, message: str, kind: str, code: str | None = None) -> bytes:
    """An error body in the API's own shape."""
    if api == MESSAGES:
        etype = _ANTHROPIC_TYPES.get(status, "api_error")
        return json.dumps({"type": "error", "error": {"type": etype, "message": message}},
                          separators=(",", ":")).encode()
    return chat_error_body(message, kind, code)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content
                       if isinstance(p, dict) and p.get("type") in ("text", "input_text",
                                                                     "output_text"))
    return ""


def _tool_result_text(block: Json) -> str:
    content = block.get("content")
    return content if isinstance(content, str) else _text(content)


def messages_to_chat(body: Json) -> Json:
    """An Anthropic Messages request as a chat-completions request."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise NativeError("`messages` must be a non-empty list")
    if not isinstance(body.get("max_tokens"), int):
        raise NativeError("`max_tokens` is required")
    chat: list[Json] = []
    system = body.get("system")
    if system:
        chat.append({"role": "system", "content": _text(system) if isinstance(system, list)
                     else str(system)})
    for msg in messages:
        if not isinstance(msg, dict):
            raise NativeError("each message must be an object")
        content = msg.get("content")
        if isinstance(content, str) or msg.get("role") not in ("user", "assistant"):
            chat.append({"role": msg.get("role"), "content": _text(content)})
            continue
        blocks = [b for b in content or [] if isinstance(b, dict)]
        if msg["role"] == "assistant":
            calls = [{"id": b.get("id"), "type": "function",
                      "function": {"name": b.get("name", ""),
                                   "arguments": json.dumps(b.get("input", {}))}}
                     for b in blocks if b.get("type") == "tool_use"]
            turn: Json = {"role": "assistant", "content": _text(blocks)}
            if calls:
                turn["tool_calls"] = calls
            chat.append(turn)
            continue
        for b in blocks:
            if b.get("type") == "tool_result":
                chat.append({"role": "tool", "tool_call_id": b.get("tool_use_id"),
                             "content": _tool_result_text(b)})
        if _text(blocks):
            chat.append({"role": "user", "content": _text(blocks)})
    out: Json = {"model": body.get("model"), "messages": chat, "max_tokens": body["max_tokens"],
                 "stream": body.get("stream") is True}
    if body.get("tools"):
        out["tools"] = [{"type": "function", "function": {
            "name": t.get("name"), "description": t.get("description", ""),
            "parameters": t.get("input_schema")}} for t in body["tools"] if isinstance(t, dict)]
    return out


def responses_to_chat(body: Json) -> Json:
    """An OpenAI Responses request as a chat-completions request."""
    items = body.get("input")
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    if not isinstance(items, list) or not items:
        raise NativeError("`input` must be a string or a non-empty list")
    chat: list[Json] = []
    if body.get("instructions"):
        chat.append({"role": "system", "content": str(body["instructions"])})
    for item in items:
        if not isinstance(item, dict):
            raise NativeError("each input item must be an object")
        kind = item.get("type")
        if kind == "function_call":
            call = {"id": item.get("call_id"), "type": "function",
                    "function": {"name": item.get("name", ""),
                                 "arguments": item.get("arguments", "")}}
            last = chat[-1] if chat else None
            if last is not None and last["role"] == "assistant" and "tool_calls" in last:
                last["tool_calls"].append(call)
            elif last is not None and last["role"] == "assistant" and not last.get("tool_calls"):
                last["tool_calls"] = [call]
            else:
                chat.append({"role": "assistant", "content": "", "tool_calls": [call]})
        elif kind == "function_call_output":
            chat.append({"role": "tool", "tool_call_id": item.get("call_id"),
                         "content": str(item.get("output", ""))})
        elif kind in (None, "message"):
            chat.append({"role": item.get("role", "user"), "content": _text(item.get("content"))})
    out: Json = {"model": body.get("model"), "messages": chat, "stream": body.get("stream") is True}
    if isinstance(body.get("max_output_tokens"), int):
        out["max_tokens"] = body["max_output_tokens"]
    if body.get("tools"):
        out["tools"] = [{"type": "function", "function": {
            "name": t.get("name"), "description": t.get("description", ""),
            "parameters": t.get("parameters")}}
            for t in body["tools"] if isinstance(t, dict) and t.get("type") == "function"]
    return out


def to_chat(api: str, body: Json) -> Json:
    """The chat-completions twin of a request to `api` (NativeError when it is not one)."""
    if api == MESSAGES:
        return messages_to_chat(body)
    if api == RESPONSES:
        return responses_to_chat(body)
    return body


def native_body(api: str, answer_id: str, created: int, model: str, message: Json,
                finish_reason: str, tally: Tally, output: int) -> bytes:
    """A non-streamed answer in the API's own shape, from the chat message it adds up to."""
    calls = message.get("tool_calls") or []
    text = message.get("content") or ""
    if api == MESSAGES:
        content: list[Json] = [{"type": "text", "text": text}] if text else []
        for call in calls:
            function = call.get("function") or {}
            try:
                arguments = json.loads(function.get("arguments") or "{}")
            except ValueError:
                arguments = {}  # the API carries `input` as an object; invalid JSON is lost
            content.append({"type": "tool_use", "id": call.get("id", ""),
                            "name": function.get("name", ""), "input": arguments})
        stop = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use"}
        doc: Json = {
            "id": answer_id, "type": "message", "role": "assistant", "model": model,
            "content": content, "stop_reason": stop.get(finish_reason, finish_reason),
            "stop_sequence": None,
            "usage": {"input_tokens": tally.prompt - tally.cache_read - tally.cache_write,
                      "cache_creation_input_tokens": tally.cache_write,
                      "cache_read_input_tokens": tally.cache_read, "output_tokens": output},
        }
    else:
        output_items: list[Json] = []
        if text:
            output_items.append({"id": f"msg_{answer_id}", "type": "message", "role": "assistant",
                                 "status": "completed", "content": [
                                     {"type": "output_text", "text": text, "annotations": []}]})
        for n, call in enumerate(calls):
            function = call.get("function") or {}
            output_items.append({"id": f"fc_{answer_id}_{n}", "type": "function_call",
                                 "status": "completed", "call_id": call.get("id", ""),
                                 "name": function.get("name", ""),
                                 "arguments": function.get("arguments", "")})
        doc = {
            "id": answer_id, "object": "response", "created_at": created, "model": model,
            "status": "incomplete" if finish_reason == "length" else "completed",
            "incomplete_details": {"reason": "max_output_tokens"}
            if finish_reason == "length" else None,
            "output": output_items,
            "usage": {"input_tokens": tally.prompt,
                      "input_tokens_details": {"cached_tokens": tally.cache_read},
                      "output_tokens": output,
                      "output_tokens_details": {"reasoning_tokens": tally.reasoning},
                      "total_tokens": tally.prompt + output},
        }
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode()
