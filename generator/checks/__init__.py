"""Semantic checks, one module or package per group (the prefix of a check id names it); each
check has an id, a severity and a fix.

Schema validation comes first (epbench.core.schema); these run only on schema-valid documents, so
they can rely on types. `CHECKS` lists every check for the docs and the tests.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from epbench.core.findings import Finding
from epbench.generator.checks import (
    agentic,
    date,
    derived,
    dist,
    division,
    evidence,
    identity,
    layout,
    pareto,
    price,
    secret,
    settings,
)
from epbench.generator.checks.base import CHECKS, Check, Subject, runners
from epbench.generator.checks.endpoint import identity as endpoint_identity
from epbench.generator.checks.endpoint import key_env, schedule
from epbench.generator.checks.plausible import imported as imported_bounds
from epbench.generator.checks.plausible import round_trip
from epbench.generator.checks.workload import sha
from epbench.generator.checks.workload.sha import WorkloadIndex

GROUPS = (agentic, date, derived, dist, division, evidence, identity, layout, pareto, price,
          secret, settings, endpoint_identity, key_env, schedule, imported_bounds, round_trip,
          sha)
"""The modules that register what runs (epbench.generator.checks.base: scope and order):
importing them fills the registry that check_result and check_endpoint run."""

__all__ = ["CHECKS", "Check", "WorkloadIndex", "check_endpoint", "check_result", "rejected_points"]


def check_result(
    result: dict[str, Any],
    file: str,
    path: Path,
    index: WorkloadIndex | None = None,
    now: datetime | None = None,
) -> list[Finding]:
    """Every per-file semantic check of a schema-valid result: the point runners on each point
    in turn, then the result runners, each in its registered order (those that need the
    workload index only with one, those for epbench's own results not on imported ones)."""
    imported = (result.get("source") or {}).get("format", "epbench") != "epbench"
    subject = Subject(result, file, path, index, now, imported=imported)
    out: list[Finding] = []
    on_point = runners("point")
    for i, point in enumerate(result["points"]):
        where = f"/points/{i}"
        for runner in on_point:
            out += runner.run(subject, where, point)
    for runner in runners("result"):
        if (runner.needs_index and index is None) or (runner.epbench_only and imported):
            continue
        out += runner.run(subject)
    return out


def check_endpoint(
    endpoint: dict[str, Any], file: str, project: Path | None = None
) -> list[Finding]:
    """Semantic checks of a schema-valid endpoint file (`project`: where its workloads are)."""
    subject = Subject(endpoint, file, project=project)
    out: list[Finding] = []
    for runner in runners("endpoint"):
        out += runner.run(subject)
    return out


def rejected_points(findings: list[Finding]) -> set[int]:
    """Indexes of points that a `reject-point` finding drops."""
    out = set()
    for finding in findings:
        if finding.severity == "reject-point" and finding.pointer.startswith("/points/"):
            part = finding.pointer.split("/")[2]
            if part.isdigit():
                out.add(int(part))
    return out
