"""`epbench run`: load the endpoint and workload(s), start the emulator if asked, run, write.

    runs/<run-id>/plan.json     what the run will send, and the result's header
    runs/<run-id>/events.jsonl  one line per finished request (runner.journal)
    runs/<run-id>/result.json   written at the end, atomically (temporary file + os.replace)

A serving workload goes to `runner.runner`; an agentic one (or each *.yaml of a folder) to
`runner.agentic.executor.run_agentic`, imported only then.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import os
import platform
import secrets
import socket
import statistics
import sys
import time
from collections.abc import AsyncIterator, Coroutine, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from epcore import HARNESS_NAME, __version__
from epcore.errors import InputError, RunError
from epcore.git import GitError, run_git
from epcore.paths import checkout_root, project_dir
from runner.client import EndpointClient
from runner.context import RunContext
from runner.endpoint import Endpoint, load_endpoint
from runner.journal import Journal
from runner.plan import Plan, build_plan
from runner.runner import ServingRunner
from runner.summary import summarize_run
from runner.workload import ServingWorkload, load_serving_workload, read_workload

T = TypeVar("T")
PLAN_FILE = "plan.json"
JOURNAL_FILE = "events.jsonl"
RESULT_FILE = "result.json"
OPEN_LOOP_CONNECTIONS = 1024
AGENTIC_CONNECTIONS = 64


def run_async(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine on uvloop when it is installed (less client CPU per read), else asyncio.

    When this thread already runs an event loop (a notebook, or Playwright's sync API in the
    same process), the run gets a thread of its own: a loop cannot be started inside another.
    """
    if asyncio._get_running_loop() is not None:
        with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="epbench-run") as pool:
            return pool.submit(_run_on_new_loop, coro).result()
    return _run_on_new_loop(coro)


def _run_on_new_loop(coro: Coroutine[Any, Any, T]) -> T:
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coro)
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(coro)


def utc_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")[:-4] + "Z"


def write_json_atomic(path: Path, doc: Any) -> None:
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    tmp.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def run_command(
    endpoint: Path,
    workload: Path,
    out: Path | None,
    resume: Path | None,
    quick: bool,
    client_region: str | None,
    shard: str | None,
    progress: bool,
) -> list[Path]:
    """Run one workload (or a folder of agentic ones); the result.json paths written."""
    ep = load_endpoint(Path(endpoint))
    files = _workload_files(Path(workload))
    docs = [(path, *read_workload(path)) for path in files]
    if resume is not None and len(docs) > 1:
        plan_doc = _read_plan_doc(Path(resume))
        docs = [d for d in docs if d[2] == plan_doc.get("workload_sha256")] or docs[:0]
        if not docs:
            raise RunError(
                f"{resume}: no workload in {workload} matches the one this run started with"
            )
    results = []
    agentic_dirs = sorted({p.parent for p, d, _ in docs if d.get("kind") == "agentic-workload"})
    with _endpoint_url(ep, agentic_dirs or None) as base_url:
        for path, doc, _sha in docs:
            kind = doc.get("kind")
            if kind == "serving-workload":
                results.append(
                    _run_serving(
                        ep, base_url, path, out, resume, quick, client_region, shard, progress
                    )
                )
            elif kind == "agentic-workload":
                results.append(
                    _run_agentic(
                        ep, base_url, path, doc, out, resume, quick, client_region, progress
                    )
                )
            else:
                raise InputError(
                    f"{path}:/kind: not a workload (kind {kind!r}); "
                    "use a serving or agentic workload"
                )
    return results


def _quality_fields(doc: dict[str, Any]) -> dict[str, Any]:
    """`quality` and `source` of an agentic workload, for the result's workload block."""
    out: dict[str, Any] = {}
    if doc.get("quality"):
        out["quality"] = True
    source = doc.get("source")
    if isinstance(source, dict):
        out["source"] = {k: str(source[k]) for k in ("name", "version", "category") if k in source}
    return out


def _workload_files(path: Path) -> list[Path]:
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix in {".yaml", ".yml"})
        if not files:
            raise InputError(f"{path}: no *.yaml workload files in this folder")
        return files
    if not path.is_file():
        raise InputError(f"{path}: no such workload file or id (see workloads/serving/)")
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


def _agentic_settings(doc: dict[str, Any], seed: int, quick: bool) -> dict[str, Any]:
    """The result's `settings` for an agentic workload: what its requests asked for."""
    asked = doc.get("settings") or {}
    settings: dict[str, Any] = {
        "seed": seed, "quick": quick, "stream": bool(asked.get("stream", True)),
    }
    for key in ("temperature", "max_tokens", "top_p"):
        if asked.get(key) is not None:
            settings[key] = asked[key]
    if "temperature" not in settings:
        settings["temperature"] = 0.0
    return settings


def _read_plan_doc(run_dir: Path) -> dict[str, Any]:
    path = run_dir / PLAN_FILE
    if not path.is_file():
        raise RunError(
            f"{run_dir}: no {PLAN_FILE} here; --resume takes a run folder (runs/<run-id>)"
        )
    doc: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return doc


def _run_dir(out: Path | None, run_id: str) -> Path:
    base = out if out is not None else project_dir() / "runs"
    run_dir = base / run_id
    run_dir.mkdir(parents=True, exist_ok=False)
    return run_dir


def _run_serving(
    ep: Endpoint,
    base_url: str,
    path: Path,
    out: Path | None,
    resume: Path | None,
    quick: bool,
    region: str | None,
    shard: str | None,
    progress: bool,
) -> Path:
    workload = load_serving_workload(path)
    records: list[dict[str, Any]] = []
    if resume is not None:
        run_dir = Path(resume)
        plan = Plan.from_json(_read_plan_doc(run_dir))
        if plan.workload_sha256 != workload.sha256:
            raise RunError(
                f"{path}: this workload changed since run {plan.run_id} started; "
                "resume needs the same file"
            )
        records = Journal.read(run_dir / JOURNAL_FILE)
    else:
        run_id = secrets.token_hex(8)
        run_dir = _run_dir(out, run_id)
        plan = build_plan(workload, run_id, quick, shard)
        plan.meta = _header(ep, base_url, workload, quick, region)
        write_json_atomic(run_dir / PLAN_FILE, plan.to_json())
    selected = plan.selected()
    if any(p.concurrency is None for p in selected):
        connections = OPEN_LOOP_CONNECTIONS
    else:
        connections = max((p.concurrency or 1 for p in selected), default=1)
    timeout = float(ep.timeout_s or workload.timeout_s)
    try:
        with Journal(run_dir / JOURNAL_FILE, ep.secrets) as journal:
            run_async(
                _serve(
                    ep,
                    base_url,
                    workload,
                    plan,
                    run_dir,
                    journal,
                    records,
                    connections,
                    timeout,
                    progress,
                )
            )
    except KeyboardInterrupt:
        print(f"epbench: finish this run with: --resume {run_dir}", file=sys.stderr)
        raise
    all_records = Journal.read(run_dir / JOURNAL_FILE)
    return write_result(run_dir, plan, all_records)


async def _serve(
    ep: Endpoint,
    base_url: str,
    workload: ServingWorkload,
    plan: Plan,
    run_dir: Path,
    journal: Journal,
    records: list[dict[str, Any]],
    connections: int,
    timeout: float,
    progress: bool,
) -> None:
    async with _run_context(
        ep, base_url, plan.run_id, run_dir, journal, records,
        quick=plan.quick, seed=plan.seed, progress=progress,
        timeout=timeout, connections=connections,
    ) as ctx:
        await ServingRunner(ctx, workload, plan).run()


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
    progress: bool,
    timeout: float,
    connections: int,
) -> AsyncIterator[RunContext]:
    """The RunContext of one run, with its one HTTP client, closed when the run ends."""
    client = EndpointClient(base_url, ep.api_key, ep.headers, timeout, connections)
    try:
        yield RunContext(
            run_id=run_id, run_dir=run_dir, endpoint=ep.doc, base_url=base_url, client=client,
            journal=journal, quick=quick, seed=seed, progress=progress, resume_records=records,
        )
    finally:
        await client.aclose()


def write_result(
    run_dir: Path,
    plan: Plan,
    records: list[dict[str, Any]],
    points: list[Any] | None = None,
    extra_settings: dict[str, Any] | None = None,
) -> Path:
    """Compute and atomically write runs/<run-id>/result.json from the plan and the journal."""
    meta = plan.meta
    summary = summarize_run(plan, records, meta.get("slo") or {}, points)
    settings = {**meta["settings"], **(extra_settings or {})}
    doc: dict[str, Any] = {
        "kind": "result",
        "schema_version": 1,
        "run_id": plan.run_id,
        "harness": meta["harness"],
        "workload": meta["workload"],
        "endpoint": meta["endpoint"],
        "client": meta["client"],
        "settings": settings,
        "started_at": meta["started_at"],
        "finished_at": utc_now(),
        **summary,
    }
    path = run_dir / RESULT_FILE
    write_json_atomic(path, doc)
    return path


def _header(
    ep: Endpoint, base_url: str, workload: ServingWorkload, quick: bool, region: str | None
) -> dict[str, Any]:
    settings: dict[str, Any] = {
        "seed": workload.seed,
        "quick": quick,
        "stream": True,
        "max_tokens": workload.max_tokens,
        "ignore_eos": bool(workload.prompts.get("ignore_eos", False)),
        "timeout_s": float(ep.timeout_s or workload.timeout_s),
    }
    for key in ("temperature", "top_p"):
        if key in workload.sampling:
            settings[key] = workload.sampling[key]
    if workload.retry:
        settings["retry"] = workload.retry
    return {
        "harness": harness_info(),
        "workload": {
            "id": workload.id,
            "version": workload.version,
            "sha256": workload.sha256,
            "kind": "serving",
            "pattern": workload.pattern,
        },
        "endpoint": ep.doc,
        "client": client_info(base_url, region),
        "settings": settings,
        "slo": workload.slo,
        "started_at": utc_now(),
    }


def harness_info() -> dict[str, Any]:
    sha = None
    root = checkout_root()
    if root is not None and (root / ".git").exists():
        with contextlib.suppress(GitError):
            value = run_git(root, "rev-parse", "HEAD", timeout=5).decode("ascii", "replace")
            if len(value.strip()) in (40, 64):
                sha = value.strip()[:40]
    return {"name": HARNESS_NAME, "version": __version__, "git_sha": sha}


def client_info(base_url: str, region: str | None) -> dict[str, Any]:
    return {
        "python": platform.python_version(),
        "os": platform.platform()[:200],
        "region": region,
        "rtt_ms": measure_rtt_ms(base_url),
        "cpus": os.cpu_count() or 1,
    }


def measure_rtt_ms(base_url: str, samples: int = 5, timeout_s: float = 2.0) -> float | None:
    """Median TCP connect time to the endpoint's host and port, or None when it fails."""
    parts = urlsplit(base_url)
    host = parts.hostname
    if not host:
        return None
    port = parts.port or (443 if parts.scheme == "https" else 80)
    times = []
    for _ in range(samples):
        start = time.perf_counter()
        try:
            with socket.create_connection((host, port), timeout=timeout_s):
                times.append((time.perf_counter() - start) * 1000)
        except OSError:
            return None
    return round(statistics.median(times), 4)


def _run_agentic(
    ep: Endpoint,
    base_url: str,
    path: Path,
    doc: dict[str, Any],
    out: Path | None,
    resume: Path | None,
    quick: bool,
    region: str | None,
    progress: bool,
) -> Path:
    data = path.read_bytes()
    import hashlib

    sha = hashlib.sha256(data).hexdigest()
    seed = int(doc.get("seed", 0)) if isinstance(doc.get("seed", 0), int) else 0
    records: list[dict[str, Any]] = []
    if resume is not None:
        run_dir = Path(resume)
        meta_doc = _read_plan_doc(run_dir)
        if meta_doc.get("workload_sha256") != sha:
            raise RunError(
                f"{path}: this workload changed since the run started; resume needs the same file"
            )
        run_id = meta_doc["run_id"]
        meta = meta_doc["meta"]
        records = Journal.read(run_dir / JOURNAL_FILE)
    else:
        run_id = secrets.token_hex(8)
        run_dir = _run_dir(out, run_id)
        meta = {
            "harness": harness_info(),
            "workload": {
                "id": doc.get("id", path.stem),
                "version": str(doc.get("version", "0")),
                "sha256": sha,
                "kind": "agentic",
                "pattern": "agentic",
                **_quality_fields(doc),
            },
            "endpoint": ep.doc,
            "client": client_info(base_url, region),
            "settings": _agentic_settings(doc, seed, quick),
            "started_at": utc_now(),
        }
        write_json_atomic(
            run_dir / PLAN_FILE,
            {"run_id": run_id, "kind": "agentic", "workload_sha256": sha, "meta": meta},
        )

    async def go(journal: Journal) -> dict[str, Any]:
        from runner.agentic.executor import run_agentic

        async with _run_context(
            ep, base_url, run_id, run_dir, journal, records,
            quick=quick, seed=seed, progress=progress,
            timeout=float((ep.timeout_s or doc.get("timeout_s")) or 120),
            connections=AGENTIC_CONNECTIONS,
        ) as ctx:
            section: dict[str, Any] = await run_agentic(ctx, doc, path)
            return section

    with Journal(run_dir / JOURNAL_FILE, ep.secrets) as journal:
        agentic = run_async(go(journal))
    result = {
        "kind": "result",
        "schema_version": 1,
        "run_id": run_id,
        "harness": meta["harness"],
        "workload": meta["workload"],
        "endpoint": meta["endpoint"],
        "client": meta["client"],
        "settings": meta["settings"],
        "started_at": meta["started_at"],
        "finished_at": utc_now(),
        "points": [],
        "pareto": [],
        "agentic": agentic,
    }
    out_path = run_dir / RESULT_FILE
    write_json_atomic(out_path, result)
    return out_path
