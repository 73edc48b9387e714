"""What one run hands to whatever executes a workload (serving runner or agentic executor),
and the one place it is opened (with the run's one HTTP client) and closed."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from epbench.core.journal_file import Journal
from epbench.runner.bounds import Bounds
from epbench.runner.client import EndpointClient
from epbench.runner.endpoint import Endpoint
from epbench.runner.workload import LoadedWorkload


@dataclass
class RunContext:
    """One run: its id and folder, the endpoint (no secrets), the client and the journal.

    `resume_records` are the (complete) journal records already present when `--resume`
    started. `fallbacks` are the endpoint file's declared fallbacks (feature -> fallback);
    an executor that uses one appends it, with the endpoint's words, to `fallbacks_used`.
    """

    run_id: str
    run_dir: Path
    endpoint: dict[str, Any]
    base_url: str
    client: EndpointClient
    journal: Journal
    quick: bool = False
    seed: int = 0
    progress: bool | str = False
    resume_records: list[dict[str, Any]] = field(default_factory=list)
    fallbacks: dict[str, str] = field(default_factory=dict)
    fallbacks_used: list[dict[str, str]] = field(default_factory=list)

    @property
    def model(self) -> str:
        return str((self.endpoint.get("model") or {}).get("name", "default"))


def bounds_for(ep: Endpoint, wl: LoadedWorkload) -> Bounds:
    """The bounds of a workload's requests: its `bounds` block, the endpoint's timeout
    winning over the workload's."""
    timeout = float(ep.timeout_s or wl.timeout_s)
    return Bounds(timeout_s=timeout).with_block(wl.doc.get("bounds"))


@contextlib.asynccontextmanager
async def open_context(
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
        base_url, ep.api_key, ep.headers, bounds.timeout_s, connections, bounds=bounds,
        api=ep.doc.get("api"), omit=ep.omit, extra_body=ep.extra_body,
    )
    try:
        yield RunContext(
            run_id=run_id, run_dir=run_dir, endpoint=ep.doc, base_url=base_url, client=client,
            journal=journal, quick=quick, seed=seed, progress=progress, resume_records=records,
            fallbacks=dict(ep.doc.get("fallbacks") or {}),
        )
    finally:
        await client.aclose()
