"""An answer folded into a `ChatResponse` as it arrives: times, usage, finish, bytes.

The endpoint's wire API (`epbench.runner.apis`) translates each parsed event into neutral
(chat-chunk-shaped) events; the fold reads only those, so every API gets the same bounds.

Only what the metrics need is kept: the first and last content-bearing arrival, the gaps
between content-bearing events (ITL), usage, the finish reason, the count of content-bearing
events and of SSE events, the UTF-8 bytes of text, reasoning and tool-call names and arguments
that arrived (`content_bytes`) and the tool calls seen: what usage is held to
(epbench.core.usage_bounds). An agentic run asks to keep the parsed events (`keep_chunks`) to
assemble its message; those are capped at `max_message_bytes` of payload.

Each SSE payload is parsed on arrival as exactly one JSON value (orjson, with the standard
parser for what orjson refuses and json accepts: NaN, lone surrogates, integers past 64 bits);
anything else (two values, half a value, trailing text) is `stream_error`. Nothing waits for
later events, so no event can change what an earlier one meant or when it arrived, and memory
holds one payload at a time. The answer's own id (`answer_id`) is noted from the events
before the first content, for the journal. What the fold holds between reads (kept events)
counts against the client's byte budget (runner/bounds.py `ByteBudget`).

The stream ends at its API's own final event: `[DONE]` (chat completions), `message_stop`
(Messages), `response.completed` or `response.incomplete` (Responses; `response.failed` is an
error event); what the connection does after it is not read. `[DONE]` also ends the native
APIs' streams (proxies add it).

A content-bearing event is a choice whose `delta` has non-empty `content`,
`reasoning_content` or `reasoning`, or any `tool_calls`; role-only chunks, empty chunks and a
trailing usage-only chunk never move TTFT or E2E. The first answer token (content or tool
calls, not reasoning) is noted apart (`t_first_answer_ns`).
"""

from __future__ import annotations

import json
from typing import Any

import orjson

from epbench.core.server_evidence import clean_id
from epbench.runner.apis import OPENAI_CHAT_NAME, Api, Translator
from epbench.runner.apis.base import OutOfOrder
from epbench.runner.response import ChatResponse

DONE = "[DONE]"
_orjson_loads = orjson.loads


class StreamFailed(Exception):
    """The stream showed it failed (class and message); reading stops at once."""

    def __init__(self, cls: str, message: str) -> None:
        super().__init__(message)
        self.cls = cls
        self.message = message


class ChatStreamFold:
    """Fold the SSE payloads of one streamed answer into `res`, one at a time."""

    __slots__ = ("api", "calls", "cap", "keep", "kept_bytes", "last", "res", "translator")

    def __init__(
        self, res: ChatResponse, keep_chunks: bool, max_message_bytes: int, api: Api
    ) -> None:
        self.res = res
        self.api = api
        self.translator: Translator | None = (
            None if api.name == OPENAI_CHAT_NAME else api.translator()
        )
        self.keep = keep_chunks
        self.cap = max_message_bytes
        self.kept_bytes = 0
        self.last = 0  # arrival of the last content-bearing event so far
        self.calls: set[Any] = set()  # the tool calls seen (by index, else by id)

    def event(self, t: int, payload: str) -> bool:
        """Take one payload that arrived at `t`; True when it is the stream's final event.

        StreamFailed when it is not one JSON value, is out of the API's order, or is an
        error event."""
        res = self.res
        res.sse_events += 1
        if payload == DONE:
            res.done = True
            return True
        if not payload:
            return False
        if self.keep:
            self.kept_bytes += len(payload)
            if self.kept_bytes > self.cap:
                raise StreamFailed("too_large", f"the answer's events are over {self.cap} bytes")
        try:
            raw = _loads(payload)
        except (ValueError, RecursionError):
            raise StreamFailed(
                "stream_error", f"malformed SSE data (not one JSON value): {payload[:80]!r}"
            ) from None
        if res.response_id is None and not self.last:
            res.response_id = answer_id(raw)
        translator = self.translator
        try:
            if translator is None:
                self._fold(t, raw, _content_bearing(raw, res, self.calls))
                return False
            for obj in translator.event(raw):
                self._fold(t, obj, _content_bearing(obj, res, self.calls))
                if obj.get("done") is True:
                    res.done = True
        except OutOfOrder as exc:
            raise StreamFailed("stream_error", str(exc)) from None
        except (TypeError, AttributeError, ValueError):
            raise StreamFailed("stream_error", f"malformed SSE data: {payload[:80]!r}") from None
        return res.done

    def _fold(self, t: int, obj: Any, bearing: int | None) -> None:
        res = self.res
        if bearing is None:
            raise StreamFailed(error_class(obj, self.api),
                               f"error event: {str(obj.get('error'))[:150]}")
        if self.keep:
            res.chunks.append((t, obj))
        if bearing:
            last = self.last
            if last:
                # Stamps converted from the kernel's clock can jitter by microseconds
                # between reads; events of one response never go back in time.
                if t < last:
                    t = last
                res.itl_us.append((t - last) // 1000)
            else:
                res.t_first_ns = t
            if bearing == 2 and res.t_first_answer_ns is None:
                res.t_first_answer_ns = t
            self.last = res.t_last_ns = t
            res.content_events += 1


def fold_message(res: ChatResponse, obj: Any, t: int, keep_chunks: bool, api: Api) -> None:
    """A non-streamed answer: first and last content time are when the body finished."""
    if isinstance(obj, dict):
        res.response_id = answer_id(obj)
        obj = api.whole(obj)
    if keep_chunks:
        res.chunks.append((t, obj))
    if not isinstance(obj, dict):
        raise StreamFailed("protocol", "the JSON body is not an object")
    if obj.get("error"):
        raise StreamFailed(error_class(obj, api), f"error in the body: {str(obj['error'])[:150]}")
    res.usage = obj.get("usage") if isinstance(obj.get("usage"), dict) else None
    has_content = False
    for choice in obj.get("choices") or ():
        message = choice.get("message") or {}
        try:
            res.content_bytes += _message_bytes(message, res)
        except (TypeError, AttributeError, ValueError):
            raise StreamFailed("protocol", "the JSON body's message is malformed") from None
        if (
            message.get("content")
            or message.get("reasoning_content")
            or message.get("reasoning")
            or message.get("tool_calls")
        ):
            has_content = True
        if choice.get("finish_reason"):
            res.finish_reason = choice["finish_reason"]
    if has_content:
        res.t_first_ns = res.t_last_ns = t
        res.t_first_answer_ns = t
        res.content_events = 1
    res.done = True


def _message_bytes(message: Any, res: ChatResponse) -> int:
    """UTF-8 bytes of a whole message's text, reasoning and tool calls; counts its calls."""
    size = 0
    for key in ("content", "reasoning_content", "reasoning"):
        value = message.get(key)
        if isinstance(value, str):
            size += _nbytes(value)
    calls = message.get("tool_calls")
    if isinstance(calls, list) and calls:
        seen: set[Any] = set()
        size += _call_bytes([{**c, "index": i} for i, c in enumerate(calls)
                             if isinstance(c, dict)], seen)
        res.tool_calls += len(seen)
    return size


def answer_id(raw: Any) -> str | None:
    """The server's id for the answer in one raw event or body: the top-level `id` (a chat
    chunk, any non-streamed body), else `response.id` (Responses' `response.created`) or
    `message.id` (Anthropic's `message_start`). Looked for until the first content arrives."""
    if not isinstance(raw, dict):
        return None
    value = raw.get("id")
    if value is None:
        inner = raw.get("response") or raw.get("message")
        value = inner.get("id") if isinstance(inner, dict) else None
    return clean_id(value)


def error_class(obj: Any, api: Api) -> str:
    """`overloaded` for an error event the API uses for "busy", else `stream_error`."""
    error = obj.get("error")
    kind = error.get("type") or error.get("code") if isinstance(error, dict) else None
    return "overloaded" if kind in api.overloaded_types else "stream_error"


def _loads(payload: str) -> Any:
    """Exactly one JSON value (ValueError otherwise): orjson, or json for what only it takes."""
    try:
        return _orjson_loads(payload)
    except ValueError:
        return json.loads(payload)


def _nbytes(text: str) -> int:
    """UTF-8 bytes of `text` (AttributeError for a value that is not a string)."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "replace"))


def _call_bytes(calls: Any, seen: set[Any]) -> int:
    """UTF-8 bytes of tool-call deltas' names and arguments; notes each call in `seen`."""
    size = 0
    for call in calls:
        if not isinstance(call, dict):
            continue
        index = call.get("index")
        seen.add(index if isinstance(index, int) else f"id:{call.get('id')}")
        function = call.get("function")
        if isinstance(function, dict):
            for key in ("name", "arguments"):
                value = function.get(key)
                if isinstance(value, str):
                    size += _nbytes(value)
                elif value is not None:
                    size += len(json.dumps(value))
    return size


def _content_bearing(obj: Any, res: ChatResponse, calls: set[Any]) -> int | None:
    """2 if a neutral event carries answer content (text or tool calls), 1 if reasoning only,
    0 if nothing; None for an error event. Notes usage, finish reason and content bytes."""
    if obj.get("error"):
        return None
    usage = obj.get("usage")
    if usage:
        res.usage = usage
    bearing = 0
    for choice in obj.get("choices") or ():
        delta = choice.get("delta")
        if delta:
            text = delta.get("content")
            if text:
                res.content_bytes += _nbytes(text)
                bearing = 2
            tools = delta.get("tool_calls")
            if tools:
                res.content_bytes += _call_bytes(tools, calls)
                res.tool_calls = len(calls)
                bearing = 2
            thought = delta.get("reasoning_content") or delta.get("reasoning")
            if thought:
                res.content_bytes += _nbytes(thought)
                if bearing == 0:
                    bearing = 1
        reason = choice.get("finish_reason")
        if reason:
            res.finish_reason = reason
    return bearing
