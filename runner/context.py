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
