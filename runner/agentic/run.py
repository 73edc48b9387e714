"""An agentic workload's run, in the run lifecycle (runner/lifecycle.py): its plan
(`AgenticRunPlan`, with the result's header), the capability probe then the plan of what it
sends as the run line, the trials (executor), the result with the fallbacks it used."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from epbench.core.errors import RunError
from epbench.core.journal_records import RunLine
from epbench.core.round_trips import round_trips
from epbench.runner.agentic.capability import FEATURE, apply_fallback, streamed_tools_refusal
from epbench.runner.agentic.executor import agentic_run_line, run_agentic
from epbench.runner.agentic.model import Workload, load_workload
from epbench.runner.bounds import Bounds
from epbench.runner.context import RunContext, bounds_for
from epbench.runner.endpoint import Endpoint
from epbench.runner.header import result_header
from epbench.runner.lifecycle import RunKind, run_lifecycle
from epbench.runner.run_folder import PLAN_FILE, run_inputs
from epbench.runner.workload import LoadedWorkload

AGENTIC_CONNECTIONS = 64


def quality_fields(doc: dict[str, Any]) -> dict[str, Any]:
    """`quality` and `source` of an agentic workload, for the result's workload block."""
    out: dict[str, Any] = {}
    if doc.get("quality"):
        out["quality"] = True
    source = doc.get("source")
    if isinstance(source, dict):
        out["source"] = {k: str(source[k]) for k in ("name", "version", "category") if k in source}
    return out


def agentic_settings(loaded: LoadedWorkload, quick: bool, bounds: Bounds) -> dict[str, Any]:
    """The result's `settings` for an agentic workload: what its requests asked for."""

    asked = load_workload(loaded.doc).settings
    settings: dict[str, Any] = {
        "seed": loaded.seed, "quick": quick, "stream": asked.stream,
        "timeout_s": bounds.timeout_s, "bounds": bounds.to_json(),
    }
    if asked.temperature is not None:
        settings["temperature"] = asked.temperature
    if asked.max_tokens is not None:
        settings["max_tokens"] = asked.max_tokens
    return settings


def run_agentic_workload(
    ep: Endpoint,
    base_url: str,
    loaded: LoadedWorkload,
    out: Path | None,
    resume: Path | None,
    quick: bool,
    region: str | None,
    progress: bool | str,
    rtt_ms: list[float] | None = None,
) -> Path:
    kind = AgenticRun(ep, base_url, loaded, quick, region)
    return run_lifecycle(kind, ep, base_url, out=out, resume=resume, progress=progress,
                         bounds=kind.bounds, rtt_ms=rtt_ms)


@dataclass
class AgenticRunPlan:
    """An agentic run's plan.json: its id, the workload's sha256, where its inputs are, and
    the result's header (`meta`). What the run sends is planned after the capability probe
    (epbench.core.agentic_plan), so it is the journal's run line, not a part of this file."""

    run_id: str
    workload_sha256: str
    meta: dict[str, Any]
    inputs: dict[str, str] = field(default_factory=dict)  # resolved endpoint/workload paths

    @property
    def quick(self) -> bool:
        """--quick, as the run started (a resume runs what was planned)."""
        return bool(self.meta["settings"].get("quick", False))

    @property
    def seed(self) -> int:
        return int(self.meta["settings"].get("seed", 0))

    def to_json(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "kind": "agentic", "workload_sha256": self.workload_sha256,
                "inputs": self.inputs, "meta": self.meta}

    @staticmethod
    def from_json(doc: dict[str, Any]) -> AgenticRunPlan:
        meta = doc.get("meta")
        if not isinstance(meta, dict) or not isinstance(meta.get("settings"), dict):
            raise RunError(f"{PLAN_FILE}:/meta/settings: missing; this run folder is damaged")
        return AgenticRunPlan(run_id=doc["run_id"], workload_sha256=str(doc["workload_sha256"]),
                              meta=meta, inputs=dict(doc.get("inputs") or {}))


Section = dict[str, Any]  # the result's `agentic` section
Used = list[dict[str, str]]  # the fallbacks the run used (epbench.runner.agentic.capability)


class AgenticRun(RunKind[AgenticRunPlan, tuple[Section, Used]]):
    """An agentic workload in the run lifecycle (runner/lifecycle.py): its plan, the capability
    probe then its plan as the run line, the trials, the result with the fallbacks used."""

    def __init__(self, ep: Endpoint, base_url: str, loaded: LoadedWorkload, quick: bool,
                 region: str | None) -> None:
        self.ep, self.base_url, self.loaded = ep, base_url, loaded
        self.quick, self.region = quick, region
        self.bounds = bounds_for(ep, loaded)
        self.workload: Workload | None = None  # after the probe: as the fallbacks send it

    def new_plan(self, run_id: str) -> AgenticRunPlan:
        meta = result_header(
            self.ep.doc, self.base_url, self.loaded,
            agentic_settings(self.loaded, self.quick, self.bounds), self.region,
            pattern="agentic", workload_extra=quality_fields(self.loaded.doc),
        )
        return AgenticRunPlan(run_id=run_id, workload_sha256=self.loaded.sha256, meta=meta,
                              inputs=run_inputs(self.ep.path, self.loaded.path))

    def read_plan(self, doc: dict[str, Any]) -> AgenticRunPlan:
        return AgenticRunPlan.from_json(doc)

    def connections(self, plan: AgenticRunPlan) -> int:
        return AGENTIC_CONNECTIONS

    async def start(self, ctx: RunContext, plan: AgenticRunPlan) -> RunLine:
        workload = load_workload(self.loaded.doc)
        refusal = await streamed_tools_refusal(ctx.client, workload, ctx.model)
        if refusal is not None:
            endpoint_id = str(self.ep.doc.get("id", self.ep.path))
            workload, fallback = apply_fallback(workload, refusal, ctx.fallbacks, endpoint_id)
            ctx.fallbacks_used.append(fallback)
        self.workload = workload
        return agentic_run_line(ctx, self.loaded)

    async def work(self, ctx: RunContext, plan: AgenticRunPlan) -> tuple[Section, Used]:
        section = await run_agentic(ctx, self.loaded, self.workload)
        return section, list(ctx.fallbacks_used)

    def result_body(
        self, run_dir: Path, plan: AgenticRunPlan, outcome: tuple[Section, Used],
        records: list[dict[str, Any]],
    ) -> tuple[dict[str, Any], dict[str, Any] | None]:
        section, used = outcome
        body: dict[str, Any] = {"points": [], "pareto": [], "agentic": section}
        extra: dict[str, Any] | None = None
        if used:
            extra = {"fallbacks": used}
            if any(u["feature"] == FEATURE for u in used):
                extra["stream"] = False  # what was sent, not what the workload asked for
        measured = round_trips(records)
        if measured is not None:
            body["round_trips"] = measured
        return body, extra
