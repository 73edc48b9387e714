"""`epbench run`: load the endpoint and workload(s), start the emulator if asked, check the
endpoint, run, write (run folder layout: runner/run_folder.py).

    1. inputs    the endpoint file and every workload file, each read and checked once
                 (`load_workload_file`); with `--resume DIR` alone, both come from the plan
    2. endpoint  the emulator child for an `emulator:` block, else the file's base URL
    3. preflight one look at the endpoint (runner/preflight.py): a dead endpoint, a refused
                 key or an unknown model stops the run here, in seconds, with one line
    4. run       serving (runner/serving_run.py): calibrate prompt lengths, plan, run the
                 points; agentic (runner/agentic/run.py): capability probe, trials
    5. result    computed from the plan's header and the journal alone, written atomically

Paths a user gives are resolved against the user's working directory before anything else
(the emulator child runs elsewhere).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from epbench.core.errors import InputError, RunError
from epbench.runner.agentic.capability import CapabilityRefused
from epbench.runner.client import EndpointClient
from epbench.runner.endpoint import Endpoint, load_endpoint
from epbench.runner.loop import run_async
from epbench.runner.preflight import PREFLIGHT_TIMEOUT_S, preflight
from epbench.runner.run_folder import (
    JOURNAL_FILE,
    PLAN_FILE,
    RESULT_FILE,
    read_plan_doc,
    say,
    write_json_atomic,
)
from epbench.runner.serving_run import run_serving, write_result
from epbench.runner.workload import LoadedWorkload, load_workload_file

__all__ = ["JOURNAL_FILE", "PLAN_FILE", "RESULT_FILE", "run_async", "run_command",
           "write_json_atomic", "write_result"]


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
    # the emulator plays exactly the workloads of this run, not every file beside them
    agentic_files = sorted({w.path for w in loaded if w.kind == "agentic-workload"})
    with _endpoint_url(ep, agentic_files or None) as base_url:
        rtt_ms = _check_endpoint(ep, base_url, loaded)
        for wl in loaded:
            if wl.kind == "serving-workload":
                results.append(
                    run_serving(ep, base_url, wl, out, resume, quick, client_region, shard,
                                progress, rtt_ms=rtt_ms)
                )
                continue
            from epbench.runner.agentic.run import run_agentic_workload

            try:
                results.append(
                    run_agentic_workload(ep, base_url, wl, out, resume, quick, client_region,
                                         progress, rtt_ms=rtt_ms)
                )
            except CapabilityRefused as exc:  # that workload stops; the others still run
                if len(loaded) == 1:
                    raise
                say(str(exc))
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
def _endpoint_url(ep: Endpoint, workload_files: list[Path] | None) -> Iterator[str]:
    """The base URL to send to; starts (and then stops) the emulator for an `emulator:` block."""
    if ep.emulator is None:
        yield ep.base_url
        return
    from epbench.runner.emulator.process import start_emulator

    emulator = start_emulator(ep.doc, workload_files)
    try:
        yield emulator.base_url
    finally:
        emulator.stop()


def _check_endpoint(ep: Endpoint, base_url: str, loaded: list[LoadedWorkload]) -> list[float]:
    """The preflight, with a short deadline for the first look and the run's for the probe;
    the round trips it measured."""
    model = str((ep.doc.get("model") or {}).get("name", "default"))
    timeout = float(ep.timeout_s or max(w.timeout_s for w in loaded))

    async def go() -> list[float]:
        api, omit = ep.doc.get("api"), ep.omit
        quick = EndpointClient(base_url, ep.api_key, ep.headers, PREFLIGHT_TIMEOUT_S, 1,
                               api=api, omit=omit, extra_body=ep.extra_body)
        full = EndpointClient(base_url, ep.api_key, ep.headers, timeout, 1, api=api, omit=omit,
                              extra_body=ep.extra_body)
        try:
            return await preflight(quick, full, model, f"endpoint {ep.doc.get('id', ep.path)}")
        finally:
            await quick.aclose()
            await full.aclose()

    return run_async(go())


