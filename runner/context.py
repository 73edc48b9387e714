"""What one run hands to whatever executes a workload (serving runner or agentic executor)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runner.client import EndpointClient
from runner.journal import Journal


@dataclass
class RunContext:
    """One run: its id and folder, the endpoint (no secrets), the client and the journal.

    `resume_records` are the journal records already present when `--resume` started.
    """

    run_id: str
    run_dir: Path
    endpoint: dict[str, Any]
    base_url: str
    client: EndpointClient
    journal: Journal
    quick: bool = False
    seed: int = 0
    progress: bool = False
    resume_records: list[dict[str, Any]] = field(default_factory=list)
