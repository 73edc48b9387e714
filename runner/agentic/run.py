"""An agentic workload's run: the capability probe and trials (executor), the header in the
plan, the result with the fallbacks it used."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

from epbench.core import evidence
from epbench.core.journal_file import Journal
from epbench.core.round_trips import round_trips
from epbench.runner.agentic.capability import FEATURE, apply_fallback, streamed_tools_refusal
from epbench.runner.agentic.model import load_workload
from epbench.runner.bounds import Bounds
from epbench.runner.context import bounds_for, open_context
from epbench.runner.endpoint import Endpoint
from epbench.runner.header import result_document, result_header
from epbench.runner.loop import run_async
from epbench.runner.run_folder import (
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
    bounds = bounds_for(ep, loaded)
    records: list[dict[str, Any]] = []
    if resume is not None:
        run_dir = resume
        plan_doc = read_plan_doc(run_dir)
        run_id, meta = plan_doc["run_id"], plan_doc["meta"]
        records = read_journal(run_dir)
    else:
        run_id = secrets.token_hex(8)
        run_dir = new_run_dir(out, run_id)
        meta = result_header(
            ep.doc, base_url, loaded, agentic_settings(loaded, quick, bounds), region,
            pattern="agentic", workload_extra=quality_fields(loaded.doc),
        )
        write_json_atomic(
            run_dir / PLAN_FILE,
            {"run_id": run_id, "kind": "agentic", "workload_sha256": loaded.sha256,
             "inputs": run_inputs(ep.path, loaded.path), "meta": meta},
        )
    used: list[dict[str, str]] = []

    async def go(journal: Journal) -> dict[str, Any]:
        from epbench.runner.agentic.executor import run_agentic

        async with open_context(
            ep, base_url, run_id, run_dir, journal, records,
            quick=quick, seed=loaded.seed, progress=progress,
            bounds=bounds, connections=AGENTIC_CONNECTIONS,
        ) as ctx:
            workload = load_workload(loaded.doc)
            refusal = await streamed_tools_refusal(ctx.client, workload, ctx.model)
            if refusal is not None:
                endpoint_id = str(ep.doc.get("id", ep.path))
                workload, fallback = apply_fallback(workload, refusal, ctx.fallbacks,
                                                    endpoint_id)
                ctx.fallbacks_used.append(fallback)
            section: dict[str, Any] = await run_agentic(ctx, loaded, workload)
            used.extend(ctx.fallbacks_used)
            return section

    try:
        with Journal(run_dir / JOURNAL_FILE, ep.secrets) as journal:
            journal.start_session(rtt_ms)
            agentic = run_async(go(journal))
    except KeyboardInterrupt:
        say(f"finish this run with: epbench run --resume {run_dir}")
        raise
    body = {"points": [], "pareto": [], "agentic": agentic}
    extra: dict[str, Any] | None = None
    if used:
        extra = {"fallbacks": used}
        if any(u["feature"] == FEATURE for u in used):
            extra["stream"] = False  # what was sent, not what the workload asked for
    journal_bytes = (run_dir / JOURNAL_FILE).read_bytes()
    measured = round_trips(read_journal(run_dir))
    if measured is not None:
        body["round_trips"] = measured
    body["evidence"] = evidence.describe(journal_bytes)
    out_path = run_dir / RESULT_FILE
    write_json_atomic(out_path, result_document(run_id, meta, body, extra))
    return out_path
