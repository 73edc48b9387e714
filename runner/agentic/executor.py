"""Running an agentic workload: every task, `trials` times, and the result's `agentic` section.

`run_agentic(ctx, workload_doc, workload_path)` is what `epbench run` calls (through
`runner.entry`) for a file of kind `agentic-workload`. The journal's first line names the
tasks and the trials per task, what `epbench validate` needs to recompute the section.
Trials already finished in the journal of a resumed run are read back, not run again.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from epcore.agentic_summary import summarize
from epcore.errors import InputError
from epcore.schema import check_schema
from epcore.trial_record import TrialRecord
from runner.agentic.model import Workload, load_workload
from runner.agentic.trial import TrialRun


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
    ctx: Any, workload_doc: dict[str, Any], workload_path: Path
) -> dict[str, Any]:
    """Run every task's trials against `ctx.client`; the result's `agentic` section."""
    findings = check_schema(workload_doc, "agentic-workload", str(workload_path))
    if findings:
        raise InputError(findings[0].line())
    workload = load_workload(workload_doc)
    trials = trials_for(workload, bool(ctx.quick))
    done = finished_trials(list(ctx.resume_records or []))
    if not any(line.get("type") == "run" for line in ctx.resume_records or []):
        ctx.journal.append({"type": "run", "agentic": {
            "tasks": [t.id for t in workload.tasks], "trials": trials,
        }})
    model = str((ctx.endpoint.get("model") or {}).get("name", "model"))
    card = ctx.endpoint.get("pricing")
    concurrency = max(1, int((workload_doc.get("settings") or {}).get("concurrency", 1)))
    gate = asyncio.Semaphore(concurrency)
    bar = _progress(ctx, workload.id, len(workload.tasks) * trials)

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
            bar.update({"class": "ok" if record.result == "success" else "error"})
        return record

    jobs = [one(i, k) for i in range(len(workload.tasks)) for k in range(trials)]
    try:
        records = list(await asyncio.gather(*jobs))
    finally:
        if bar is not None:
            bar.close()
    return summarize([t.id for t in workload.tasks], trials, records, card)


def _progress(ctx: Any, label: str, total: int) -> Any:
    if not getattr(ctx, "progress", False):
        return None
    try:
        from runner.progress import PointProgress
    except ImportError:
        return None
    return PointProgress(label, total, True)
