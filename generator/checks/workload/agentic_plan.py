"""The workload is the one claimed, for agentic results: the plan rebuilt from the agentic
workload file with the claimed sha256 (epbench.core.agentic_plan, the function the runner ran
from) and the result's `--quick` setting and fallbacks is compared with the journal.

    settings     seed, stream, temperature and max_tokens equal the plan's
    run line     its `agentic` block is the plan's: tasks (ids, in order), trials per task,
                 seed, concurrency, request settings, limits, each task's tool names and the
                 sha256 of what defines the task
    trial lines  one per planned (task, trial), none other; with load levels one per planned
                 (level, task, trial), each level's trials per task as planned
    requests     every request line belongs to a planned task and trial, at a step within
                 `max_steps`

The first difference is one `workload.plan` line (the check of serving results,
epbench.generator.checks.workload.plan). A result without a journal is not compared (it is
not ranked); plans are kept per (sha256, quick, unstreamed fallback).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from epbench.core.agentic_plan import FEATURE, NON_STREAMED, AgenticPlan, plan_agentic, unstreamed
from epbench.core.findings import Finding
from epbench.generator.checks.workload.plan import PLAN, claimed_workload
from epbench.generator.checks.workload.sha import WorkloadIndex

Problem = tuple[str, str]


def expected_plan(result: Mapping[str, Any], index: WorkloadIndex | None,
                  file: str) -> AgenticPlan | Finding | None:
    """The plan of an agentic result's workload (None when nothing can be compared: no project
    to look in, a serving result, a workload the sha256 check already rejects)."""
    workload = result["workload"]
    if index is None or workload["kind"] != "agentic":
        return None
    settings = result.get("settings") or {}
    quick = bool(settings.get("quick", False))
    fell_back = unstreamed(f for f in settings.get("fallbacks") or [] if isinstance(f, Mapping))
    key = (str(workload["sha256"]), quick, fell_back)
    if key not in _PLANS:
        if len(_PLANS) >= 16:  # about 200 bytes a task, 2,000 tasks at most: a few MB
            _PLANS.clear()
        data = index.bytes_for(workload["id"], workload["kind"], workload["sha256"])
        if data is None:
            return None  # workload.unknown or workload.sha256 says why
        _PLANS[key] = _rebuild(data, str(workload["id"]), quick, fell_back)
    found = _PLANS[key]
    if isinstance(found, tuple):
        return PLAN.at(file, *found)
    return found


_PLANS: dict[tuple[str, bool, bool], AgenticPlan | Problem] = {}


def _rebuild(data: bytes, workload_id: str, quick: bool, fell_back: bool) -> AgenticPlan | Problem:
    doc = claimed_workload(data, workload_id, "agentic")
    if isinstance(doc, tuple):
        return doc
    used = [{"feature": FEATURE, "fallback": NON_STREAMED}] if fell_back else []
    return plan_agentic(doc, quick, used)


def check_plan(result: Mapping[str, Any], plan: AgenticPlan, records: Sequence[Mapping[str, Any]],
               file: str) -> list[Finding]:
    """The first difference between the rebuilt plan and the result's settings and journal."""
    problem = _settings(result.get("settings") or {}, plan)
    if problem is None:
        line = next((n for n, r in enumerate(records, 1) if r.get("type") == "run"), None)
        block = records[line - 1].get("agentic") if line is not None else None
        if line is None or not isinstance(block, Mapping):
            problem = "/evidence", "the journal has no agentic run line"
        else:
            problem = _run_line(block, plan, line) or _lines(records, plan)
    if problem is None:
        return []
    pointer, message = problem
    return [PLAN.at(file, pointer, f"{message}, unlike the plan of workload "
                    f"{result['workload']['id']!r} with this sha256"[:600])]


def _settings(settings: Mapping[str, Any], plan: AgenticPlan) -> Problem | None:
    """The result's settings as the runner writes them (epbench.runner.agentic.run)."""
    want: dict[str, Any] = {"seed": plan.seed, "stream": plan.settings.stream,
                            "temperature": plan.settings.temperature,
                            "max_tokens": plan.settings.max_tokens}
    for key, value in want.items():
        if value is None and key not in settings:
            continue  # a setting the workload leaves out is left out
        if settings.get(key) != value:
            return f"/settings/{key}", f"settings.{key} is {settings.get(key)!r}, not {value!r}"
    return None


def _run_line(block: Mapping[str, Any], plan: AgenticPlan, line: int) -> Problem | None:
    want = plan.run_line()
    where = f"journal line {line}"
    for key, value in want.items():
        if key not in block:
            return "/evidence", f"{where}: the run line does not say the plan's {key}"
        got = block[key]
        if got == value:
            continue
        if key == "tasks":
            shown = got[:10] if isinstance(got, list) else got
            return "/agentic/tasks", (f"{where}: the journal ran tasks {shown!r} "
                                      f"({len(got) if isinstance(got, list) else '?'} tasks), "
                                      f"the plan's are {value[:10]!r} ({len(value)} tasks)")
        if key == "trials":
            return "/agentic/trials", f"{where}: the journal ran {got!r} trials of each task, " \
                                      f"the plan {value}"
        if key in ("tools", "task_sha256"):
            return _per_task(key, got, value, plan, where)
        if isinstance(value, dict) and isinstance(got, Mapping):
            part = next(k for k in value if got.get(k) != value[k] or k not in got)
            return "/evidence", f"{where}: the run's {key}.{part} is {got.get(part)!r}, " \
                                f"the plan's {value[part]!r}"
        return "/evidence", f"{where}: the run's {key} is {got!r}, the plan's {value!r}"
    return None


def _per_task(key: str, got: Any, want: list[Any], plan: AgenticPlan, where: str) -> Problem:
    if not isinstance(got, list) or len(got) != len(want):
        return "/evidence", f"{where}: the run line's {key} is not one entry per planned task"
    i = next(i for i, (a, b) in enumerate(zip(got, want, strict=True)) if a != b)
    if key == "tools":
        return f"/agentic/tasks/{i}", (f"{where}: task {plan.tasks[i]!r} was offered tools "
                                       f"{got[i]!r}, the plan offers {want[i]!r}")
    return f"/agentic/tasks/{i}", (f"{where}: task {plan.tasks[i]!r} is not the plan's (its "
                                   f"conversation, checks, tools, system prompt or state differ)")


def _lines(records: Sequence[Mapping[str, Any]], plan: AgenticPlan) -> Problem | None:
    """Trial lines: one per planned (level, task, trial); request lines: of a planned trial, at
    a step within max_steps. With load levels, every line names a planned level."""
    position = {task: i for i, task in enumerate(plan.tasks)}
    levels: list[int | None] = [None] if plan.load is None else list(plan.load.concurrency)
    seen: set[tuple[int | None, str, int]] = set()
    for number, record in enumerate(records, 1):
        kind = record.get("type")
        if kind not in ("trial", "request"):
            continue
        task, trial, level = record.get("task"), record.get("trial"), record.get("level")
        where = f"journal line {number}"
        if task not in position:
            return "/evidence", f"{where}: a {kind} of task {str(task)[:60]!r}, which the " \
                                f"plan does not run"
        pointer = f"/agentic/tasks/{position[task]}"
        if level not in levels or isinstance(level, bool):
            return pointer, f"{where}: a {kind} at load level {str(level)[:20]}; the plan's " \
                            f"levels are {levels}"
        trials = plan.trials_at(level)
        if not isinstance(trial, int) or isinstance(trial, bool) or not 0 <= trial < trials:
            return pointer, f"{where}: trial {trial!r} of task {task!r}; the plan runs " \
                            f"trials 0 to {trials - 1}{_at(level)}"
        if kind == "trial":
            if (level, task, trial) in seen:
                return pointer, f"{where}: trial {trial} of task {task!r}{_at(level)} is " \
                                f"journaled twice"
            seen.add((level, task, trial))
            continue
        step = record.get("step")
        if not isinstance(step, int) or isinstance(step, bool) or not 1 <= step <= plan.max_steps:
            return pointer, f"{where}: a request at step {step!r} of task {task!r}; the plan " \
                            f"stops a trial after {plan.max_steps} steps"
    for level in levels:
        trials = plan.trials_at(level)
        for task in plan.tasks:
            for trial in range(trials):
                if (level, task, trial) not in seen:
                    return f"/agentic/tasks/{position[task]}", (
                        f"trial {trial} of task {task!r}{_at(level)} has no trial line; the "
                        f"plan runs {trials} trials of each of its {len(plan.tasks)} tasks"
                        f"{_at(level)}")
    return None


def _at(level: int | None) -> str:
    return "" if level is None else f" at load level {level}"
