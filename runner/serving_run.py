"""A serving workload's run, in the run lifecycle (runner/lifecycle.py): the plan
(runner/plan.py), its spec as the run line, calibration then the points, the result's summary
from the journal alone (`write_result`, also `epbench merge`'s)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from epbench.core.journal_records import RunLine
from epbench.core.runspec import RunSpec
from epbench.core.summary import summarize_run
from epbench.runner import calibrate
from epbench.runner.bounds import Bounds
from epbench.runner.context import RunContext, bounds_for
from epbench.runner.conversation import ConversationRunner
from epbench.runner.endpoint import Endpoint
from epbench.runner.header import result_header
from epbench.runner.lifecycle import RunKind, run_lifecycle, write_result_document
from epbench.runner.plan import Plan, build_plan
from epbench.runner.run_folder import CALIBRATION_FILE, run_inputs, say
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
    kind = ServingRun(ep, base_url, loaded, quick, region, shard)
    return run_lifecycle(kind, ep, base_url, out=out, resume=resume, progress=progress,
                         bounds=kind.bounds, rtt_ms=rtt_ms)


class ServingRun(RunKind[Plan, None]):
    """A serving workload in the run lifecycle (runner/lifecycle.py): its plan, its spec as
    the run line, calibration then the points, the summary of the journal."""

    def __init__(self, ep: Endpoint, base_url: str, loaded: LoadedWorkload, quick: bool,
                 region: str | None, shard: str | None) -> None:
        self.ep, self.base_url, self.loaded = ep, base_url, loaded
        self.quick, self.region, self.shard = quick, region, shard
        self.workload = serving_workload(loaded)
        self.bounds = bounds_for(ep, loaded)

    def new_plan(self, run_id: str) -> Plan:
        workload = self.workload
        plan = build_plan(workload, run_id, self.quick, self.shard)
        plan.meta = result_header(
            self.ep.doc, self.base_url, self.loaded,
            _serving_settings(workload, self.quick, self.bounds), self.region,
            pattern=workload.pattern, slo=workload.slo,
        )
        plan.inputs = run_inputs(self.ep.path, self.loaded.path)
        return plan

    def read_plan(self, doc: dict[str, Any]) -> Plan:
        return Plan.from_json(doc)

    def connections(self, plan: Plan) -> int:
        selected = plan.selected()
        if any(p.concurrency is None for p in selected):
            return OPEN_LOOP_CONNECTIONS
        return max((p.concurrency or 1 for p in selected), default=1)

    async def start(self, ctx: RunContext, plan: Plan) -> RunLine:
        return plan.run_line(self.workload.slo)

    async def work(self, ctx: RunContext, plan: Plan) -> None:
        await _serve(ctx, self.workload, plan, tuple(self.ep.secrets))

    def result_body(
        self, run_dir: Path, plan: Plan, outcome: None, records: list[dict[str, Any]]
    ) -> tuple[dict[str, Any], dict[str, Any] | None]:
        calibration = calibrate.load(run_dir, CALIBRATION_FILE)
        extra = {"calibration": calibration.to_json()} if calibration is not None else None
        return summarize_run(spec_of(plan, records), records), extra


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
    ctx: RunContext, workload: ServingWorkload, plan: Plan, secret_values: tuple[str, ...]
) -> None:
    run_dir = ctx.run_dir
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
        await ConversationRunner(runner, secret_values).run(plan.selected())
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
    return write_result_document(run_dir, plan.run_id, plan.meta, summary, extra_settings)
