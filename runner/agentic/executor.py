"""Running an agentic workload: every task, `trials` times, and the result's `agentic` section.

`run_agentic(ctx, loaded)` is what `epbench run` calls (through `epbench.runner.entry`) for a file
of kind `agentic-workload`, already read and schema-checked by `epbench.runner.workload`. What runs
is the workload's plan (epbench.core.agentic_plan: tasks, trials per task, request settings after
the fallbacks used, limits, each task's tools): the journal's first line is that plan
(`agentic_run_line`, which runner/lifecycle.py writes before the trials), which `epbench validate`
rebuilds from the workload file and compares, and from whose tasks and trials it recomputes the
section. Trials already finished in the journal of a resumed run are read
back, not run again.

With load levels (`load: {concurrency: [...]}`), the levels are played one after another, each
with that many agents at once: an agent takes the next (task, trial) of the level and plays it
whole, then the next; every request and trial line carries its `level`.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

from epbench.core.agentic_plan import AgenticPlan, plan_agentic
from epbench.core.agentic_summary import summarize, summarize_load
from epbench.core.journal_records import RunLine, run_line
from epbench.core.trial_record import TrialRecord
from epbench.runner.agentic.model import Workload, load_workload
from epbench.runner.agentic.trial import TrialRun
from epbench.runner.context import RunContext
from epbench.runner.workload import LoadedWorkload

Key = tuple[int | None, str, int]  # (load level or None, task, trial)


def finished_trials(records: list[dict[str, Any]]) -> dict[Key, TrialRecord]:
    """The trials a journal already holds, by (level, task, trial)."""
    out: dict[Key, TrialRecord] = {}
    for line in records:
        if line.get("type") == "trial" and isinstance(line.get("task"), str):
            rec = TrialRecord.from_journal(line)
            out[(rec.level, rec.task, rec.trial)] = rec
    return out


def agentic_plan(ctx: RunContext, loaded: LoadedWorkload) -> AgenticPlan:
    """What this run sends: the workload's plan, with --quick or not, after the declared
    fallbacks in `ctx.fallbacks_used`."""
    return plan_agentic(loaded.doc, bool(ctx.quick), ctx.fallbacks_used)


def agentic_run_line(ctx: RunContext, loaded: LoadedWorkload) -> RunLine:
    """The journal's run line of this run: its plan (runner/lifecycle.py writes it)."""
    return run_line(agentic=agentic_plan(ctx, loaded).run_line())


async def run_agentic(
    ctx: RunContext, loaded: LoadedWorkload, workload: Workload | None = None
) -> dict[str, Any]:
    """Run every task's trials against `ctx.client`; the result's `agentic` section.

    `workload` is the typed workload (by default, the loaded file's); its requests are sent with
    the plan's settings, after the declared fallbacks in `ctx.fallbacks_used`
    (epbench.runner.agentic.capability)."""
    plan = agentic_plan(ctx, loaded)
    # Every request is sent with the plan's settings, the ones the run line records.
    workload = dataclasses.replace(workload or load_workload(loaded.doc), settings=plan.settings)
    trials = plan.trials
    done = finished_trials(list(ctx.resume_records or []))
    model = ctx.model
    card = ctx.endpoint.get("pricing")
    # (level, trials per task, agents at once): one level without load levels
    levels: list[tuple[int | None, int, int]] = [(None, plan.trials, plan.concurrency)]
    if plan.load is not None:
        levels = [(c, n, c) for c, n in zip(plan.load.concurrency, plan.load.trials, strict=True)]
    planned = [(level, t.id, k) for level, n, _ in levels for t in workload.tasks
               for k in range(n)]
    earlier = [done[key] for key in planned if key in done]
    bar = _progress(ctx, workload.id, len(planned), len(earlier),
                    sum(r.requests for r in earlier))

    async def one(level: int | None, task_index: int, trial: int,
                  gate: asyncio.Semaphore) -> TrialRecord:
        task = workload.tasks[task_index]
        if (level, task.id, trial) in done:
            return done[(level, task.id, trial)]
        async with gate:
            run = TrialRun(
                workload=workload,
                task=task,
                trial=trial,
                client=ctx.client,
                journal=ctx.journal,
                card=card,
                model=model,
                run_seed=plan.seed,
                level=level,
            )
            record = await run.run()
        if bar is not None:
            bar.update({"class": "ok" if record.result == "success" else "error",
                        "requests": record.requests})
        return record

    records: list[TrialRecord] = []
    try:
        for level, n, agents in levels:
            gate = asyncio.Semaphore(agents)  # `agents` trials in flight at once
            order = [(i, k) for i in range(len(workload.tasks)) for k in range(n)]
            if level is not None:  # trial-major: a level's agents start on different tasks
                order.sort(key=lambda ik: (ik[1], ik[0]))
            jobs = [one(level, i, k, gate) for i, k in order]
            records += await asyncio.gather(*jobs)
    finally:
        if bar is not None:
            bar.close()
    if plan.load is not None:
        return summarize_load(list(plan.tasks), plan.load, records, card)
    return summarize(list(plan.tasks), trials, records, card)


def _progress(ctx: RunContext, label: str, total: int, done_before: int,
              requests_before: int) -> Any:
    if getattr(ctx, "progress", False) in (False, "off"):
        return None
    try:
        from epbench.runner.progress import PointProgress
    except ImportError:
        return None
    return PointProgress(label, total, ctx.progress, done_before, unit="trials",
                         requests_before=requests_before)
