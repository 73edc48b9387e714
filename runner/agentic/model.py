"""An agentic workload as typed dataclasses, built from a schema-checked document.

The document (YAML, see `schemas/agentic-workload.schema.json`) is data only; this module
gives it names and defaults so the executor, the checks and the emulator's player read one
shape. Nothing here runs workload content.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from epbench.core.agentic_plan import (
    DEFAULT_MAX_STEPS,
    DEFAULT_MAX_TOOL_ERRORS,
    Settings,
    settings_of,
)
from epbench.runner.retry import RetryPolicy

# Agentic runs retry transport failures by default: a task should survive a 429.
AGENTIC_RETRY = RetryPolicy(enabled=True, max_retries=3, backoff_s=0.25, backoff_max_s=8.0)


@dataclass(frozen=True)
class Limits:
    max_steps: int = DEFAULT_MAX_STEPS
    max_tool_errors: int = DEFAULT_MAX_TOOL_ERRORS
    retry: RetryPolicy = field(default_factory=lambda: AGENTIC_RETRY)


@dataclass(frozen=True)
class Fault:
    kind: str  # error | timeout | unavailable
    on_call: int | None = None
    probability: float | None = None
    message: str | None = None
    timeout_ms: float = 1000.0


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    parameters: dict[str, Any]
    implementation: dict[str, Any]
    latency: dict[str, float] | None = None
    faults: tuple[Fault, ...] = ()
    strict: bool | None = None

    def openai_spec(self) -> dict[str, Any]:
        """The `tools[]` entry sent to the model (`strict` only when the workload sets it)."""
        function: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "parameters": self.parameters,
        }
        if self.strict is not None:
            function["strict"] = self.strict
        return {"type": "function", "function": function}


@dataclass(frozen=True)
class Call:
    tool: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Step:
    """One reference step: parallel calls, or a reply that ends a user turn."""

    calls: tuple[Call, ...] = ()
    reply: str | None = None


@dataclass(frozen=True)
class ExpectedCall:
    tool: str
    arguments: dict[str, Any]  # argument -> accepted value (a list means: any of these)
    optional: tuple[str, ...] = ()  # named arguments that may be left out
    # argument -> {language, type, items?}: a string read as a Java/JavaScript literal first
    literals: dict[str, dict[str, str]] = field(default_factory=dict)


@dataclass(frozen=True)
class Match:
    """How call arguments compare with accepted values (see the schema's `checks.match`)."""

    strings: str = "casefold"  # casefold | bfcl | exact
    numbers: str = "value"  # value | strict | bfcl
    arguments: str = "listed"  # listed | exact


@dataclass(frozen=True)
class StateCheck:
    path: str
    equals: Any


@dataclass(frozen=True)
class Checks:
    calls: tuple[ExpectedCall, ...] = ()
    order: str = "any"
    extra_calls: bool = True
    forbidden: tuple[str, ...] = ()
    state: tuple[StateCheck, ...] = ()
    reply_contains: tuple[tuple[str, ...], ...] = ()
    match: Match = field(default_factory=Match)


@dataclass(frozen=True)
class Task:
    id: str
    conversation: tuple[str, ...]
    reference: tuple[Step, ...]
    checks: Checks
    description: str = ""
    tools: tuple[Tool, ...] | None = None  # the task's own tools, instead of the workload's
    history: tuple[dict[str, str], ...] = ()  # messages before the first user turn


@dataclass(frozen=True)
class Workload:
    id: str
    version: str
    description: str
    category: str
    trials: int
    quick_trials: int
    seed: int
    system_prompt: str | None
    settings: Settings
    limits: Limits
    state: dict[str, Any]
    tools: tuple[Tool, ...]
    tasks: tuple[Task, ...]
    quality: bool = False

    def for_task(self, task: Task) -> Workload:
        """This workload as one task sees it: with the task's own tools when it has them."""
        return self if task.tools is None else dataclasses.replace(self, tools=task.tools)

    def tool(self, name: str) -> Tool | None:
        for tool in self.tools:
            if tool.name == name:
                return tool
        return None

    def tool_names(self) -> frozenset[str]:
        return frozenset(t.name for t in self.tools)


def _fault(doc: dict[str, Any]) -> Fault:
    return Fault(
        kind=doc["kind"],
        on_call=doc.get("on_call"),
        probability=doc.get("probability"),
        message=doc.get("message"),
        timeout_ms=float(doc.get("timeout_ms", 1000.0)),
    )


def _tool(doc: dict[str, Any]) -> Tool:
    return Tool(
        name=doc["name"],
        description=doc.get("description", ""),
        parameters=dict(doc.get("parameters") or {"type": "object", "properties": {}}),
        implementation=dict(doc.get("implementation") or {"type": "static", "response": None}),
        latency=doc.get("latency"),
        faults=tuple(_fault(f) for f in doc.get("faults", [])),
        strict=doc.get("strict"),
    )


def _step(doc: dict[str, Any]) -> Step:
    if "reply" in doc:
        return Step(reply=str(doc["reply"]))
    return Step(
        calls=tuple(Call(c["tool"], dict(c.get("arguments") or {})) for c in doc.get("calls", []))
    )


def _checks(doc: dict[str, Any]) -> Checks:
    contains: list[tuple[str, ...]] = []
    for entry in doc.get("reply_contains", []):
        contains.append(tuple(entry) if isinstance(entry, list) else (str(entry),))
    return Checks(
        calls=tuple(
            ExpectedCall(
                c["tool"], dict(c.get("arguments") or {}), tuple(c.get("optional") or ()),
                {k: dict(v) for k, v in (c.get("literals") or {}).items()},
            )
            for c in doc.get("calls", [])
        ),
        order=doc.get("order", "any"),
        extra_calls=bool(doc.get("extra_calls", True)),
        forbidden=tuple(doc.get("forbidden", [])),
        state=tuple(StateCheck(s["path"], s.get("equals")) for s in doc.get("state", [])),
        reply_contains=tuple(contains),
        match=Match(**(doc.get("match") or {})),
    )


def _retry(doc: dict[str, Any] | None) -> RetryPolicy:
    return AGENTIC_RETRY.with_block(doc)


def load_workload(doc: dict[str, Any]) -> Workload:
    """The typed workload for a document that passed the schema check."""
    limits = doc.get("limits") or {}
    trials = int(doc.get("trials", 1))
    return Workload(
        id=doc["id"],
        version=str(doc.get("version", "1.0")),
        description=doc.get("description", ""),
        category=doc.get("category", "other"),
        trials=trials,
        quick_trials=int(doc.get("quick_trials", trials)),
        seed=int(doc.get("seed", 0)),
        system_prompt=doc.get("system_prompt"),
        settings=settings_of(doc),
        limits=Limits(
            max_steps=int(limits.get("max_steps", DEFAULT_MAX_STEPS)),
            max_tool_errors=int(limits.get("max_tool_errors", DEFAULT_MAX_TOOL_ERRORS)),
            retry=_retry(limits.get("retry")),
        ),
        state=dict(doc.get("state") or {}),
        tools=tuple(_tool(t) for t in doc.get("tools", [])),
        tasks=tuple(
            Task(
                id=t["id"],
                conversation=tuple(t["conversation"]),
                reference=tuple(_step(s) for s in t.get("reference", [])),
                checks=_checks(t.get("checks") or {}),
                description=t.get("description", ""),
                tools=tuple(_tool(x) for x in t["tools"]) if "tools" in t else None,
                history=tuple(
                    {"role": str(m["role"]), "content": str(m["content"])}
                    for m in t.get("history", [])
                ),
            )
            for t in doc.get("tasks", [])
        ),
        quality=bool(doc.get("quality", False)),
    )
