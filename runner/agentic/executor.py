"""Running an agentic workload: every task, `trials` times, and the result's `agentic` section.

`run_agentic(ctx, loaded)` is what `epbench run` calls (through `epbench.runner.entry`) for a file
of
kind `agentic-workload`, already read and schema-checked by `epbench.runner.workload`. The journal's
first line names the tasks and the trials per task, what `epbench validate` needs to recompute
the section. Trials already finished in the journal of a resumed run are read back, not run
again.
"""

from __future__ import annotations

import asyncio
from typing import Any

from epbench.core.agentic_summary import summarize
from epbench.core.trial_record import TrialRecord
from epbench.runner.agentic.model import Workload, load_workload
from epbench.runner.agentic.trial import TrialRun
from epbench.runner.context import RunContext
from epbench.runner.workload import LoadedWorkload


def finished_trials(records: list[dict[str, Any]]) -> dict[tuple[str, int], TrialRecord]:
    """The trials a journal already holds, by (task, trial)."""
    out: dict[tuple[str, int], TrialRecord] = {}
    for line in records:
        if line.get("type") == "trial" and isinstance(line.get("task"), str):
            rec = TrialRecord.from_journal(line)
            out[(rec.task, rec.trial)] = rec
    return out


def trials_for(workload: Workload, quick: bool) -> int:
    return workload.quick_trials if quick else workload.trials


async def run_agentic(
    ctx: RunContext, loaded: LoadedWorkload, workload: Workload | None = None
) -> dict[str, Any]:
    """Run every task's trials against `ctx.client`; the result's `agentic` section.

    `workload` is the typed workload as it will run (a declared fallback may have changed its
    settings: epbench.runner.agentic.capability); by default, the loaded file's."""
    workload_doc = loaded.doc
    if workload is None:
        workload = load_workload(workload_doc)
    trials = trials_for(workload, bool(ctx.quick))
    done = finished_trials(list(ctx.resume_records or []))
    if not any(line.get("type") == "run" for line in ctx.resume_records or []):
        ctx.journal.append({"type": "run", "agentic": {
            "tasks": [t.id for t in workload.tasks], "trials": trials,
        }})
    model = ctx.model
    card = ctx.endpoint.get("pricing")
    concurrency = max(1, int((workload_doc.get("settings") or {}).get("concurrency", 1)))
    gate = asyncio.Semaphore(concurrency)
    planned = [(t.id, k) for t in workload.tasks for k in range(trials)]
    earlier = [done[key] for key in planned if key in done]
    bar = _progress(ctx, workload.id, len(planned), len(earlier),
                    sum(r.requests for r in earlier))

    async def one(task_index: int, trial: int) -> TrialRecord:
        task = workload.tasks[task_index]
        if (task.id, trial) in done:
            return done[(task.id, trial)]
        async with gate:
            run = TrialRun(
                workload=workload,
                task=task,
                trial=trial,
                client=ctx.client,
                journal=ctx.journal,
                card=card,
                model=model,
                run_seed=int(ctx.seed),
            )
            record = await run.run()
        if bar is not None:
            bar.update({"class": "ok" if record.result == "success" else "error",
                        "requests": record.requests})
        return record

    jobs = [one(i, k) for i in range(len(workload.tasks)) for k in range(trials)]
    try:
        records = list(await asyncio.gather(*jobs))
    finally:
        if bar is not None:
            bar.close()
    return summarize([t.id for t in workload.tasks], trials, records, card)


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
