"""A serving workload's run: plan (or the resumed plan), calibrate, run the points, write the
result from the plan's header and the journal alone."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

from epbench.core import evidence
from epbench.core.journal_file import Journal
from epbench.core.journal_records import has_run_line, run_line
from epbench.core.runspec import RunSpec
from epbench.core.summary import summarize_run
from epbench.runner import calibrate
from epbench.runner.bounds import Bounds
from epbench.runner.context import bounds_for, open_context
from epbench.runner.conversation import ConversationRunner
from epbench.runner.endpoint import Endpoint
from epbench.runner.header import result_document, result_header
from epbench.runner.loop import run_async
from epbench.runner.plan import Plan, build_plan
from epbench.runner.run_folder import (
    CALIBRATION_FILE,
    JOURNAL_FILE,
    PLAN_FILE,
    RESULT_FILE,
    new_run_dir,
    read_journal,
    read_plan_doc,
    run_inputs,
    say,
    write_json_atomic,
)
from epbench.runner.runner import ServingRunner
from epbench.runner.workload import LoadedWorkload, ServingWorkload, serving_workload

OPEN_LOOP_CONNECTIONS = 1024


def run_serving(
    ep: Endpoint,
    base_url: str,
    loaded: LoadedWorkload,
    out: Path | None,
    resume: Path | None,
    quick: bool,
    region: str | None,
    shard: str | None,
    progress: bool | str,
    rtt_ms: list[float] | None = None,
) -> Path:
    workload = serving_workload(loaded)
    bounds = bounds_for(ep, loaded)
    records: list[dict[str, Any]] = []
    if resume is not None:
        run_dir = resume
        plan = Plan.from_json(read_plan_doc(run_dir))
        records = read_journal(run_dir)
    else:
        run_id = secrets.token_hex(8)
        run_dir = new_run_dir(out, run_id)
        plan = build_plan(workload, run_id, quick, shard)
        plan.meta = result_header(
            ep.doc, base_url, loaded, _serving_settings(workload, quick, bounds), region,
            pattern=workload.pattern, slo=workload.slo,
        )
        plan.inputs = run_inputs(ep.path, loaded.path)
        write_json_atomic(run_dir / PLAN_FILE, plan.to_json())
    selected = plan.selected()
    if any(p.concurrency is None for p in selected):
        connections = OPEN_LOOP_CONNECTIONS
    else:
        connections = max((p.concurrency or 1 for p in selected), default=1)
    try:
        with Journal(run_dir / JOURNAL_FILE, ep.secrets) as journal:
            if not has_run_line(records):
                journal.append(run_line(spec=plan.spec(workload.slo).to_json()))
            journal.start_session(rtt_ms)
            run_async(
                _serve(ep, base_url, workload, plan, run_dir, journal, records, connections,
                       bounds, progress)
            )
    except KeyboardInterrupt:
        say(f"finish this run with: epbench run --resume {run_dir}")
        raise
    calibration = calibrate.load(run_dir, CALIBRATION_FILE)
    extra = {"calibration": calibration.to_json()} if calibration is not None else None
    return write_result(run_dir, plan, read_journal(run_dir), extra_settings=extra)


def _serving_settings(workload: ServingWorkload, quick: bool, bounds: Bounds) -> dict[str, Any]:
    settings: dict[str, Any] = {
        "seed": workload.seed,
        "quick": quick,
        "stream": True,
        "max_tokens": workload.max_tokens,
        "ignore_eos": bool(workload.prompts.get("ignore_eos", False)),
        "timeout_s": bounds.timeout_s,
        "bounds": bounds.to_json(),
    }
    for key in ("temperature", "top_p"):
        if key in workload.sampling:
            settings[key] = workload.sampling[key]
    if workload.retry:
        settings["retry"] = workload.retry
    return settings


async def _serve(
    ep: Endpoint,
    base_url: str,
    workload: ServingWorkload,
    plan: Plan,
    run_dir: Path,
    journal: Journal,
    records: list[dict[str, Any]],
    connections: int,
    bounds: Bounds,
    progress: bool | str,
) -> None:
    async with open_context(
        ep, base_url, plan.run_id, run_dir, journal, records,
        quick=plan.quick, seed=plan.seed, progress=progress,
        bounds=bounds, connections=connections,
    ) as ctx:
        fit = calibrate.load(run_dir, CALIBRATION_FILE)
        if fit is None:
            longest = max((r.input_tokens for p in plan.points for r in p.requests), default=8)
            fit = await calibrate.calibrate(
                ctx.client, ctx.model, workload.seed, workload.prompts.get("system_prompt"),
                max_words=max(16, longest),
            )
            calibrate.save(run_dir, fit, CALIBRATION_FILE)
            if fit.source != "usage":
                say("the endpoint reports no usage: prompt lengths are not calibrated")
        runner = ServingRunner(ctx, workload, plan, fit)
        if plan.pattern == "conversation":
            await ConversationRunner(runner, tuple(ep.secrets)).run(plan.selected())
        else:
            await runner.run()


def spec_of(plan: Plan, records: list[dict[str, Any]]) -> RunSpec:
    """The spec journaled at the run's start (what `validate` recomputes with); the plan's
    own for a journal written before runs journaled their spec."""
    for record in records:
        if record.get("type") == "run":
            return RunSpec.from_json(record.get("spec"))
    return plan.spec(plan.meta.get("slo") or {})


def write_result(
    run_dir: Path,
    plan: Plan,
    records: list[dict[str, Any]],
    extra_settings: dict[str, Any] | None = None,
) -> Path:
    """Compute and atomically write runs/<run-id>/result.json from the plan and the journal."""
    summary = summarize_run(spec_of(plan, records), records)
    summary["evidence"] = evidence.describe((run_dir / JOURNAL_FILE).read_bytes())
    doc = result_document(plan.run_id, plan.meta, summary, extra_settings)
    path = run_dir / RESULT_FILE
    write_json_atomic(path, doc)
    return path
