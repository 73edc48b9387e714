"""Semantic checks, one module per group; each check has an id, a severity and a fix.

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
    pareto,
    price,
    secret,
    settings,
)
from epbench.generator.checks.base import CHECKS, Check
from epbench.generator.checks.endpoint import identity as endpoint_identity
from epbench.generator.checks.endpoint import key_env, schedule
from epbench.generator.checks.identity import ENDPOINT_FIELDS, RESULT_FIELDS, check_identity
from epbench.generator.checks.layout import check_layout, results_root
from epbench.generator.checks.plausible.imported import check_imported
from epbench.generator.checks.plausible.round_trip import check_plausible
from epbench.generator.checks.workload.sha import WorkloadIndex, check_workload_sha

__all__ = ["CHECKS", "Check", "WorkloadIndex", "check_endpoint", "check_result", "rejected_points"]

_DISTS = ("ttft_ms", "tpot_ms", "itl_ms", "e2e_ms", "schedule_delay_ms",
          "ttft_from_scheduled_ms", "e2e_from_scheduled_ms")
_AGENTIC_DISTS = ("decision_ms", "first_tool_delta_ms", "tool_ms", "overhead_ms", "task_wall_ms")


def check_result(
    result: dict[str, Any],
    file: str,
    path: Path,
    index: WorkloadIndex | None = None,
    now: datetime | None = None,
) -> list[Finding]:
    """Every per-file semantic check of a schema-valid result."""
    out: list[Finding] = []
    imported = (result.get("source") or {}).get("format", "epbench") != "epbench"
    for i, point in enumerate(result["points"]):
        where = f"/points/{i}"
        out += derived.check_point(point, where, file)
        for name in _DISTS:
            if name in point:
                out += dist.check_dist(point[name], name, f"{where}/{name}", file,
                                                partial_ok=imported)
    kind = result["workload"]["kind"]
    if kind == "serving" and not result["points"]:
        out.append(agentic.MISSING.at(file, "/points", "a serving result has no points"))
    if kind == "agentic" and "agentic" not in result:
        out.append(agentic.MISSING.at(file, "/agentic", "an agentic result has no agentic block"))
    if "agentic" in result:
        for name in _AGENTIC_DISTS:
            out += dist.check_dist(
                result["agentic"][name], name, f"/agentic/{name}", file
            )
        out += agentic.check_agentic(result, file)
    out += pareto.check_pareto(result, file)
    out += check_plausible(result, file)
    out += check_imported(result, file)
    out += date.check_dates(result, file, now=now)
    out += price.check_effective(result, file)
    out += price.check_card(result["endpoint"], file, "/endpoint")
    out += division.check_emulated(result, file)
    out += settings.check_quick(result, file)
    out += key_env.check_key_env(result["endpoint"], file, "/endpoint")
    out += secret.check_header_values(result, file)
    out += check_identity(result, file, RESULT_FIELDS)
    out += check_layout(result, path, file)
    if not imported:
        out += evidence.check_evidence(result, path, file, index)
    if index is not None:
        out += check_workload_sha(result, index, file)
        if results_root(path) is not None:  # what is submitted, or published
            endpoints = endpoint_identity.index_for(index.project)
            # an imported result may name an endpoint of its own, but one that names a known
            # endpoint is held to its file like any other (else it could speak for it)
            if not imported or endpoints.get(result["endpoint"]["id"]) is not None:
                out += endpoint_identity.check_endpoint_identity(result, endpoints, file)
    return out


def check_endpoint(
    endpoint: dict[str, Any], file: str, project: Path | None = None
) -> list[Finding]:
    """Semantic checks of a schema-valid endpoint file (`project`: where its workloads are)."""
    return [
        *price.check_card(endpoint, file),
        *key_env.check_key_env(endpoint, file),
        *check_identity(endpoint, file, ENDPOINT_FIELDS),
        *schedule.check_schedule(endpoint, file, project),
    ]


def rejected_points(findings: list[Finding]) -> set[int]:
    """Indexes of points that a `reject-point` finding drops."""
    out = set()
    for finding in findings:
        if finding.severity == "reject-point" and finding.pointer.startswith("/points/"):
            part = finding.pointer.split("/")[2]
            if part.isdigit():
                out.add(int(part))
    return out
