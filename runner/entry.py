"""`epbench run`: load the endpoint and workload(s), start the emulator if asked, check the
endpoint, run, write (run folder layout: runner/run_folder.py).

    1. inputs    the endpoint file and every workload file, each read and checked once
                 (`load_workload_file`); with `--resume DIR` alone, both come from the plan
    2. endpoint  the emulator child for an `emulator:` block, else the file's base URL
    3. preflight one look at the endpoint (runner/preflight.py): a dead endpoint, a refused
                 key or an unknown model stops the run here, in seconds, with one line
    4. run       serving: calibrate prompt lengths (runner/calibrate.py), plan, run the
                 points; agentic: runner.agentic.executor.run_agentic
    5. result    computed from the plan's header and the journal alone, written atomically

Paths a user gives are resolved against the user's working directory before anything else
(the emulator child runs elsewhere).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import secrets
import sys
from collections.abc import AsyncIterator, Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

from epcore.errors import InputError, RunError
from runner import calibrate
from runner.agentic.capability import FEATURE, CapabilityRefused
from runner.bounds import Bounds
from runner.client import EndpointClient
from runner.context import RunContext
from runner.endpoint import Endpoint, load_endpoint
from runner.header import result_document, result_header
from runner.journal import Journal, complete_records
from runner.plan import Plan, build_plan
from runner.preflight import PREFLIGHT_TIMEOUT_S, preflight
from runner.run_folder import (
    CALIBRATION_FILE,
    JOURNAL_FILE,
    PLAN_FILE,
    RESULT_FILE,
    new_run_dir,
    read_plan_doc,
    write_json_atomic,
)
from runner.runner import ServingRunner
from runner.summary import summarize_run
from runner.workload import LoadedWorkload, ServingWorkload, load_workload_file, serving_workload

T = TypeVar("T")
OPEN_LOOP_CONNECTIONS = 1024
AGENTIC_CONNECTIONS = 64

__all__ = ["JOURNAL_FILE", "PLAN_FILE", "RESULT_FILE", "run_async", "run_command",
           "write_json_atomic", "write_result"]


def run_async(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine on uvloop when it is installed (less client CPU per read), else asyncio.

    When this thread already runs an event loop (a notebook, or Playwright's sync API in the
    same process), the run gets a thread of its own: a loop cannot be started inside another.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _run_on_new_loop(coro)
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="epbench-run") as pool:
        return pool.submit(_run_on_new_loop, coro).result()


def _run_on_new_loop(coro: Coroutine[Any, Any, T]) -> T:
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coro)
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(coro)


def _say(message: str) -> None:
    print(f"epbench: {message}", file=sys.stderr, flush=True)


def run_command(
    endpoint: Path | None,
    workload: Path | None,
    out: Path | None,
    resume: Path | None,
    quick: bool,
    client_region: str | None,
    shard: str | None,
    progress: bool | str,
) -> list[Path]:
    """Run one workload (or a folder of agentic ones); the result.json paths written.

    With `resume` and neither `endpoint` nor `workload`, both come from the run's plan;
    given ones must be the same files."""
    plan_doc = None
    if resume is not None:
        resume = Path(resume).resolve()
        plan_doc = read_plan_doc(resume)
        endpoint, workload = _resume_inputs(resume, plan_doc, endpoint, workload)
    if endpoint is None or workload is None:
        raise InputError("epbench run: give --workload (and --endpoint), or --resume RUN_DIR")
    ep = load_endpoint(Path(endpoint).resolve())
    loaded = [load_workload_file(path) for path in _workload_files(Path(workload).resolve())]
    if plan_doc is not None:
        loaded = [w for w in loaded if w.sha256 == plan_doc.get("workload_sha256")]
        if not loaded:
            raise RunError(
                f"{resume}: the workload changed since run {plan_doc['run_id']} started "
                f"(or {workload} is another one); resume needs the same file"
            )
    results: list[Path] = []
    refused: list[str] = []
    agentic_dirs = sorted({w.path.parent for w in loaded if w.kind == "agentic-workload"})
    with _endpoint_url(ep, agentic_dirs or None) as base_url:
        _check_endpoint(ep, base_url, loaded)
        for wl in loaded:
            if wl.kind == "serving-workload":
                results.append(
                    _run_serving(ep, base_url, wl, out, resume, quick, client_region, shard,
                                 progress)
                )
                continue
            try:
                results.append(
                    _run_agentic(ep, base_url, wl, out, resume, quick, client_region, progress)
                )
            except CapabilityRefused as exc:  # that workload stops; the others still run
                if len(loaded) == 1:
                    raise
                _say(str(exc))
                refused.append(wl.id)
    if refused:
        written = ", ".join(str(p) for p in results) or "none"
        raise RunError(
            f"{len(refused)} workload(s) stopped because the endpoint refuses a feature they "
            f"need ({', '.join(refused)}; see above); results written: {written}"
        )
    return results


def _resume_inputs(
    run_dir: Path, plan_doc: dict[str, Any], endpoint: Path | None, workload: Path | None
) -> tuple[Path, Path]:
    inputs = plan_doc.get("inputs") or {}
    planned_ep, planned_wl = inputs.get("endpoint"), inputs.get("workload")
    if endpoint is None:
        if not planned_ep:
            raise InputError(f"{run_dir}: this plan does not name its endpoint; pass --endpoint")
        endpoint = Path(planned_ep)
    elif planned_ep and Path(endpoint).resolve() != Path(planned_ep):
        raise InputError(
            f"--endpoint {endpoint}: run {plan_doc['run_id']} was started against "
            f"{planned_ep}; resume it without --endpoint"
        )
    if workload is None:
        if not planned_wl:
            raise InputError(f"{run_dir}: this plan does not name its workload; pass --workload")
        workload = Path(planned_wl)
    return Path(endpoint), Path(workload)


def _workload_files(path: Path) -> list[Path]:
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix in {".yaml", ".yml"})
        if not files:
            raise InputError(f"{path}: no *.yaml workload files in this folder")
        return files
    if not path.is_file():
        raise InputError(f"{path}: no such workload file")
    return [path]


@contextlib.contextmanager
def _endpoint_url(ep: Endpoint, workload_dirs: list[Path] | None) -> Iterator[str]:
    """The base URL to send to; starts (and then stops) the emulator for an `emulator:` block."""
    if ep.emulator is None:
        yield ep.base_url
        return
    from runner.emulator.process import start_emulator

    emulator = start_emulator(ep.doc, workload_dirs)
    try:
        yield emulator.base_url
    finally:
        emulator.stop()


def _check_endpoint(ep: Endpoint, base_url: str, loaded: list[LoadedWorkload]) -> None:
    """The preflight, with a short deadline for the first look and the run's for the probe."""
    model = str((ep.doc.get("model") or {}).get("name", "default"))
    timeout = float(ep.timeout_s or max(w.timeout_s for w in loaded))

    async def go() -> None:
        quick = EndpointClient(base_url, ep.api_key, ep.headers, PREFLIGHT_TIMEOUT_S, 1)
        full = EndpointClient(base_url, ep.api_key, ep.headers, timeout, 1)
        try:
            await preflight(quick, full, model, f"endpoint {ep.doc.get('id', ep.path)}")
        finally:
            await quick.aclose()
            await full.aclose()

    run_async(go())


def _bounds(ep: Endpoint, wl: LoadedWorkload) -> Bounds:
    timeout = float(ep.timeout_s or wl.timeout_s)
    return Bounds(timeout_s=timeout).with_block(wl.doc.get("bounds"))


@contextlib.asynccontextmanager
async def _run_context(
    ep: Endpoint,
    base_url: str,
    run_id: str,
    run_dir: Path,
    journal: Journal,
    records: list[dict[str, Any]],
    *,
    quick: bool,
    seed: int,
    progress: bool | str,
    bounds: Bounds,
    connections: int,
) -> AsyncIterator[RunContext]:
    """The RunContext of one run, with its one HTTP client, closed when the run ends."""
    client = EndpointClient(
        base_url, ep.api_key, ep.headers, bounds.timeout_s, connections, bounds=bounds
    )
    try:
        yield RunContext(
            run_id=run_id, run_dir=run_dir, endpoint=ep.doc, base_url=base_url, client=client,
            journal=journal, quick=quick, seed=seed, progress=progress, resume_records=records,
            fallbacks=dict(ep.doc.get("fallbacks") or {}),
        )
    finally:
        await client.aclose()


def _read_journal(run_dir: Path) -> list[dict[str, Any]]:
    """The journal's complete records; incomplete lines are reported and skipped."""
    records, skipped = complete_records(Journal.read(run_dir / JOURNAL_FILE))
    if skipped:
        _say(f"{run_dir / JOURNAL_FILE}: skipped {skipped} incomplete journal line(s)")
    return records


def _inputs(ep: Endpoint, wl: LoadedWorkload) -> dict[str, str]:
    return {"endpoint": str(ep.path.resolve()), "workload": str(wl.path.resolve())}


def _run_serving(
    ep: Endpoint,
    base_url: str,
    loaded: LoadedWorkload,
    out: Path | None,
    resume: Path | None,
    quick: bool,
    region: str | None,
    shard: str | None,
    progress: bool | str,
) -> Path:
    workload = serving_workload(loaded)
    bounds = _bounds(ep, loaded)
    records: list[dict[str, Any]] = []
    if resume is not None:
        run_dir = resume
        plan = Plan.from_json(read_plan_doc(run_dir))
        records = _read_journal(run_dir)
    else:
        run_id = secrets.token_hex(8)
        run_dir = new_run_dir(out, run_id)
        plan = build_plan(workload, run_id, quick, shard)
        plan.meta = result_header(
            ep.doc, base_url, loaded, _serving_settings(workload, quick, bounds), region,
            pattern=workload.pattern, slo=workload.slo,
        )
        plan.inputs = _inputs(ep, loaded)
        write_json_atomic(run_dir / PLAN_FILE, plan.to_json())
    selected = plan.selected()
    if any(p.concurrency is None for p in selected):
        connections = OPEN_LOOP_CONNECTIONS
    else:
        connections = max((p.concurrency or 1 for p in selected), default=1)
    try:
        with Journal(run_dir / JOURNAL_FILE) as journal:
            run_async(
                _serve(ep, base_url, workload, plan, run_dir, journal, records, connections,
                       bounds, progress)
            )
    except KeyboardInterrupt:
        _say(f"finish this run with: epbench run --resume {run_dir}")
        raise
    calibration = calibrate.load(run_dir, CALIBRATION_FILE)
    extra = {"calibration": calibration.to_json()} if calibration is not None else None
    return write_result(run_dir, plan, _read_journal(run_dir), extra_settings=extra)


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
    async with _run_context(
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
                _say("the endpoint reports no usage: prompt lengths are not calibrated")
        await ServingRunner(ctx, workload, plan, fit).run()


def write_result(
    run_dir: Path,
    plan: Plan,
    records: list[dict[str, Any]],
    points: list[Any] | None = None,
    extra_settings: dict[str, Any] | None = None,
) -> Path:
    """Compute and atomically write runs/<run-id>/result.json from the plan and the journal."""
    summary = summarize_run(plan, records, plan.meta.get("slo") or {}, points)
    doc = result_document(plan.run_id, plan.meta, summary, extra_settings)
    path = run_dir / RESULT_FILE
    write_json_atomic(path, doc)
    return path


def _agentic_settings(loaded: LoadedWorkload, quick: bool, bounds: Bounds) -> dict[str, Any]:
    """The result's `settings` for an agentic workload: what its requests asked for."""
    from runner.agentic.model import load_workload

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


def _run_agentic(
    ep: Endpoint,
    base_url: str,
    loaded: LoadedWorkload,
    out: Path | None,
    resume: Path | None,
    quick: bool,
    region: str | None,
    progress: bool | str,
) -> Path:
    bounds = _bounds(ep, loaded)
    records: list[dict[str, Any]] = []
    if resume is not None:
        run_dir = resume
        plan_doc = read_plan_doc(run_dir)
        run_id, meta = plan_doc["run_id"], plan_doc["meta"]
        records = _read_journal(run_dir)
    else:
        run_id = secrets.token_hex(8)
        run_dir = new_run_dir(out, run_id)
        meta = result_header(
            ep.doc, base_url, loaded, _agentic_settings(loaded, quick, bounds), region,
            pattern="agentic",
        )
        write_json_atomic(
            run_dir / PLAN_FILE,
            {"run_id": run_id, "kind": "agentic", "workload_sha256": loaded.sha256,
             "inputs": _inputs(ep, loaded), "meta": meta},
        )
    used: list[dict[str, str]] = []

    async def go(journal: Journal) -> dict[str, Any]:
        from runner.agentic.executor import run_agentic

        async with _run_context(
            ep, base_url, run_id, run_dir, journal, records,
            quick=quick, seed=loaded.seed, progress=progress,
            bounds=bounds, connections=AGENTIC_CONNECTIONS,
        ) as ctx:
            section: dict[str, Any] = await run_agentic(ctx, loaded)
            used.extend(ctx.fallbacks_used)
            return section

    try:
        with Journal(run_dir / JOURNAL_FILE) as journal:
            agentic = run_async(go(journal))
    except KeyboardInterrupt:
        _say(f"finish this run with: epbench run --resume {run_dir}")
        raise
    body = {"points": [], "pareto": [], "agentic": agentic}
    extra: dict[str, Any] | None = None
    if used:
        extra = {"fallbacks": used}
        if any(u["feature"] == FEATURE for u in used):
            extra["stream"] = False  # what was sent, not what the workload asked for
    out_path = run_dir / RESULT_FILE
    write_json_atomic(out_path, result_document(run_id, meta, body, extra))
    return out_path
