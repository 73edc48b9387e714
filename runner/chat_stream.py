"""An answer folded into a `ChatResponse` as it arrives: times, usage, finish.

The endpoint's wire API (`runner.apis`) translates each parsed event into neutral
(chat-chunk-shaped) events; the fold reads only those, so every API gets the same bounds.

Only what the metrics need is kept: the first and last content-bearing arrival, the gaps
between content-bearing events (ITL), usage, the finish reason and the count of
content-bearing events. Payloads wait in a small batch (at most `BATCH` events and
`FLUSH_BYTES` of payload, whichever comes first) and are parsed with one `json.loads` per batch
(`"[" + ",".join(batch) + "]"`): one call per event costs more than its parse, and a batch
bounds memory whatever the stream's length or its events' size (a 4 MiB delta is parsed as it
arrives, not held until 255 more came). A serving run keeps no text: after the fold, only
stamps, gaps and counts remain. An agentic run asks to keep the parsed events (`keep_chunks`)
to assemble its message; those are capped at `max_message_bytes` of payload. What the fold
holds between reads counts against the client's byte budget (runner/bounds.py `ByteBudget`).

A content-bearing event is a choice whose `delta` has non-empty `content`,
`reasoning_content` or `reasoning`, or any `tool_calls`; role-only chunks, empty chunks and a
trailing usage-only chunk never move TTFT or E2E. The first answer token (content or tool
calls, not reasoning) is noted apart (`t_first_answer_ns`). The server's own id for the answer
is noted from the events before the first content (`answer_id`), for the journal.
"""

from __future__ import annotations

import json
from typing import Any

from epcore.server_evidence import clean_id
from runner.apis import OPENAI_CHAT_NAME, Api, Translator
from runner.response import ChatResponse

BATCH = 256
FLUSH_BYTES = 64 * 1024  # a batch of 256 ordinary chunks is about 50 KB: count decides there
DONE = "[DONE]"


class StreamFailed(Exception):
    """The stream showed it failed (class and message); reading stops at once."""

    def __init__(self, cls: str, message: str) -> None:
        super().__init__(message)
        self.cls = cls
        self.message = message


class ChatStreamFold:
    """Fold SSE payloads of one chat-completions stream into `res`."""

    __slots__ = (
        "api", "cap", "keep", "kept_bytes", "last", "pending", "pending_bytes", "res",
        "translator",
    )

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
        self.pending: list[tuple[int, str]] = []
        self.pending_bytes = 0
        self.last = 0  # arrival of the last content-bearing event so far

    def event(self, t: int, payload: str) -> bool:
        """Take one payload that arrived at `t`; True when it is the end marker."""
        if payload == DONE:
            self.res.done = True
            return True
        if payload:
            self.pending.append((t, payload))
            if self.keep:
                self.kept_bytes += len(payload)
                if self.kept_bytes > self.cap:
                    raise StreamFailed(
                        "too_large", f"the answer's events are over {self.cap} bytes"
                    )
            self.pending_bytes += len(payload)
            if len(self.pending) >= BATCH or self.pending_bytes >= FLUSH_BYTES:
                self.flush()
        return False

    def flush(self) -> None:
        """Parse and fold the pending payloads; StreamFailed on malformed data or an error."""
        events = self.pending
        if not events:
            return
        self.pending = []
        self.pending_bytes = 0
        parsed, bad = _parse_all(events)
        res = self.res
        itl = res.itl_us
        translator = self.translator
        for (t, payload), raw in zip(events, parsed, strict=False):
            if res.response_id is None and not self.last:
                res.response_id = answer_id(raw)
            try:
                neutral = [raw] if translator is None else translator.event(raw)
                bearings = [(obj, _content_bearing(obj, res)) for obj in neutral]
            except (TypeError, AttributeError, ValueError):
                raise StreamFailed(
                    "stream_error", f"malformed SSE data: {payload[:80]!r}"
                ) from None
            for obj, bearing in bearings:
                if bearing is None:
                    raise StreamFailed(
                        error_class(obj, self.api),
                        f"error event: {str(obj.get('error'))[:150]}",
                    )
                if self.keep:
                    res.chunks.append((t, obj))
                if bearing:
                    last = self.last
                    if last:
                        # Stamps converted from the kernel's clock can jitter by microseconds
                        # between reads; events of one response never go back in time.
                        t = max(t, last)
                        itl.append((t - last) // 1000)
                    else:
                        res.t_first_ns = t
                    if bearing == 2 and res.t_first_answer_ns is None:
                        res.t_first_answer_ns = t
                    self.last = res.t_last_ns = t
                    res.content_events += 1
        if bad is not None:
            raise StreamFailed("stream_error", f"malformed SSE data: {events[bad][1][:80]!r}")


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


def _parse_all(events: list[tuple[int, str]]) -> tuple[list[Any], int | None]:
    """(parsed payloads, index of the first malformed one or None)."""
    try:
        parsed = json.loads("[" + ",".join(p for _, p in events) + "]")
        if isinstance(parsed, list) and len(parsed) == len(events):
            return parsed, None
    except ValueError:
        pass
    out = []
    for i, (_, payload) in enumerate(events):
        try:
            out.append(json.loads(payload))
        except ValueError:
            return out, i
    return out, None  # a payload holding two values ("1,2") parses alone: fine


def _content_bearing(obj: Any, res: ChatResponse) -> int | None:
    """2 if a neutral event carries answer content (text or tool calls), 1 if reasoning only,
    0 if nothing; None for an error event. Notes usage, finish reason and the end."""
    if obj.get("error"):
        return None
    usage = obj.get("usage")
    if usage:
        res.usage = usage
    if obj.get("done") is True:
        res.done = True
    bearing = 0
    for choice in obj.get("choices") or ():
        delta = choice.get("delta")
        if delta:
            if delta.get("content") or delta.get("tool_calls"):
                bearing = 2
            elif bearing == 0 and (delta.get("reasoning_content") or delta.get("reasoning")):
                bearing = 1
        reason = choice.get("finish_reason")
        if reason:
            res.finish_reason = reason
    return bearing
