"""An endpoint's schedule names only workloads that exist.

A scheduled workload id that matches no file under the project's `workloads/serving/` or
`workloads/agentic/` (nor the shipped ones) would make every scheduled job fail at run time;
it is rejected here, where the contributor can still fix the endpoint file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from epbench.core.findings import Finding
from epbench.core.paths import workload_ids
from epbench.generator.checks.base import Subject, check, on_endpoint

UNKNOWN_WORKLOAD = check(
    "endpoint.schedule-workload", "reject", "every scheduled workload id names a workload file",
    "schedule the id of a file under workloads/serving/ or workloads/agentic/",
)


def check_schedule(endpoint: dict[str, Any], file: str, project: Path | None) -> list[Finding]:
    """One finding per scheduled workload id that names no workload."""
    schedule = endpoint.get("schedule") or {}
    wanted = schedule.get("workloads") or []
    if not wanted:
        return []
    known = workload_ids(project)
    shown = ", ".join(sorted(known)[:20])
    return [
        UNKNOWN_WORKLOAD.at(
            file, f"/schedule/workloads/{i}",
            f"no workload has id {wid!r}",
            f"schedule an existing workload id: {shown}",
        )
        for i, wid in enumerate(wanted)
        if wid not in known
    ]


@on_endpoint(40)
def _on_endpoint(s: Subject) -> list[Finding]:
    return check_schedule(s.doc, s.file, s.project)
