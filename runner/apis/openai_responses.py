"""OpenAI Responses (`POST /v1/responses`): the request built from a chat-shaped body, and the
event stream translated into neutral events.

Request: system turns become `instructions`; user and assistant text become input messages;
an assistant turn's calls become `function_call` items (`call_id`, `name`, `arguments`) and
each `tool` turn a `function_call_output` item; tools become flat `{type: function, name,
description, parameters}`; `max_tokens` becomes `max_output_tokens`; `store` is false (a
benchmark keeps nothing on the server). Auth is `Authorization: Bearer`.

Stream (what each event becomes):

    response.output_item.added            function_call: a tool-call delta with call_id and
                                          name (index = output_index)
    response.output_text.delta            content
    response.reasoning_summary_text.delta reasoning_content (also response.reasoning_text.delta)
    response.function_call_arguments.delta  tool-call arguments
    response.function_call_arguments.done / response.output_item.done
                                          the whole arguments, only when no delta carried any
    response.completed                    usage (cached input, reasoning tokens),
                                          finish_reason tool_calls or stop, done
    response.incomplete                   usage, finish_reason length (max_output_tokens) or
                                          content_filter, done
    response.failed, error                an error event (server_is_overloaded / overloaded
                                          codes are the `overloaded` class)
    anything else                         nothing

TTFT starts at the first output text, reasoning text or function call; the first answer token
is the first output text or function call.
"""

from __future__ import annotations

from typing import Any

from epbench.runner.apis.base import (
    Api,
    Json,
    as_int,
    chat_completion,
    delta_event,
    neutral_usage,
    text_arguments,
    text_of,
    tool_delta,
)

INCOMPLETE_REASONS = {"max_output_tokens": "length", "content_filter": "content_filter"}


def _auth(api_key: str | None) -> dict[str, str]:
    return {"authorization": f"Bearer {api_key}"} if api_key else {}


def _input(chat: list[Json]) -> tuple[str | None, list[Json]]:
    instructions: list[str] = []
    items: list[Json] = []
    for msg in chat:
        role = msg.get("role")
        if role in ("system", "developer"):
            instructions.append(text_of(msg.get("content")))
        elif role == "tool":
            items.append({"type": "function_call_output", "call_id": str(msg.get("tool_call_id")),
                          "output": text_of(msg.get("content"))})
        elif role == "assistant":
            if text_of(msg.get("content")):
                items.append({"role": "assistant", "content": text_of(msg.get("content"))})
            for call in msg.get("tool_calls") or []:
                function = call.get("function") or {}
                arguments = function.get("arguments", "")
                items.append({
                    "type": "function_call",
                    "call_id": str(call.get("id")),
                    "name": str(function.get("name", "")),
                    "arguments": text_arguments(arguments),
                })
        else:
            items.append({"role": "user", "content": text_of(msg.get("content"))})
    return ("\n\n".join(instructions) if instructions else None), items


def _tool_choice(choice: Any) -> Any:
    if isinstance(choice, dict) and isinstance(choice.get("function"), dict):
        return {"type": "function", "name": choice["function"].get("name")}
    return choice


def build(body: Json) -> Json:
    """The Responses body for a chat-shaped request body."""
    instructions, items = _input(list(body.get("messages") or []))
    out: Json = {"model": body.get("model"), "input": items, "store": False}
    if instructions is not None:
        out["instructions"] = instructions
    if body.get("stream"):
        out["stream"] = True
    limit = body.get("max_tokens") or body.get("max_completion_tokens")
    if limit is not None:
        out["max_output_tokens"] = limit
    # ignore_eos is vLLM's (and the emulator's) extension: sent when the workload asks for it
    for key in ("temperature", "top_p", "reasoning", "parallel_tool_calls", "ignore_eos"):
        if body.get(key) is not None:
            out[key] = body[key]
    tools = body.get("tools")
    if tools:
        out["tools"] = [
            {
                "type": "function",
                "name": t["function"]["name"],
                "description": t["function"].get("description", ""),
                "parameters": t["function"].get("parameters")
                or {"type": "object", "properties": {}},
                # Responses treats a tool without `strict` as strict: absent means False here
                "strict": bool(t["function"].get("strict", False)),
            }
            for t in tools
            if isinstance(t, dict) and isinstance(t.get("function"), dict)
        ]
        if body.get("tool_choice") is not None:
            out["tool_choice"] = _tool_choice(body["tool_choice"])
    return out


def usage_of(raw: Any) -> Json | None:
    """The neutral usage of a Responses `usage` object."""
    if not isinstance(raw, dict):
        return None
    inner = raw.get("input_tokens_details")
    outer = raw.get("output_tokens_details")
    return neutral_usage(
        as_int(raw.get("input_tokens")),
        as_int(raw.get("output_tokens")),
        as_int(inner.get("cached_tokens")) if isinstance(inner, dict) else None,
        None,
        as_int(outer.get("reasoning_tokens")) if isinstance(outer, dict) else None,
    )


def _error(raw: Any) -> Json:
    error = raw if isinstance(raw, dict) else {}
    return {"error": {"type": str(error.get("code") or error.get("type") or "error"),
                      "message": str(error.get("message") or "")}}


class ResponsesTranslator:
    """One response's events; remembers argument bytes per call and whether any call came."""

    __slots__ = ("_args", "_calls")

    def __init__(self) -> None:
        self._args: dict[int, int] = {}  # output_index -> argument chars seen
        self._calls = 0

    def _whole_arguments(self, index: int, arguments: Any) -> list[Json]:
        if index not in self._args or self._args[index] or not isinstance(arguments, str):
            return []
        if not arguments:
            return []
        self._args[index] = len(arguments)
        return [tool_delta(index, arguments=arguments)]

    def event(self, obj: Any) -> list[Json]:
        kind = obj.get("type")
        if kind == "response.output_text.delta":
            return [delta_event({"content": obj.get("delta", "")})]
        if kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            return [delta_event({"reasoning_content": obj.get("delta", "")})]
        if kind == "response.function_call_arguments.delta":
            piece = obj.get("delta")
            if not isinstance(piece, str) or not piece:
                return []
            index = int(obj.get("output_index", 0))
            self._args[index] = self._args.get(index, 0) + len(piece)
            return [tool_delta(index, arguments=piece)]
        if kind == "response.output_item.added":
            item = obj.get("item") or {}
            if item.get("type") != "function_call":
                return []
            index = int(obj.get("output_index", 0))
            self._args[index] = 0
            self._calls += 1
            out = [tool_delta(index, str(item.get("call_id") or "") or None,
                              str(item.get("name") or ""), "")]
            return out + self._whole_arguments(index, item.get("arguments"))
        if kind == "response.function_call_arguments.done":
            return self._whole_arguments(int(obj.get("output_index", 0)), obj.get("arguments"))
        if kind == "response.output_item.done":
            item = obj.get("item") or {}
            if item.get("type") != "function_call":
                return []
            return self._whole_arguments(int(obj.get("output_index", 0)), item.get("arguments"))
        if kind in ("response.completed", "response.incomplete"):
            response = obj.get("response") or {}
            out = []
            usage = usage_of(response.get("usage"))
            if usage:
                out.append({"usage": usage})
            # vLLM ends a reply cut at max_output_tokens with response.completed and status
            # incomplete (OpenAI sends response.incomplete): the status decides
            if kind == "response.completed" and response.get("status") != "incomplete":
                finish = "tool_calls" if self._calls else "stop"
            else:
                reason = str((response.get("incomplete_details") or {}).get("reason") or "")
                finish = INCOMPLETE_REASONS.get(reason, reason or "incomplete")
            out.append(delta_event({}, finish))
            out.append({"done": True})
            return out
        if kind == "response.failed":
            return [_error((obj.get("response") or {}).get("error"))]
        if kind == "error":
            return [_error(obj.get("error") if isinstance(obj.get("error"), dict) else obj)]
        return []


def whole(body: Json) -> Json:
    """A non-streamed Response as a chat.completion-shaped body."""
    if body.get("error"):
        return _error(body["error"])
    content: list[str] = []
    reasoning: list[str] = []
    calls: list[Json] = []
    for item in body.get("output") or []:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "message":
            for part in item.get("content") or []:
                if isinstance(part, dict) and part.get("type") == "output_text":
                    content.append(str(part.get("text", "")))
        elif item.get("type") == "reasoning":
            for part in (item.get("summary") or []) + (item.get("content") or []):
                if isinstance(part, dict):
                    reasoning.append(str(part.get("text", "")))
        elif item.get("type") == "function_call":
            calls.append({"index": len(calls), "id": item.get("call_id"), "type": "function",
                          "function": {"name": item.get("name", ""),
                                       "arguments": item.get("arguments", "")}})
    if body.get("status") == "incomplete":
        reason = str((body.get("incomplete_details") or {}).get("reason") or "")
        finish = INCOMPLETE_REASONS.get(reason, "incomplete")
    else:
        finish = "tool_calls" if calls else "stop"
    return chat_completion("".join(content), "".join(reasoning), calls, finish,
                           usage_of(body.get("usage")))


OPENAI_RESPONSES = Api(
    name="openai-responses",
    path="/responses",
    auth_headers=_auth,
    build=build,
    translator=ResponsesTranslator,
    whole=whole,
    overloaded_types=frozenset({"server_is_overloaded", "overloaded", "overloaded_error"}),
)
