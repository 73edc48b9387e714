"""Whether an agentic workload file makes sense beyond its schema (`epbench validate`).

Every tool named in checks and references exists, expected values fit the tool's parameters,
state paths exist, and the reference path, played through the tool implementations as a
perfect model would, passes the task's own checks. One Finding per cause, each with the file,
the JSON pointer, what is wrong and what to do.
"""

from __future__ import annotations

import json
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from referencing.exceptions import Unresolvable

from epbench.core.bfcl_literals import literal_spec_error
from epbench.core.findings import Finding
from epbench.runner.agentic import pointer
from epbench.runner.agentic.checks import Observed, ObservedCall, evaluate
from epbench.runner.agentic.model import Task, Workload, load_workload
from epbench.runner.agentic.tools import ToolBox


def simulate_reference(workload: Workload, task: Task, run_seed: int = 0) -> Observed:
    """Play the task's reference path through the tools, as a perfect model would: calls that
    meet a tool fault are made again (up to the workload's max_tool_errors)."""
    workload = workload.for_task(task)
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


def _finding(file: str, where: list[str | int], check: str, message: str, fix: str) -> Finding:
    return Finding(file, pointer.pointer_text(where), f"agentic.{check}", "reject", message, fix)


def _arg_errors(parameters: dict[str, Any], arguments: dict[str, Any], partial: bool) -> list[str]:
    # a broken parameters schema is _check_tools' finding; here it only must not crash
    try:
        Draft202012Validator.check_schema(parameters)
        errors = list(Draft202012Validator(parameters).iter_errors(arguments))
    except (SchemaError, Unresolvable, AttributeError, TypeError):
        return []
    return [e.message for e in errors if not (partial and e.validator == "required")]


def _check_tools(
    wl: Workload, file: str, prefix: tuple[str | int, ...] = ()
) -> list[Finding]:
    out: list[Finding] = []
    names: set[str] = set()
    for i, tool in enumerate(wl.tools):
        at: list[str | int] = [*prefix, "tools", i]
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
            # a $ref that leads nowhere passes the meta-schema and fails on the first call
            list(Draft202012Validator(tool.parameters).iter_errors({}))
        except (SchemaError, Unresolvable, AttributeError, TypeError) as exc:
            reason = exc.message if isinstance(exc, SchemaError) else f"{exc} ($ref?)"
            out.append(
                _finding(
                    file,
                    [*at, "parameters"],
                    "parameters-schema",
                    f"parameters is not a valid JSON Schema: {reason}",
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
    at: list[str | int] = ["tasks", t]
    if task.tools is not None:
        out = _check_tools(wl.for_task(task), file, ("tasks", t))
        if out:
            return out
    elif not wl.tools and task.checks.calls:
        return [
            _finding(
                file,
                at,
                "no-tools",
                "the task expects calls but offers no tools",
                "give the workload or the task `tools`",
            )
        ]
    wl = wl.for_task(task)
    out = []
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
        for arg in exp.optional:
            if arg not in exp.arguments:
                out.append(
                    _finding(
                        file,
                        [*where, "optional"],
                        "optional-argument",
                        f"optional argument {arg!r} is not named in `arguments`",
                        "list its accepted values in `arguments`, or drop it from `optional`",
                    )
                )
        for arg, spec in exp.literals.items():
            reason = literal_spec_error(spec, arg in exp.arguments)
            if reason:
                out.append(_finding(file, [*where, "literals", arg], "literal-type", reason,
                                    "name an argument of `arguments` and a type its "
                                    "language has (see the schema's `literals`)"))
        for arg, accepted in exp.arguments.items():
            if arg in exp.literals:  # accepted values are what the string literal stands for
                continue
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


def workload_findings(doc: dict[str, Any], file: str) -> list[Finding]:
    """Semantic findings (severity reject) for an agentic workload that passed its schema."""
    try:
        wl = load_workload(doc)
    except (KeyError, TypeError, ValueError) as exc:
        return [
            _finding(
                file, [], "load", f"cannot read the workload: {exc}", "fix the schema errors first"
            )
        ]
    out = _check_tools(wl, file)
    tools_broken = bool(out)
    out += _check_load(doc, file)
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
            params = {x.name: x.parameters for x in wl.for_task(task).tools}
            failed = evaluate(task.checks, simulate_reference(wl, task), params)
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


def _check_load(doc: dict[str, Any], file: str) -> list[Finding]:
    """Load levels ascend (the first is the baseline) and replace settings.concurrency."""
    load = doc.get("load")
    if not isinstance(load, dict):
        return []
    levels = list(load.get("concurrency") or [])
    if levels != sorted(levels):
        return [_finding(file, ["load", "concurrency"], "load-order",
                         f"load levels {levels} do not ascend",
                         "list the levels from fewest agents to most (the first is the baseline)")]
    if "concurrency" in (doc.get("settings") or {}):
        return [_finding(file, ["settings", "concurrency"], "load-concurrency",
                         "settings.concurrency is set but load levels decide the agents at once",
                         "remove settings.concurrency (each level plays with its own)")]
    return []


def validate_workload_semantics(doc: dict[str, Any], file: str) -> list[Finding]:
    """Semantic findings (severity reject) for an agentic workload that passed its schema:
    what `epbench validate` runs after the schema check."""
    return workload_findings(doc, file)
