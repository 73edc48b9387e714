"""Assembling tool calls from OpenAI chat-completions chunks, the way real servers send them.

Calls are keyed by choice and `index`, never by id: servers that repeat the id on every chunk
(llama.cpp does) or leave it out must still give one call each. The cases seen in the wild and
handled here, each recorded as a quirk:

- `id_repeated` / `name_repeated`: the same id or name on every chunk (kept once, not joined);
- `no_index`: tool-call deltas without `index` (a new id starts a new call);
- `index_reused`: a different id on an index whose call is already complete (a new call);
- `args_object`: `arguments` sent as a JSON object instead of a string;
- `args_repeated_whole`: the whole arguments text sent again at the end after the fragments;
- `surrogates_joined`: a non-BMP character whose UTF-16 surrogate pair arrived split across
  chunks (two `\\uXXXX` escapes in two events), which naive joining leaves as two lone
  surrogates;
- `cut`: the stream ended without a `finish_reason`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

ALIAS_BASE = 1_000_000  # slot keys for calls on a reused index sort after every real index


@dataclass
class AssembledCall:
    """One tool call as it arrived: raw name and argument text, before classification."""

    index: int
    id: str | None = None
    name: str = ""
    arguments: str = ""
    first_ns: int | None = None
    last_ns: int | None = None
    parts: list[str] = field(default_factory=list, repr=False)
    chars: int = field(default=0, repr=False)

    def complete_json(self) -> bool:
        try:
            json.loads(self.arguments if not self.parts else "".join(self.parts))
        except ValueError:
            return False
        return True


@dataclass
class AssembledMessage:
    """The assistant message of one choice, assembled from its chunks (or one JSON body)."""

    content: str = ""
    reasoning: str = ""
    calls: list[AssembledCall] = field(default_factory=list)
    finish_reason: str | None = None
    first_tool_ns: int | None = None
    last_tool_ns: int | None = None
    quirks: set[str] = field(default_factory=set)

    @property
    def cut(self) -> bool:
        """The stream ended before a finish_reason: what arrived may be incomplete."""
        return self.finish_reason is None


def join_surrogates(text: str) -> tuple[str, bool]:
    """Combine UTF-16 surrogate pairs that arrived as two lone surrogates; lone ones left over
    become U+FFFD. Returns the text and whether anything changed."""
    if not any("\ud800" <= ch <= "\udfff" for ch in text):
        return text, False
    fixed = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return fixed, fixed != text


class _Choice:
    def __init__(self) -> None:
        self.message = AssembledMessage()
        self.content: list[str] = []
        self.reasoning: list[str] = []
        self.slots: dict[int, AssembledCall] = {}
        self.last_slot: int | None = None
        self.alias: dict[int, int] = {}  # wire index -> slot key, after an index was reused


class StreamAssembler:
    """Feed chunks (`add`), then `message(choice)`; one instance per response."""

    def __init__(self) -> None:
        self._choices: dict[int, _Choice] = {}

    def add(self, chunk: dict[str, Any], t_ns: int = 0) -> None:
        """One parsed SSE event (a `chat.completion.chunk`), received at `t_ns`."""
        for choice in chunk.get("choices") or []:
            if not isinstance(choice, dict):
                continue
            state = self._choices.setdefault(int(choice.get("index") or 0), _Choice())
            delta = choice.get("delta") or choice.get("message") or {}
            if isinstance(delta, dict):
                self._delta(state, delta, t_ns)
            if choice.get("finish_reason"):
                state.message.finish_reason = str(choice["finish_reason"])

    def _delta(self, state: _Choice, delta: dict[str, Any], t_ns: int) -> None:
        if isinstance(delta.get("content"), str):
            state.content.append(delta["content"])
        for key in ("reasoning_content", "reasoning"):
            if isinstance(delta.get(key), str):
                state.reasoning.append(delta[key])
        tool_calls = delta.get("tool_calls")
        if not isinstance(tool_calls, list):
            return
        msg = state.message
        for position, raw in enumerate(tool_calls):
            if not isinstance(raw, dict):
                continue
            if msg.first_tool_ns is None:
                msg.first_tool_ns = t_ns
            msg.last_tool_ns = t_ns
            slot = self._slot(state, raw, position)
            if slot.first_ns is None:
                slot.first_ns = t_ns
            slot.last_ns = t_ns
            self._merge(msg, slot, raw)

    def _slot(self, state: _Choice, raw: dict[str, Any], position: int) -> AssembledCall:
        msg = state.message
        new_id = raw.get("id") if isinstance(raw.get("id"), str) and raw.get("id") else None
        wire = raw.get("index")
        if not isinstance(wire, int):
            msg.quirks.add("no_index")
            last = state.slots.get(state.last_slot) if state.last_slot is not None else None
            if last is None or (new_id is not None and last.id is not None and new_id != last.id):
                key = len(state.slots)
            else:
                key = last.index
        else:
            key = state.alias.get(wire, wire)
            existing = state.slots.get(key)
            if (
                existing is not None
                and new_id is not None
                and existing.id is not None
                and new_id != existing.id
                and existing.name
                and existing.complete_json()
            ):
                msg.quirks.add("index_reused")
                key = ALIAS_BASE + len(state.slots)
                state.alias[wire] = key
        slot = state.slots.get(key)
        if slot is None:
            slot = AssembledCall(index=key)
            state.slots[key] = slot
        state.last_slot = key
        return slot

    @staticmethod
    def _merge(msg: AssembledMessage, slot: AssembledCall, raw: dict[str, Any]) -> None:
        new_id = raw.get("id")
        if isinstance(new_id, str) and new_id:
            if slot.id is None:
                slot.id = new_id
            elif slot.id == new_id:
                msg.quirks.add("id_repeated")
        function_raw = raw.get("function")
        function: dict[str, Any] = function_raw if isinstance(function_raw, dict) else {}
        name = function.get("name")
        if isinstance(name, str) and name:
            if not slot.name:
                slot.name = name
            elif slot.name == name:
                msg.quirks.add("name_repeated")
            else:
                slot.name += name  # a name streamed in pieces
        args = function.get("arguments")
        if isinstance(args, str) and args:
            # Only a fragment as long as all so far can repeat it (no join per chunk).
            if (
                slot.chars
                and len(args) == slot.chars
                and args == "".join(slot.parts)
                and slot.complete_json()
            ):
                msg.quirks.add("args_repeated_whole")
            else:
                slot.parts.append(args)
                slot.chars += len(args)
        elif isinstance(args, dict | list):
            msg.quirks.add("args_object")
            slot.parts = [json.dumps(args, ensure_ascii=False)]
            slot.chars = len(slot.parts[0])

    def message(self, choice: int = 0) -> AssembledMessage:
        """The assembled message of one choice (empty when the choice never appeared)."""
        state = self._choices.get(choice)
        if state is None:
            return AssembledMessage()
        msg = state.message
        msg.content, fixed_c = join_surrogates("".join(state.content))
        msg.reasoning, fixed_r = join_surrogates("".join(state.reasoning))
        calls = []
        for order, key in enumerate(sorted(state.slots)):
            slot = state.slots[key]
            slot.arguments, fixed_a = join_surrogates("".join(slot.parts))
            slot.index = order
            if fixed_a:
                msg.quirks.add("surrogates_joined")
            calls.append(slot)
        if fixed_c or fixed_r:
            msg.quirks.add("surrogates_joined")
        msg.calls = calls
        if msg.finish_reason is None:
            msg.quirks.add("cut")
        return msg


def assemble(chunks: Iterable[tuple[int, dict[str, Any]]], choice: int = 0) -> AssembledMessage:
    """Assemble `(t_ns, chunk)` pairs; a non-streaming body (`message` instead of `delta`) works
    too: its tool calls have no `index` and take their list position."""
    assembler = StreamAssembler()
    for t_ns, chunk in chunks:
        if isinstance(chunk, dict):
            _index_whole_message(chunk)
            assembler.add(chunk, t_ns)
    return assembler.message(choice)


def _index_whole_message(body: dict[str, Any]) -> None:
    """In a non-streaming body, give tool calls their list position as `index`."""
    for choice in body.get("choices") or []:
        message = choice.get("message") if isinstance(choice, dict) else None
        calls = message.get("tool_calls") if isinstance(message, dict) else None
        if isinstance(calls, list):
            for position, call in enumerate(calls):
                if isinstance(call, dict) and "index" not in call:
                    call["index"] = position
