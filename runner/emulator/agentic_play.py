"""The emulator's agentic player: it answers a tool-calling request the way a model would,
following the task's reference path, with seeded mistakes.

The emulator (`epbench.runner.emulator.agentic`) hosts it and streams what `play()` returns with its
own timing model. A request is matched to its task by the names of its tools (the task's own,
when it has them, as imported BFCL tasks do) and its first user message (the first of its
`history`, if any). The player is stateless across requests: it reads where the conversation
stands from the messages themselves (after the system prompt and the task's history).
Reference calls whose tool message is an error about an invalid call
or a tool fault are made again (repair and recovery); calls answered normally are done.

Seeded rates (the endpoint's `emulator.agentic` block), each counted in `Script.injected`:
`unknown_tool`, `invalid_json`, `wrong_arguments` (arguments that break the tool's parameter
schema), `missing_id` (no id on any chunk), drawn per emitted call in that order, at most one
per call; `skip_call` (answer with the final reply instead of the step's calls), drawn per
step. `split_arguments` streams arguments in fragments of 1 to 8 characters of their ASCII-
escaped JSON text, so fragments end inside `\\uXXXX` escapes and between the two escapes of a
surrogate pair; `interleave_parallel` streams parallel calls round-robin by index.
"""

from __future__ import annotations

import json
import random
from typing import Any

from jsonschema import Draft202012Validator

from epbench.runner.agentic.model import Call, Task, Workload, load_workload
from epbench.runner.agentic.tools import error_kind
from epbench.runner.emulator.script import Script

REPLAYED_ERRORS = frozenset({"invalid_call", "tool_fault"})
INJECTED_KINDS = ("unknown_tool", "invalid_json", "wrong_arguments", "missing_id")
REPLY_CHARS = 4  # characters per streamed content chunk, about one token


class AgenticPlayer:
    """Plays the tasks of the given workload documents."""

    def __init__(
        self, workloads: list[dict[str, Any]], settings: dict[str, Any], seed: int
    ) -> None:
        self.settings = dict(settings or {})
        self._rng = random.Random(seed)
        self._tasks: dict[tuple[frozenset[str], str], tuple[Workload, Task]] = {}
        for doc in workloads:
            try:
                wl = load_workload(doc)
            except (KeyError, TypeError, ValueError):
                continue
            for task in wl.tasks:
                seen = wl.for_task(task)
                first = next(
                    (m["content"] for m in task.history if m["role"] == "user"),
                    task.conversation[0],
                )
                self._tasks.setdefault((seen.tool_names(), first), (seen, task))

    def find(self, body: dict[str, Any]) -> tuple[Workload, Task] | None:
        names = frozenset(
            t["function"]["name"]
            for t in body.get("tools") or []
            if isinstance(t, dict)
            and isinstance(t.get("function"), dict)
            and "name" in t["function"]
        )
        first = next(
            (
                m.get("content")
                for m in body.get("messages") or []
                if isinstance(m, dict) and m.get("role") == "user"
            ),
            None,
        )
        if not isinstance(first, str):
            return None
        return self._tasks.get((names, first))

    def play(self, request_body: dict[str, Any]) -> Script | None:
        found = self.find(request_body)
        if found is None:
            return None
        wl, task = found
        messages = [m for m in request_body.get("messages") or [] if isinstance(m, dict)]
        skip = len(task.history) + (1 if wl.system_prompt else 0)  # before the first turn
        ptr, done = _position(task, messages[skip:])
        if ptr >= len(task.reference):
            return _reply_script(_next_reply(task, len(task.reference) - 1))
        step = task.reference[ptr]
        if step.reply is not None:
            return _reply_script(step.reply)
        if self._draw("skip_call"):
            script = _reply_script(_next_reply(task, ptr))
            script.injected = {"skip_call": 1}
            return script
        pending = [call for i, call in enumerate(step.calls) if i not in done]
        return self._calls_script(wl, pending)

    def _draw(self, kind: str) -> bool:
        rate = float(self.settings.get(kind) or 0.0)
        return rate > 0 and self._rng.random() < rate

    def _calls_script(self, wl: Workload, calls: list[Call]) -> Script:
        injected: dict[str, int] = {}
        split = bool(self.settings.get("split_arguments"))
        streams: list[list[dict[str, Any]]] = []
        for index, call in enumerate(calls):
            name, text, with_id = call.tool, json.dumps(call.arguments, ensure_ascii=split), True
            for kind in INJECTED_KINDS:
                if not self._draw(kind):
                    continue
                if kind == "unknown_tool":
                    name = _unknown_name(call.tool, wl.tool_names())
                elif kind == "invalid_json":
                    text = text[:-1]
                elif kind == "wrong_arguments":
                    wrong = _wrong_arguments(wl, call)
                    if wrong is None:
                        continue  # this tool's schema cannot be broken by dropping or retyping
                    text = json.dumps(wrong, ensure_ascii=split)
                else:
                    with_id = False
                injected[kind] = injected.get(kind, 0) + 1
                break
            head: dict[str, Any] = {
                "index": index,
                "type": "function",
                "function": {"name": name, "arguments": ""},
            }
            if with_id:
                head["id"] = "call_" + "".join(
                    self._rng.choice("0123456789abcdef") for _ in range(24)
                )
            pieces = self._fragments(text) if split else [text]
            parts = [{"tool_calls": [head]}]
            parts += [
                {"tool_calls": [{"index": index, "function": {"arguments": p}}]} for p in pieces
            ]
            streams.append(parts)
        deltas: list[dict[str, Any]] = []
        if self.settings.get("interleave_parallel") and len(streams) > 1:
            longest = max(len(s) for s in streams)
            for r in range(longest):
                deltas += [s[r] for s in streams if r < len(s)]
        else:
            for s in streams:
                deltas += s
        return Script(deltas=deltas, finish_reason="tool_calls", injected=injected)

    def _fragments(self, text: str) -> list[str]:
        out, i = [], 0
        while i < len(text):
            size = self._rng.randint(1, 8)
            out.append(text[i : i + size])
            i += size
        return out or [""]


def _position(task: Task, messages: list[dict[str, Any]]) -> tuple[int, set[int]]:
    """(reference step the conversation is at, indexes of that step's calls already done)."""
    ptr, done = 0, set[int]()
    for i, msg in enumerate(messages):
        if msg.get("role") != "assistant":
            continue
        calls = msg.get("tool_calls") or []
        if not calls:
            ptr = _after_reply(task, ptr)
            done = set()
            continue
        if ptr >= len(task.reference) or task.reference[ptr].reply is not None:
            continue
        step = task.reference[ptr]
        results = _tool_results(messages, i)
        pending = [k for k in range(len(step.calls)) if k not in done]
        for j, call in enumerate(calls):
            if j >= len(pending) or not isinstance(call, dict):
                break
            content = results.get(str(call.get("id")), results.get(f"#{j}", ""))
            if error_kind(content) not in REPLAYED_ERRORS:
                done.add(pending[j])
        if len(done) >= len(step.calls):
            ptr, done = ptr + 1, set()
    return ptr, done


def _tool_results(messages: list[dict[str, Any]], at: int) -> dict[str, str]:
    out: dict[str, str] = {}
    for j, msg in enumerate(messages[at + 1 :]):
        if msg.get("role") != "tool":
            break
        raw = msg.get("content")
        content = raw if isinstance(raw, str) else ""
        out[str(msg.get("tool_call_id"))] = content
        out[f"#{j}"] = content
    return out


def _after_reply(task: Task, ptr: int) -> int:
    for k in range(ptr, len(task.reference)):
        if task.reference[k].reply is not None:
            return k + 1
    return len(task.reference)


def _next_reply(task: Task, ptr: int) -> str:
    for step in task.reference[max(0, ptr) :]:
        if step.reply is not None:
            return step.reply
    return next((s.reply for s in reversed(task.reference) if s.reply is not None), "Done.")


def _reply_script(text: str) -> Script:
    pieces = [text[i : i + REPLY_CHARS] for i in range(0, len(text), REPLY_CHARS)] or [""]
    return Script(deltas=[{"content": p} for p in pieces], finish_reason="stop")


def _unknown_name(name: str, known: frozenset[str]) -> str:
    for suffix in ("_v2", "_tool", "_x"):
        if name + suffix not in known:
            return name + suffix
    return name + "_unknown"


def _wrong_arguments(wl: Workload, call: Call) -> dict[str, Any] | None:
    """Arguments that break the tool's parameter schema, or None when none found."""
    tool = wl.tool(call.tool)
    if tool is None:
        return None
    validator = Draft202012Validator(tool.parameters)
    candidates: list[dict[str, Any]] = []
    required = [r for r in tool.parameters.get("required", []) if r in call.arguments]
    if required:
        candidates.append({k: v for k, v in call.arguments.items() if k != required[0]})
    for key, value in call.arguments.items():
        candidates.append({**call.arguments, key: {"unexpected": [value]}})
    for candidate in candidates:
        if any(True for _ in validator.iter_errors(candidate)):
            return candidate
    return None
