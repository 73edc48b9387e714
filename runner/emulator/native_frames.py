"""SSE events of the two native APIs, from the same chat deltas the emulator plays.

The emulator decides what to say as chat-completions deltas (a word, a reasoning word, a piece
of a tool call); these encoders say it in Anthropic Messages or OpenAI Responses events, with
the bookkeeping each API needs (which content block or output item is open, the text and
arguments so far for the `done` events and the final response object). Both have the methods
of `frames.ChunkFrames` that the streaming loop calls: `role` (the opening events), `token`,
`delta`, `end`, `empty`, `malformed`, `error`.

Tool calls come one after another here (blocks and items do not interleave in these APIs);
`completion.plan` orders a script's deltas that way before it reaches an encoder.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from epbench.runner.emulator.tokens import VOCABULARY

Json = dict[str, Any]


@dataclass(frozen=True)
class Tally:
    """The usage a response reports."""

    prompt: int
    completion: int
    reasoning: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cache_reported: bool = False  # chat usage carries cached_tokens (the prefix cache is on)


def _event(name: str, data: Json) -> bytes:
    return (b"event: " + name.encode() + b"\ndata: "
            + json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode() + b"\n\n")


class MessagesFrames:
    """Anthropic Messages events of one streamed message."""

    def __init__(self, message_id: str, model: str, tally: Tally) -> None:
        self.id, self.model, self.tally = message_id, model, tally
        self._open: tuple[str, int] | None = None  # (block type, chat tool index or -1)
        self._index = -1

    def _usage(self, output: int) -> Json:
        t = self.tally
        return {"input_tokens": t.prompt - t.cache_read - t.cache_write,
                "cache_creation_input_tokens": t.cache_write,
                "cache_read_input_tokens": t.cache_read, "output_tokens": output}

    def _final_usage(self, output: int) -> Json:
        usage: Json = {"output_tokens": output}
        if self.tally.reasoning:
            usage["output_tokens_details"] = {"thinking_tokens": self.tally.reasoning}
        return usage

    def role(self) -> bytes:
        message: Json = {"id": self.id, "type": "message", "role": "assistant", "model": self.model,
                   "content": [], "stop_reason": None, "stop_sequence": None,
                   "usage": self._usage(1)}
        return (_event("message_start", {"type": "message_start", "message": message})
                + _event("ping", {"type": "ping"}))

    def _switch(self, kind: str, key: int, start: Json) -> bytes:
        if self._open == (kind, key):
            return b""
        out = self._close()
        self._index += 1
        self._open = (kind, key)
        return out + _event("content_block_start", {"type": "content_block_start",
                                                    "index": self._index, "content_block": start})

    def _close(self) -> bytes:
        if self._open is None:
            return b""
        out = b""
        if self._open[0] == "thinking":
            out = self._delta({"type": "signature_delta", "signature": "emulated"})
        self._open = None
        return out + _event("content_block_stop", {"type": "content_block_stop",
                                                   "index": self._index})

    def _delta(self, delta: Json) -> bytes:
        return _event("content_block_delta", {"type": "content_block_delta",
                                              "index": self._index, "delta": delta})

    def token(self, index: int) -> bytes:
        return self.delta({"content": VOCABULARY[index % len(VOCABULARY)]})

    def delta(self, delta: Json) -> bytes:
        out = b""
        if delta.get("reasoning_content"):
            out += self._switch("thinking", -1, {"type": "thinking", "thinking": ""})
            out += self._delta({"type": "thinking_delta", "thinking": delta["reasoning_content"]})
        if delta.get("content"):
            out += self._switch("text", -1, {"type": "text", "text": ""})
            out += self._delta({"type": "text_delta", "text": delta["content"]})
        for part in delta.get("tool_calls") or []:
            function = part.get("function") or {}
            key = int(part.get("index", 0))
            start: Json = {"type": "tool_use", "id": part.get("id") or "",
                     "name": function.get("name") or "", "input": {}}
            if "id" not in part:
                start.pop("id")  # the player's missing_id fault: the block goes without one
            out += self._switch("tool_use", key, start)
            arguments = function.get("arguments")
            if isinstance(arguments, dict):
                arguments = json.dumps(arguments)
            if isinstance(arguments, str) and arguments:
                out += self._delta({"type": "input_json_delta", "partial_json": arguments})
        return out

    def end(self, reason: str, output: int, include_usage: bool = True) -> bytes:
        stop = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use"}
        return (self._close()
                + _event("message_delta", {"type": "message_delta",
                                           "delta": {"stop_reason": stop.get(reason, reason),
                                                     "stop_sequence": None},
                                           "usage": self._final_usage(output)})
                + _event("message_stop", {"type": "message_stop"}))

    def empty(self) -> bytes:
        return _event("ping", {"type": "ping"})

    def malformed(self) -> bytes:
        return b'event: content_block_delta\ndata: {"type":"content_block_delta","index":\n\n'

    def error(self, message: str, kind: str = "api_error") -> bytes:
        return _event("error", {"type": "error", "error": {"type": kind, "message": message}})


class ResponsesFrames:
    """OpenAI Responses events of one streamed response."""

    def __init__(self, response_id: str, created: int, model: str, tally: Tally) -> None:
        self.id, self.created, self.model, self.tally = response_id, created, model, tally
        self._seq = 0
        self._items: list[Json] = []  # finished output items, for response.completed
        self._open: Json | None = None
        self._key: tuple[str, int] | None = None
        self._text: list[str] = []
        self._pending = b""

    def _event(self, name: str, data: Json) -> bytes:
        out = _event(name, {"type": name, "sequence_number": self._seq, **data})
        self._seq += 1
        return out

    def _response(self, status: str, output: list[Json], usage: Json | None) -> Json:
        return {"id": self.id, "object": "response", "created_at": self.created,
                "status": status, "model": self.model, "output": output, "usage": usage,
                "error": None, "incomplete_details": None, "tools": [], "parallel_tool_calls": True,
                "tool_choice": "auto"}

    def role(self) -> bytes:
        snapshot = self._response("in_progress", [], None)
        return (self._event("response.created", {"response": snapshot})
                + self._event("response.in_progress", {"response": snapshot}))

    def _index(self) -> int:
        return len(self._items)

    def _switch(self, kind: str, key: int, make: Callable[[int], Json]) -> Json:
        """Open the item for (kind, key) unless it is open; returns the open item. The item is
        made after the previous one is closed, so it gets its own output_index."""
        if self._key == (kind, key) and self._open is not None:
            return self._open
        self._pending += self._close()
        item = make(self._index())
        self._key, self._open, self._text = (kind, key), item, []
        self._pending += self._event("response.output_item.added", {
            "output_index": self._index(), "item": item})
        if kind == "message":
            self._pending += self._event("response.content_part.added", {
                "item_id": item["id"], "output_index": self._index(), "content_index": 0,
                "part": {"type": "output_text", "text": "", "annotations": []}})
        elif kind == "reasoning":
            self._pending += self._event("response.reasoning_summary_part.added", {
                "item_id": item["id"], "output_index": self._index(), "summary_index": 0,
                "part": {"type": "summary_text", "text": ""}})
        return item

    def _close(self) -> bytes:
        item, key = self._open, self._key
        if item is None or key is None:
            return b""
        text = "".join(self._text)
        at = {"item_id": item["id"], "output_index": self._index()}
        out = b""
        if key[0] == "message":
            part = {"type": "output_text", "text": text, "annotations": []}
            out += self._event("response.output_text.done", {**at, "content_index": 0,
                                                             "text": text})
            out += self._event("response.content_part.done", {**at, "content_index": 0,
                                                              "part": part})
            item = {**item, "status": "completed", "content": [part]}
        elif key[0] == "reasoning":
            part = {"type": "summary_text", "text": text}
            out += self._event("response.reasoning_summary_text.done", {**at, "summary_index": 0,
                                                                        "text": text})
            out += self._event("response.reasoning_summary_part.done", {**at, "summary_index": 0,
                                                                        "part": part})
            item = {**item, "summary": [part]}
        else:
            out += self._event("response.function_call_arguments.done", {**at, "arguments": text})
            item = {**item, "status": "completed", "arguments": text}
        out += self._event("response.output_item.done", {"output_index": self._index(),
                                                         "item": item})
        self._items.append(item)
        self._open, self._key = None, None
        return out

    def token(self, index: int) -> bytes:
        return self.delta({"content": VOCABULARY[index % len(VOCABULARY)]})

    def delta(self, delta: Json) -> bytes:
        rid = self.id
        if delta.get("reasoning_content"):
            item = self._switch("reasoning", -1, lambda n: {
                "id": f"rs_{rid}_{n}", "type": "reasoning", "summary": []})
            self._text.append(delta["reasoning_content"])
            self._pending += self._event("response.reasoning_summary_text.delta", {
                "item_id": item["id"], "output_index": self._index(), "summary_index": 0,
                "delta": delta["reasoning_content"]})
        if delta.get("content"):
            item = self._switch("message", -1, lambda n: {
                "id": f"msg_{rid}_{n}", "type": "message", "role": "assistant",
                "status": "in_progress", "content": []})
            self._text.append(delta["content"])
            self._pending += self._event("response.output_text.delta", {
                "item_id": item["id"], "output_index": self._index(), "content_index": 0,
                "delta": delta["content"], "logprobs": []})
        for part in delta.get("tool_calls") or []:
            function = part.get("function") or {}
            item = self._switch("function_call", int(part.get("index", 0)),
                                _call_item(rid, part.get("id") or "", function.get("name") or ""))
            arguments = function.get("arguments")
            if isinstance(arguments, dict):
                arguments = json.dumps(arguments)
            if isinstance(arguments, str) and arguments:
                self._text.append(arguments)
                self._pending += self._event("response.function_call_arguments.delta", {
                    "item_id": item["id"], "output_index": self._index(), "delta": arguments})
        out, self._pending = self._pending, b""
        return out

    def _usage(self, output: int) -> Json:
        t = self.tally
        return {"input_tokens": t.prompt, "input_tokens_details": {"cached_tokens": t.cache_read},
                "output_tokens": output,
                "output_tokens_details": {"reasoning_tokens": t.reasoning},
                "total_tokens": t.prompt + output}

    def end(self, reason: str, output: int, include_usage: bool = True) -> bytes:
        out = self._close()
        usage = self._usage(output)
        if reason == "length":
            response = self._response("incomplete", self._items, usage)
            response["incomplete_details"] = {"reason": "max_output_tokens"}
            return out + self._event("response.incomplete", {"response": response})
        response = self._response("completed", self._items, usage)
        return out + self._event("response.completed", {"response": response})

    def empty(self) -> bytes:
        return self._event("response.in_progress", {
            "response": self._response("in_progress", [], None)})

    def malformed(self) -> bytes:
        return b'event: response.output_text.delta\ndata: {"type":"response.output_text.delta",\n\n'

    def error(self, message: str, kind: str = "server_error") -> bytes:
        return self._event("error", {"code": kind, "message": message, "param": None})


def _call_item(response_id: str, call_id: str, name: str) -> Callable[[int], Json]:
    def make(n: int) -> Json:
        return {"id": f"fc_{response_id}_{n}", "type": "function_call", "status": "in_progress",
                "arguments": "", "call_id": call_id, "name": name}

    return make
