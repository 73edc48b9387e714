"""Whether a trial did what its task asks, and whether a workload file makes sense.

`evaluate` turns what a trial did (its calls, replies and final state) into the list of checks
that failed; an empty list is a success. `validate_workload_semantics` is what `epbench
validate` runs after the schema check: tools named anywhere exist, expected values fit the
tool's parameters, state paths exist, and the reference path passes the task's own checks when
played through the tool implementations.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from epbench.findings import Finding
from workloads.agentic import pointer
from workloads.agentic.model import Checks, ExpectedCall, Task, Workload, load_workload
from workloads.agentic.tools import ToolBox


@dataclass
class ObservedCall:
    name: str
    arguments: dict[str, Any] | None
    cls: str = "ok"
    faulted: bool = False  # the tool ran and an injected fault answered

    @property
    def effective(self) -> bool:
        """A valid call that the tool answered without a fault: what the checks look at."""
        return (
            self.cls in {"ok", "missing_id", "duplicate_id"}
            and not self.faulted
            and self.arguments is not None
        )


@dataclass
class Observed:
    """What one trial did."""

    calls: list[ObservedCall] = field(default_factory=list)
    replies: list[str] = field(default_factory=list)
    state: Any = None


def _norm(value: Any) -> Any:
    if isinstance(value, bool):
        return ("bool", value)  # so that true never equals 1
    if value is None:
        return None
    if isinstance(value, str):
        return " ".join(value.split()).casefold()
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, list):
        return [_norm(v) for v in value]
    if isinstance(value, dict):
        return {k: _norm(v) for k, v in value.items()}
    return value


def accepts(accepted: Any, actual: Any) -> bool:
    """True when `actual` equals the accepted value, or one of them when `accepted` is a list
    (strings case- and space-insensitive, numbers by value)."""
    candidates = accepted if isinstance(accepted, list) else [accepted]
    actual_n = _norm(actual)
    return any((_norm(c) == actual_n and type(c) is not bool) or c is actual for c in candidates)


def call_matches(expected: ExpectedCall, name: str, arguments: dict[str, Any]) -> bool:
    return expected.tool == name and all(
        key in arguments and accepts(value, arguments[key])
        for key, value in expected.arguments.items()
    )


def describe(expected: ExpectedCall) -> str:
    args = ", ".join(
        f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in expected.arguments.items()
    )
    return f"{expected.tool}({args})"


def _matching(expected: tuple[ExpectedCall, ...], calls: list[ObservedCall]) -> dict[int, int]:
    """A maximum matching expected index -> call index (augmenting paths; sizes are small)."""
    edges = [
        [j for j, c in enumerate(calls) if call_matches(e, c.name, c.arguments or {})]
        for e in expected
    ]
    owner: dict[int, int] = {}

    def augment(i: int, seen: set[int]) -> bool:
        for j in edges[i]:
            if j in seen:
                continue
            seen.add(j)
            if j not in owner or augment(owner[j], seen):
                owner[j] = i
                return True
        return False

    for i in range(len(expected)):
        augment(i, set())
    return {i: j for j, i in owner.items()}


def _partial(expected: tuple[ExpectedCall, ...], calls: list[ObservedCall]) -> dict[int, int]:
    """Greedy in-order subsequence matching (optimal for a subsequence test)."""
    out: dict[int, int] = {}
    j = 0
    for i, exp in enumerate(expected):
        while j < len(calls) and not call_matches(exp, calls[j].name, calls[j].arguments or {}):
            j += 1
        if j == len(calls):
            break
        out[i] = j
        j += 1
    return out


def evaluate(checks: Checks, observed: Observed) -> list[str]:
    """The checks that failed, each as one readable line; empty means the trial passed."""
    failed: list[str] = []
    calls = [c for c in observed.calls if c.effective]
    if checks.order == "partial":
        matched = _partial(checks.calls, calls)
    elif checks.order == "strict":
        matched = {
            i: i
            for i, e in enumerate(checks.calls)
            if i < len(calls) and call_matches(e, calls[i].name, calls[i].arguments or {})
        }
        if len(calls) != len(checks.calls):
            failed.append(
                f"order strict: {len(calls)} valid calls made, {len(checks.calls)} expected"
            )
    else:
        matched = _matching(checks.calls, calls)
    for i, exp in enumerate(checks.calls):
        if i not in matched:
            word = "in order " if checks.order in {"partial", "strict"} else ""
            failed.append(f"calls[{i}]: expected {word}{describe(exp)}, not made")
    if not checks.extra_calls:
        used = set(matched.values())
        for call in observed.calls:
            if not call.effective and not call.faulted:
                failed.append(f"extra_calls: invalid call {call.name or '(no name)'} ({call.cls})")
        for j, call in enumerate(calls):
            if j not in used:
                shown = json.dumps(call.arguments, ensure_ascii=False)
                failed.append(f"extra_calls: unexpected call {call.name}({shown})")
    for name in checks.forbidden:
        if any(c.name == name for c in observed.calls):
            failed.append(f"forbidden: {name} was called")
    for check in checks.state:
        try:
            value = pointer.resolve(observed.state, check.path)
        except pointer.PointerError:
            failed.append(f"state {check.path}: missing, expected {json.dumps(check.equals)}")
            continue
        if _norm(value) != _norm(check.equals):
            failed.append(
                f"state {check.path}: {json.dumps(value, ensure_ascii=False)[:100]}, "
                f"expected {json.dumps(check.equals, ensure_ascii=False)}"
            )
    reply = observed.replies[-1] if observed.replies else ""
    folded = reply.casefold()
    for options in checks.reply_contains:
        if not any(option.casefold() in folded for option in options):
            shown = " or ".join(json.dumps(o, ensure_ascii=False) for o in options)
            failed.append(f"reply_contains: {shown} not in the final reply")
    return failed


def simulate_reference(workload: Workload, task: Task, run_seed: int = 0) -> Observed:
    """Play the task's reference path through the tools, as a perfect model would: calls that
    meet a tool fault are made again (up to the workload's max_tool_errors)."""
    box = ToolBox(workload, run_seed=run_seed, task=task.id, trial=0)
    observed = Observed()
    errors = 0
    for step in task.reference:
        if step.reply is not None:
            observed.replies.append(step.reply)
            continue
        pending = list(step.calls)
        while pending:
            retry = []
            for call in pending:
                result = box.call(call.tool, call.arguments)
                observed.calls.append(
                    ObservedCall(call.tool, call.arguments, "ok", result.fault is not None)
                )
                if result.fault is not None:
                    retry.append(call)
            errors += len(retry)
            if errors > workload.limits.max_tool_errors:
                break
            pending = retry
    observed.state = box.state
    return observed


# ---- epbench validate: semantic checks ------------------------------------------------------


def _finding(file: str, where: list[str | int], check: str, message: str, fix: str) -> Finding:
    return Finding(file, pointer.pointer_text(where), f"agentic.{check}", "reject", message, fix)


def _arg_errors(parameters: dict[str, Any], arguments: dict[str, Any], partial: bool) -> list[str]:
    try:
        validator = Draft202012Validator(parameters)
    except SchemaError:
        return []
    out = []
    for error in validator.iter_errors(arguments):
        if partial and error.validator == "required":
            continue
        out.append(error.message)
    return out


def _check_tools(wl: Workload, doc: dict[str, Any], file: str) -> list[Finding]:
    out: list[Finding] = []
    names: set[str] = set()
    for i, tool in enumerate(wl.tools):
        at: list[str | int] = ["tools", i]
        if tool.name in names:
            out.append(
                _finding(
                    file,
                    [*at, "name"],
                    "duplicate-tool",
                    f"tool {tool.name!r} is defined twice",
                    "give each tool a unique name",
                )
            )
        names.add(tool.name)
        try:
            Draft202012Validator.check_schema(tool.parameters)
        except SchemaError as exc:
            out.append(
                _finding(
                    file,
                    [*at, "parameters"],
                    "parameters-schema",
                    f"parameters is not a valid JSON Schema: {exc.message}",
                    "fix the JSON Schema",
                )
            )
            continue
        props = (
            tool.parameters.get("properties", {})
            if isinstance(tool.parameters.get("properties"), dict)
            else {}
        )
        impl = tool.implementation
        kind = impl.get("type")
        if kind == "table":
            if "key" not in impl or impl["key"] not in props:
                out.append(
                    _finding(
                        file,
                        [*at, "implementation", "key"],
                        "table-key",
                        f"table key {impl.get('key')!r} is not a parameter of {tool.name}",
                        "name one of the tool's parameters as `key`",
                    )
                )
            if "rows" not in impl and "table_path" not in impl:
                out.append(
                    _finding(
                        file,
                        [*at, "implementation"],
                        "table-rows",
                        "a table needs `rows` or `table_path`",
                        "add rows, or point table_path at an object in `state`",
                    )
                )
            if "table_path" in impl and not pointer.exists(wl.state, impl["table_path"]):
                out.append(
                    _path_finding(file, [*at, "implementation", "table_path"], impl["table_path"])
                )
        paths: list[tuple[list[str | int], str]] = []
        if kind == "state":
            for u, update in enumerate(impl.get("updates", [])):
                paths.append(([*at, "implementation", "updates", u, "path"], update["path"]))
            if impl.get("guard"):
                paths.append(([*at, "implementation", "guard", "path"], impl["guard"]["path"]))
        for where, path in paths:
            for name in pointer.placeholders(path):
                if name not in props:
                    out.append(
                        _finding(
                            file,
                            where,
                            "path-argument",
                            f"{{{name}}} in {path!r} is not a parameter of {tool.name}",
                            "use one of the tool's parameter names",
                        )
                    )
            if not pointer.parent_exists(wl.state, pointer.static_prefix(path)):
                out.append(_path_finding(file, where, path))
    return out


def _path_finding(file: str, where: list[str | int], path: str) -> Finding:
    return _finding(
        file,
        where,
        "state-path",
        f"state path {path!r} does not exist in `state`",
        "fix the path (a JSON pointer such as /orders/{order_id}/status) or add it to `state`",
    )


def _check_task(wl: Workload, t: int, task: Task, file: str) -> list[Finding]:
    out: list[Finding] = []
    at: list[str | int] = ["tasks", t]
    names = wl.tool_names()
    for s, step in enumerate(task.reference):
        for c, call in enumerate(step.calls):
            where: list[str | int] = [*at, "reference", s, "calls", c]
            tool = wl.tool(call.tool)
            if tool is None:
                out.append(_unknown(file, [*where, "tool"], call.tool))
                continue
            for message in _arg_errors(tool.parameters, call.arguments, partial=False)[:1]:
                out.append(
                    _finding(
                        file,
                        [*where, "arguments"],
                        "argument-schema",
                        f"reference arguments do not fit {call.tool}'s parameters: {message}",
                        "make the arguments valid for the tool's parameters",
                    )
                )
    for c, exp in enumerate(task.checks.calls):
        where = [*at, "checks", "calls", c]
        tool = wl.tool(exp.tool)
        if tool is None:
            out.append(_unknown(file, [*where, "tool"], exp.tool))
            continue
        for arg, accepted in exp.arguments.items():
            for value in accepted if isinstance(accepted, list) else [accepted]:
                for message in _arg_errors(tool.parameters, {arg: value}, partial=True)[:1]:
                    out.append(
                        _finding(
                            file,
                            [*where, "arguments", arg],
                            "argument-schema",
                            f"accepted value {json.dumps(value, ensure_ascii=False)} does not fit "
                            f"{exp.tool}'s parameters: {message}",
                            "accept only values the parameter schema allows",
                        )
                    )
    for f, name in enumerate(task.checks.forbidden):
        if name not in names:
            out.append(_unknown(file, [*at, "checks", "forbidden", f], name))
    for s, check in enumerate(task.checks.state):
        first = pointer.split(check.path)[:1]
        if not first or first[0] not in wl.state:
            out.append(_path_finding(file, [*at, "checks", "state", s, "path"], check.path))
    replies = sum(1 for step in task.reference if step.reply is not None)
    if replies != len(task.conversation) or task.reference[-1].reply is None:
        out.append(
            _finding(
                file,
                [*at, "reference"],
                "reference-turns",
                f"the reference has {replies} replies for {len(task.conversation)} user turns",
                "end each user turn's steps with one `reply` step, and end with a reply",
            )
        )
    return out


def _unknown(file: str, where: list[str | int], name: str) -> Finding:
    return _finding(
        file,
        where,
        "unknown-tool",
        f"tool {name!r} is not defined in `tools`",
        "define the tool or fix the name",
    )


def validate_workload_semantics(doc: dict[str, Any], file: str) -> list[Finding]:
    """Semantic findings (severity reject) for an agentic workload that passed its schema."""
    try:
        wl = load_workload(doc)
    except (KeyError, TypeError, ValueError) as exc:
        return [
            _finding(
                file, [], "load", f"cannot read the workload: {exc}", "fix the schema errors first"
            )
        ]
    out = _check_tools(wl, doc, file)
    tools_broken = bool(out)
    seen: set[str] = set()
    for t, task in enumerate(wl.tasks):
        if task.id in seen:
            out.append(
                _finding(
                    file,
                    ["tasks", t, "id"],
                    "duplicate-task",
                    f"task id {task.id!r} is used twice",
                    "give each task a unique id",
                )
            )
        seen.add(task.id)
        problems = _check_task(wl, t, task, file)
        out.extend(problems)
        if problems or tools_broken:
            continue  # the reference cannot be played meaningfully: one line per cause is enough
        try:
            failed = evaluate(task.checks, simulate_reference(wl, task))
        except pointer.PointerError as exc:
            failed = [f"state path {exc.args[0]!r} does not resolve"]
        if failed:
            extra = f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""
            out.append(
                _finding(
                    file,
                    ["tasks", t, "reference"],
                    "reference-fails",
                    f"the reference path fails its own checks: {failed[0]}{extra}",
                    "fix the reference path or the checks so that a perfect model passes",
                )
            )
        if len(task.reference) > wl.limits.max_steps:
            out.append(
                _finding(
                    file,
                    ["tasks", t, "reference"],
                    "max-steps",
                    f"the reference takes {len(task.reference)} steps, over limits.max_steps",
                    "raise limits.max_steps",
                )
            )
    return out
