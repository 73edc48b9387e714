"""Tools implemented as data: table lookups, static and templated responses, state updates and
errors, with seeded latency and seeded faults.

A `ToolBox` belongs to one trial: it holds that trial's fresh copy of the workload state and
counts calls per tool (for faults "on the n-th call"). Every random draw is seeded by
(workload seed, run seed, task, trial, tool, call number), so a trial replays identically.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import random
from dataclasses import dataclass
from typing import Any

from epbench.runner.agentic import pointer
from epbench.runner.agentic.model import Fault, Tool, Workload

Z99 = 2.3263478740408408  # standard normal quantile at 0.99


@dataclass(frozen=True)
class ToolResult:
    """What a tool returned: the `role: tool` content, and how it went."""

    content: str
    is_error: bool = False  # the tool answered with an error (not found, refused, fault)
    fault: str | None = None  # injected fault kind (error, timeout, unavailable), if any
    latency_s: float = 0.0  # seeded execution time the executor waits


def error_content(kind: str, message: str) -> str:
    """The JSON text of an error sent back as a tool message (`kind` says whose fault)."""
    return json.dumps({"error": {"type": kind, "message": message}}, ensure_ascii=False)


def error_kind(content: str) -> str | None:
    """The `type` of an error tool message written by `error_content`, else None."""
    if not content.startswith('{"error"'):
        return None
    try:
        body = json.loads(content)
    except ValueError:
        return None
    kind = body.get("error", {}).get("type") if isinstance(body, dict) else None
    return kind if isinstance(kind, str) else None


def seeded_rng(*parts: object) -> random.Random:
    """A Random seeded by a stable hash of the parts (Python's hash() is salted per process)."""
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode("utf-8")).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def sample_latency_s(latency: dict[str, float] | None, rng: random.Random) -> float:
    """Fixed, or lognormal with the given median (p50) and 99th percentile."""
    if not latency:
        return 0.0
    if "fixed_ms" in latency:
        return float(latency["fixed_ms"]) / 1000.0
    p50 = max(float(latency["p50_ms"]), 1e-6)
    p99 = max(float(latency["p99_ms"]), p50)
    sigma = math.log(p99 / p50) / Z99
    return p50 * math.exp(sigma * rng.gauss(0.0, 1.0)) / 1000.0


class ToolBox:
    """The tools of one workload for one trial, over a fresh copy of the state."""

    def __init__(self, workload: Workload, *, run_seed: int, task: str, trial: int) -> None:
        self.workload = workload
        self.state: dict[str, Any] = copy.deepcopy(workload.state)
        self._seed = (workload.seed, run_seed, task, trial)
        self._counts: dict[str, int] = {}

    def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        """Run one valid call (known tool, arguments already checked against its schema)."""
        tool = self.workload.tool(name)
        if tool is None:
            return ToolResult(
                error_content("invalid_call", f"unknown tool {name!r}"), is_error=True
            )
        count = self._counts.get(name, 0) + 1
        self._counts[name] = count
        rng = seeded_rng(*self._seed, name, count)
        latency = sample_latency_s(tool.latency, rng)
        fault = self._fault_for(tool, count, rng)
        if fault is not None:
            return self._faulted(tool, fault, latency)
        try:
            content, is_error = self._run(tool, arguments)
        except pointer.PointerError as exc:
            content, is_error = error_content("tool_error", f"no such record: {exc.args[0]}"), True
        return ToolResult(content, is_error=is_error, latency_s=latency)

    @staticmethod
    def _fault_for(tool: Tool, count: int, rng: random.Random) -> Fault | None:
        for fault in tool.faults:
            if fault.on_call is not None and fault.on_call == count:
                return fault
            if fault.probability is not None and rng.random() < fault.probability:
                return fault
        return None

    @staticmethod
    def _faulted(tool: Tool, fault: Fault, latency: float) -> ToolResult:
        if fault.kind == "timeout":
            message = fault.message or f"{tool.name} timed out after {fault.timeout_ms:.0f} ms"
            return ToolResult(
                error_content("tool_fault", message), True, "timeout", fault.timeout_ms / 1000.0
            )
        if fault.kind == "unavailable":
            message = (
                fault.message
                or "503 Service Unavailable: the upstream service is overloaded, try again"
            )
            return ToolResult(error_content("tool_fault", message), True, "unavailable", latency)
        message = fault.message or f"{tool.name} failed with an internal error, try again"
        return ToolResult(error_content("tool_fault", message), True, "error", latency)

    def _run(self, tool: Tool, arguments: dict[str, Any]) -> tuple[str, bool]:
        impl = tool.implementation
        kind = impl.get("type")
        if kind == "table":
            return self._table(impl, arguments)
        if kind == "static":
            return _dump(impl.get("response")), False
        if kind == "template":
            return _dump(pointer.fill(impl.get("response"), arguments, self.state)), False
        if kind == "state":
            guard = impl.get("guard")
            if guard:
                path = pointer.fill_pointer(guard["path"], arguments)
                current = (
                    pointer.resolve(self.state, path) if pointer.exists(self.state, path) else None
                )
                if current != guard["equals"]:
                    return error_content(
                        "tool_error", str(pointer.fill(guard["message"], arguments, self.state))
                    ), True
            for update in impl.get("updates", []):
                self._update(update, arguments)
            return _dump(
                pointer.fill(impl.get("response", {"ok": True}), arguments, self.state)
            ), False
        message = pointer.fill(impl.get("message", f"{tool.name} failed"), arguments, self.state)
        return error_content("tool_error", str(message)), True

    def _table(self, impl: dict[str, Any], arguments: dict[str, Any]) -> tuple[str, bool]:
        rows = impl.get("rows")
        if "table_path" in impl:
            rows = pointer.resolve(self.state, impl["table_path"])
        key = arguments.get(impl.get("key", ""))
        row = _lookup_row(rows if isinstance(rows, dict) else {}, key)
        if row is None:
            text = impl.get("missing", "no record for {" + str(impl.get("key", "")) + "}")
            return error_content("tool_error", str(pointer.fill(text, arguments, self.state))), True
        return _dump(row), False

    def _update(self, update: dict[str, Any], arguments: dict[str, Any]) -> None:
        path = pointer.fill_pointer(update["path"], arguments)
        value = pointer.fill(update.get("value"), arguments, self.state)
        op = update["op"]
        if op == "set":
            pointer.assign(self.state, path, value)
        elif op == "append":
            target = pointer.resolve(self.state, path)
            if not isinstance(target, list):
                raise pointer.PointerError(path)
            target.append(value)
        else:  # increment
            current = pointer.resolve(self.state, path) if pointer.exists(self.state, path) else 0
            step = value if isinstance(value, int | float) and not isinstance(value, bool) else 1
            base = (
                current if isinstance(current, int | float) and not isinstance(current, bool) else 0
            )
            pointer.assign(self.state, path, base + step)


def _lookup_row(rows: dict[str, Any], key: Any) -> Any:
    if key is None:
        return None
    text = key if isinstance(key, str) else json.dumps(key)
    if text in rows:
        return rows[text]
    folded = " ".join(text.split()).casefold()
    for name, row in rows.items():
        if " ".join(str(name).split()).casefold() == folded:
            return row
    return None


def _dump(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
