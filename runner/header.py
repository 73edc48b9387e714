"""The result's header, built once per run and kept in plan.json until the result is written.

`result_header` gives the `meta` block (harness, workload, endpoint, client, settings, SLO,
start time) for any workload kind; `result_document` wraps a computed body (points, pareto,
agentic, ...) into the result document (schemas/result.schema.json). Serving, agentic and
`epbench merge` all go through these two functions.
"""

from __future__ import annotations

import contextlib
import os
import platform
import socket
import statistics
import time
from typing import Any
from urllib.parse import urlsplit

from epbench.core import HARNESS_NAME, __version__
from epbench.core.git import GitError, run_git
from epbench.core.paths import checkout_root
from epbench.runner.run_folder import utc_now
from epbench.runner.workload import LoadedWorkload


def result_header(
    endpoint_doc: dict[str, Any],
    base_url: str,
    workload: LoadedWorkload,
    settings: dict[str, Any],
    region: str | None,
    *,
    pattern: str,
    slo: dict[str, Any] | None = None,
    workload_extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The `meta` block of a run's plan: everything of the result known before it starts
    (`workload_extra`: more fields of the result's workload block, such as `quality`)."""
    kind = "serving" if workload.kind == "serving-workload" else "agentic"
    meta: dict[str, Any] = {
        "harness": harness_info(),
        "workload": {
            "id": workload.id,
            "version": workload.version,
            "sha256": workload.sha256,
            "kind": kind,
            "pattern": pattern,
            **(workload_extra or {}),
        },
        "endpoint": endpoint_doc,
        "client": client_info(base_url, region),
        "settings": settings,
        "started_at": utc_now(),
    }
    if slo is not None:
        meta["slo"] = slo
    return meta


def result_document(
    run_id: str,
    meta: dict[str, Any],
    body: dict[str, Any],
    extra_settings: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The result document: the header from `meta`, the finish time, then `body`."""
    return {
        "kind": "result",
        "schema_version": 1,
        "run_id": run_id,
        "harness": meta["harness"],
        "workload": meta["workload"],
        "endpoint": meta["endpoint"],
        "client": meta["client"],
        "settings": {**meta["settings"], **(extra_settings or {})},
        "started_at": meta["started_at"],
        "finished_at": utc_now(),
        **body,
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
    times = connect_round_trips(base_url, samples, timeout_s)
    return round(statistics.median(times), 4) if times else None


def connect_round_trips(base_url: str, samples: int = 5, timeout_s: float = 2.0) -> list[float]:
    """`samples` TCP connect times (ms) to the endpoint's host and port; [] when one fails.

    A connect is one round trip on the requests' network path with no server work in it: the
    floor under every latency (epbench.core.round_trips)."""
    parts = urlsplit(base_url)
    host = parts.hostname
    if not host:
        return []
    port = parts.port or (443 if parts.scheme == "https" else 80)
    times = []
    for _ in range(samples):
        start = time.perf_counter()
        try:
            with socket.create_connection((host, port), timeout=timeout_s):
                times.append((time.perf_counter() - start) * 1000)
        except OSError:
            return []
    return times
